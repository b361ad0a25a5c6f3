"""tcgemm.distributed on GPUs over NCCL: the column-parallel layer gives the
bits of tcgemm.linear on the gathered input, the row-parallel layer the
rank-order sum of tcgemm's partial products, the same bits for every chunk
count and with overlap off, gradients, torch.compile and CUDA graphs.

One GPU: a world of one process in this process (the operators, the
products into row blocks, the streams and the numerics, with no peer). Two
or more GPUs: a world of two processes, one GPU each (the transfers). The
schedules themselves are tested on CPU in test_tp_schedules.py. Skipped
without torch, a GPU tcgemm runs on, or NCCL.
"""

from __future__ import annotations

import datetime
import json
import traceback
from pathlib import Path

import pytest

from conftest import bits, capture_graph, gpu_skip_reason, rand

_skip = gpu_skip_reason()
if _skip:
    pytest.skip(_skip, allow_module_level=True)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

if not dist.is_available() or not dist.is_nccl_available():
    pytest.skip("torch.distributed with NCCL is not available", allow_module_level=True)

import tcgemm  # noqa: E402
import tcgemm.distributed as tp  # noqa: E402
from tcgemm import _tp  # noqa: E402

DTYPES = [torch.float16, torch.bfloat16]


def assert_grad_close(got: torch.Tensor, want: torch.Tensor) -> None:
    """A bf16 gradient against float32 autograd, element by element. The
    intermediate products are rounded to bf16 (one rounding each, relative
    2^-9), so an element's error grows with the sum it is taken from, not
    with its own value: the absolute tolerance is 1% of the largest
    element (each error is a few tenths of a percent of it)."""
    torch.testing.assert_close(got.float(), want, atol=0.01 * want.abs().max().item(), rtol=0.02)


@pytest.fixture(scope="module")
def world_of_one(tmp_path_factory):
    """The default group: NCCL, this process alone."""
    if dist.is_initialized():
        pytest.skip("this process already has a default group")
    store = tmp_path_factory.mktemp("nccl") / "store"
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"file://{store}", rank=0, world_size=1,
                            timeout=datetime.timedelta(seconds=120), device_id=torch.device("cuda", 0))
    yield dist.group.WORLD
    dist.destroy_process_group()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(512, 1024, 768), (300, 200, 136), (1, 64, 256), (1000, 13, 72)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_all_gather_linear_has_the_bits_of_linear(world_of_one, dtype, shape, with_bias) -> None:
    m, n, k = shape
    x, w = rand(m, k, dtype=dtype, seed=m + n), rand(n, k, dtype=dtype, seed=k)
    bias = rand(n, dtype=dtype, seed=3) if with_bias else None
    want = tcgemm.linear(x, w, bias)
    for chunks, overlap, sm_count in ((1, True, 0), (3, True, 0), (1, False, 0), (2, True, 100)):
        got = tp.all_gather_linear(x, w, bias, chunks=chunks, overlap=overlap, sm_count=sm_count)
        assert got.shape == (m, n) and got.is_contiguous()
        assert torch.equal(bits(got), bits(want)), (chunks, overlap, sm_count)


@pytest.mark.parametrize("dtype", DTYPES)
def test_row_blocks_of_one_product_have_its_bits(world_of_one, dtype) -> None:
    # What the overlap rests on: tcgemm's rows do not depend on the rows a call has.
    m, n, k = 1000, 1536, 512
    x, w = rand(m, k, dtype=dtype, seed=1), rand(n, k, dtype=dtype, seed=2)
    bias = rand(n, dtype=torch.float32, seed=3)
    want = tcgemm.linear(x, w, bias)
    out = torch.full((m, n), float("nan"), dtype=dtype, device="cuda")
    products = tp._TcgemmProducts()
    for lo, hi in _tp.row_blocks(m, 5):
        products.mm_into(x[lo:hi], w.t(), bias, out[lo:hi], 0)
    assert torch.equal(bits(out), bits(want))


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_reduce_scatter_of_one_rank(world_of_one, dtype) -> None:
    x, w = rand(3, 256, 512, dtype=dtype, seed=4), rand(384, 512, dtype=dtype, seed=5)
    bias = rand(384, dtype=dtype, seed=6)
    # One partial product, rounded once, plus the bias in float32, rounded once.
    want = (tcgemm.linear(x, w).float() + bias.float()).to(dtype)
    for chunks, overlap in ((1, True), (2, True), (1, False)):
        got = tp.linear_reduce_scatter(x, w, bias, chunks=chunks, overlap=overlap)
        assert torch.equal(bits(got), bits(want)), (chunks, overlap)


