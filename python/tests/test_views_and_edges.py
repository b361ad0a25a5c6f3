"""tcgemm as a user meets it at the edges: operands that are views
(transposed, sliced, broadcast with stride 0, overlapping rows, at odd
storage offsets and row pitches) for matmul, linear and bmm, outputs at odd
offsets, empty and one-wide linear shapes, refusals that name the call and
write nothing, gradients through views and frozen layers, grad modes and
inference tensors, two streams sharing results and one output,
torch.compile with the rows marked dynamic, CUDA graphs per batch size over
one memory pool, decode shapes (4096 x 4096) against a float64 reference,
and the C ABI's epilogue, batched and error paths through ctypes.

Results are held to the documented element-wise bound against a float64
reference (include/tcgemm/tcgemm.hpp, Backend), and to exact equality on
small-integer inputs, where every fp32 sum is exact and one rounding of it
is the float64 result rounded. Skipped without torch or a GPU tcgemm runs on.
"""

from __future__ import annotations

import ctypes
import re
import threading
from typing import Callable

import pytest

from conftest import assert_within_bound, bits, c_abi, gpu_skip_reason, mm_reference, rand

_skip = gpu_skip_reason()
if _skip:
    pytest.skip(_skip, allow_module_level=True)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

import tcgemm  # noqa: E402

DTYPES = [torch.float16, torch.bfloat16]
NAN = float("nan")


def linear_reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None,
                     activation: str | None) -> tuple[torch.Tensor, torch.Tensor]:
    """act(x @ w^T + b) in float64 (activation None or relu: 1-Lipschitz and exact), and the magnitude."""
    bd = None if b is None else b.double()
    ref = F.linear(x.double(), w.double(), bd)
    magnitude = F.linear(x.double().abs(), w.double().abs(), None if bd is None else bd.abs())
    if activation == "relu":
        ref = F.relu(ref)
    else:
        assert activation is None
    return ref, magnitude


# ---------------------------------------------------------------------------------------------------------------
# matmul: operands that are views
# ---------------------------------------------------------------------------------------------------------------

M, K, N = 48, 64, 40


def _mm_views() -> list:
    """(id, build(dtype, ints, seed) -> (a, b), a copied, b copied, backend) per README's layout rules: rows
    or columns contiguous are read in place (op N / op T with their leading dimension), other strides are
    copied first; operands TMA cannot address (base not 16-byte aligned, ld not a multiple of 8) run on
    cuBLAS."""

    def r(*shape, dtype, seed, ints):
        return rand(*shape, dtype=dtype, seed=seed, ints=ints)

    cases = [
        ("a-rows-broadcast-stride-0",
         lambda d, i, s: (r(1, K, dtype=d, seed=s, ints=i).expand(M, K), r(K, N, dtype=d, seed=s + 1, ints=i)),
         True, False, "sm90"),
        ("b-column-broadcast-strides-1-0",
         lambda d, i, s: (r(M, K, dtype=d, seed=s, ints=i), r(K, 1, dtype=d, seed=s + 1, ints=i).expand(K, N)),
         False, True, "sm90"),
        ("a-stride-0-along-k",
         lambda d, i, s: (r(M, 1, dtype=d, seed=s, ints=i).expand(M, K), r(K, N, dtype=d, seed=s + 1, ints=i)),
         True, False, "sm90"),
        ("a-overlapping-rows-as-strided",
         lambda d, i, s: (r(4 * (M - 1) + K, dtype=d, seed=s, ints=i).as_strided((M, K), (4, 1)),
                          r(K, N, dtype=d, seed=s + 1, ints=i)),
         True, False, "sm90"),
        ("a-transposed-every-other-column",
         lambda d, i, s: (r(K, 2 * M, dtype=d, seed=s, ints=i)[:, ::2].t(), r(K, N, dtype=d, seed=s + 1, ints=i)),
         True, False, "sm90"),
        ("a-middle-slice-of-3d",
         lambda d, i, s: (r(M, 3, K, dtype=d, seed=s, ints=i)[:, 1, :], r(K, N, dtype=d, seed=s + 1, ints=i)),
         False, False, "sm90"),
        ("a-every-other-row",
         lambda d, i, s: (r(2 * M, K, dtype=d, seed=s, ints=i)[::2], r(K, N, dtype=d, seed=s + 1, ints=i)),
         False, False, "sm90"),
        ("b-transposed-slice-of-wider-weight",
         lambda d, i, s: (r(M, K, dtype=d, seed=s, ints=i), r(N + 8, K + 8, dtype=d, seed=s + 1, ints=i)[8:, 8:].t()),
         False, False, "sm90"),
        ("gram-x-times-x-transposed",
         lambda d, i, s: (lambda x: (x, x.t()))(r(M, K, dtype=d, seed=s, ints=i)),
         False, False, "sm90"),
        ("a-odd-storage-offset",
         lambda d, i, s: (r(M * K + 1, dtype=d, seed=s, ints=i)[1:].view(M, K), r(K, N, dtype=d, seed=s + 1, ints=i)),
         False, False, "cublas"),
        ("b-transposed-at-odd-offset",
         lambda d, i, s: (r(M, K, dtype=d, seed=s, ints=i),
                          r(N * K + 3, dtype=d, seed=s + 1, ints=i)[3:].view(N, K).t()),
         False, False, "cublas"),
        ("a-row-pitch-not-multiple-of-8",
         lambda d, i, s: (r(M, K + 3, dtype=d, seed=s, ints=i)[:, :K], r(K, N, dtype=d, seed=s + 1, ints=i)),
         False, False, "cublas"),
        ("a-column-slice-2-bytes-in",
         lambda d, i, s: (r(M, K + 1, dtype=d, seed=s, ints=i)[:, 1:], r(K, N, dtype=d, seed=s + 1, ints=i)),
         False, False, "cublas"),
    ]
    return [pytest.param(*case[1:], id=case[0]) for case in cases]


