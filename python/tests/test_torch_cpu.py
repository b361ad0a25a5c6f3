"""The torch operators where no GPU is needed: their fake (meta)
implementations, their autograd formulas as torch.compile traces them (with
dynamic sizes), torch.export, and the refusal of CPU tensors. Meta tensors carry shapes,
strides and dtypes but no data, so every call here runs the same Python and
C++ code a CUDA call runs, up to the kernel. Needs torch and the installed
package, not a device: scripts/test.sh builds the package wherever torch is a
CUDA build, so these run in CI. Skipped, saying why, elsewhere.
"""

from __future__ import annotations

import importlib.util

import pytest


def _skip_reason() -> str | None:
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed"
    if importlib.util.find_spec("tcgemm") is None:
        return "the tcgemm package is not installed (pip install --no-build-isolation . from the checkout)"
    return None


_skip = _skip_reason()
if _skip:
    pytest.skip(_skip, allow_module_level=True)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

import tcgemm  # noqa: E402

META = "meta"
BF16 = torch.bfloat16


def meta(*shape: int, dtype: torch.dtype = BF16, grad: bool = False) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype, device=META, requires_grad=grad)


@pytest.mark.parametrize("m", [0, 1, 17, 64])
def test_fake_shapes_are_torchs(m: int) -> None:
    # The shapes (and dtype) torch's own functions give, for every operator.
    a, b = meta(m, 96), meta(96, 40)
    assert tcgemm.matmul(a, b).shape == torch.matmul(a, b).shape
    w, bias = meta(40, 96), meta(40, dtype=torch.float32)
    for x in (meta(96), meta(m, 96), meta(3, m, 96), meta(2, 3, m, 96)):
        for act in (None, "relu", "gelu", "gelu_tanh", "silu"):
            y = tcgemm.linear(x, w, bias, act)
            assert y.shape == F.linear(x, w).shape and y.dtype == BF16, (x.shape, act)
    for batch_a, batch_b in ((5, 5), (5, 1), (1, 5), (0, 1)):
        got = tcgemm.bmm(meta(batch_a, m, 96), meta(batch_b, 96, 40))
        assert got.shape == (max(batch_a, batch_b) if min(batch_a, batch_b) else 0, m, 40)
    offs = torch.empty(4, dtype=torch.int32, device=META)
    assert tcgemm.grouped_mm(meta(m, 96), meta(4, 96, 40), offs).shape == (m, 40)


def test_fake_bmm_strides_are_the_ops() -> None:
    # One row and N not a multiple of 8: each problem's row starts 8 elements apart (bmm's docstring).
    assert tcgemm.bmm(meta(6, 1, 32), meta(6, 32, 12)).stride() == (16, 16, 1)
    assert tcgemm.bmm(meta(6, 3, 32), meta(6, 32, 12)).stride() == (36, 12, 1)