def test_gradients_of_one_rank(world_of_one) -> None:
    dtype = torch.bfloat16
    x = rand(256, 512, dtype=dtype, seed=7).requires_grad_(True)
    w1 = rand(768, 512, dtype=dtype, seed=8).requires_grad_(True)
    b1 = rand(768, dtype=dtype, seed=9).requires_grad_(True)
    w2 = rand(512, 768, dtype=dtype, seed=10).requires_grad_(True)
    grad = rand(256, 512, dtype=dtype, seed=11)
    (tp.linear_reduce_scatter(tp.all_gather_linear(x, w1, b1), w2) * grad).sum().backward()
    leaves = [t.detach().float().requires_grad_(True) for t in (x, w1, b1, w2)]
    ((leaves[0] @ leaves[1].t() + leaves[2]) @ leaves[3].t() * grad.float()).sum().backward()
    for got, want in zip((x, w1, b1, w2), leaves):
        assert_grad_close(got.grad, want.grad)


def test_compiled_layers_match_eager_bits(world_of_one) -> None:
    dtype = torch.bfloat16
    x, w1 = rand(512, 1024, dtype=dtype, seed=12), rand(2048, 1024, dtype=dtype, seed=13)
    w2 = rand(1024, 2048, dtype=dtype, seed=14)

    def mlp(x, w1, w2):
        return tp.linear_reduce_scatter(torch.relu(tp.all_gather_linear(x, w1, chunks=2)), w2, chunks=2)

    compiled = torch.compile(mlp, fullgraph=True)
    assert torch.equal(bits(compiled(x, w1, w2)), bits(mlp(x, w1, w2)))


@pytest.mark.parametrize("overlap", [True, False])
def test_layers_capture_in_a_cuda_graph(world_of_one, overlap) -> None:
    dtype = torch.bfloat16
    x, w = rand(384, 512, dtype=dtype, seed=15), rand(1024, 512, dtype=dtype, seed=16)
    w2 = rand(512, 1024, dtype=dtype, seed=17)
    out = {}

    def step():
        out["y"] = tp.linear_reduce_scatter(tp.all_gather_linear(x, w, overlap=overlap), w2, overlap=overlap)

    graph = capture_graph(step, "thread_local")
    x.copy_(rand(384, 512, dtype=dtype, seed=18))  # a replay reads the new input
    want = tp.linear_reduce_scatter(tp.all_gather_linear(x, w, overlap=overlap), w2, overlap=overlap)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(bits(out["y"]), bits(want))