@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
@pytest.mark.parametrize("build,copied_a,copied_b,backend", _mm_views())
def test_matmul_on_views(build, copied_a, copied_b, backend, dtype) -> None:
    for ints in (True, False):
        a, b = build(dtype, ints, 7 if ints else 8)
        a_before, b_before = a.clone(), b.clone()
        plan = tcgemm.plan(a, b)
        assert plan.status == "ok", plan
        assert ("copied a" in plan.layout) == copied_a and ("copied b" in plan.layout) == copied_b, plan
        assert plan.backend == backend, plan
        got = tcgemm.matmul(a, b)
        assert got.shape == (a.shape[0], b.shape[1]) and got.dtype == dtype and got.is_contiguous()
        if ints:
            assert torch.equal(got, (a.double() @ b.double()).to(dtype))
        else:
            ref, magnitude = mm_reference(a, b)
            assert_within_bound(got, ref, magnitude, a.shape[1] + 1, f"{plan.layout}",
                                slack=1.0 if backend == "sm90" else 2.0)
        # The operands (and what they view) are read, never written, copied or not.
        assert torch.equal(a, a_before) and torch.equal(b, b_before)


# ---------------------------------------------------------------------------------------------------------------
# matmul: outputs at odd offsets and pitches, alpha == 0
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_matmul_out_at_odd_offsets_and_pitches(dtype) -> None:
    f = dict(device="cuda", dtype=dtype)
    m, k, n = 40, 64, 24
    a = rand(m, k, dtype=dtype, seed=21)
    b = rand(n, k, dtype=dtype, seed=22).t()
    c0 = rand(m, n, dtype=dtype, seed=23)

    # Two bytes past an allocation (the kernels' TMA stores cannot take it; cuBLAS does).
    flat = torch.full((m * n + 1,), NAN, **f)
    out = flat[1:].view(m, n)
    assert out.data_ptr() % 16 != 0
    assert tcgemm.matmul(a, b, out=out) is out
    ref, magnitude = mm_reference(a, b)
    assert_within_bound(out, ref, magnitude, k + 1, "out 2 bytes in", slack=2.0)
    assert flat[0].isnan()
    out.copy_(c0)
    tcgemm.matmul(a, b, out=out, alpha=0.5, beta=0.5)
    ref, magnitude = mm_reference(a, b, 0.5, 0.5, c0)
    assert_within_bound(out, ref, magnitude, k + 1, "out 2 bytes in, beta 0.5", slack=2.0, extra_rounding=True)
    assert flat[0].isnan()

    # Rows 27 elements apart (row-major, pitch not a multiple of 8): the columns past n untouched.
    big = torch.full((m, n + 3), NAN, **f)
    tcgemm.matmul(a, b, out=big[:, :n])
    ref, magnitude = mm_reference(a, b)
    assert_within_bound(big[:, :n], ref, magnitude, k + 1, "out with pitch 27", slack=2.0)
    assert big[:, n:].isnan().all()

    # One column of a wider buffer (a matrix-vector product into place).
    b1 = rand(k, 1, dtype=dtype, seed=24)
    wide = torch.full((m, 37), NAN, **f)
    tcgemm.matmul(a, b1, out=wide[:, 5:6])
    ref, magnitude = mm_reference(a, b1)
    assert_within_bound(wide[:, 5:6], ref, magnitude, k + 1, "out one column", slack=2.0)
    assert wide[:, :5].isnan().all() and wide[:, 6:].isnan().all()

    # One row at an odd column offset of a wider buffer.
    a1 = rand(1, k, dtype=dtype, seed=25)
    rows = torch.full((3, n + 9), NAN, **f)
    tcgemm.matmul(a1, b, out=rows[1:2, 3:3 + n])
    ref, magnitude = mm_reference(a1, b)
    assert_within_bound(rows[1:2, 3:3 + n], ref, magnitude, k + 1, "out one row 6 bytes in", slack=2.0)
    assert rows[0].isnan().all() and rows[2].isnan().all()
    assert rows[1, :3].isnan().all() and rows[1, 3 + n:].isnan().all()


def test_out_beside_a_copied_operand_in_one_buffer() -> None:
    # One buffer holds a strided operand (every other column of its left half: copied before the call)
    # and out (its right half). Their byte spans meet, their elements do not, and the copy is read before
    # anything is written: taken, as torch's out= takes it, with the bits of the call on a contiguous copy.
    # An operand read in place whose elements do meet out's is refused.
    dtype = torch.bfloat16
    buf = rand(64, 192, dtype=dtype, seed=31, ints=True)
    b = rand(64, 48, dtype=dtype, seed=32, ints=True)
    a, out = buf[:, 0:128:2], buf[:, 128:176]
    left = buf[:, :128].clone()
    plan = tcgemm.plan(a, b, out=out)
    assert plan.status == "ok" and "copied a" in plan.layout, plan
    want = tcgemm.matmul(a.contiguous(), b)
    tcgemm.matmul(a, b, out=out)
    assert torch.equal(out, want) and torch.equal(buf[:, :128], left)
    with pytest.raises(ValueError, match="out overlaps a"):
        tcgemm.matmul(buf[:, 100:164], b, out=out)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_alpha_zero_reads_neither_operand(dtype) -> None:
    # tcgemm.hpp: K == 0 or alpha == 0 -> C = beta * C; A and B are not read, so NaN or Inf in them does
    # not reach C (as in BLAS; unlike 0 * (a @ b) in torch).
    f = dict(device="cuda", dtype=dtype)
    a = torch.full((32, 64), NAN, **f)
    b = torch.full((64, 48), float("inf"), **f)
    c0 = rand(32, 48, dtype=dtype, seed=31)
    assert tcgemm.plan(a, b, alpha=0.0).path == "scale"
    assert torch.equal(tcgemm.matmul(a, b, alpha=0.0), torch.zeros(32, 48, **f))
    out = c0.clone()
    tcgemm.matmul(a, b, out=out, alpha=0.0, beta=0.5)
    assert torch.equal(out, (c0.float() * 0.5).to(dtype))


# ---------------------------------------------------------------------------------------------------------------
# linear: shapes models pass, and inputs that are views
# ---------------------------------------------------------------------------------------------------------------

LINEAR_SHAPES = [((2, 0, 64), 48), ((0, 64), 48), ((64,), 48), ((64,), 1), ((2, 3, 4, 64), 1), ((1, 1, 64), 1),
                 ((5, 64), 1), ((3, 1, 64), 40), ((2, 3, 4, 64), 40)]


