"""Cases a user of tcgemm's PyTorch operators meets that the other suites do
not reach, each a check of a promise the README makes:

- the alignment rule (tcgemm's kernel iff every operand is TMA-compatible,
  cuBLAS otherwise) on odd M, N, K in every layout, each element within the
  documented bound of a float64 reference;
- batch invariance through the Python operators for every row count 1..64
  and 100, 300, 1000 (plain, fused, K and N padded; plain products of an
  odd width through linear, matmul and bmm), and determinism;
- NaN, Inf and fp16 overflow on every path (kernel, decode tiles, cuBLAS,
  fused epilogue) against float64's non-finite pattern;
- double backward (a gradient penalty) through linear and matmul, and
  backward refusing inputs changed in place after the forward;
- zero-sized M, N, K through matmul, linear, linear_out and their gradients;
- outputs that are views inside a larger buffer: nothing outside written;
- CUDA graphs of linear calls that copy or pad inside the capture, replayed
  over new inputs and weights; threads starting together on distinct calls;
  torch.compile(dynamic=True) with the rows changing on every call;
- autocast edges, a bias inside out, the in-place operators refusing
  operands (and outputs) that require grad, and a second GPU.

The GPU tests skip without torch, an sm_90 GPU or the installed package; the
CPU tests (CPU and meta tensors) need torch and the package only.
"""

from __future__ import annotations

import re
import threading

import pytest

from conftest import assert_within_bound, bits, capture_graph, gpu_skip_reason, mm_reference, rand

torch = pytest.importorskip("torch")
tcgemm = pytest.importorskip("tcgemm")
F = torch.nn.functional

import tcgemm.nn  # noqa: E402

_GPU_SKIP = gpu_skip_reason()
gpu = pytest.mark.skipif(_GPU_SKIP is not None, reason=_GPU_SKIP or "")


def _second_gpu_skip() -> str | None:
    if _GPU_SKIP is not None:
        return _GPU_SKIP
    if torch.cuda.device_count() < 2:
        return "needs two GPUs"
    if torch.cuda.get_device_capability(1) != (9, 0):
        return f"needs a second sm_90 GPU, found {torch.cuda.get_device_name(1)}"
    return None


_SECOND_GPU_SKIP = _second_gpu_skip()
two_gpus = pytest.mark.skipif(_SECOND_GPU_SKIP is not None, reason=_SECOND_GPU_SKIP or "")

NAN, INF = float("nan"), float("inf")
F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32
DTYPES = [F16, BF16]
DTYPE_IDS = ["f16", "bf16"]

def _lds(plan) -> tuple[int, int, int]:
    match = re.search(r"lda=(\d+) ldb=(\d+) ldc=(\d+)", plan.layout)
    assert match, plan
    return tuple(int(g) for g in match.groups())


# ---------------------------------------------------------------------------------------------------------------
# CPU and meta tensors (run in CI without a GPU)
# ---------------------------------------------------------------------------------------------------------------

def test_cpu_tensors_are_refused_by_every_entry_point_and_nothing_is_written() -> None:
    # README: ValueError for devices (CPU tensors), raised before anything runs, out untouched; also where
    # the shapes are empty (the library's own "host memory" verdict is silent there).
    a, b = torch.ones(8, 16, dtype=BF16), torch.ones(16, 8, dtype=BF16)
    out = torch.full((8, 8), NAN, dtype=BF16)
    version = out._version
    offs = torch.tensor([3, 8], dtype=torch.int32)
    calls = {
        "plan": lambda: tcgemm.plan(a, b),
        "plan with out": lambda: tcgemm.plan(a, b, out),
        "mm_out": lambda: torch.ops.tcgemm.mm_out(a, b, out),
        "mm_out with sm_count": lambda: torch.ops.tcgemm.mm_out(a, b, out, 1.0, 0.0, 4),
        "linear_out fused": lambda: torch.ops.tcgemm.linear_out(a, b.t(), torch.ones(8), 1, out),
        "matmul beta": lambda: tcgemm.matmul(a, b, out=out, beta=1.0),
        "grouped_mm": lambda: tcgemm.grouped_mm(a, torch.ones(2, 16, 8, dtype=BF16), offs),
        "bmm, empty batch": lambda: tcgemm.bmm(a[None][:0], b[None]),
        "linear, K = 0": lambda: tcgemm.linear(torch.ones(3, 0, dtype=BF16), torch.ones(5, 0, dtype=BF16)),
        "linear, N = 0": lambda: tcgemm.linear(a, torch.ones(0, 16, dtype=BF16)),
        "matmul, M = 0": lambda: tcgemm.matmul(torch.ones(0, 16, dtype=BF16), b),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError) as info:
            call()
        message = str(info.value)
        assert message.startswith("tcgemm") and ("cpu" in message or "CUDA" in message), (name, message)
    assert out.isnan().all() and out._version == version


@pytest.mark.parametrize("x_shape,w_shape,activation", [
    ((2, 3, 64), (0, 64), "relu"), ((4, 0), (24, 0), None), ((2, 3, 0), (24, 0), "gelu"),
    ((0, 64), (24, 64), "silu"), ((64,), (0, 64), None)])
def test_zero_widths_trace_with_torchs_shapes_on_meta(x_shape, w_shape, activation) -> None:
    # No output features, no input features, no rows: F.linear's shapes forward, and every gradient with
    # its input's shape (bias: float32, as given).
    x = torch.empty(x_shape, dtype=BF16, device="meta", requires_grad=True)
    w = torch.empty(w_shape, dtype=BF16, device="meta", requires_grad=True)
    b = torch.empty(w_shape[0], dtype=F32, device="meta", requires_grad=True)
    y = tcgemm.linear(x, w, b, activation)
    assert y.shape == F.linear(x.detach(), w.detach()).shape and y.dtype == BF16
    y.backward(torch.empty_like(y))
    assert x.grad.shape == x.shape and w.grad.shape == w.shape
    assert b.grad.shape == b.shape and b.grad.dtype == F32


# ---------------------------------------------------------------------------------------------------------------
# The alignment rule and the bound on odd shapes
# ---------------------------------------------------------------------------------------------------------------