def test_opcheck(world_of_one) -> None:
    name = world_of_one.group_name
    x = rand(200, 256, dtype=torch.bfloat16, seed=19).requires_grad_(True)
    w = rand(384, 256, dtype=torch.bfloat16, seed=20).requires_grad_(True)
    bias = rand(384, dtype=torch.float32, seed=21).requires_grad_(True)
    torch.library.opcheck(tp.all_gather_mm, (x, w.t(), bias, name, 2, True, True, 66))
    torch.library.opcheck(tp.mm_reduce_scatter, (x, w.t(), None, name, 1, True, 0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_autocast_runs_float32_operands_in_its_dtype(world_of_one, dtype) -> None:
    x, w, bias = rand(96, 256, dtype=torch.float32, seed=7), rand(64, 256, dtype=torch.float32, seed=8), \
        rand(64, dtype=torch.float32, seed=9)
    w.requires_grad_(True)
    with torch.autocast("cuda", dtype=dtype):
        y = tp.all_gather_linear(x, w, bias)
        z = tp.linear_reduce_scatter(x, w, bias)
    xc, wc, bc = x.to(dtype), w.detach().to(dtype), bias.to(dtype)
    assert y.dtype == dtype and torch.equal(bits(y), bits(tcgemm.linear(xc, wc, bc)))
    # (The reduce-scatter: the partial product rounded once, plus the bias in float32, rounded once.)
    want_z = (tcgemm.linear(xc, wc).float() + bc.float()).to(dtype)
    assert z.dtype == dtype and torch.equal(bits(z), bits(want_z))
    y.float().sum().backward()
    assert w.grad is not None and w.grad.dtype == torch.float32


def test_refusals_before_anything_is_sent(world_of_one) -> None:
    x, w = rand(64, 128, dtype=torch.bfloat16, seed=1), rand(32, 128, dtype=torch.bfloat16, seed=2)
    with pytest.raises(TypeError, match="both float16 or both bfloat16"):
        tp.all_gather_linear(x.float(), w.float())
    with pytest.raises(ValueError, match="one CUDA device"):
        tp.linear_reduce_scatter(x.cpu(), w.cpu())
    with pytest.raises(ValueError, match="must equal weight's in_features"):
        tp.all_gather_linear(x, w[:, :64])
    with pytest.raises(TypeError, match="bias must be"):
        tp.all_gather_linear(x, w, torch.zeros(32, dtype=torch.float64, device="cuda"))
    with pytest.raises(ValueError, match="bias must be on x's device"):
        tp.all_gather_linear(x, w, torch.zeros(32, dtype=torch.bfloat16))


# Two GPUs: a world of two processes.


def _two_rank_checks(rank: int, world: int) -> None:
    dtype = torch.bfloat16
    rows, k, n = 1000, 1024, 1536  # 1000 rows a rank: blocks that are not whole tiles too
    x = rand(world * rows, k, dtype=dtype, seed=21)
    w = rand(world * n, k, dtype=dtype, seed=22)
    bias = rand(world * n, dtype=dtype, seed=23)
    mine, cols = slice(rank * rows, (rank + 1) * rows), slice(rank * n, (rank + 1) * n)
    # Column-parallel: the bits of one tcgemm.linear over the gathered x, on every rank.
    want = tcgemm.linear(x, w[cols], bias[cols])
    for chunks, overlap, sm_count in ((1, True, 0), (4, True, 0), (1, False, 0), (2, True, 116)):
        got = tp.all_gather_linear(x[mine], w[cols], bias[cols], chunks=chunks, overlap=overlap, sm_count=sm_count)
        assert torch.equal(bits(got), bits(want)), ("all_gather_linear", chunks, overlap, sm_count)
    # Row-parallel: the rank-order sum of each rank's tcgemm partial product, every mode, every repeat.
    k_cols = slice(rank * (k // world), (rank + 1) * (k // world))
    partials = [tcgemm.linear(x[mine, r * (k // world):(r + 1) * (k // world)],
                              w[:n, r * (k // world):(r + 1) * (k // world)]) for r in range(world)]
    want = _tp.sum_in_rank_order(partials, bias[:n], dtype)
    for chunks, overlap, sm_count in ((1, True, 0), (3, True, 0), (1, False, 0), (1, True, 0), (2, True, 116)):
        got = tp.linear_reduce_scatter(x[:, k_cols], w[:n, k_cols], bias[:n], chunks=chunks, overlap=overlap,
                                       sm_count=sm_count)
        assert torch.equal(bits(got), bits(want)), ("linear_reduce_scatter", chunks, overlap)
    # Gradients across ranks, against float32 autograd of the unsharded layers.
    xs = x[mine].clone().requires_grad_(True)
    w1 = w[cols].clone().requires_grad_(True)
    w2 = rand(k, world * n, dtype=dtype, seed=24)
    w2s = w2[:, cols].clone().requires_grad_(True)
    grad = rand(world * rows, k, dtype=dtype, seed=25)
    (tp.linear_reduce_scatter(tp.all_gather_linear(xs, w1, chunks=2), w2s, chunks=2) * grad[mine]).sum().backward()
    ref = [t.float().requires_grad_(True) for t in (x, w, w2)]
    ((ref[0] @ ref[1].t()) @ ref[2].t() * grad.float()).sum().backward()
    assert_grad_close(xs.grad, ref[0].grad[mine])
    assert_grad_close(w1.grad, ref[1].grad[cols])
    assert_grad_close(w2s.grad, ref[2].grad[:, cols])
    # The layers compiled, and captured in a CUDA graph (the transfers too): eager's bits.
    x_in, out = x[mine].clone(), {}

    def mlp(x_in):
        return tp.linear_reduce_scatter(tp.all_gather_linear(x_in, w[cols], chunks=2, sm_count=116), w2[:, cols],
                                        chunks=2, sm_count=116)

    def step():
        out["y"] = mlp(x_in)

    eager = mlp(x_in)
    assert torch.equal(bits(torch.compile(mlp, fullgraph=True)(x_in)), bits(eager))
    graph = capture_graph(step, "thread_local")
    x_in.copy_(rand(rows, k, dtype=dtype, seed=26 + rank))
    want = mlp(x_in)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(bits(out["y"]), bits(want))


def _run_rank(rank: int, world: int, store: str, out_dir: str) -> None:
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{store}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120), device_id=torch.device("cuda", rank))
    error = None
    try:
        _two_rank_checks(rank, world)
        dist.barrier()
    except Exception:  # noqa: BLE001 - reported by the test
        error = traceback.format_exc()
    finally:
        Path(out_dir, f"rank{rank}.json").write_text(json.dumps(error))
        dist.destroy_process_group()


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_two_ranks(tmp_path) -> None:
    import torch.multiprocessing as mp

    mp.spawn(_run_rank, args=(2, str(tmp_path / "store"), str(tmp_path)), nprocs=2, join=True)
    for rank in range(2):
        error = json.loads((tmp_path / f"rank{rank}.json").read_text())
        assert error is None, f"rank {rank}:\n{error}"