@pytest.mark.parametrize("activation", [None, "relu"])
@pytest.mark.parametrize("bias", [None, "same", "f32"])
@pytest.mark.parametrize("shape,n", LINEAR_SHAPES, ids=[f"{'x'.join(map(str, s))}-n{n}" for s, n in LINEAR_SHAPES])
def test_linear_shapes_as_f_linear(shape, n, bias, activation) -> None:
    # F.linear's contract: x [..., in] (1-D included) -> [..., out], empty leading dimensions included.
    dtype = torch.bfloat16
    x = rand(*shape, dtype=dtype, seed=41, ints=True)
    w = rand(n, 64, dtype=dtype, seed=42, ints=True)
    b = None if bias is None else rand(n, dtype=torch.float32 if bias == "f32" else dtype, seed=43, ints=True)
    y = tcgemm.linear(x, w, b, activation)
    ref, _ = linear_reference(x, w, b, activation)
    assert y.shape == ref.shape and y.dtype == dtype and y.device == x.device and y.is_contiguous()
    assert torch.equal(y, ref.to(dtype))


B, S, N_OUT = 3, 5, 40


def _x_layouts() -> list:
    def r(*shape, dtype, seed, ints):
        return rand(*shape, dtype=dtype, seed=seed, ints=ints)

    cases = [
        ("contiguous", lambda d, i, s: r(B, S, K, dtype=d, seed=s, ints=i)),
        ("seq-first-transposed", lambda d, i, s: r(S, B, K, dtype=d, seed=s, ints=i).transpose(0, 1)),
        ("rows-of-a-longer-sequence", lambda d, i, s: r(B, S + 4, K, dtype=d, seed=s, ints=i)[:, 2:2 + S]),
        ("last-dim-slice-pitch-72", lambda d, i, s: r(B, S, K + 8, dtype=d, seed=s, ints=i)[..., 8:]),
        ("last-dim-slice-pitch-67-2-bytes-in", lambda d, i, s: r(B, S, K + 3, dtype=d, seed=s, ints=i)[..., 1:1 + K]),
        ("broadcast-over-batch-stride-0", lambda d, i, s: r(1, S, K, dtype=d, seed=s, ints=i).expand(B, S, K)),
        ("channels-last-style-permute", lambda d, i, s: r(B, K, S, dtype=d, seed=s, ints=i).transpose(1, 2)),
        ("odd-storage-offset", lambda d, i, s: r(B * S * K + 1, dtype=d, seed=s, ints=i)[1:].view(B, S, K)),
    ]
    return [pytest.param(build, id=name) for name, build in cases]


def _w_layouts() -> list:
    def r(*shape, dtype, seed, ints):
        return rand(*shape, dtype=dtype, seed=seed, ints=ints)

    cases = [
        ("row-major", lambda d, i, s: r(N_OUT, K, dtype=d, seed=s, ints=i)),
        ("stored-in-by-out-passed-transposed", lambda d, i, s: r(K, N_OUT, dtype=d, seed=s, ints=i).t()),
        ("rows-of-a-wider-matrix", lambda d, i, s: r(N_OUT, K + 8, dtype=d, seed=s, ints=i)[:, 8:]),
        ("odd-pitch", lambda d, i, s: r(N_OUT, K + 3, dtype=d, seed=s, ints=i)[:, :K]),
        ("odd-storage-offset", lambda d, i, s: r(N_OUT * K + 1, dtype=d, seed=s, ints=i)[1:].view(N_OUT, K)),
    ]
    return [pytest.param(build, id=name) for name, build in cases]


def _check_linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None, activation: str | None,
                  ints: bool, what: str) -> None:
    x_before, w_before = x.clone(), w.clone()
    y = tcgemm.linear(x, w, b, activation)
    ref, magnitude = linear_reference(x, w, b, activation)
    assert y.shape == ref.shape and y.is_contiguous(), what
    if ints:
        assert torch.equal(y, ref.to(x.dtype)), what
    else:
        # (Plain calls on operands TMA cannot address run on cuBLAS: its numerics, so the wider bound.)
        assert_within_bound(y, ref, magnitude, x.shape[-1] + 2, what, slack=2.0)
    assert torch.equal(x, x_before) and torch.equal(w, w_before), f"{what}: an input was written"