@pytest.mark.parametrize("call, error, words", [
    (lambda: tcgemm.matmul(meta(8, 16), meta(24, 8)), ValueError, "shapes do not match"),
    (lambda: tcgemm.matmul(meta(8, 16, dtype=torch.float32), meta(16, 8, dtype=torch.float32)), TypeError,
     "not supported"),
    (lambda: tcgemm.matmul(meta(8, 16), meta(16, 8, dtype=torch.float16)), TypeError, "same dtype"),
    (lambda: tcgemm.linear(meta(8, 16), meta(24, 8)), ValueError, "in_features"),
    (lambda: tcgemm.linear(meta(), meta(24, 8)), ValueError, "x must have at least 1 dimension"),
    (lambda: tcgemm.linear(meta(8, 16), meta(24, 16), meta(23)), ValueError, "bias must be [24]"),
    (lambda: tcgemm.linear(meta(8, 16), meta(24, 16), meta(24, dtype=torch.float16)), TypeError, "bias must be"),
    (lambda: tcgemm.linear(meta(8, 16), meta(24, 16), None, "tanh"), ValueError, "unknown activation"),
    (lambda: tcgemm.bmm(meta(3, 8, 16), meta(2, 16, 8)), ValueError, "batch sizes"),
    (lambda: tcgemm.bmm(meta(8, 16), meta(16, 8)), ValueError, "3-D"),
    (lambda: tcgemm.grouped_mm(meta(8, 16), meta(4, 16, 8), torch.empty(4, device=META)), TypeError, "int32"),
    (lambda: tcgemm.grouped_mm(meta(8, 16), meta(257, 16, 8), torch.empty(257, dtype=torch.int32, device=META)),
     ValueError, "groups must number 1 to 256"),
    (lambda: tcgemm.grouped_mm(meta(8, 12), meta(4, 12, 8), torch.empty(4, dtype=torch.int32, device=META)),
     ValueError, "K and N must be multiples of 8"),
    (lambda: tcgemm.matmul(meta(8, 16), meta(16, 8), out=meta(8, 8).t()), ValueError, "out must be row-major"),
    (lambda: torch.ops.tcgemm.linear_out(meta(8, 16), meta(24, 16), None, 0, meta(24, 8).t()), ValueError,
     "out must be row-major"),
])
def test_fake_refusals_say_what_is_wrong(call, error, words: str) -> None:
    with pytest.raises(error, match="tcgemm") as info:
        call()
    assert words in str(info.value)


@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu"])
def test_double_backward_through_every_activation(activation: str | None) -> None:
    # A gradient penalty (create_graph=True, then backward through the
    # gradients) through each fused activation: silu's backward operator has
    # no derivative of its own, so its formula must be differentiable there.
    x, w, bias = meta(4, 16, grad=True), meta(8, 16, grad=True), meta(8, dtype=torch.float32, grad=True)
    y = tcgemm.linear(x, w, bias, activation)
    gx, gw = torch.autograd.grad(y, (x, w), torch.empty_like(y), create_graph=True)
    assert gx.requires_grad and gw.requires_grad
    (gx.sum() + gw.sum()).backward()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape
    # (Without an activation the gradients do not depend on the bias.)
    assert (bias.grad is None) == (activation is None)


# The two-operand operators by name, with the shapes of their operands (a, b).
PRODUCTS = {"linear": (tcgemm.linear, (4, 16), (8, 16)), "matmul": (tcgemm.matmul, (4, 16), (16, 8)),
            "bmm": (tcgemm.bmm, (2, 4, 16), (2, 16, 8))}


@pytest.mark.parametrize("op", PRODUCTS)
def test_forward_mode_ad_is_refused_by_name(op: str) -> None:
    # No tangent formula: a result without a tangent would read as zeros in
    # torch.func.jvp, so an input that carries one is refused.
    import torch.autograd.forward_ad as fwAD
    fn, a_shape, b_shape = PRODUCTS[op]
    a, b = meta(*a_shape), meta(*b_shape)
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match=f"tcgemm.{op}: forward-mode automatic differentiation"):
            fn(fwAD.make_dual(a, torch.empty_like(a)), b)
        with pytest.raises(NotImplementedError, match="forward-mode"):
            fn(a, fwAD.make_dual(b, torch.empty_like(b)))
    with pytest.raises(NotImplementedError, match="forward-mode"):
        torch.func.jvp(lambda t: fn(t, b), (a,), (torch.empty_like(a),))
    assert fn(a, b).shape == (torch.matmul(a, b.mT if op == "linear" else b)).shape  # (and without tangents: runs)