ODD_SHAPES = [(1, 1, 1), (1, 33, 7), (1, 40, 100), (3, 5, 7), (7, 8, 9), (9, 24, 64), (17, 33, 64), (17, 48, 100),
              (33, 1, 64), (40, 64, 1), (65, 72, 136), (130, 40, 24)]


@gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_odd_shapes_follow_the_alignment_rule_and_the_bound(dtype) -> None:
    # README: "The tcgemm kernel takes any M, N, K whose operands are TMA-compatible: base addresses 16-byte
    # aligned and leading dimensions multiples of 8 elements. Anything else runs on cuBLAS". Fresh tensors
    # are aligned, so the leading dimensions plan() reports decide; every element within the bound (cuBLAS:
    # with its slack, and the extra rounding of beta != 0).
    seed = 0
    for m, n, k in ODD_SHAPES:
        for layout in ("NN", "NT", "TN", "TT"):
            seed += 4
            a = rand(m, k, dtype=dtype, seed=seed) if layout[0] == "N" else rand(k, m, dtype=dtype, seed=seed).t()
            b = rand(k, n, dtype=dtype, seed=seed + 1) if layout[1] == "N" else rand(n, k, dtype=dtype,
                                                                                      seed=seed + 1).t()
            what = f"{m}x{n}x{k} {layout} {dtype}"
            plan = tcgemm.plan(a, b)
            assert plan.status == "ok" and "copied" not in plan.layout, (what, plan)
            tma = all(ld % 8 == 0 for ld in _lds(plan))
            assert plan.backend == ("sm90" if tma else "cublas"), (what, plan)
            assert plan.path == ("kernel" if tma else "cublas"), (what, plan)
            slack = 1.0 if tma else 2.0
            got = tcgemm.matmul(a, b)
            assert got.shape == (m, n) and got.is_contiguous(), what
            ref, magnitude = mm_reference(a, b)
            assert_within_bound(got, ref, magnitude, k + 1, what, slack=slack)
            # Into a given out (ldc = N: no padding there, so N % 8 != 0 goes to cuBLAS from two rows on).
            c0 = rand(m, n, dtype=dtype, seed=seed + 2)
            out = c0.clone()
            plan_out = tcgemm.plan(a, b, out, alpha=0.5, beta=-1.0)
            tma_out = all(ld % 8 == 0 for ld in _lds(plan_out))
            assert plan_out.backend == ("sm90" if tma_out else "cublas"), (what, plan_out)
            tcgemm.matmul(a, b, out=out, alpha=0.5, beta=-1.0)
            ref, magnitude = mm_reference(a, b, 0.5, -1.0, c0)
            assert_within_bound(out, ref, magnitude, k + 1, what + " alpha 0.5 beta -1",
                                slack=1.0 if tma_out else 2.0, extra_rounding=not tma_out)


@gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_fused_linear_on_odd_shapes_is_within_the_bound(dtype) -> None:
    # A bias or relu runs on tcgemm's kernels whatever the shape (K zero-padded, rows padded to 8): one
    # rounding, the bound with one more term for the bias.
    seed = 500
    for m, n, k in ODD_SHAPES:
        seed += 3
        x = rand(m, k, dtype=dtype, seed=seed)
        w = rand(n, k, dtype=dtype, seed=seed + 1)
        bias = rand(n, dtype=F32, seed=seed + 2)
        y = tcgemm.linear(x, w, bias, "relu")
        xd, wd, bd = x.double(), w.double(), bias.double()
        ref = F.relu(xd @ wd.t() + bd)
        magnitude = xd.abs() @ wd.abs().t() + bd.abs()
        assert y.shape == (m, n) and y.is_contiguous()
        assert_within_bound(y, ref, magnitude, k + 2, f"linear {m}x{n}x{k} {dtype}")


# ---------------------------------------------------------------------------------------------------------------
# Batch invariance and determinism
# ---------------------------------------------------------------------------------------------------------------

ROWS = [*range(1, 65), 100, 300, 1000]


@gpu
@pytest.mark.parametrize("n,k,bias,activation", [(256, 512, None, None), (1024, 256, "f32", "silu"),
                                                  (200, 100, "same", "relu"), (33, 256, "f32", "gelu")],
                         ids=["plain", "fused-wide", "fused-k-padded", "fused-n-padded"])
def test_rows_are_batch_invariant_from_1_to_1000_rows(n, k, bias, activation) -> None:
    # docs/DESIGN.md: "The order of the sum depends only on K, never on M": row i of x @ W^T has the same bits
    # computed alone, in the first M rows of a batch, or from an offset view, for every tile the M picks
    # (8-row, 64-row, 128-row, 256-row, swapped).
    dtype = BF16
    x = rand(1000, k, dtype=dtype, seed=11)
    w = rand(n, k, dtype=dtype, seed=12)
    b = None if bias is None else rand(n, dtype=F32 if bias == "f32" else dtype, seed=13)
    full = tcgemm.linear(x, w, b, activation)
    plain = bias is None and activation is None
    full_mm = tcgemm.matmul(x, w.t()) if plain else None
    if plain:
        assert torch.equal(bits(full), bits(full_mm))
    for m in ROWS:
        assert torch.equal(bits(tcgemm.linear(x[:m], w, b, activation)), bits(full[:m])), m
        if plain:
            assert tcgemm.plan(x[:m], w.t()).backend == "sm90", m
            assert torch.equal(bits(tcgemm.matmul(x[:m], w.t())), bits(full_mm[:m])), m
    for i in (0, 37, 511, 999):
        assert torch.equal(bits(tcgemm.linear(x[i], w, b, activation)), bits(full[i])), i  # 1-D x
    assert torch.equal(bits(tcgemm.linear(x[37:137], w, b, activation)), bits(full[37:137]))
    assert torch.equal(bits(tcgemm.linear(x.view(10, 100, k), w, b, activation)), bits(full.view(10, 100, n)))