@pytest.mark.parametrize("bias,activation", [(None, None), ("f32", "relu")], ids=["plain", "fused"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
@pytest.mark.parametrize("build_x", _x_layouts())
def test_linear_x_layouts(build_x, dtype, bias, activation) -> None:
    for ints in (True, False):
        x = build_x(dtype, ints, 51)
        w = rand(N_OUT, K, dtype=dtype, seed=52, ints=ints)
        b = None if bias is None else rand(N_OUT, dtype=torch.float32, seed=53, ints=ints)
        _check_linear(x, w, b, activation, ints, f"x {tuple(x.shape)} strides {x.stride()}")


@pytest.mark.parametrize("bias,activation", [(None, None), ("f32", "relu")], ids=["plain", "fused"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
@pytest.mark.parametrize("build_w", _w_layouts())
def test_linear_weight_layouts(build_w, dtype, bias, activation) -> None:
    for ints in (True, False):
        x = rand(B, S, K, dtype=dtype, seed=54, ints=ints)
        w = build_w(dtype, ints, 55)
        b = None if bias is None else rand(N_OUT, dtype=torch.float32, seed=56, ints=ints)
        _check_linear(x, w, b, activation, ints, f"weight strides {w.stride()} at {w.data_ptr() % 16}")


@pytest.mark.parametrize("rows", [5, 200], ids=["64-row-tiles", "128-row-tiles"])
@pytest.mark.parametrize("bias_layout", ["f32-4-bytes-in", "f32-every-other", "same-2-bytes-in", "same-every-other"])
def test_linear_bias_views(bias_layout, rows) -> None:
    # The kernels read the bias at any element boundary (epilogue.cuh's bias_pair_at falls back to single
    # loads where a pair is misaligned); a strided bias is made contiguous first.
    dtype = torch.bfloat16
    n = 136
    bias_dtype = torch.float32 if bias_layout.startswith("f32") else dtype
    for ints in (True, False):
        x = rand(rows, K, dtype=dtype, seed=61, ints=ints)
        w = rand(n, K, dtype=dtype, seed=62, ints=ints)
        if bias_layout.endswith("in"):
            b = rand(n + 1, dtype=bias_dtype, seed=63, ints=ints)[1:]
            assert b.data_ptr() % 8 != 0
        else:
            b = rand(2 * n, dtype=bias_dtype, seed=63, ints=ints)[::2]
        _check_linear(x, w, b, "relu", ints, bias_layout)
        # The bits of the same call with the bias copied to fresh (aligned, contiguous) memory.
        assert torch.equal(tcgemm.linear(x, w, b, "relu"), tcgemm.linear(x, w, b.clone(), "relu"))


# ---------------------------------------------------------------------------------------------------------------
# bmm: attention over a sequence-first buffer, odd offsets and sizes
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_bmm_on_sequence_first_attention_views(dtype) -> None:
    # q, k, v stored [seq, batch * heads, head_dim] (nn.MultiheadAttention's default layout): the heads'
    # matrices interleave in one buffer (batch stride head_dim, row stride batch * heads * head_dim).
    seq, heads, dim = 24, 6, 64
    for ints in (True, False):
        q_sf, k_sf, v_sf = (rand(seq, heads, dim, dtype=dtype, seed=71 + i, ints=ints) for i in range(3))
        q = q_sf.transpose(0, 1)
        kt = k_sf.transpose(0, 1).transpose(1, 2)
        v = v_sf.transpose(0, 1)
        p = rand(heads, seq, seq, dtype=dtype, seed=74, ints=ints)
        for a, b, what in ((q, kt, "q @ k^T"), (p, v, "p @ v")):
            got = tcgemm.bmm(a, b)
            assert got.shape == (heads, a.shape[1], b.shape[2]) and got.dtype == dtype
            ref = torch.bmm(a.double(), b.double())
            if ints:
                assert torch.equal(got, ref.to(dtype)), what
            else:
                magnitude = torch.bmm(a.double().abs(), b.double().abs())
                assert_within_bound(got, ref, magnitude, a.shape[2] + 1, what)
            for i in range(heads):  # each problem has the bits of tcgemm.matmul on its own matrices
                assert torch.equal(got[i], tcgemm.matmul(a[i], b[i])), (what, i)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_bmm_odd_offsets_strides_and_sizes(dtype) -> None:
    batch, m, k, n = 3, 5, 9, 7
    for ints in (True, False):
        a_odd = rand(batch * m * k + 1, dtype=dtype, seed=81, ints=ints)[1:].view(batch, m, k)
        b = rand(batch, k, n, dtype=dtype, seed=82, ints=ints)
        b_rows_broadcast = rand(batch, 1, n, dtype=dtype, seed=83, ints=ints).expand(batch, k, n)
        a_pitch = rand(batch, m, k + 3, dtype=dtype, seed=84, ints=ints)[:, :, 2:2 + k]
        for a_, b_, what in ((a_odd, b, "a 2 bytes in"), (a_odd, b_rows_broadcast, "b rows broadcast"),
                             (a_pitch, b.transpose(1, 2).contiguous().transpose(1, 2), "a pitch 12, b op T")):
            got = tcgemm.bmm(a_, b_)
            ref = torch.bmm(a_.double(), b_.double())
            assert got.shape == ref.shape, what
            if ints:
                assert torch.equal(got, ref.to(dtype)), what
            else:
                magnitude = torch.bmm(a_.double().abs(), b_.double().abs())
                assert_within_bound(got, ref, magnitude, k + 1, what, slack=2.0)


# ---------------------------------------------------------------------------------------------------------------
# Refusals: the exception type, a message naming the problem and the whole call, nothing written
# ---------------------------------------------------------------------------------------------------------------

def _refusals() -> list:
    f16 = dict(device="cuda", dtype=torch.float16)
    x, w, b = torch.ones(8, 64, **f16), torch.ones(32, 64, **f16), torch.ones(32, **f16)
    return [
        pytest.param(lambda: tcgemm.linear(x, w.bfloat16()), TypeError, "x and weight must have the same dtype",
                     id="linear-mixed-dtypes"),
        pytest.param(lambda: tcgemm.linear(x.float(), w.float()), TypeError, "float32 is not supported",
                     id="linear-float32-outside-autocast"),
        pytest.param(lambda: tcgemm.linear(x.to(torch.int8), w.to(torch.int8)), TypeError, "not supported",
                     id="linear-int8"),
        pytest.param(lambda: tcgemm.linear(x, w, b.bfloat16()), TypeError, "bias must be float16 or float32",
                     id="linear-bias-dtype"),
        pytest.param(lambda: tcgemm.linear(x, w, b.cpu()), ValueError, "bias must be on x's device",
                     id="linear-bias-on-cpu"),
        pytest.param(lambda: tcgemm.linear(x.cpu(), w), ValueError, "x is on cpu", id="linear-x-on-cpu"),
        pytest.param(lambda: tcgemm.linear(x, w.cpu()), ValueError, "weight is on cpu", id="linear-weight-on-cpu"),
        pytest.param(lambda: tcgemm.linear(x[None].expand(3, 8, 64), w.cpu()), ValueError,
                     "(x: [3, 8, 64] float16 cuda:0 strides [0, 64, 1], weight: [32, 64] float16 cpu",
                     id="linear-message-ends-with-the-call-as-made"),
        pytest.param(lambda: tcgemm.linear(x, w[0]), ValueError, "weight must be", id="linear-1d-weight"),
        pytest.param(lambda: tcgemm.linear(x[0, 0], w), ValueError, "at least 1 dimension", id="linear-0d-x"),
        pytest.param(lambda: tcgemm.bmm(x[None].float(), w.t()[None].float()), TypeError, "not supported",
                     id="bmm-float32"),
        pytest.param(lambda: tcgemm.bmm(x[None], w.t()[None].cpu()), ValueError, "b is on cpu", id="bmm-b-on-cpu"),
        pytest.param(lambda: tcgemm.matmul(x[0], w.t()), ValueError, "2-D", id="matmul-1d-a"),
    ]


@pytest.mark.parametrize("call,error,match", _refusals())
def test_refusals_name_the_problem_and_the_call(call, error, match) -> None:
    with pytest.raises(error, match=re.escape(match)) as info:
        call()
    message = str(info.value)
    # README: every message ends with the whole call (shapes, dtypes, devices, strides).
    assert message.startswith("tcgemm") and "strides" in message, message


def test_out_refusals_write_nothing() -> None:
    bf16 = dict(device="cuda", dtype=torch.bfloat16)
    x = rand(64, 128, dtype=torch.bfloat16, seed=91, ints=True)
    w = rand(96, 128, dtype=torch.bfloat16, seed=92, ints=True)
    b = rand(96, dtype=torch.float32, seed=93, ints=True)
    pitched = torch.full((64, 99), NAN, **bf16)             # rows 99 elements apart
    flat = torch.full((64 * 96 + 1,), NAN, **bf16)          # two bytes past an allocation
    row = torch.full((1, 96), NAN, **bf16)                  # expanded over the rows: not row-major
    out = torch.full((64, 96), NAN, **bf16)
    buffers = [pitched, flat, row, out]
    before = [bits(t) for t in buffers]
    versions = [t._version for t in buffers]
    lin = torch.ops.tcgemm.linear_out
    cases = [
        # A fused call (bias or activation) needs tcgemm's kernels, whose stores need out's rows 16 bytes apart
        # and 16-byte aligned (no cuBLAS call fuses the epilogue): refused, not run unfused.
        (lambda: lin(x, w, b, 0, pitched[:, :96]), ValueError, "cannot fuse"),
        (lambda: lin(x, w, None, 1, pitched[:, :96]), ValueError, "cannot fuse"),
        (lambda: lin(x, w, b, 4, flat[1:].view(64, 96)), ValueError, "cannot fuse"),
        (lambda: lin(x, w, b, 0, row.expand(64, 96)), ValueError, "row-major"),
        (lambda: lin(x, w.half(), b, 0, out), TypeError, "same dtype"),
        (lambda: lin(x, w, b.cpu(), 0, out), ValueError, "bias must be on x's device"),
        (lambda: lin(x, w, b, 0, out.float()), TypeError, "dtype of x and weight"),
        (lambda: torch.ops.tcgemm.mm_out(x, w.t(), row.expand(64, 96)), ValueError, "row-major"),
        (lambda: tcgemm.matmul(x, w.t(), out=row.expand(64, 96)), ValueError, "row-major"),
        (lambda: tcgemm.matmul(x, w.t(), out=out.requires_grad_()), RuntimeError, "automatic differentiation"),
    ]
    for i, (call, error, match) in enumerate(cases):
        with pytest.raises(error, match=re.escape(match)):
            call()
        out.requires_grad_(False)
        torch.cuda.synchronize()
        for t, was, version in zip(buffers, before, versions):
            assert torch.equal(bits(t), was), f"refused call {i} ({match}) wrote to an output"
            # Nothing written, nothing for autograd to see: the version counter is as it was.
            assert t._version == version, f"refused call {i} ({match}) bumped the version of an output"
    # The same outputs without a bias or activation: the plain call runs (on cuBLAS) and writes exactly them.
    want = (x.double() @ w.double().t()).to(torch.bfloat16)
    lin(x, w, None, 0, pitched[:, :96])
    assert torch.equal(pitched[:, :96], want) and pitched[:, 96:].isnan().all()
    lin(x, w, None, 0, flat[1:].view(64, 96))
    assert torch.equal(flat[1:].view(64, 96), want) and flat[0].isnan()


# ---------------------------------------------------------------------------------------------------------------
# Gradients
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bias,activation", [("f32", "relu"), ("same", None), (None, "relu")])
@pytest.mark.parametrize("needs", ["x", "weight", "all"])
@pytest.mark.parametrize("shape", [(64,), (3, 5, 64), (2, 0, 64)], ids=["1d", "3d", "3d-no-rows"])
def test_linear_gradients_exact_on_integers(shape, needs, bias, activation) -> None:
    # Gradients against float64 autograd of F.linear: on small integers every product and sum involved
    # is exact, so tcgemm's (each one rounding of an exact fp32 value) equal the float64 ones rounded.
    # Frozen operands get no gradient; y.sum() hands the backward a gradient of stride 0.
    dtype, n = torch.bfloat16, 24
    x = rand(*shape, dtype=dtype, seed=101, ints=True)
    w = rand(n, 64, dtype=dtype, seed=102, ints=True)
    b = None if bias is None else rand(n, dtype=torch.float32 if bias == "f32" else dtype, seed=103, ints=True)
    x.requires_grad_(needs in ("x", "all"))
    w.requires_grad_(needs in ("weight", "all"))
    if b is not None:
        b.requires_grad_(needs == "all")
    leaves = [t for t in (x, w, b) if t is not None]
    ref_leaves = [t.detach().double().requires_grad_(t.requires_grad) for t in leaves]
    y = tcgemm.linear(x, w, b, activation)
    y_ref = F.linear(ref_leaves[0], ref_leaves[1], ref_leaves[2] if b is not None else None)
    if activation == "relu":
        y_ref = F.relu(y_ref)
    assert y.requires_grad and torch.equal(y.detach(), y_ref.detach().to(dtype))
    if shape == (3, 5, 64):
        grad = rand(*y.shape, dtype=dtype, seed=104, ints=True)
        y.backward(grad)
        y_ref.backward(grad.double())
    else:
        y.sum().backward()
        y_ref.sum().backward()
    for t, ref in zip(leaves, ref_leaves):
        if not t.requires_grad:
            assert t.grad is None
            continue
        assert t.grad is not None and t.grad.shape == t.shape and t.grad.dtype == t.dtype
        assert torch.equal(t.grad, ref.grad.to(t.dtype)), (tuple(t.shape), t.dtype)


def test_matmul_and_bmm_gradients_through_views() -> None:
    # Gradients reach the tensors the operands are views of: a transposed view (read as op T) and a strided
    # one (copied before the product), and bmm's interleaved sequence-first heads.
    dtype = torch.float16
    base_a = rand(32, 48, dtype=dtype, seed=111, ints=True).requires_grad_()
    base_b = rand(32, 80, dtype=dtype, seed=112, ints=True).requires_grad_()
    grad = rand(48, 40, dtype=dtype, seed=113, ints=True)
    tcgemm.matmul(base_a.t(), base_b[:, ::2]).backward(grad)
    ref_a, ref_b = (t.detach().double().requires_grad_() for t in (base_a, base_b))
    (ref_a.t() @ ref_b[:, ::2]).backward(grad.double())
    assert torch.equal(base_a.grad, ref_a.grad.to(dtype))
    assert torch.equal(base_b.grad, ref_b.grad.to(dtype))
    assert torch.equal(base_b.grad[:, 1::2], torch.zeros(32, 40, device="cuda", dtype=dtype))

    seq, heads, dim = 16, 4, 32
    q_sf = rand(seq, heads, dim, dtype=dtype, seed=114, ints=True).requires_grad_()
    k_sf = rand(seq, heads, dim, dtype=dtype, seed=115, ints=True).requires_grad_()
    grad = rand(heads, seq, seq, dtype=dtype, seed=116, ints=True)
    tcgemm.bmm(q_sf.transpose(0, 1), k_sf.transpose(0, 1).transpose(1, 2)).backward(grad)
    ref_q, ref_k = (t.detach().double().requires_grad_() for t in (q_sf, k_sf))
    torch.bmm(ref_q.transpose(0, 1), ref_k.transpose(0, 1).transpose(1, 2)).backward(grad.double())
    assert torch.equal(q_sf.grad, ref_q.grad.to(dtype))
    assert torch.equal(k_sf.grad, ref_k.grad.to(dtype))


def test_grad_modes_and_inference_tensors() -> None:
    dtype = torch.bfloat16
    w = rand(32, 64, dtype=dtype, seed=121).requires_grad_()
    b = rand(32, dtype=torch.float32, seed=122).requires_grad_()
    x = rand(4, 64, dtype=dtype, seed=123)
    calls: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
        "linear": lambda t: tcgemm.linear(t, w, b, "relu"),
        "matmul": lambda t: tcgemm.matmul(t, w.t()),
        "bmm": lambda t: tcgemm.bmm(t[None], w.t()[None]),
    }
    with torch.inference_mode():
        frozen_x = x.clone()
    # torch's own: an inference tensor cannot be saved for a backward that parameters need.
    with pytest.raises(RuntimeError, match="Inference tensors"):
        F.linear(frozen_x, w)
    for name, call in calls.items():
        tracked = call(x)
        assert tracked.requires_grad and tracked.grad_fn is not None, name
        with torch.no_grad():
            untracked = call(x)
        assert not untracked.requires_grad and untracked.grad_fn is None, name
        with torch.inference_mode():
            inferred = call(x)
        assert inferred.is_inference() and not inferred.requires_grad, name
        assert torch.equal(untracked, tracked.detach()) and torch.equal(inferred, untracked), name
        with pytest.raises(RuntimeError, match="Inference tensors"):
            call(frozen_x)
        with torch.no_grad():
            assert torch.equal(call(frozen_x), untracked), name


# ---------------------------------------------------------------------------------------------------------------
# Streams, torch.compile, CUDA graphs
# ---------------------------------------------------------------------------------------------------------------

def test_two_streams_share_results_and_one_output() -> None:
    dtype = torch.bfloat16
    x = rand(48, 512, dtype=dtype, seed=131)
    w1 = rand(1024, 512, dtype=dtype, seed=132)
    b1 = rand(1024, dtype=torch.float32, seed=133)
    w2 = rand(256, 1024, dtype=dtype, seed=134)
    parts = [rand(48, 512, dtype=dtype, seed=135 + i) for i in range(4)]
    want_h = tcgemm.linear(x, w1, b1, "gelu")
    want_y = tcgemm.linear(want_h, w2)
    want_acc = torch.zeros(48, 256, device="cuda", dtype=dtype)
    for p in parts:
        tcgemm.matmul(p, w2[:, :512].t(), out=want_acc, beta=1.0)

    current = torch.cuda.current_stream()
    producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
    producer.wait_stream(current)
    consumer.wait_stream(current)
    with torch.cuda.stream(producer):
        torch.cuda._sleep(100_000_000)  # the producer finishes late: the consumer must wait for it
        h = tcgemm.linear(x, w1, b1, "gelu")
        h_ready = torch.cuda.Event()
        h_ready.record()
    with torch.cuda.stream(consumer):
        consumer.wait_event(h_ready)
        h.record_stream(consumer)
        y = tcgemm.linear(h, w2)
    current.wait_stream(consumer)
    current.wait_stream(producer)
    assert torch.equal(h, want_h) and torch.equal(y, want_y)

    # One output accumulated (beta = 1) by calls alternating between the two streams, ordered by events.
    acc = torch.zeros(48, 256, device="cuda", dtype=dtype)
    producer.wait_stream(current)
    consumer.wait_stream(current)
    done = None
    for i, p in enumerate(parts):
        stream = (producer, consumer)[i % 2]
        with torch.cuda.stream(stream):
            if done is not None:
                stream.wait_event(done)
            torch.cuda._sleep(20_000_000)
            tcgemm.matmul(p, w2[:, :512].t(), out=acc, beta=1.0)
            done = torch.cuda.Event()
            done.record()
    current.wait_event(done)
    assert torch.equal(acc, want_acc)


def test_compile_rows_marked_dynamic_inference() -> None:
    # A decoding/serving loop: one compiled graph for every number of rows >= 2 (1 gets its own, as torch
    # specializes sizes 0 and 1), each call equal to eager.
    dtype = torch.bfloat16
    w1 = rand(512, 256, dtype=dtype, seed=141)
    b1 = rand(512, dtype=torch.float32, seed=142)
    w2 = rand(128, 512, dtype=dtype, seed=143)

    def mlp(x: torch.Tensor) -> torch.Tensor:
        return tcgemm.linear(tcgemm.linear(x, w1, b1, "silu"), w2)

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(mlp, fullgraph=True)
    with torch.no_grad():
        for step, m in enumerate((17, 1, 2, 33, 64, 5)):
            x = rand(m, 256, dtype=dtype, seed=144 + step)
            if step == 0:
                torch._dynamo.mark_dynamic(x, 0)
            got, want = compiled(x), mlp(x)
            assert torch.equal(got, want) and got.stride() == want.stride(), m
    assert counters["stats"]["unique_graphs"] <= 2, dict(counters["stats"])

    # The sequence dimension of a 3-D input, under inference_mode.
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(mlp, fullgraph=True)
    with torch.inference_mode():
        for step, s in enumerate((9, 1, 16, 40)):
            x = rand(2, s, 256, dtype=dtype, seed=150 + step)
            if step == 0:
                torch._dynamo.mark_dynamic(x, 1)
            assert torch.equal(compiled(x), mlp(x)), s
    assert counters["stats"]["unique_graphs"] <= 2, dict(counters["stats"])
    torch._dynamo.reset()


def test_compile_key_length_marked_dynamic_bmm() -> None:
    # Decoding attention scores: one query row against a growing number of keys. The fake implementation
    # gives the real op's strides (rows 8 elements apart where the length is not a multiple of 8).
    dtype = torch.bfloat16
    torch._dynamo.reset()
    compiled = torch.compile(lambda q, k: tcgemm.bmm(q, k.transpose(1, 2)), fullgraph=True)
    with torch.no_grad():
        for step, length in enumerate((17, 9, 40, 1, 33)):
            q = rand(8, 1, 64, dtype=dtype, seed=160 + step)
            k = rand(8, length, 64, dtype=dtype, seed=170 + step)
            if step == 0:
                torch._dynamo.mark_dynamic(k, 1)
            got, want = compiled(q, k), tcgemm.bmm(q, k.transpose(1, 2))
            assert got.shape == want.shape and got.stride() == want.stride(), (length, got.stride(), want.stride())
            assert torch.equal(got, want), length
    torch._dynamo.reset()


def _trains_compiled_as_eager(fn, sizes, make, mark) -> None:
    """For each size, make(size, step) gives (inputs, grad, params); fn compiled (aot_eager, fullgraph: the
    dynamic-shape tracing is inductor's, and no kernels are generated) and fn eager each run on fresh copies
    of the inputs that require grad (the first compiled call's marked dynamic by mark) and backward from grad.
    Outputs and every gradient equal bit for bit (small integers: exact), and one graph serves every size."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, backend="aot_eager", fullgraph=True)
    for step, size in enumerate(sizes):
        inputs, grad, params = make(size, step)
        results = []
        for f in (compiled, fn):
            copies = [t.clone().requires_grad_() for t in inputs]
            if step == 0 and f is compiled:
                mark(*copies)
            for p in params:
                p.grad = None
            y = f(*copies)
            y.backward(grad)
            results.append((y.detach(), *[t.grad for t in copies], *[p.grad for p in params]))
        for got, want in zip(*results):
            assert torch.equal(got, want), size
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])
    torch._dynamo.reset()


def test_compile_rows_marked_dynamic_training_step() -> None:
    # A training step whose batch size varies, as F.linear's compiles: the rows marked dynamic, parameters
    # that require grad, forward and backward traced once for every number of rows >= 2.
    dtype = torch.bfloat16
    w = rand(32, 64, dtype=dtype, seed=181, ints=True).requires_grad_()
    b = rand(32, dtype=torch.float32, seed=182, ints=True).requires_grad_()

    def make(m: int, step: int):
        x = rand(m, 64, dtype=dtype, seed=183 + step, ints=True)
        return [x], rand(m, 32, dtype=dtype, seed=190 + step, ints=True), [w, b]

    _trains_compiled_as_eager(lambda x: tcgemm.linear(x, w, b, "relu"), (17, 5, 33, 2), make,
                              lambda x: torch._dynamo.mark_dynamic(x, 0))


def test_compile_batch_marked_dynamic_bmm_training_step() -> None:
    # As above for bmm, as torch.bmm compiles: the batch (heads x sequences) marked dynamic, both operands
    # requiring grad.
    dtype = torch.bfloat16

    def make(batch: int, step: int):
        a = rand(batch, 16, 32, dtype=dtype, seed=251 + step, ints=True)
        b = rand(batch, 32, 24, dtype=dtype, seed=261 + step, ints=True)
        return [a, b], rand(batch, 16, 24, dtype=dtype, seed=271 + step, ints=True), []

    def mark(a: torch.Tensor, b: torch.Tensor) -> None:
        torch._dynamo.mark_dynamic(a, 0)
        torch._dynamo.mark_dynamic(b, 0)

    _trains_compiled_as_eager(tcgemm.bmm, (6, 3, 10, 2), make, mark)


def test_cuda_graphs_per_batch_size_share_one_pool() -> None:
    # A server's pattern: one graph per batch size, captured largest first into one memory pool, each reading
    # the first rows of one static input buffer; replayed in any order with fresh inputs copied in.
    dtype = torch.bfloat16
    k = 512
    w1 = rand(1024, k, dtype=dtype, seed=201)
    b1 = rand(1024, dtype=dtype, seed=202)
    w2 = rand(256, 1024, dtype=dtype, seed=203)

    def mlp(x: torch.Tensor) -> torch.Tensor:
        return tcgemm.linear(tcgemm.linear(x, w1, b1, "silu"), w2)

    sizes = (17, 8, 1)
    static_x = torch.zeros(max(sizes), k, device="cuda", dtype=dtype)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for m in sizes:
            mlp(static_x[:m])  # warm-up outside the captures
    torch.cuda.current_stream().wait_stream(side)
    pool = torch.cuda.graph_pool_handle()
    graphs, outputs = {}, {}
    for m in sizes:
        graphs[m] = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graphs[m], pool=pool):
            outputs[m] = mlp(static_x[:m])
    torch.cuda.synchronize()
    for step, m in enumerate((1, 17, 8, 1, 17, 8)):
        fresh = rand(m, k, dtype=dtype, seed=210 + step)
        static_x[:m].copy_(fresh)
        graphs[m].replay()
        want = mlp(fresh)
        assert torch.equal(outputs[m], want), (step, m)


# ---------------------------------------------------------------------------------------------------------------
# Decode shapes
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_decode_shapes_4096_against_float64(dtype) -> None:
    # x @ W^T with W 4096 x 4096 at M = 1..64: tcgemm's kernel, every element within the documented bound,
    # every row the bits of the same row in a call of 64 rows (results do not depend on M).
    n = k = 4096
    w = rand(n, k, dtype=dtype, seed=221)
    b = rand(n, dtype=torch.float32, seed=222)
    x = rand(64, k, dtype=dtype, seed=223)
    full = tcgemm.matmul(x, w.t())
    full_linear = tcgemm.linear(x, w, b)
    xd, wd = x.double(), w.double()
    ref = xd @ wd.t()
    magnitude = xd.abs() @ wd.abs().t()
    for m in (1, 2, 7, 8, 16, 17, 33, 64):
        plan = tcgemm.plan(x[:m], w.t())
        assert plan.status == "ok" and plan.backend == "sm90" and plan.path == "kernel", plan
        y = tcgemm.matmul(x[:m], w.t())
        assert_within_bound(y, ref[:m], magnitude[:m], k + 1, f"matmul m={m} {plan.kernel}")
        assert torch.equal(y, full[:m]), m
        y = tcgemm.linear(x[:m], w, b)
        assert_within_bound(y, ref[:m] + b.double(), magnitude[:m] + b.double().abs(), k + 2, f"linear m={m}")
        assert torch.equal(y, full_linear[:m]), m


# ---------------------------------------------------------------------------------------------------------------
# The C ABI through ctypes
# ---------------------------------------------------------------------------------------------------------------

def test_c_abi_epilogue_and_batch_give_the_operators_bits() -> None:
    lib = c_abi()
    stream = torch.cuda.current_stream().cuda_stream
    m, n, k = 24, 256, 512
    x = rand(m, k, dtype=torch.bfloat16, seed=231)
    w = rand(n, k, dtype=torch.bfloat16, seed=232)
    b = rand(n, dtype=torch.float32, seed=233)
    y = torch.full((m, n), NAN, device="cuda", dtype=torch.bfloat16)
    # bf16 (1), A op N, B op T (nn.Linear's weight), fp32 bias (1), silu (4).
    rc = lib.tcgemm_gemm_epilogue(1, 0, 1, m, n, k, 1.0, x.data_ptr(), k, w.data_ptr(), k, 0.0, y.data_ptr(), n,
                                  b.data_ptr(), 1, 4, stream)
    assert rc == 0, lib.tcgemm_last_error()
    assert torch.equal(y, tcgemm.linear(x, w, b, "silu"))

    batch, m, n, k = 5, 40, 96, 64
    a = rand(batch, m, k, dtype=torch.float16, seed=234)
    bt = rand(batch, n, k, dtype=torch.float16, seed=235)
    c = torch.full((batch, m, n), NAN, device="cuda", dtype=torch.float16)
    rc = lib.tcgemm_gemm_strided_batched(0, 0, 1, m, n, k, 1.0, a.data_ptr(), k, m * k, bt.data_ptr(), k, n * k,
                                         0.0, c.data_ptr(), n, m * n, batch, stream)
    assert rc == 0, lib.tcgemm_last_error()
    assert torch.equal(c, tcgemm.bmm(a, bt.transpose(1, 2)))


def test_c_abi_refusals_write_nothing_and_keep_their_reason_per_thread() -> None:
    lib = c_abi()
    stream = torch.cuda.current_stream().cuda_stream
    m, n, k = 32, 48, 64
    a = rand(m, k, dtype=torch.float16, seed=241)
    b = rand(k, n, dtype=torch.float16, seed=242)
    b_square = rand(k, k, dtype=torch.float16, seed=243)
    c = torch.full((m, n), NAN, device="cuda", dtype=torch.float16)
    ends = torch.tensor([16, 32], device="cuda", dtype=torch.int32)
    a_before, c_before = bits(a), bits(c)
    host = (ctypes.c_uint16 * (m * k))()
    pa, pb, pc = a.data_ptr(), b.data_ptr(), c.data_ptr()
    cases = [
        ("A is host memory", lambda: lib.tcgemm_gemm(0, 0, 0, m, n, k, 1.0, ctypes.addressof(host), k, pb, n, 0.0,
                                                      pc, n, stream)),
        ("leading dimension ldc=47", lambda: lib.tcgemm_gemm(0, 0, 0, m, n, k, 1.0, pa, k, pb, n, 0.0, pc, n - 1,
                                                              stream)),
        ("unknown dtype 7", lambda: lib.tcgemm_gemm(7, 0, 0, m, n, k, 1.0, pa, k, pb, n, 0.0, pc, n, stream)),
        ("unknown activation 9", lambda: lib.tcgemm_gemm_epilogue(0, 0, 0, m, n, k, 1.0, pa, k, pb, n, 0.0, pc, n,
                                                                   None, 0, 9, stream)),
        ("C overlaps A", lambda: lib.tcgemm_gemm(0, 0, 0, m, k, k, 1.0, pa, k, b_square.data_ptr(), k, 0.0, pa, k,
                                                 stream)),
        ("the batch's C matrices overlap",
         lambda: lib.tcgemm_gemm_strided_batched(0, 0, 0, m, n, k, 1.0, pa, k, 0, pb, n, 0, 0.0, pc, n, 0, 2, stream)),
        ("needs 1 to 256 groups", lambda: lib.tcgemm_gemm_m_grouped(0, 0, m, n, k, 1.0, pa, k, pb, n, 0, 0.0, pc, n,
                                                                     ends.data_ptr(), 0, stream)),
    ]
    for match, call in cases:
        rc = call()
        reason = lib.tcgemm_last_error().decode()
        assert rc == 1, (match, rc, reason)  # tcgemm::Status::invalid_argument
        assert reason.startswith("tcgemm") and match in reason, (match, reason)
    torch.cuda.synchronize()
    assert torch.equal(bits(c), c_before) and torch.equal(bits(a), a_before), "a refused call wrote to C"

    # A successful call leaves the last reason as it was, and computes what tcgemm.matmul does.
    last = lib.tcgemm_last_error()
    assert lib.tcgemm_gemm(0, 0, 0, m, n, k, 1.0, pa, k, pb, n, 0.0, pc, n, stream) == 0
    assert lib.tcgemm_last_error() == last
    assert torch.equal(c, tcgemm.matmul(a, b))

    # The reason is the calling thread's own.
    seen: dict[str, bytes] = {}

    def other_thread() -> None:
        seen["before"] = lib.tcgemm_last_error()
        seen["rc"] = lib.tcgemm_gemm(5, 0, 0, m, n, k, 1.0, pa, k, pb, n, 0.0, pc, n, None)
        seen["after"] = lib.tcgemm_last_error()

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert seen["before"] == b"" and seen["rc"] == 1 and b"unknown dtype 5" in seen["after"], seen
    assert lib.tcgemm_last_error() == last
