"""tcgemm.linear, torch.ops.tcgemm.linear, tcgemm.nn.Linear and patch_linear
on a GPU: results against torch's unfused path (F.linear, then the
activation), leading dimensions, fp32 bias, gradients, opcheck,
torch.compile, CUDA graphs, and the patch round trip. Skipped without torch
or a GPU tcgemm runs on.
"""

from __future__ import annotations

import copy

import pytest

from conftest import gpu_skip_reason

_skip = gpu_skip_reason()
if _skip:
    pytest.skip(_skip, allow_module_level=True)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tcgemm  # noqa: E402
import tcgemm.nn  # noqa: E402

ACTIVATIONS = [None, "relu", "gelu", "gelu_tanh", "silu"]
DTYPES = [torch.float16, torch.bfloat16]


def unfused(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None, activation: str | None) -> torch.Tensor:
    """torch's path in float32 (the reference): F.linear, then the activation, rounded once at the end."""
    y = F.linear(x.float(), w.float(), None if b is None else b.float())
    if activation == "relu":
        y = F.relu(y)
    elif activation == "silu":
        y = F.silu(y)
    elif activation in ("gelu", "gelu_tanh"):
        y = F.gelu(y, approximate="tanh" if activation == "gelu_tanh" else "none")
    return y.to(x.dtype)


def tensors(shape: tuple[int, ...], n: int, dtype: torch.dtype, bias: str, seed: int):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    k = shape[-1]
    x = torch.randn(*shape, device="cuda", dtype=dtype, generator=gen)
    w = torch.randn(n, k, device="cuda", dtype=dtype, generator=gen) / k ** 0.5
    b = None
    if bias != "none":
        b = torch.randn(n, device="cuda", dtype=torch.float32 if bias == "f32" else dtype, generator=gen)
    return x, w, b