@pytest.mark.parametrize("op", PRODUCTS)
def test_backward_keeps_only_the_operands_it_reads(op: str) -> None:
    # As torch's own formulas: x is kept for the weight's gradient only. With
    # the weight frozen, x may change in place after the forward, or come
    # from inference mode, and the backward still runs (it would fail on a
    # kept x, whose version changed or which cannot be saved).
    fn, a_shape, b_shape = PRODUCTS[op]
    x0 = meta(*a_shape, grad=True)
    h = x0 * 2
    y = fn(h, meta(*b_shape))
    h.mul_(3)  # (x changed after the forward)
    y.backward(torch.empty_like(y))
    assert x0.grad.shape == x0.shape
    if op == "linear":
        # Only the bias trainable, x made under inference mode.
        with torch.inference_mode():
            x = meta(4, 16)
        w, bias = meta(8, 16), meta(8, dtype=torch.float32, grad=True)
        y = tcgemm.linear(x, w, bias)
        y.backward(torch.empty_like(y))
        assert bias.grad.shape == bias.shape and bias.grad.dtype == torch.float32


def test_cpu_tensors_are_refused_by_name() -> None:
    a, b = torch.ones(8, 16, dtype=BF16), torch.ones(16, 8, dtype=BF16)
    with pytest.raises(ValueError, match="a is on cpu; tcgemm computes on CUDA tensors only"):
        tcgemm.matmul(a, b)
    with pytest.raises(ValueError, match="CUDA tensors only"):
        tcgemm.linear(a, b.t())
    with pytest.raises(ValueError, match="CUDA tensors only"):
        tcgemm.bmm(a[None], b[None])
    out = torch.full((8, 8), float("nan"), dtype=BF16)
    with pytest.raises(ValueError, match="CUDA tensors only"):
        tcgemm.matmul(a, b, out=out)
    assert out.isnan().all()  # refused: nothing written


def _compiled_once(step, sizes, mark) -> None:
    """Runs step(size, compiled) for each size (eager first, then compiled),
    marking the dynamic dimension on the first compiled call (mark), and
    checks that torch.compile traced one graph for all of them."""
    torch._dynamo.reset()
    counters.clear()
    for i, size in enumerate(sizes):
        step(size, None)
        step(size, mark if i == 0 else (lambda *tensors: None))
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])
    torch._dynamo.reset()


@pytest.mark.parametrize("activation", [None, "gelu"])
@pytest.mark.parametrize("rank", [2, 3])
def test_compile_trains_linear_with_dynamic_rows(rank: int, activation: str | None) -> None:
    # A training step whose batch (2-D x) or sequence length (3-D x) changes
    # from call to call, marked dynamic: the forward and the backward (which
    # reshapes by x's leading sizes) are traced once for all of them, as
    # F.linear's are, and every gradient has its input's shape.
    w, bias = meta(32, 64, grad=True), meta(32, dtype=torch.float32, grad=True)
    compiled = torch.compile(lambda x: tcgemm.linear(x, w, bias, activation), backend="aot_eager",
                             fullgraph=True)

    def step(rows: int, mark) -> None:
        x = meta(*((3,) if rank == 3 else ()), rows, 64, grad=True)
        if mark is not None:
            mark(x)
        fn = compiled if mark is not None else (lambda x: tcgemm.linear(x, w, bias, activation))
        w.grad = bias.grad = None
        y = fn(x)
        assert y.shape == (*x.shape[:-1], 32)
        y.backward(torch.empty_like(y))
        assert x.grad.shape == x.shape and w.grad.shape == w.shape and bias.grad.shape == bias.shape
        assert bias.grad.dtype == torch.float32

    _compiled_once(step, (17, 5, 33, 2), lambda x: torch._dynamo.mark_dynamic(x, rank - 2))