@gpu
@pytest.mark.parametrize("n", [1001, 50257 // 8 * 8 + 1, 33])
def test_plain_products_of_an_odd_width_are_batch_invariant(n) -> None:
    # N % 8 != 0 without bias or activation (an LM head of an odd vocabulary: 50257): one row runs on
    # tcgemm's kernels (its ldc is never used), so more rows are computed into rows padded to 8 columns
    # and returned contiguous, on the same kernels, rather than stored in place by cuBLAS (ldc = N): the
    # rows of a decoding step and of a prefill agree bit for bit. linear, matmul and bmm alike.
    dtype = BF16
    x = rand(300, 256, dtype=dtype, seed=21)
    w = rand(n, 256, dtype=dtype, seed=22)
    full = tcgemm.linear(x, w)
    assert full.is_contiguous() and full.shape == (300, n)
    ref, magnitude = mm_reference(x, w.t())
    assert_within_bound(full, ref, magnitude, 257, f"300 rows of {n}")
    assert torch.equal(bits(tcgemm.matmul(x, w.t())), bits(full))
    for m in (1, 2, 7, 64, 129, 300):
        assert torch.equal(bits(tcgemm.linear(x[:m], w)), bits(full[:m])), m
        assert torch.equal(bits(tcgemm.matmul(x[:m], w.t())), bits(full[:m])), m
    for i in range(0, 300, 37):
        assert torch.equal(bits(tcgemm.linear(x[i], w)), bits(full[i])), i
    # bmm: problems of one row (decoding) and of many (prefill), each the bits of its rows alone.
    xb = x[:96].view(3, 32, 256)
    wb = torch.stack([w, w.roll(1, 0), w.roll(2, 0)]).transpose(1, 2)  # [3, 256, n]
    many = tcgemm.bmm(xb, wb)
    assert many.is_contiguous() and many.shape == (3, 32, n)
    for p in range(3):
        assert torch.equal(bits(many[p]), bits(tcgemm.matmul(xb[p], wb[p]))), p
        assert torch.equal(bits(tcgemm.bmm(xb[:, 5:6], wb)[p]), bits(many[p, 5:6])), p


@gpu
def test_repeated_calls_give_the_same_bits() -> None:
    # README: "Exact and deterministic", no split-K: long K against small M x N, a fused call, a batch, and the
    # gradients, each repeated with other calls in between and on another stream.
    f16, bf16 = F16, BF16
    a, b = rand(8, 8192, dtype=f16, seed=31), rand(8192, 64, dtype=f16, seed=32)
    x, w, bias = rand(3, 4096, dtype=bf16, seed=33), rand(136, 4096, dtype=bf16, seed=34), rand(136, dtype=F32, seed=35)
    q, kk = rand(12, 7, 64, dtype=bf16, seed=36), rand(12, 296, 64, dtype=bf16, seed=37)
    xg, wg = rand(40, 256, dtype=bf16, seed=38), rand(96, 256, dtype=bf16, seed=39)
    grad = rand(40, 96, dtype=bf16, seed=40)

    def gradients():
        xx, ww = xg.clone().requires_grad_(), wg.clone().requires_grad_()
        tcgemm.linear(xx, ww, None, "gelu").backward(grad)
        return torch.cat([xx.grad.flatten(), ww.grad.flatten()])

    calls = [lambda: tcgemm.matmul(a, b), lambda: tcgemm.linear(x, w, bias, "silu"),
             lambda: tcgemm.bmm(q, kk.transpose(1, 2)), gradients]
    noise = rand(1000, 1024, dtype=bf16, seed=41)
    first = [bits(call()) for call in calls]
    side = torch.cuda.Stream()
    for round_ in range(3):
        tcgemm.matmul(noise, noise[:512].t())  # other work (and cache contents) between repetitions
        stream = side if round_ == 1 else torch.cuda.current_stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            again = [bits(call()) for call in calls]
        torch.cuda.current_stream().wait_stream(stream)
        for i, (was, now) in enumerate(zip(first, again)):
            assert torch.equal(was, now), (round_, i)
    ref, magnitude = mm_reference(a, b)
    assert_within_bound(tcgemm.matmul(a, b), ref, magnitude, 8193, "8 x 64 x 8192")


# ---------------------------------------------------------------------------------------------------------------
# NaN, Inf and overflow
# ---------------------------------------------------------------------------------------------------------------

def _reference_with_nonfinite(a, b):
    """a @ b in float64 on the CPU, IEEE in every product and sum (inf * 0 = NaN, inf - inf = NaN), and the
    magnitude of its terms."""
    ad, bd = a.double().cpu(), b.double().cpu()
    return (ad[:, :, None] * bd[None]).sum(1), (ad.abs()[:, :, None] * bd.abs()[None]).sum(1)


@gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("path", ["kernel", "decode", "cublas", "fused", "fused-decode"])
def test_nonfinite_inputs_give_float64s_nonfinite_pattern(path, dtype) -> None:
    # A NaN in x poisons its row, an Inf gives +-Inf (NaN where it meets a zero weight or an opposite Inf),
    # a NaN weight poisons its column; with a fused bias and relu: a NaN or Inf bias its column, relu(NaN)
    # is NaN and relu(-Inf) 0, as torch's. Every finite element within the bound.
    m = 4 if path.endswith("decode") else 40  # (4 rows: the decode tiles; row 0 stays finite)
    n, k = 48, 64
    if path == "cublas":
        a = rand(m * k + 1, dtype=dtype, seed=51)[1:].view(m, k)  # 2 bytes in: cuBLAS
    else:
        a = rand(m, k, dtype=dtype, seed=51)
    w = rand(n, k, dtype=dtype, seed=52)
    b = w.t() if path.startswith("fused") else w.t().contiguous()
    a[1, 5] = NAN
    a[2, 9] = INF
    a[3, 2], a[3, 3] = -INF, INF
    b[9, 4] = 0.0  # Inf * 0
    b[11, 7] = NAN
    ref, magnitude = _reference_with_nonfinite(a, b)
    if path.startswith("fused"):
        bias = rand(n, dtype=F32, seed=53)
        bias[13], bias[14], bias[15] = NAN, INF, -INF
        got = tcgemm.linear(a, w, bias, "relu")
        ref = F.relu(ref + bias.double().cpu())
        magnitude = magnitude + bias.double().cpu().abs()
        terms = k + 2
    else:
        plan = tcgemm.plan(a, b)
        assert plan.backend == ("cublas" if path == "cublas" else "sm90"), plan
        got = tcgemm.matmul(a, b)
        terms = k + 1
    got = got.double().cpu()
    for name, test in (("NaN", torch.isnan), ("+Inf", torch.isposinf), ("-Inf", torch.isneginf)):
        assert torch.equal(test(got), test(ref)), (f"{path}: the {name} elements differ from float64's at "
                                                   f"{torch.nonzero(test(got) != test(ref))[:4].tolist()}")
    finite = torch.isfinite(ref)
    assert finite[0].any() and torch.isnan(ref[1]).all()  # (row 0 finite but for its NaN column; row 1 NaN)
    assert_within_bound(got[finite], ref[finite], magnitude[finite], terms, path, dtype=dtype,
                        slack=2.0 if path == "cublas" else 1.0)


@gpu
def test_fp16_overflow_rounds_to_infinity_on_every_path() -> None:
    # One rounding to nearest of the exact fp32 sum: 65519 -> 65504 (fp16's largest), 65520 -> Inf (the
    # midpoint, rounded to even), as torch's a @ b and the float64 result rounded; not saturated.
    f = dict(device="cuda", dtype=F16)
    sums = [(65504, 0), (65504, 16), (65504, 15), (-65504, -16), (-65504, -15), (1, 2), (65504, -65504), (0, 0)]
    a = torch.zeros(8, 8, **f)
    a[:, :2] = 1.0
    b = torch.zeros(8, 8, **f)
    for j, (top, second) in enumerate(sums):
        b[0, j], b[1, j] = top, second
    want = (a.double() @ b.double()).to(F16)
    assert want[0, 1].item() == INF and want[0, 2].item() == 65504 and want[0, 3].item() == -INF
    cublas_a = torch.zeros(8 * 8 + 1, **f)[1:].view(8, 8)
    cublas_a.copy_(a)
    cases = {
        "kernel": (tcgemm.plan(a, b).backend, tcgemm.matmul(a, b)),
        "cublas": (tcgemm.plan(cublas_a, b).backend, tcgemm.matmul(cublas_a, b)),
        "decode": (tcgemm.plan(a[:1], b).backend, tcgemm.matmul(a[:1], b).expand(8, 8)),
        "fused bias": ("fused", tcgemm.linear(a, b.t(), torch.zeros(8, device="cuda"))),
        "fused relu": ("fused", tcgemm.linear(a, b.t(), None, "relu")),
    }
    assert cases["kernel"][0] == "sm90" and cases["cublas"][0] == "cublas" and cases["decode"][0] == "sm90"
    for name, (_, got) in cases.items():
        expect = F.relu(want) if name == "fused relu" else want
        assert torch.equal(bits(got), bits(expect)), (name, got[0].tolist(), expect[0].tolist())
    assert torch.equal(bits(tcgemm.matmul(a, b)), bits(a @ b))


# ---------------------------------------------------------------------------------------------------------------
# Gradients
# ---------------------------------------------------------------------------------------------------------------

@gpu
@pytest.mark.parametrize("activation", [None, "relu"])
def test_double_backward_of_a_gradient_penalty_is_exact_on_integers(activation) -> None:
    # torch.autograd.grad(..., create_graph=True), then backward through the gradients (a gradient penalty):
    # the C++ autograd Functions' backward passes are themselves tcgemm operators with gradients. Small
    # integers: every value involved is exact, so tcgemm's equal float64's rounded.
    dtype = BF16
    x = rand(6, 32, dtype=dtype, seed=61, ints=True)
    w = rand(16, 32, dtype=dtype, seed=62, ints=True)
    bias = rand(16, dtype=F32, seed=63, ints=True)
    g = rand(6, 16, dtype=dtype, seed=64, ints=True)
    u = rand(6, 32, dtype=dtype, seed=65, ints=True)
    v = rand(16, 32, dtype=dtype, seed=66, ints=True)

    def penalty(linear, leaves, g, u, v):
        y = linear(*leaves)
        gx, gw = torch.autograd.grad(y, leaves[:2], g, create_graph=True)
        assert gx.requires_grad and gw.requires_grad
        ((gx * u).sum() + (gw * v).sum()).backward()
        return [t.grad if t.grad is not None else torch.zeros_like(t) for t in leaves]

    def reference(x, w, b):
        y = F.linear(x, w, b)
        return F.relu(y) if activation == "relu" else y

    leaves = [t.clone().requires_grad_() for t in (x, w, bias)]
    got = penalty(lambda x, w, b: tcgemm.linear(x, w, b, activation), leaves, g, u, v)
    ref_leaves = [t.double().requires_grad_() for t in (x, w, bias)]
    want = penalty(reference, ref_leaves, g.double(), u.double(), v.double())
    for name, got_grad, want_grad, leaf in zip(("x", "weight", "bias"), got, want, leaves):
        assert got_grad.dtype == leaf.dtype and got_grad.shape == leaf.shape, name
        assert torch.equal(got_grad, want_grad.to(leaf.dtype)), name

    # matmul's: the same through MmFunction.
    a, bm = rand(6, 32, dtype=dtype, seed=67, ints=True), rand(32, 16, dtype=dtype, seed=68, ints=True)
    la, lb = a.clone().requires_grad_(), bm.clone().requires_grad_()
    ga, gb = torch.autograd.grad(tcgemm.matmul(la, lb), (la, lb), g, create_graph=True)
    ((ga * u).sum() + (gb * v.t()).sum()).backward()
    ra, rb = a.double().requires_grad_(), bm.double().requires_grad_()
    gra, grb = torch.autograd.grad(ra @ rb, (ra, rb), g.double(), create_graph=True)
    ((gra * u.double()).sum() + (grb * v.t().double()).sum()).backward()
    assert torch.equal(la.grad, ra.grad.to(dtype)) and torch.equal(lb.grad, rb.grad.to(dtype))


@gpu
def test_backward_refuses_inputs_changed_in_place_after_the_forward() -> None:
    # The saved inputs are version-checked, as torch's: an activation modified in place, or a weight updated
    # (an optimizer step) between forward and backward, raises instead of giving wrong gradients.
    w = rand(24, 64, dtype=BF16, seed=71).requires_grad_()
    x = rand(8, 64, dtype=BF16, seed=72).requires_grad_()
    layer = tcgemm.nn.Linear(64, 24, device="cuda", dtype=BF16)
    calls = {
        "linear": lambda h: tcgemm.linear(h, w, None, "relu"),
        "linear fused bias": lambda h: tcgemm.linear(h, w, torch.zeros(24, device="cuda")),
        "matmul": lambda h: tcgemm.matmul(h, w.t()),
        "bmm": lambda h: tcgemm.bmm(h[None], w.t()[None]),
        "nn.Linear": lambda h: layer(h),
    }
    for name, call in calls.items():
        h = x * 1
        y = call(h)
        h.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.float().sum().backward()
        w.grad = x.grad = None
    y = tcgemm.linear(x, w)
    with torch.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.float().sum().backward()


@gpu
def test_in_place_operators_refuse_operands_that_require_grad() -> None:
    # tcgemm.matmul(out=) refuses an operand that requires grad, as torch's out= functions do (README); so
    # do the operators themselves, torch.ops.tcgemm.mm_out and linear_out, called directly (out included),
    # with RuntimeError and nothing written, rather than leaving `out` without a gradient path. Under
    # torch.no_grad() they run.
    a = rand(16, 32, dtype=BF16, seed=81).requires_grad_()
    w = rand(24, 32, dtype=BF16, seed=82)
    calls = {
        "mm_out": lambda a, out: torch.ops.tcgemm.mm_out(a, w.t(), out),
        "linear_out": lambda a, out: torch.ops.tcgemm.linear_out(a, w, None, 0, out),
        "linear_out fused": lambda a, out: torch.ops.tcgemm.linear_out(a, w, torch.zeros(24, device="cuda"), 0, out),
    }
    for name, call in calls.items():
        for operand, out in ((a, torch.zeros(16, 24, device="cuda", dtype=BF16)),
                             (a.detach(), torch.zeros(16, 24, device="cuda", dtype=BF16, requires_grad=True))):
            version = out._version
            with pytest.raises(RuntimeError, match="does not support automatic differentiation"):
                call(operand, out)
            assert (out == 0).all() and out._version == version, f"{name}: refused, but out was written"
        out = torch.zeros(16, 24, device="cuda", dtype=BF16)
        with torch.no_grad():
            call(a, out)
        assert torch.equal(bits(out), bits(tcgemm.linear(a.detach(), w))), name


# ---------------------------------------------------------------------------------------------------------------
# Zero-sized dimensions
# ---------------------------------------------------------------------------------------------------------------

@gpu
def test_zero_sized_dimensions_through_every_operator() -> None:
    f = dict(device="cuda", dtype=BF16)
    # K == 0: C = beta * C, and with beta == 0 C is not read: NaN in out does not survive, nor does an
    # infinite alpha (README: "at K == 0 neither does alpha").
    a0, b0 = torch.empty(7, 0, **f), torch.empty(0, 12, **f)
    for alpha in (1.0, 5.0, INF):
        out = torch.full((7, 12), NAN, **f)
        assert tcgemm.matmul(a0, b0, out=out, alpha=alpha) is out
        assert torch.equal(bits(out), bits(torch.zeros(7, 12, **f))), alpha
        assert torch.equal(bits(tcgemm.matmul(a0, b0, alpha=alpha)), bits(torch.zeros(7, 12, **f))), alpha
    c0 = rand(7, 12, dtype=BF16, seed=91)
    out = c0.clone()
    tcgemm.matmul(a0, b0, out=out, beta=-1.0)
    assert torch.equal(out, -c0)
    # M == 0 or N == 0: nothing to compute, out returned as it is.
    empty_rows = torch.empty(0, 12, **f)
    assert tcgemm.matmul(torch.empty(0, 5, **f), rand(5, 12, dtype=BF16, seed=92), out=empty_rows) is empty_rows
    no_cols = torch.empty(4, 0, **f)
    assert tcgemm.matmul(rand(4, 5, dtype=BF16, seed=93), torch.empty(5, 0, **f), out=no_cols) is no_cols

    # linear with no output features: [..., 0], and gradients of their inputs' shapes (x's zero).
    x = rand(2, 3, 64, dtype=BF16, seed=94).requires_grad_()
    w = torch.empty(0, 64, **f).requires_grad_()
    b = torch.empty(0, device="cuda", dtype=F32).requires_grad_()
    y = tcgemm.linear(x, w, b, "relu")
    assert y.shape == (2, 3, 0) and y.dtype == BF16
    y.sum().backward()
    assert torch.equal(x.grad, torch.zeros_like(x)) and w.grad.shape == (0, 64) and b.grad.shape == (0,)

    # linear with no input features: the bias in every row (exactly, once rounded), and its gradient the
    # sum of the rows; x's and the weight's gradients empty.
    x = torch.empty(4, 0, **f).requires_grad_()
    w = torch.empty(24, 0, **f).requires_grad_()
    b = rand(24, dtype=F32, seed=95, ints=True).requires_grad_()
    y = tcgemm.linear(x, w, b)
    assert torch.equal(y, b.detach().to(BF16).expand(4, 24))
    g = rand(4, 24, dtype=BF16, seed=96, ints=True)
    y.backward(g)
    assert x.grad.shape == (4, 0) and w.grad.shape == (24, 0)
    assert b.grad.dtype == F32 and torch.equal(b.grad, g.double().sum(0).float())
    plain = tcgemm.linear(torch.empty(3, 0, **f), torch.empty(9, 0, **f))
    assert torch.equal(plain, torch.zeros(3, 9, **f))

    # linear_out at K == 0: relu(bias) in every row, over NaN.
    out = torch.full((5, 16), NAN, **f)
    bias = rand(16, dtype=F32, seed=97, ints=True)
    torch.ops.tcgemm.linear_out(torch.empty(5, 0, **f), torch.empty(16, 0, **f), bias, 1, out)
    assert torch.equal(out, F.relu(bias).to(BF16).expand(5, 16))


# ---------------------------------------------------------------------------------------------------------------
# Outputs inside a larger buffer
# ---------------------------------------------------------------------------------------------------------------

@gpu
@pytest.mark.parametrize("m", [1, 5, 37, 150, 300])
def test_an_output_view_is_written_and_nothing_around_it(m) -> None:
    # out is rows 5.. and columns 8.. of a NaN buffer with rows 16 elements longer (TMA-compatible): whatever
    # tile the M picks (8-row decode, 64-row, swapped, 128/256-row) the kernel stores exactly the view, with
    # the bits of the same call into a fresh tensor.
    dtype = BF16
    n, k = 2048, 256
    x = rand(m, k, dtype=dtype, seed=101)
    w = rand(n, k, dtype=dtype, seed=102)
    bias = rand(n, dtype=F32, seed=103)
    c0 = rand(m, n, dtype=dtype, seed=104)
    buf = torch.empty(m + 10, n + 16, device="cuda", dtype=dtype)
    view = buf[5:5 + m, 8:8 + n]
    fresh_beta = c0.clone()
    tcgemm.matmul(x, w.t(), out=fresh_beta, alpha=0.5, beta=1.0)
    cases = [
        ("mm_out", lambda o: torch.ops.tcgemm.mm_out(x, w.t(), o, 1.0, 0.0), tcgemm.matmul(x, w.t())),
        ("linear_out silu", lambda o: torch.ops.tcgemm.linear_out(x, w, bias, 4, o), tcgemm.linear(x, w, bias, "silu")),
        ("matmul beta", lambda o: (o.copy_(c0), tcgemm.matmul(x, w.t(), out=o, alpha=0.5, beta=1.0)), fresh_beta),
    ]
    assert tcgemm.plan(x, w.t(), view).backend == "sm90"
    for name, call, want in cases:
        buf.fill_(NAN)
        call(view)
        assert torch.equal(bits(view), bits(want)), (name, m)
        outside = torch.ones_like(buf, dtype=torch.bool)
        outside[5:5 + m, 8:8 + n] = False
        assert buf[outside].isnan().all(), f"{name}, M={m}: written outside the output view"


@gpu
def test_linear_out_with_the_bias_inside_out() -> None:
    # A bias that is a row of out is read while out is written: refused (the library's "C overlaps the
    # bias"), nothing written. A column of out (strided) is copied before the call: taken, with the old
    # values.
    dtype = BF16
    x = rand(96, 64, dtype=dtype, seed=111, ints=True)
    w = rand(96, 64, dtype=dtype, seed=112, ints=True)
    out = rand(96, 96, dtype=dtype, seed=113, ints=True)
    before, version = bits(out), out._version
    with pytest.raises(ValueError, match="overlaps the bias"):
        torch.ops.tcgemm.linear_out(x, w, out[3], 0, out)
    torch.cuda.synchronize()
    assert torch.equal(bits(out), before) and out._version == version
    column = out[:, 5]
    want = (x.double() @ w.double().t() + column.double()).to(dtype)
    torch.ops.tcgemm.linear_out(x, w, column, 0, out)
    assert torch.equal(out, want)


# ---------------------------------------------------------------------------------------------------------------
# CUDA graphs, threads, torch.compile
# ---------------------------------------------------------------------------------------------------------------

@gpu
@pytest.mark.parametrize("mode", ["global", "thread_local", "relaxed"])
def test_graph_replays_linears_that_copy_or_pad_inside_the_capture(mode) -> None:
    # The copies tcgemm.linear makes (an x 2 bytes in with K = 100 zero-padded, a column-major x, rows of an
    # odd N padded and made contiguous) and bmm's padded one-row output are captured too: the replay reads
    # the new contents of x, of the weights (updated in place) and of q, k.
    f16 = F16
    x_odd = torch.empty(9 * 100 + 1, device="cuda", dtype=f16)[1:].view(9, 100)
    w1 = torch.empty(33, 100, device="cuda", dtype=f16)
    b1 = torch.empty(33, device="cuda", dtype=F32)
    x_base = torch.empty(256, 9, device="cuda", dtype=f16)
    x_t = x_base.t()  # [9, 256], rows 18 bytes apart
    w2 = torch.empty(40, 256, device="cuda", dtype=f16)
    q = torch.empty(4, 1, 64, device="cuda", dtype=f16)
    keys = torch.empty(4, 37, 64, device="cuda", dtype=f16)
    statics = (x_odd, w1, b1, x_base, w2, q, keys)

    def refill(seed: int) -> None:
        for i, t in enumerate(statics):
            t.copy_(rand(*t.shape, dtype=t.dtype, seed=seed + i))

    outputs: dict[str, torch.Tensor] = {}

    def step() -> None:
        outputs["padded"] = tcgemm.linear(x_odd, w1, b1, "silu")
        outputs["column-major"] = tcgemm.linear(x_t, w2, None, "relu")
        outputs["scores"] = tcgemm.bmm(q, keys.transpose(1, 2))

    refill(120)
    graph = capture_graph(step, mode)
    previous = None
    for round_ in range(2):
        refill(130 + 10 * round_)
        graph.replay()
        torch.cuda.synchronize()
        eager = {"padded": tcgemm.linear(x_odd, w1, b1, "silu"), "column-major": tcgemm.linear(x_t, w2, None, "relu"),
                 "scores": tcgemm.bmm(q, keys.transpose(1, 2))}
        for name, want in eager.items():
            assert outputs[name].shape == want.shape and outputs[name].stride() == want.stride(), name
            assert torch.equal(bits(outputs[name]), bits(want)), (mode, round_, name)
        if previous is not None:
            assert not torch.equal(bits(outputs["padded"]), previous), "the replay did not recompute"
        previous = bits(outputs["padded"])


@gpu
def test_threads_starting_together_on_distinct_calls() -> None:
    # Eight threads released at once by a barrier, each on a different call (layouts, dtypes, the cuBLAS
    # fallback, fused and padded, a batch, gradients, K == 0, sm_count), half on their own streams, half on
    # the default stream: every repetition has the bits of the same call made alone afterwards.
    f16, bf16 = F16, BF16
    a1, b1 = rand(96, 72, dtype=f16, seed=141), rand(136, 72, dtype=f16, seed=142).t()
    a2, b2 = rand(200, 64, dtype=bf16, seed=143).t(), rand(40, 200, dtype=bf16, seed=144).t()
    a3, b3 = rand(48 * 64 + 1, dtype=f16, seed=145)[1:].view(48, 64), rand(64, 24, dtype=f16, seed=146)
    x4, w4, c4 = rand(5, 3, 100, dtype=f16, seed=147), rand(33, 100, dtype=f16, seed=148), rand(33, dtype=F32, seed=149)
    q5, k5 = rand(6, 17, 64, dtype=bf16, seed=150), rand(6, 24, 64, dtype=bf16, seed=151)
    x6, w6, g6 = rand(12, 64, dtype=bf16, seed=152), rand(48, 64, dtype=bf16, seed=153), rand(12, 48, dtype=bf16,
                                                                                             seed=154)
    c7 = rand(9, 16, dtype=f16, seed=155)
    x8, w8 = rand(300, 256, dtype=bf16, seed=156), rand(512, 256, dtype=bf16, seed=157)

    def grads():
        xx, ww = x6.clone().requires_grad_(), w6.clone().requires_grad_()
        tcgemm.linear(xx, ww, None, "silu").backward(g6)
        return torch.cat([xx.grad.flatten(), ww.grad.flatten()])

    def k_zero():
        out = c7.clone()
        tcgemm.matmul(torch.empty(9, 0, device="cuda", dtype=f16), torch.empty(0, 16, device="cuda", dtype=f16),
                      out=out, beta=-0.5)
        return out

    def bounded():
        out = torch.empty(300, 512, device="cuda", dtype=bf16)
        torch.ops.tcgemm.mm_out(x8, w8.t(), out, 1.0, 0.0, 5)
        return out

    calls = [lambda: tcgemm.matmul(a1, b1), lambda: tcgemm.matmul(a2, b2), lambda: tcgemm.matmul(a3, b3),
             lambda: tcgemm.linear(x4, w4, c4, "gelu_tanh"), lambda: tcgemm.bmm(q5, k5.transpose(1, 2)), grads,
             k_zero, bounded]
    torch.cuda.synchronize()
    barrier = threading.Barrier(len(calls))
    results: dict[int, list[torch.Tensor]] = {}
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            stream = torch.cuda.Stream() if i % 2 else torch.cuda.current_stream()
            with torch.cuda.stream(stream):
                barrier.wait()
                results[i] = [bits(calls[i]()) for _ in range(10)]
            stream.synchronize()
        except BaseException as error:  # noqa: BLE001 (reported in the test's thread)
            errors.append(error)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    for i, call in enumerate(calls):
        want = bits(call())
        for j, got in enumerate(results[i]):
            if i == 2:  # the cuBLAS fallback: its numbers, held to the bound
                ref, magnitude = mm_reference(a3, b3)
                assert_within_bound(got.view(F16), ref, magnitude, 65, f"thread 2, call {j}", slack=2.0)
            else:
                assert torch.equal(got, want), (i, j)
    ref, magnitude = mm_reference(a1, b1)
    assert_within_bound(results[0][0].view(F16), ref, magnitude, 73, "thread 0")


@gpu
def test_compile_dynamic_true_with_the_rows_changing_every_call() -> None:
    # torch.compile(dynamic=True) (inductor) over fused linears with N and K not multiples of 8 (padded
    # inside the op) and bmm over them, its results read through transposed views downstream: every call
    # equal to eager, and at most two graphs (torch specializes one row).
    from torch._dynamo.utils import counters

    dtype = BF16
    w1, b1 = rand(33, 100, dtype=dtype, seed=161), rand(33, dtype=F32, seed=162)
    w2 = rand(24, 33, dtype=dtype, seed=163)
    keys = rand(4, 37, 24, dtype=dtype, seed=164)

    def f(x: torch.Tensor):
        h = tcgemm.linear(x, w1, b1, "gelu")
        y = tcgemm.linear(h, w2, None, "relu")
        scores = tcgemm.bmm(y[None].expand(4, -1, -1), keys.transpose(1, 2))
        return y * 2, scores.transpose(1, 2) * 4

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(f, dynamic=True, fullgraph=True)
    with torch.no_grad():
        for step, m in enumerate((5, 9, 2, 1, 64, 17, 300)):
            x = rand(m, 100, dtype=dtype, seed=170 + step)
            for got, want in zip(compiled(x), f(x)):
                assert got.shape == want.shape, m
                assert torch.equal(bits(got), bits(want)), m
    assert counters["stats"]["unique_graphs"] <= 2, dict(counters["stats"])
    torch._dynamo.reset()


# ---------------------------------------------------------------------------------------------------------------
# Autocast
# ---------------------------------------------------------------------------------------------------------------

@gpu
def test_autocast_edges() -> None:
    # README: under autocast mm, linear and bmm cast their operands (as torch's linear does); the out=
    # operators take fp16/bf16 as given; float64 is not an autocast type (torch leaves it alone too).
    x32, w32 = rand(8, 64, dtype=F32, seed=181), rand(24, 64, dtype=F32, seed=182)
    x16, w16 = x32.half(), w32.half()
    out = torch.full((8, 24), NAN, device="cuda", dtype=F16)
    version = out._version
    with torch.autocast("cuda", dtype=F16):
        with pytest.raises(TypeError, match="not supported"):
            tcgemm.matmul(x32, w32.t(), out=out)
        with pytest.raises(TypeError, match="float64"):
            tcgemm.linear(x32.double(), w32.double())
        mixed = tcgemm.matmul(x16, w32.t())
        assert mixed.dtype == F16 and torch.equal(mixed, tcgemm.matmul(x16, w16.t()))
        layer = tcgemm.nn.Linear(64, 24, device="cuda", dtype=torch.float64)
        with pytest.warns(UserWarning, match="not for tcgemm"):
            y64 = layer(x32.double())
        assert y64.dtype == torch.float64 and layer.fallbacks == 1
        torch.testing.assert_close(y64, F.linear(x32.double(), layer.weight, layer.bias))
    assert out.isnan().all() and out._version == version
    # fp16 operands under a bf16 autocast are cast to bf16, as F.linear's are.
    with torch.autocast("cuda", dtype=BF16):
        got, ref = tcgemm.linear(x16, w16), F.linear(x16, w16)
    assert got.dtype == ref.dtype == BF16
    assert torch.equal(got, tcgemm.linear(x16.bfloat16(), w16.bfloat16()))


# ---------------------------------------------------------------------------------------------------------------
# A second GPU
# ---------------------------------------------------------------------------------------------------------------

@two_gpus
def test_every_entry_point_on_the_second_gpu() -> None:
    # Tensors on cuda:1 while cuda:0 is current: each call runs on cuda:1 (its result there), with the bits
    # of the same call on cuda:0 (same GPU model: same kernel choice and numbers), and the current device is
    # left as it was. Tensors on two devices are refused, nothing written.
    torch.cuda.set_device(0)
    one = torch.device("cuda:1")
    dtype = BF16
    tensors0 = {
        "x": rand(40, 128, dtype=dtype, seed=191), "w": rand(48, 128, dtype=dtype, seed=192),
        "b": rand(48, dtype=F32, seed=193), "g": rand(40, 48, dtype=dtype, seed=194),
        "xp": rand(37, 100, dtype=dtype, seed=195), "wp": rand(33, 100, dtype=dtype, seed=196),
        "bp": rand(33, dtype=F32, seed=197),
        "a": rand(64, 128, dtype=dtype, seed=198), "m": rand(128, 96, dtype=dtype, seed=199),
        "q": rand(6, 1, 64, dtype=dtype, seed=200), "k": rand(6, 45, 64, dtype=dtype, seed=201),
        "e": rand(3, 32, 64, dtype=dtype, seed=202), "offs": torch.tensor([5, 5, 16], device="cuda", dtype=torch.int32),
    }
    tensors1 = {name: t.to(one) for name, t in tensors0.items()}

    def run(t):
        out = torch.full((64, 96), NAN, device=t["a"].device, dtype=dtype)
        tcgemm.matmul(t["a"], t["m"], out=out)
        xx, ww, bb = (t[name].clone().requires_grad_() for name in ("x", "w", "b"))
        tcgemm.linear(xx, ww, bb, "silu").backward(t["g"])
        layer = tcgemm.nn.Linear(128, 48, device=t["x"].device, dtype=dtype, activation="relu")
        with torch.no_grad():
            layer.weight.copy_(t["w"])
            layer.bias.copy_(t["b"].to(dtype))
        return {
            "matmul": tcgemm.matmul(t["a"], t["m"]), "matmul out": out, "plan": tcgemm.plan(t["a"], t["m"]).kernel,
            "linear": tcgemm.linear(t["x"], t["w"], t["b"], "silu"),
            "linear plain": tcgemm.linear(t["a"], t["m"].t()),
            "linear padded": tcgemm.linear(t["xp"], t["wp"], t["bp"], "gelu"),
            "bmm": tcgemm.bmm(t["q"], t["k"].transpose(1, 2)),
            "grouped": tcgemm.grouped_mm(t["x"][:16, :64], t["e"].transpose(1, 2), t["offs"]),
            "grad x": xx.grad, "grad w": ww.grad, "grad b": bb.grad, "nn.Linear": layer(t["x"]),
            "fallbacks": layer.fallbacks,
        }

    want = run(tensors0)
    got = run(tensors1)
    assert torch.cuda.current_device() == 0
    for name, value in got.items():
        if isinstance(value, torch.Tensor):
            assert value.device == one, name
            assert torch.equal(value.cpu(), want[name].cpu()), name
        else:
            assert value == want[name], name
    x1, e1 = tensors1["x"], tensors1["e"]
    assert torch.equal(got["grouped"][:5], tcgemm.matmul(x1[:5, :64].contiguous(), e1[0].t()))
    assert torch.equal(got["grouped"][5:16], tcgemm.matmul(x1[5:16, :64].contiguous(), e1[2].t()))

    # The current stream of cuda:1, not of cuda:0: a copy queued behind a sleep on it is seen.
    xp1, wp1, bp1 = tensors1["xp"], tensors1["wp"], tensors1["bp"]
    fresh = rand(37, 100, dtype=dtype, seed=203).to(one)
    staged = xp1.clone()
    side = torch.cuda.Stream(device=one)
    with torch.cuda.device(one):
        side.wait_stream(torch.cuda.current_stream(one))
        with torch.cuda.stream(side):
            torch.cuda._sleep(100_000_000)
            staged.copy_(fresh)
            late = tcgemm.linear(staged, wp1, bp1, "gelu")
        torch.cuda.current_stream(one).wait_stream(side)
    torch.cuda.synchronize(one)
    assert torch.equal(late, tcgemm.linear(fresh, wp1, bp1, "gelu"))
    assert torch.cuda.current_device() == 0

    # Two devices in one call: refused before anything runs.
    out = torch.full((64, 96), NAN, device=one, dtype=dtype)
    out_linear = torch.full((37, 33), NAN, device=one, dtype=dtype)
    t0, t1 = tensors0, tensors1
    refusals = [
        (lambda: tcgemm.linear(t1["xp"], t0["wp"], t1["bp"]), "one CUDA device"),
        (lambda: tcgemm.linear(t1["xp"], t1["wp"], t0["bp"]), "bias must be on x's device"),
        (lambda: tcgemm.bmm(t1["q"], t0["k"].transpose(1, 2)), "one CUDA device"),
        (lambda: tcgemm.matmul(t1["a"], t1["m"], out=torch.empty(64, 96, device="cuda:0", dtype=dtype)),
         "one CUDA device"),
        (lambda: tcgemm.matmul(t0["a"], t0["m"], out=out), "one CUDA device"),
        (lambda: torch.ops.tcgemm.linear_out(t1["xp"], t0["wp"], None, 0, out_linear), "one CUDA device"),
        (lambda: torch.ops.tcgemm.linear_out(t0["xp"], t0["wp"], t0["bp"], 1, out_linear), "one CUDA device"),
    ]
    for call, match in refusals:
        with pytest.raises(ValueError, match=re.escape(match)):
            call()
    torch.cuda.synchronize(one)
    assert out.isnan().all() and out_linear.isnan().all()