def assert_close(got: torch.Tensor, want: torch.Tensor, dtype: torch.dtype) -> None:
    # One rounding of an fp32 result each side, plus the fp32 sums' order.
    tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
    torch.testing.assert_close(got.float(), want.float(), atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("bias", ["none", "same", "f32"])
@pytest.mark.parametrize("shape", [(1, 256), (7, 256), (2, 33, 256), (4, 8, 16, 512)])
def test_matches_torchs_unfused_path(dtype, activation, bias, shape) -> None:
    x, w, b = tensors(shape, 320, dtype, bias, seed=len(shape) * 100 + shape[0])
    y = tcgemm.linear(x, w, b, activation)
    assert y.shape == (*shape[:-1], 320) and y.dtype == dtype
    assert_close(y, unfused(x, w, b, activation), dtype)


def test_rows_do_not_depend_on_the_batch() -> None:
    x, w, b = tensors((64, 512), 768, torch.bfloat16, "f32", seed=7)
    full = tcgemm.linear(x, w, b, "silu")
    for rows in (1, 3, 16):
        assert torch.equal(tcgemm.linear(x[:rows], w, b, "silu"), full[:rows])


def test_rows_do_not_depend_on_the_batch_across_kernels() -> None:
    # 129-176, 193-224 and 257-320 tokens of a wide layer run the swapped kernel (C^T = W x^T, its
    # width fitted to the tokens: 136 at 129-136, 152 at 145-152, 200 at 193-200, two tiles of 152 at
    # 300, those of 257-320 tokens 256 rows of W high), 177-192 the 256-row tile, 321-352 the
    # 128-row tiles, a few tokens the decode tiles: every row is the same bits whichever ran it.
    x, w, b = tensors((320, 512), 14336, torch.bfloat16, "f32", seed=11)
    assert tcgemm.plan(x, w.t()).swap_ab
    assert not tcgemm.plan(x[:184], w.t()).swap_ab
    full = tcgemm.linear(x, w, b, "silu")
    assert_close(full, unfused(x, w, b, "silu"), torch.bfloat16)
    assert tcgemm.plan(x[:150], w.t()).block_n == 152
    assert tcgemm.plan(x[:200], w.t()).block_n == 200
    tall = tcgemm.plan(x[:300], w.t())
    assert tall.swap_ab and (tall.block_m, tall.block_n) == (256, 152), tall
    for rows in (1, 8, 64, 129, 136, 150, 152, 160, 176, 184, 193, 200, 256, 288, 300):
        assert torch.equal(tcgemm.linear(x[:rows], w, b, "silu"), full[:rows]), rows


def test_refusals_name_the_problem() -> None:
    x, w, b = tensors((8, 64), 32, torch.float16, "same", seed=1)
    with pytest.raises(ValueError, match="unknown activation"):
        tcgemm.linear(x, w, b, "tanh")
    with pytest.raises(ValueError, match="bias must be"):
        tcgemm.linear(x, w, b[:16])
    with pytest.raises(TypeError, match="bias must be"):
        tcgemm.linear(x, w, b.double())
    with pytest.raises(ValueError, match="last dimension"):
        tcgemm.linear(x[:, :32], w, b)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_gradients_match_torch(activation) -> None:
    x, w, b = tensors((5, 12, 256), 192, torch.bfloat16, "same", seed=3)
    xs = [t.detach().float().requires_grad_() for t in (x, w, b)]
    xt = [t.detach().requires_grad_() for t in (x, w, b)]
    y = tcgemm.linear(*xt, activation)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(11)
    grad = torch.randn(y.shape, device="cuda", dtype=y.dtype, generator=gen)
    y.backward(grad)
    ref = unfused(xs[0], xs[1], xs[2], activation)  # float32 throughout
    ref.backward(grad.float())
    # Element-wise bound from the numerics. The bf16 path rounds the
    # pre-activation z (the backward recomputes it), then grad * act'(z), then
    # each gradient GEMM's result, each to 2^-8 relative. A rounding of z moves
    # act'(z) by at most |z act''(z)| 2^-8 <= 2^-8 (0.6 for gelu and silu, 0 for
    # relu), act' itself is at most 1.13: every term of a gradient's sum is off
    # by at most 2^-8 * (0.6 + 1.13 + 2^-8) |grad| |other operand|, and the sum
    # once more by 2^-8 of itself. Bounded with 2 * 2^-8 per term.
    u = 2.0 ** -8
    g = grad.float().abs().reshape(-1, 192)
    terms = (
        g @ w.float().abs(),  # dx = dz @ W
        g.t() @ x.float().abs().reshape(-1, 256),  # dW = dz^T @ x
        g.sum(0),  # db = sum of dz over rows
    )
    for i, (got, want, term) in enumerate(zip(xt, xs, terms)):
        bound = 2 * u * term.reshape(want.grad.shape) + u * want.grad.abs() + 1e-6
        err = (got.grad.float() - want.grad).abs()
        worst = int((err - bound).argmax())
        assert bool((err <= bound).all()), (
            f"gradient {i}: |error| {err.flatten()[worst]:.4g} > bound {bound.flatten()[worst]:.4g} at {worst}"
        )


def test_opcheck_linear() -> None:
    x, w, b = tensors((6, 10, 128), 96, torch.float16, "f32", seed=4)
    torch.library.opcheck(torch.ops.tcgemm.linear.default, (x, w, b, 4))
    torch.library.opcheck(torch.ops.tcgemm.linear.default, (x.requires_grad_(), w.requires_grad_(), None, 1))


def test_compile_fullgraph_and_graphs() -> None:
    x, w, b = tensors((4, 256), 512, torch.bfloat16, "same", seed=5)
    f = torch.compile(lambda x: tcgemm.linear(x, w, b, "gelu"), fullgraph=True)
    assert torch.equal(f(x), tcgemm.linear(x, w, b, "gelu"))
    g = torch.cuda.CUDAGraph()
    static_x = x.clone()
    tcgemm.linear(static_x, w, b, "gelu")  # warm-up outside the capture
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        static_y = tcgemm.linear(static_x, w, b, "gelu")
    fresh = torch.randn_like(x)
    static_x.copy_(fresh)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(static_y, tcgemm.linear(fresh, w, b, "gelu"))


def test_nn_linear_is_a_torch_linear() -> None:
    layer = tcgemm.nn.Linear(256, 128, dtype=torch.bfloat16, device="cuda", activation="relu")
    assert isinstance(layer, torch.nn.Linear)
    assert set(layer.state_dict()) == {"weight", "bias"}
    x = torch.randn(3, 256, device="cuda", dtype=torch.bfloat16)
    assert_close(layer(x), unfused(x, layer.weight, layer.bias, "relu"), torch.bfloat16)
    with pytest.warns(UserWarning, match="not for tcgemm"):
        layer.float()(x.float())
    assert layer.fallbacks == 1


def test_patch_fuses_sequential_activations_and_unpatches() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.GELU(approximate="tanh"),
                                torch.nn.Linear(256, 64), torch.nn.SiLU()).to("cuda", torch.float16)
    originals = list(model)
    x = torch.randn(9, 128, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        want = model(x)
        tcgemm.patch_linear(model)
        assert [type(m).__name__ for m in model] == ["Linear", "Identity", "Linear", "Identity"]
        assert isinstance(model[0], tcgemm.nn.Linear) and model[0].activation == "gelu_tanh"
        assert model[0].weight is originals[0].weight  # the same Parameter, not a copy
        assert_close(model(x), want, torch.float16)
        tcgemm.unpatch_linear(model)
    assert list(model) == originals


def test_patch_keeps_shared_layers_hooks_and_mode() -> None:
    torch.manual_seed(2)
    shared = torch.nn.Linear(64, 64)
    hooked_relu = torch.nn.ReLU()
    hooked_relu.register_forward_hook(lambda module, inputs, output: None)
    model = torch.nn.Sequential(shared, shared, torch.nn.ReLU(), torch.nn.Linear(64, 32), torch.nn.GELU(),
                                torch.nn.Linear(32, 32), hooked_relu).to("cuda", torch.bfloat16).eval()
    seen = []
    model[3].register_forward_hook(lambda module, inputs, output: seen.append(output.clone()))
    x = torch.randn(5, 64, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        want = model(x)
        tcgemm.patch_linear(model)
        # The shared layer: one tcgemm Linear in both places, no activation fused into it (its first use
        # is not followed by the ReLU); a Linear or an activation with hooks of its own is not fused
        # either (the Linear's hook sees its own output, before the GELU).
        assert model[0] is model[1] and model[0].activation is None and type(model[2]) is torch.nn.ReLU
        assert model[3].activation is None and type(model[4]) is torch.nn.GELU
        assert model[5].activation is None and model[6] is hooked_relu
        assert not any(m.training for m in model)
        assert_close(model(x), want, torch.bfloat16)
    assert len(seen) == 2  # the hook of the original layer ran on the patched one too
    assert torch.equal(seen[1], tcgemm.linear(model[2](model[1](model[0](x))), model[3].weight, model[3].bias))
    tcgemm.unpatch_linear(model)
    assert model[0] is shared and model[1] is shared and type(model[4]) is torch.nn.GELU
    with pytest.raises(ValueError, match="from_linear"):
        tcgemm.patch_linear(torch.nn.Linear(8, 8))


def _fp32_model() -> torch.nn.Sequential:
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.GELU(),
                               torch.nn.Linear(256, 64, bias=False)).cuda()


def _hand_cast(model: torch.nn.Sequential, x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """What the patched fp32 model computes under autocast(dtype): every operand cast to dtype first."""
    h = tcgemm.linear(x.to(dtype), model[0].weight.to(dtype), model[0].bias.to(dtype), "gelu")
    return tcgemm.linear(h, model[2].weight.to(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_autocast_runs_an_fp32_model_on_tcgemm(dtype) -> None:
    model = _fp32_model()
    x = torch.randn(5, 7, 128, device="cuda")
    with torch.autocast("cuda", dtype=dtype):
        want = model(x)
    tcgemm.patch_linear(model)
    with torch.autocast("cuda", dtype=dtype):
        got = model(x)
        assert torch.equal(tcgemm.matmul(x[0], model[0].weight.t()), tcgemm.matmul(x[0].to(dtype),
                                                                                  model[0].weight.to(dtype).t()))
        assert tcgemm.bmm(x, x.transpose(1, 2)).dtype == dtype
        # plan() plans what matmul runs there: its operands cast, as matmul's are.
        planned = tcgemm.plan(x[0], model[0].weight.t())
        assert planned.status == "ok" and planned.kernel == tcgemm.plan(x[0].to(dtype),
                                                                        model[0].weight.to(dtype).t()).kernel
    assert got.dtype == dtype and want.dtype == dtype
    assert model[0].fallbacks == 0 and model[2].fallbacks == 0
    assert torch.equal(got, _hand_cast(model, x, dtype))
    assert_close(got, want, dtype)
    got.float().square().sum().backward()  # the gradients reach the fp32 parameters
    assert model[0].weight.grad.dtype == torch.float32 and torch.isfinite(model[0].weight.grad).all()
    assert model[2].weight.grad.dtype == torch.float32 and torch.isfinite(model[2].weight.grad).all()


def test_autocast_outside_a_compiled_model() -> None:
    # The autocast context around the compiled call, its dtype changing between calls. Each call runs in the
    # dtype torch's own compiled model runs in (torch 2.11 compiles an outer bfloat16 context as float16 for
    # its own linear too: the patched model must agree with the unpatched one, whatever torch does), with
    # the bits of tcgemm on operands cast to that dtype.
    torch._dynamo.reset()
    unpatched = _fp32_model()
    model = tcgemm.patch_linear(copy.deepcopy(unpatched))
    compiled, reference = torch.compile(model, fullgraph=True), torch.compile(unpatched, fullgraph=True)
    x = torch.randn(9, 128, device="cuda")
    with torch.no_grad():
        for dtype in (torch.bfloat16, torch.float16, torch.bfloat16):
            with torch.autocast("cuda", dtype=dtype):
                got, want = compiled(x), reference(x)
            assert got.dtype == want.dtype and got.dtype in DTYPES
            assert torch.equal(got, _hand_cast(model, x, got.dtype))
            assert_close(got, want, got.dtype)
        assert model[0].fallbacks == 0
    torch._dynamo.reset()


@pytest.mark.parametrize("leading", [(3,), (2, 5), (0,)])
def test_k_zero_is_the_activation_of_the_bias(leading) -> None:
    w = torch.empty(96, 0, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(96, device="cuda", dtype=torch.float32)
    y = tcgemm.linear(torch.empty(*leading, 0, device="cuda", dtype=torch.bfloat16), w, b, "gelu")
    assert y.shape == (*leading, 96)
    assert_close(y, F.gelu(b).to(torch.bfloat16).expand(*leading, 96), torch.bfloat16)


@pytest.mark.parametrize("activation", ["silu", None])
def test_operands_the_kernels_cannot_load_are_copied(activation) -> None:
    # A fused call has no cuBLAS fallback: x as a transposed view with unaligned rows, a weight sliced out
    # of a wider one, and K not a multiple of 8 (zero-padded) must still run, with the bits of the same
    # call on aligned copies.
    x, w, b = tensors((9, 512), 256, torch.bfloat16, "same", seed=11)
    xt = x.t().contiguous().t()  # [9, 512], column-major: rows 18 bytes apart
    assert xt.stride() == (1, 9)
    assert torch.equal(tcgemm.linear(xt, w, b, activation), tcgemm.linear(x, w, b, activation))
    wide = torch.cat([w, torch.randn(256, 4, device="cuda", dtype=torch.bfloat16)], dim=1)[:, :512]
    assert wide.stride() == (516, 1)
    assert torch.equal(tcgemm.linear(x, wide, b, activation), tcgemm.linear(x, w, b, activation))
    x100, w100, b100 = tensors((3, 7, 100), 96, torch.float16, "f32", seed=12)
    y = tcgemm.linear(x100, w100, b100, activation)
    padded = tcgemm.linear(F.pad(x100, (0, 4)), F.pad(w100, (0, 4)), b100, activation)
    assert torch.equal(y, padded)
    assert_close(y, unfused(x100, w100, b100, activation), torch.float16)
    # Contiguous but not 16-byte aligned (a view one element into a buffer): copied too.
    flat = torch.empty(1 + 9 * 512, device="cuda", dtype=torch.bfloat16)
    x_odd = flat[1:].view(9, 512)
    x_odd.copy_(x)
    assert x_odd.is_contiguous() and x_odd.data_ptr() % 16 != 0
    assert torch.equal(tcgemm.linear(x_odd, w, b, activation), tcgemm.linear(x, w, b, activation))


@pytest.mark.parametrize("n", [1, 33, 250])
@pytest.mark.parametrize("activation", ["gelu", None])
def test_fused_output_width_not_a_multiple_of_8(n, activation) -> None:
    # The kernels store C's rows 16 bytes apart: with a bias or activation (no cuBLAS fallback) and N % 8
    # != 0 the call computes into padded rows and returns a contiguous result, as F.linear's.
    x, w, b = tensors((2, 7, 256), n, torch.bfloat16, "f32", seed=13)
    y = tcgemm.linear(x, w, b, activation)
    assert y.shape == (2, 7, n) and y.is_contiguous()
    assert_close(y, unfused(x, w, b, activation), torch.bfloat16)
    # Each row as the same call on that row alone (batch invariance through the padded path).
    assert torch.equal(y[1, 3], tcgemm.linear(x[1, 3:4], w, b, activation)[0])
    layer = tcgemm.nn.Linear(256, n, activation=activation, device="cuda", dtype=torch.bfloat16)
    assert_close(layer(x), unfused(x, layer.weight, layer.bias, activation), torch.bfloat16)


@pytest.mark.parametrize("activation", ["silu", None])
def test_linear_out_writes_linears_bits_into_row_blocks(activation) -> None:
    # torch.ops.tcgemm.linear_out: the same call as linear, into an existing output (row blocks of one
    # tensor, as tcgemm.distributed writes them).
    x, w, b = tensors((300, 256), 200, torch.bfloat16, "f32", seed=14)
    want = tcgemm.linear(x, w, b, activation)
    out = torch.full((300, 200), float("nan"), device="cuda", dtype=torch.bfloat16)
    act = tcgemm._ops.ACTIVATIONS[activation]
    for lo, hi in ((0, 128), (128, 256), (256, 300)):
        torch.ops.tcgemm.linear_out(x[lo:hi], w, b, act, out[lo:hi])
    assert torch.equal(out, want)
    # Rows 16 bytes apart in a wider buffer (what a fused call with N % 8 != 0 needs).
    padded = torch.full((300, 208), float("nan"), device="cuda", dtype=torch.bfloat16)
    torch.ops.tcgemm.linear_out(x, w[:199], b[:199], act, padded[:, :199])
    assert torch.equal(padded[:, :199], tcgemm.linear(x, w[:199], b[:199], activation))
    assert padded[:, 199:].isnan().all()


def test_linear_out_refusals_leave_out_untouched() -> None:
    x, w, b = tensors((64, 128), 96, torch.float16, "same", seed=15)
    out = torch.full((64, 96), 7.0, device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="out must be"):
        torch.ops.tcgemm.linear_out(x, w, b, 0, out[:, :80])
    with pytest.raises(ValueError, match="x must be 2-D"):
        torch.ops.tcgemm.linear_out(x.view(2, 32, 128), w, b, 0, out)
    with pytest.raises(ValueError, match="bias must be"):
        torch.ops.tcgemm.linear_out(x, w, b[:10], 0, out)
    with pytest.raises(ValueError, match="unknown activation"):
        torch.ops.tcgemm.linear_out(x, w, b, 9, out)
    with pytest.raises(ValueError, match="overlaps"):
        torch.ops.tcgemm.linear_out(out[:, :64], w[:, :64], None, 0, out)  # x is a view of out
    assert (out == 7.0).all()
    torch.library.opcheck(torch.ops.tcgemm.linear_out.default, (x, w, b, 4, out))


def test_sm_count_bounds_the_kernel_not_the_bits() -> None:
    # The in-place operators' sm_count (tcgemm::Options::sm_count): the same bits on any number of SMs.
    x, w, b = tensors((1000, 512), 768, torch.bfloat16, "same", seed=16)
    want = tcgemm.linear(x, w, b, "relu")
    want_mm = tcgemm.matmul(x, w.t())
    for sm_count in (1, 7, 66, 131, 132, 1000):
        out = torch.full_like(want, float("nan"))
        torch.ops.tcgemm.linear_out(x, w, b, 1, out, sm_count)
        assert torch.equal(out, want), sm_count
        torch.ops.tcgemm.mm_out(x, w.t(), out, 1.0, 0.0, sm_count)
        assert torch.equal(out, want_mm), sm_count
    out = torch.full_like(want, 3.0)
    with pytest.raises(ValueError, match="sm_count must be 0"):
        torch.ops.tcgemm.mm_out(x, w.t(), out, 1.0, 0.0, -2)
    with pytest.raises(ValueError, match="sm_count must be 0"):
        torch.ops.tcgemm.linear_out(x, w, b, 0, out, -1)
    assert (out == 3.0).all()


def test_in_place_operators_bump_the_version_of_out() -> None:
    # As torch's own out= operators: autograd then refuses a backward that needs what they overwrote, and
    # an inference tensor is refused outside inference_mode, before anything is written.
    x, w, b = tensors((64, 128), 96, torch.bfloat16, "same", seed=17)
    out = torch.zeros(64, 96, device="cuda", dtype=torch.bfloat16)
    scale = torch.ones(64, 96, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    loss = (scale * out).sum()  # saves out for scale's gradient
    version = out._version
    torch.ops.tcgemm.linear_out(x, w, b, 0, out)
    assert out._version > version
    version = out._version
    tcgemm.matmul(x, w.t(), out=out)
    assert out._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    with torch.inference_mode():
        frozen = torch.full((64, 96), 5.0, device="cuda", dtype=torch.bfloat16)
        torch.ops.tcgemm.mm_out(x, w.t(), frozen, 1.0, 0.0)  # inside inference_mode: allowed
    frozen_copy = frozen.clone()
    with pytest.raises(RuntimeError, match="inference tensor"):
        torch.ops.tcgemm.linear_out(x, w, b, 0, frozen)
    with pytest.raises(RuntimeError, match="inference tensor"):
        torch.ops.tcgemm.mm_out(x, w.t(), frozen, 1.0, 0.0)
    torch.cuda.synchronize()
    assert torch.equal(frozen, frozen_copy)