@pytest.mark.parametrize("broadcast_b", [False, True])
def test_compile_trains_bmm_with_dynamic_batch(broadcast_b: bool) -> None:
    # Attention-like products whose batch (heads x sequences) changes, marked
    # dynamic; with broadcast_b, b is one matrix for the whole batch and its
    # gradient the batch's sum.
    compiled = torch.compile(tcgemm.bmm, backend="aot_eager", fullgraph=True)
    b_shared = meta(1, 32, 24, grad=True)

    def step(batch: int, mark) -> None:
        a = meta(batch, 16, 32, grad=True)
        b = b_shared if broadcast_b else meta(batch, 32, 24, grad=True)
        b.grad = None
        if mark is not None:
            mark(a, b)
        y = (compiled if mark is not None else tcgemm.bmm)(a, b)
        assert y.shape == (batch, 16, 24)
        y.backward(torch.empty_like(y))
        assert a.grad.shape == a.shape and b.grad.shape == b.shape

    def mark(a: torch.Tensor, b: torch.Tensor) -> None:
        torch._dynamo.mark_dynamic(a, 0)
        if not broadcast_b:
            torch._dynamo.mark_dynamic(b, 0)

    _compiled_once(step, (6, 3, 10, 2), mark)


def test_compile_trains_matmul_with_dynamic_rows() -> None:
    w = meta(64, 48, grad=True)
    compiled = torch.compile(tcgemm.matmul, backend="aot_eager", fullgraph=True)

    def step(rows: int, mark) -> None:
        x = meta(rows, 64, grad=True)
        if mark is not None:
            mark(x)
        w.grad = None
        y = (compiled if mark is not None else tcgemm.matmul)(x, w)
        y.backward(torch.empty_like(y))
        assert x.grad.shape == x.shape and w.grad.shape == w.shape

    _compiled_once(step, (9, 40, 3), lambda x: torch._dynamo.mark_dynamic(x, 0))


def test_compile_in_place_and_grouped_with_dynamic_rows() -> None:
    # Inference steps whose rows change: the in-place operators (functionalized by torch.compile) into a
    # buffer of those rows, and the M-grouped product; one graph each for every number of rows >= 2.
    w = meta(64, 48)
    experts, offs = meta(4, 64, 48), torch.empty(4, dtype=torch.int32, device=META)

    def in_place(x: torch.Tensor) -> torch.Tensor:
        out = x.new_empty(x.shape[0], 48)
        tcgemm.matmul(x, w, out=out)
        torch.ops.tcgemm.linear_out(x, w.t(), None, 1, out)
        return out

    for fn in (in_place, lambda x: tcgemm.grouped_mm(x, experts, offs)):
        compiled = torch.compile(fn, backend="aot_eager", fullgraph=True)

        def step(rows: int, mark) -> None:
            x = meta(rows, 64)
            if mark is not None:
                mark(x)
            with torch.no_grad():
                assert (compiled if mark is not None else fn)(x).shape == (rows, 48)

        _compiled_once(step, (17, 5, 33), lambda x: torch._dynamo.mark_dynamic(x, 0))


def test_export_keeps_the_operators_with_a_dynamic_batch() -> None:
    # torch.export (the path to AOTInductor and other deployments): the operators stay in the exported
    # graph as themselves, with the batch a symbol, and the exported program runs at another batch.
    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.up = torch.nn.Linear(64, 128, dtype=BF16, device=META)
            self.down = torch.nn.Linear(128, 32, dtype=BF16, device=META)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = tcgemm.linear(x, self.up.weight, self.up.bias, "gelu")
            scores = tcgemm.bmm(x[None], self.up.weight.t()[None])[0]
            return tcgemm.linear(h, self.down.weight) + tcgemm.matmul(scores, self.down.weight.t())

    batch = torch.export.Dim("batch", min=2)
    program = torch.export.export(Block(), (meta(17, 64),), dynamic_shapes={"x": {0: batch}})
    targets = [str(node.target) for node in program.graph.nodes if node.op == "call_function"]
    for op in ("tcgemm.linear.default", "tcgemm.bmm.default", "tcgemm.mm.default"):
        assert op in targets, targets
    assert program.module()(meta(5, 64)).shape == (5, 32)


