"""The tensor-parallel schedules of tcgemm.distributed (tcgemm/_tp.py) on CPU
processes over gloo, with a float64 reference as the local product: the
row blocks, the order of the transfers and products, exact results against
the unsharded products, the rank order of the reduce-scatter's sum, the
operators' gradients and their tracing by torch.compile, and the refusals.
No GPU and no compiled library needed (test_distributed.py runs the same
operators on tcgemm and NCCL); skipped without torch.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import sys
import traceback
from pathlib import Path

import pytest

from conftest import PACKAGE_DIR

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("torch.distributed with gloo is not available", allow_module_level=True)


def _load_schedules():
    """tcgemm/_tp.py as a plain module: no package import, so no compiled library."""
    name = "tcgemm_tp_schedules"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, PACKAGE_DIR / "_tp.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


tp = _load_schedules()


class Reference:
    """The local product in float64, rounded once to the output's dtype
    (exact on the tests' small integers), recording each call's rows."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []  # (rows, first row of out within its buffer)
        self.sm_counts: list[int] = []  # each call's bound on SMs
        self.row_pitches: list[int] = []  # each call's out.stride(0)

    def mm_into(self, a, b, bias, out, sm_count) -> None:
        product = a.double() @ b.double()
        if bias is not None:
            product += bias.double()
        out.copy_(product)
        base = out._base if out._base is not None else out
        self.calls.append((a.shape[0], (out.data_ptr() - base.data_ptr()) // (out.element_size() * out.stride(0))))
        self.sm_counts.append(sm_count)
        self.row_pitches.append(out.stride(0))

    def clear(self) -> None:
        self.calls.clear()
        self.sm_counts.clear()
        self.row_pitches.clear()

    def mm(self, a, b):
        return (a.double() @ b.double()).to(a.dtype)


REFERENCE = Reference()
ALL_GATHER_MM, MM_REDUCE_SCATTER = tp.define_ops("tcgemm_tp_test", REFERENCE)


def ints(*shape, seed, dtype=torch.float32):
    """Integers in [-3, 3], the same on every rank for a seed."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(-3, 4, shape, generator=gen).to(dtype)


# Each scenario runs on every rank of a world of `world` processes.


def gather_exact(rank, world, group):
    rows, k, n = 300, 40, 24
    x = ints(world * rows, k, seed=1)
    w = ints(n, k, seed=2)
    bias = ints(n, seed=3)
    want = x.double() @ w.double().t() + bias.double()
    # The products done when each transfer is posted: none (NCCL's stream
    # waits for what the current stream holds when a transfer is posted, so
    # a product queued before it would hold it back).
    products_at_post = []
    exchange = tp._Ring.exchange

    def counted_exchange(self, *args):
        products_at_post.append(len(REFERENCE.calls))
        return exchange(self, *args)

    for overlap in (True, False):
        for chunks in (1, 2, 5):
            REFERENCE.clear()
            products_at_post.clear()
            tp._Ring.exchange = counted_exchange
            try:
                y, gathered = tp.gather_mm(x[rank * rows:(rank + 1) * rows], w.t(), bias, group, REFERENCE, chunks,
                                           overlap, keep_gathered=True, sm_count=100)
            finally:
                tp._Ring.exchange = exchange
            assert torch.equal(y.double(), want), (overlap, chunks)
            assert torch.equal(gathered, x), (overlap, chunks)
            if overlap:
                blocks = tp.row_blocks(rows, chunks)
                # The local shard first, then every peer's blocks, ring order.
                assert REFERENCE.calls[0] == (rows, rank * rows), REFERENCE.calls
                want_calls = [(hi - lo, ((rank - step) % world) * rows + lo)
                              for step in range(1, world) for lo, hi in blocks]
                assert REFERENCE.calls[1:] == want_calls, (REFERENCE.calls, want_calls)
                # Bounded SMs while transfers may run: every product but the last.
                assert REFERENCE.sm_counts == [100] * len(want_calls) + [0], REFERENCE.sm_counts
                # Every transfer posted before the first product.
                assert products_at_post == [0] * len(want_calls), products_at_post
            else:
                assert REFERENCE.calls == [(world * rows, 0)] and REFERENCE.sm_counts == [0]
    y, gathered = tp.gather_mm(x[rank * rows:(rank + 1) * rows], w.t(), None, group, REFERENCE)
    assert torch.equal(y.double(), x.double() @ w.double().t()) and gathered.shape == (0, k)


def gather_bf16_odd_width(rank, world, group):
    # N not a multiple of 8, with a bias or without (K a multiple of 8): rows computed 16 bytes apart, as
    # tcgemm.linear computes them, returned contiguous.
    rows, k, n = 7, 16, 13
    x = ints(world * rows, k, seed=4, dtype=torch.bfloat16)
    w = ints(n, k, seed=5, dtype=torch.bfloat16)
    for bias in (ints(n, seed=6, dtype=torch.bfloat16), None):
        REFERENCE.clear()
        y, _ = tp.gather_mm(x[rank * rows:(rank + 1) * rows], w.t(), bias, group, REFERENCE, chunks=3)
        assert y.is_contiguous() and y.dtype == torch.bfloat16
        want = x.double() @ w.double().t() + (0.0 if bias is None else bias.double())
        assert torch.equal(y.double(), want)
        assert REFERENCE.row_pitches and set(REFERENCE.row_pitches) == {16}, REFERENCE.row_pitches


def scatter_exact(rank, world, group):
    rows, k_local, n = 136, 8, 40
    x = ints(world * rows, world * k_local, seed=7)
    w = ints(n, world * k_local, seed=8)
    bias = ints(n, seed=9)
    mine = slice(rank * k_local, (rank + 1) * k_local)
    want = (x.double() @ w.double().t() + bias.double())[rank * rows:(rank + 1) * rows]
    results = []
    for overlap in (True, False):
        for chunks in (1, 2):
            REFERENCE.clear()
            y = tp.mm_scatter(x[:, mine], w[:, mine].t(), bias, group, REFERENCE, chunks, overlap, sm_count=64)
            assert torch.equal(y.double(), want), (overlap, chunks)
            results.append(y)
            if overlap:
                # The peers' rows first, ring order (rank + 1 first), its own rows last.
                want_calls = [(hi - lo, ((rank + step) % world) * rows + lo)
                              for step in range(1, world) for lo, hi in tp.row_blocks(rows, chunks)]
                assert REFERENCE.calls == [*want_calls, (rows, rank * rows)], REFERENCE.calls
                # Every SM for the first product (no transfer yet), sm_count for the rest.
                assert REFERENCE.sm_counts == [0] + [64] * len(want_calls), REFERENCE.sm_counts
            else:
                assert REFERENCE.sm_counts == [0]


def scatter_rank_order(rank, world, group):
    # Partial products 2^24, 1, -2^24 (the bias the third term where W = 2):
    # in float32 (2^24 + 1) rounds to 2^24, so rank order 0, 1, 2 gives 0
    # where the reverse order, or bias first, gives 1.
    terms = [2.0 ** 24, 1.0, -(2.0 ** 24)] + [0.0] * max(0, world - 3)
    x = torch.tensor([terms[:world]] * (2 * world), dtype=torch.float32)  # [S, W]: column r is rank r's slice of K
    w = torch.ones(4, world, dtype=torch.float32)
    bias = torch.full((4,), terms[2]) if world == 2 else None
    for overlap in (True, False):
        y = tp.mm_scatter(x[:, rank:rank + 1], w[:, rank:rank + 1].t(), bias, group, REFERENCE, 1, overlap)
        assert torch.equal(y, torch.zeros(2, 4)), y


def scatter_bits_repeat(rank, world, group):
    # Random bfloat16 partial products: every mode, chunk count and repeat gives the same bits.
    gen = torch.Generator().manual_seed(10)
    x = torch.randn(world * 96, world * 16, generator=gen).bfloat16()
    w = torch.randn(32, world * 16, generator=gen).bfloat16()
    mine = slice(rank * 16, (rank + 1) * 16)
    first = tp.mm_scatter(x[:, mine], w[:, mine].t(), None, group, REFERENCE)
    for overlap, chunks in ((True, 1), (True, 3), (False, 1), (True, 1)):
        again = tp.mm_scatter(x[:, mine], w[:, mine].t(), None, group, REFERENCE, chunks, overlap)
        assert torch.equal(again.view(torch.int16), first.view(torch.int16)), (overlap, chunks)
    # and the bits are the float32 sum of every rank's rounded partial product, in rank order
    partials = [(x[rank * 96:(rank + 1) * 96, r * 16:(r + 1) * 16].double()
                 @ w[:, r * 16:(r + 1) * 16].double().t()).bfloat16() for r in range(world)]
    assert torch.equal(first, tp.sum_in_rank_order(partials, None, torch.bfloat16))


def _layer_data(rank, world):
    """A column-parallel then a row-parallel layer (an MLP): x [S, 2, K] in
    sequence shards, w1 [world * N1, K] and w2 [K2, world * N1] in shards,
    every rank's upstream gradient; all small integers."""
    rows, k, n1, k2 = 6, 16, 8, 24
    x = ints(world * rows, 2, k, seed=11)
    w1 = ints(world * n1, k, seed=12)
    b1 = ints(world * n1, seed=13)
    w2 = ints(k2, world * n1, seed=14)
    b2 = ints(k2, seed=15)
    grad = ints(world * rows, 2, k2, seed=16)  # of the row-parallel output, each rank's rows
    cols = slice(rank * n1, (rank + 1) * n1)
    seq = slice(rank * rows, (rank + 1) * rows)
    return x, w1, b1, w2, b2, grad, cols, seq


def _local_params(x, w1, b1, w2, b2, cols, seq):
    leaves = [x[seq].clone(), w1[cols].clone(), b1[cols].clone(), w2[:, cols].clone(), b2.clone()]
    for t in leaves:
        t.requires_grad_(True)
    return leaves


def _mlp(x, w1, b1, w2, b2, group, chunks, overlap, sm_count=0):
    h = tp.all_gather_linear(ALL_GATHER_MM, x, w1, b1, group, chunks, overlap, sm_count)
    return tp.linear_reduce_scatter(MM_REDUCE_SCATTER, h, w2, b2, group, chunks, overlap, sm_count)


def operators_gradients(rank, world, group):
    x, w1, b1, w2, b2, grad, cols, seq = _layer_data(rank, world)
    # The unsharded layers in float64, every rank's output, one loss.
    ref = [t.double().requires_grad_(True) for t in (x, w1, b1, w2, b2)]
    out = (ref[0] @ ref[1].t() + ref[2]) @ ref[3].t() + ref[4]
    (out * grad.double()).sum().backward()
    for chunks, overlap in ((1, True), (2, True), (1, False)):
        leaves = _local_params(x, w1, b1, w2, b2, cols, seq)
        y = _mlp(*leaves, group, chunks, overlap, sm_count=50)
        assert y.shape == (x.shape[0] // world, 2, w2.shape[0])
        assert torch.equal(y.double(), out[seq].detach()), (chunks, overlap)
        (y * grad[seq]).sum().backward()
        want = [ref[0].grad[seq], ref[1].grad[cols], ref[2].grad[cols], ref[3].grad[:, cols], ref[4].grad]
        for name, leaf, g in zip(("x", "w1", "b1", "w2", "b2"), leaves, want):
            if name == "b2":
                # b2 is replicated: each rank's gradient is its own rows' share.
                g = grad[seq].double().sum((0, 1))
            assert torch.equal(leaf.grad.double(), g), (name, chunks, overlap)
    # The weights' gradients come in the weights' layout (AccumulateGrad would copy others into it).
    leaves = _local_params(x, w1, b1, w2, b2, cols, seq)
    grads = torch.autograd.grad((_mlp(*leaves, group, 1, True) * grad[seq]).sum(), [leaves[1], leaves[3]])
    assert all(g.is_contiguous() for g in grads)


def operators_compile(rank, world, group):
    x, w1, b1, w2, b2, grad, cols, seq = _layer_data(rank, world)
    eager = _local_params(x, w1, b1, w2, b2, cols, seq)
    traced = _local_params(x, w1, b1, w2, b2, cols, seq)

    def step(x, w1, b1, w2, b2):  # the default group, as a model calls it
        return _mlp(x, w1, b1, w2, b2, None, 2, True)

    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    for fn, leaves in ((step, eager), (compiled, traced)):
        (fn(*leaves) * grad[seq]).sum().backward()
    for a, b in zip(eager, traced):
        assert torch.equal(a.grad, b.grad)


def operators_fake(rank, world, group):
    from torch._subclasses.fake_tensor import FakeTensorMode

    name = group.group_name
    with FakeTensorMode():
        y, gathered = ALL_GATHER_MM(torch.empty(5, 16), torch.empty(16, 24), None, name, 1, True, True, 0)
        assert y.shape == (world * 5, 24) and gathered.shape == (world * 5, 16)
        _, gathered = ALL_GATHER_MM(torch.empty(5, 16), torch.empty(16, 24), None, name, 1, True, False, 0)
        assert gathered.shape == (0, 16)
        assert MM_REDUCE_SCATTER(torch.empty(world * 5, 16), torch.empty(16, 24), None, name, 1, True, 0).shape == (
            5, 24)
        with pytest.raises(ValueError, match="shapes do not match"):
            ALL_GATHER_MM(torch.empty(5, 16), torch.empty(15, 24), None, name, 1, True, False, 0)


def operators_opcheck(rank, world, group):
    # torch's own checks of a custom operator: schema, fake implementation against the real one,
    # autograd registration, tracing with dynamic shapes (every rank runs them in the same order).
    name = group.group_name
    x = ints(6, 16, seed=17).requires_grad_(True)
    b = ints(16, 8, seed=18).requires_grad_(True)
    bias = ints(8, seed=19).requires_grad_(True)
    torch.library.opcheck(ALL_GATHER_MM, (x, b, bias, name, 2, True, True, 8))
    torch.library.opcheck(MM_REDUCE_SCATTER, (ints(world * 4, 16, seed=20).requires_grad_(True), b, bias, name,
                                              1, True, 8))


def refusals(rank, world, group):
    x, w = ints(8, 16, seed=1), ints(4, 16, seed=2)
    # Every rank refuses the same call before anything is sent, so none waits on another.
    with pytest.raises(ValueError, match="must equal weight's in_features"):
        tp.all_gather_linear(ALL_GATHER_MM, x, ints(4, 15, seed=2), None, group, 1, True)
    with pytest.raises(ValueError, match=r"bias must be \[4\]"):
        tp.all_gather_linear(ALL_GATHER_MM, x, w, ints(5, seed=3), group, 1, True)
    with pytest.raises(ValueError, match="chunks must be at least 1"):
        tp.all_gather_linear(ALL_GATHER_MM, x, w, None, group, 0, True)
    with pytest.raises(ValueError, match="sm_count must be 0"):
        tp.linear_reduce_scatter(MM_REDUCE_SCATTER, ints(world * 2, 16, seed=4), w, None, group, 1, True, -1)
    with pytest.raises(ValueError, match=r"x must be \[rows, \.\.\., in_features\]"):
        tp.linear_reduce_scatter(MM_REDUCE_SCATTER, x[0], w, None, group, 1, True)
    with pytest.raises(ValueError, match="does not split evenly"):
        tp.linear_reduce_scatter(MM_REDUCE_SCATTER, ints(world * 2 + 1, 16, seed=4), w, None, group, 1, True)
    with pytest.raises(ValueError, match="rows do not split evenly"):
        tp.mm_scatter(ints(world * 2 + 1, 16, seed=4), w.t(), None, group, REFERENCE)
    with pytest.raises(TypeError, match="one dtype"):
        tp.gather_mm(x, w.t().double(), None, group, REFERENCE)


SCENARIOS = [gather_exact, gather_bf16_odd_width, scatter_exact, scatter_rank_order, scatter_bits_repeat,
             operators_gradients, operators_compile, operators_fake, operators_opcheck, refusals]


def _run_rank(rank: int, world: int, store: str, out_dir: str) -> None:
    # A stuck transfer fails the test after a minute instead of hanging it.
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    group = dist.group.WORLD
    results = {}
    try:
        for scenario in SCENARIOS:
            try:
                scenario(rank, world, group)
                results[scenario.__name__] = None
            except Exception:  # noqa: BLE001 - reported by the test of that scenario
                results[scenario.__name__] = traceback.format_exc()
            dist.barrier()
    finally:
        Path(out_dir, f"rank{rank}.json").write_text(json.dumps(results))
        dist.destroy_process_group()


@pytest.fixture(scope="module", params=[2, 3], ids=["world2", "world3"])
def outcomes(request, tmp_path_factory):
    """Every scenario's outcome on every rank of one gloo world of that size."""
    import torch.multiprocessing as mp

    world = request.param
    work = tmp_path_factory.mktemp(f"world{world}")
    mp.spawn(_run_rank, args=(world, str(work / "store"), str(work)), nprocs=world, join=True)
    return [json.loads((work / f"rank{r}.json").read_text()) for r in range(world)]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_scenario_on_every_rank(outcomes, scenario) -> None:
    for rank, results in enumerate(outcomes):
        assert scenario.__name__ in results, f"rank {rank} did not reach {scenario.__name__}"
        assert results[scenario.__name__] is None, f"rank {rank}:\n{results[scenario.__name__]}"


@pytest.mark.parametrize("rows,pieces,want", [
    (1000, 4, [(0, 256), (256, 512), (512, 768), (768, 1000)]),
    (300, 4, [(0, 128), (128, 256), (256, 300)]),  # no more blocks than whole tiles
    (100, 3, [(0, 100)]),
    (256, 1, [(0, 256)]),
    (130, 2, [(0, 128), (128, 130)]),
    (0, 3, []),
])
def test_row_blocks(rows, pieces, want) -> None:
    assert tp.row_blocks(rows, pieces) == want


def test_row_blocks_cover_rows_once_in_aligned_blocks() -> None:
    for rows in range(1, 2000, 37):
        for pieces in (1, 2, 3, 7, 16):
            blocks = tp.row_blocks(rows, pieces)
            assert blocks[0][0] == 0 and blocks[-1][1] == rows
            assert all(lo < hi for lo, hi in blocks)
            assert all(a[1] == b[0] and a[1] % 128 == 0 for a, b in zip(blocks, blocks[1:]))
            assert len(blocks) <= pieces


def test_row_blocks_refuses_no_pieces() -> None:
    with pytest.raises(ValueError, match="chunks must be at least 1"):
        tp.row_blocks(100, 0)


def test_uninitialized_group_is_refused() -> None:
    if dist.is_initialized():
        pytest.skip("this process has a default group")
    with pytest.raises(RuntimeError, match="torch.distributed is not initialized"):
        tp.all_gather_linear(ALL_GATHER_MM, ints(4, 8, seed=1), ints(2, 8, seed=2), None, None, 1, True)