def test_export_of_a_one_row_bmm_over_key_lengths_in_whole_eights() -> None:
    # README, "Tracing bmm's one-row case": a decoding step's scores (one query row against a
    # key length L) exported with L = 8 * Dim: one program for every such length, with the
    # op's own strides at each.
    class Scores(torch.nn.Module):
        def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
            return tcgemm.bmm(q, k.transpose(1, 2))

    length = 8 * torch.export.Dim("l", min=1, max=512)
    program = torch.export.export(Scores(), (meta(2, 1, 64), meta(2, 16, 64)),
                                  dynamic_shapes={"q": None, "k": {1: length}})
    for keys in (8, 24, 4096):
        got = program.module()(meta(2, 1, 64), meta(2, keys, 64))
        want = tcgemm.bmm(meta(2, 1, 64), meta(2, keys, 64).transpose(1, 2))
        assert got.shape == want.shape and got.stride() == want.stride(), (keys, got.stride(), want.stride())


def test_a_patched_model_on_the_meta_device_exports_tcgemms_operator() -> None:
    # Large models are exported on the meta device: a patched layer must put tcgemm.linear in
    # the graph there (meta counts as CUDA), not fall back to aten.linear without a word.
    model = torch.nn.Sequential(torch.nn.Linear(64, 32, dtype=BF16, device=META), torch.nn.GELU(approximate="tanh"))
    tcgemm.patch_linear(model)
    program = torch.export.export(model, (meta(4, 64),), dynamic_shapes=({0: torch.export.Dim("rows", min=2)},))
    targets = [str(node.target) for node in program.graph.nodes if node.op == "call_function"]
    assert "tcgemm.linear.default" in targets and "aten.linear.default" not in targets, targets
    assert model[0].fallbacks == 0
    assert program.module()(meta(9, 64)).shape == (9, 32)


def test_fx_symbolic_trace_of_a_patched_model_calls_tcgemms_operator() -> None:
    # torch.fx traces into tcgemm.nn.Linear (only torch's own modules are its leaves): the
    # graph calls the operator, with the fused activation, and runs on meta tensors.
    model = torch.nn.Sequential(torch.nn.Linear(64, 32, dtype=BF16, device=META), torch.nn.ReLU(),
                                torch.nn.Linear(32, 8, dtype=BF16, device=META))
    tcgemm.patch_linear(model)
    graph_module = torch.fx.symbolic_trace(model)
    calls = [node.args for node in graph_module.graph.nodes if node.target is torch.ops.tcgemm.linear.default]
    assert [args[3] for args in calls] == [1, 0], graph_module.graph  # relu fused into the first
    assert graph_module(meta(5, 64)).shape == (5, 8)


def test_traced_operators_are_pt2_compliant() -> None:
    # torch.compile / torch.export with only_allow_pt2_compliant_ops take the traced operators;
    # plan and info answer the host and are not traced.
    for name in ("mm", "mm_out", "linear", "linear_out", "bmm", "grouped_mm"):
        assert torch.Tag.pt2_compliant_tag in getattr(torch.ops.tcgemm, name).default.tags, name
    for name in ("plan", "info"):
        assert torch.Tag.pt2_compliant_tag not in getattr(torch.ops.tcgemm, name).default.tags, name


@pytest.mark.parametrize("op, args", [
    ("linear", lambda: (meta(3, 5, 64, grad=True), meta(32, 64, grad=True),
                        meta(32, dtype=torch.float32, grad=True), 4)),
    ("mm", lambda: (meta(17, 64, grad=True), meta(64, 40, grad=True))),
    ("bmm", lambda: (meta(3, 1, 64, grad=True), meta(3, 64, 13, grad=True))),
])
def test_opcheck_on_meta_tensors(op: str, args) -> None:
    # The schema, fake implementation and autograd registration agree (torch.library.opcheck's
    # checks that need no data).
    torch.library.opcheck(getattr(torch.ops.tcgemm, op).default, args(),
                          test_utils=("test_schema", "test_autograd_registration", "test_faketensor"))
