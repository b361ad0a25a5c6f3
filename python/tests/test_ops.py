"""The torch operators on an sm_90 GPU: results, layouts, errors, streams,
opcheck, torch.compile and autograd. Skipped without torch or such a GPU.
"""

from __future__ import annotations

import pytest

from conftest import gpu_skip_reason

_skip = gpu_skip_reason()
if _skip:
    pytest.skip(_skip, allow_module_level=True)

import torch  # noqa: E402

import tcgemm  # noqa: E402  (install it: pip install --no-build-isolation .)

DTYPES = [torch.float16, torch.bfloat16]
LAYOUTS = ["NN", "NT", "TN", "TT"]
# The widths the sm90 kernels are built with (kTileWidths in tcgemm.hpp).
SM90_WIDTHS = (8, 16, 32, 40, 48, 64, 96, 112, 128, 136, 144, 152, 160, 176, 192, 200, 208, 224, 256)
# (m, n, k): single rows/columns, odd sizes (cuBLAS fallback), tile edges, several waves.
SHAPES = [(1, 1, 1), (1, 96, 64), (96, 1, 64), (64, 64, 1), (7, 13, 9), (64, 64, 64), (128, 256, 64),
          (257, 129, 200), (264, 520, 1000), (1024, 1024, 1024), (2048, 4096, 512)]


def randn(rows: int, cols: int, dtype: torch.dtype, seed: int) -> torch.Tensor:
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    return torch.randn(rows, cols, device="cuda", dtype=dtype, generator=gen)


def operands(m: int, n: int, k: int, layout: str, dtype: torch.dtype, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """a (m x k) and b (k x n); 'T' makes the operand a transposed view of a row-major tensor."""
    a = randn(m, k, dtype, seed) if layout[0] == "N" else randn(k, m, dtype, seed).t()
    b = randn(k, n, dtype, seed + 1) if layout[1] == "N" else randn(n, k, dtype, seed + 1).t()
    return a, b


def expected(a: torch.Tensor, b: torch.Tensor, alpha: float = 1.0, beta: float = 0.0,
             out: torch.Tensor | None = None) -> torch.Tensor:
    ref = alpha * (a.double() @ b.double())
    if out is not None and beta != 0.0:
        ref += beta * out.double()
    return ref


def assert_matches(out: torch.Tensor, ref: torch.Tensor, k: int, what: str) -> None:
    """fp32 accumulation and one rounding: within an ulp or two of the exact
    result, plus what fp32 accumulation can lose where terms cancel."""
    rtol = 2.0 ** -10 if out.dtype == torch.float16 else 2.0 ** -7
    atol = 1e-3 * max(k, 1) ** 0.5
    err = (out.double() - ref).abs()
    # (Written as "not within": NaN compares false both ways, and an unwritten,
    # NaN-poisoned output must count as off.)
    bad = ~(err <= atol + rtol * ref.abs())
    assert not bad.any(), (f"{what}: {int(bad.sum())} of {out.numel()} elements off, max error "
                           f"{err.max().item():.3g}, first at {tuple(torch.nonzero(bad)[0].tolist())}")


def nan_bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().clone().contiguous().view(torch.uint8)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("m,n,k", SHAPES, ids=[f"{m}x{n}x{k}" for m, n, k in SHAPES])
def test_matches_reference(m: int, n: int, k: int, layout: str, dtype: torch.dtype) -> None:
    a, b = operands(m, n, k, layout, dtype, seed=m + n + k)
    out = tcgemm.matmul(a, b)
    assert out.shape == (m, n) and out.dtype == dtype and out.device == a.device and out.is_contiguous()
    assert_matches(out, expected(a, b), k, f"{m}x{n}x{k} {layout} {dtype}")
    plan = tcgemm.plan(a, b)
    assert plan.status == "ok", plan
    assert "copied" not in plan.layout, plan  # transposed views go in as op T, not as copies
    if min(m, n, k) > 1:
        assert plan.layout.startswith(layout), plan
    if m % 8 == 0 and n % 8 == 0 and k % 8 == 0 and min(m, n, k) > 1:
        # TMA-compatible: tcgemm's kernel, instantiated for this layout.
        assert plan.backend == "sm90", plan
        assert f"<{'f16' if dtype == torch.float16 else 'bf16'},{layout}," in plan.kernel, plan
        # The structured fields name the configuration the kernel's name shows.
        assert plan.path == "kernel" and plan.schedule == "persistent", plan
        assert (plan.block_m, plan.block_k) in ((128, 64), (64, 64), (8, 256)), plan
        assert plan.block_n in SM90_WIDTHS, plan
        assert f",{plan.block_m}x{plan.block_n}x{plan.block_k}, {plan.stages} stages" in plan.kernel, plan
        assert plan.cluster_m in (1, 2) and plan.pingpong == ("ping-pong" in plan.kernel), plan
        assert plan.cluster_n == (2 if "cluster 1x2" in plan.kernel else 1), plan
        assert plan.swap_ab == ("swapped" in plan.kernel), plan


@pytest.mark.parametrize("layout", LAYOUTS)
def test_transposed_views_are_not_copied(layout: str) -> None:
    # A copy of an operand would show in the allocator: mm_out allocates nothing.
    a, b = operands(512, 384, 256, layout, torch.float16)
    out = torch.empty(512, 384, device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    tcgemm.matmul(a, b, out=out)
    torch.cuda.synchronize()
    assert torch.cuda.max_memory_allocated() == before
    assert_matches(out, expected(a, b), 256, layout)


def test_matches_torch_bit_for_bit_on_uniform_inputs() -> None:
    # fp32 in K order, one rounding: what cuBLAS does on these shapes too.
    for m, n, k in [(128, 128, 128), (1024, 1536, 1024), (4096, 5120, 4096)]:
        gen = torch.Generator(device="cuda")
        gen.manual_seed(m * n + k)
        a = torch.empty(m, k, device="cuda", dtype=torch.float16).uniform_(0, 1, generator=gen)
        b = torch.empty(k, n, device="cuda", dtype=torch.float16).uniform_(0, 1, generator=gen)
        # (tcgemm's own kernel: the cuBLAS fallback would equal torch trivially.)
        assert tcgemm.plan(a, b).backend in ("sm90", "sm100"), tcgemm.plan(a, b)
        assert torch.equal(tcgemm.matmul(a, b), a @ b), f"{m}x{n}x{k}"


@pytest.mark.parametrize("dtype", DTYPES, ids=["f16", "bf16"])
def test_alpha_beta(dtype: torch.dtype) -> None:
    a, b = operands(200, 136, 96, "NT", dtype)
    out = randn(200, 136, dtype, 7)
    ref = expected(a, b, 0.5, -2.0, out)
    result = tcgemm.matmul(a, b, out=out, alpha=0.5, beta=-2.0)
    assert result is out
    assert_matches(out, ref, 96, "alpha=0.5 beta=-2")
    assert_matches(tcgemm.matmul(a, b, alpha=3.0), expected(a, b, 3.0), 96, "alpha=3")


def test_beta_zero_does_not_read_out() -> None:
    a, b = operands(128, 64, 32, "NN", torch.float16)
    out = torch.full((128, 64), float("nan"), device="cuda", dtype=torch.float16)
    tcgemm.matmul(a, b, out=out)
    assert_matches(out, expected(a, b), 32, "beta 0 over NaN")


def test_degenerate_shapes() -> None:
    f16 = dict(device="cuda", dtype=torch.float16)
    assert tcgemm.matmul(torch.empty(0, 5, **f16), torch.empty(5, 3, **f16)).shape == (0, 3)
    assert tcgemm.matmul(torch.empty(4, 5, **f16), torch.empty(5, 0, **f16)).shape == (4, 0)
    empty = tcgemm.plan(torch.empty(0, 5, **f16), torch.empty(5, 3, **f16))
    assert (empty.backend, empty.path, empty.kernel) == ("none", "none", "none"), empty
    # K == 0: C = beta * C (zeros when beta == 0).
    a, b = torch.empty(4, 0, **f16), torch.empty(0, 3, **f16)
    scale = tcgemm.plan(a, b)
    assert (scale.backend, scale.path, scale.kernel) == ("none", "scale", "scale_c"), scale
    assert torch.equal(tcgemm.matmul(a, b), torch.zeros(4, 3, **f16))
    out = torch.full((4, 3), 3.0, **f16)
    tcgemm.matmul(a, b, out=out, beta=2.0)
    assert torch.equal(out, torch.full((4, 3), 6.0, **f16))


def test_other_strides_are_copied() -> None:
    wide = randn(256, 512, torch.float16, 3)
    a = wide[:, ::2]                                    # every other column: no op/ld describes it
    b = randn(1, 64, torch.float16, 4).expand(256, 64)  # stride 0
    plan = tcgemm.plan(a, b)
    assert "copied a" in plan.layout and "copied b" in plan.layout, plan
    assert_matches(tcgemm.matmul(a, b), expected(a, b), 256, "copied operands")


def test_size_one_dimensions_with_any_stride() -> None:
    wide = randn(96, 40, torch.float16, 5)
    cases = [(wide[:, 3:4], randn(1, 72, torch.float16, 6)),      # column slice (stride 40) @ row
             (wide[5:6, :], randn(40, 1, torch.float16, 7)),      # row @ contiguous column
             (wide[5:6, 7:8], wide[2:3, :]),                      # 1 x 1 @ a row of a wider matrix
             (wide.t()[:1, :], randn(96, 24, torch.float16, 8))]  # one row of a transposed view
    for a, b in cases:
        plan = tcgemm.plan(a, b)
        assert "copied" not in plan.layout, (a.shape, a.stride(), b.shape, b.stride(), plan)
        assert_matches(tcgemm.matmul(a, b), expected(a, b), a.shape[1], f"{tuple(a.shape)}@{tuple(b.shape)}")


def test_unaligned_views_fall_back_to_cublas() -> None:
    flat = randn(1, 64 * 64 + 1, torch.float16, 9).view(-1)
    a = flat[1:].view(64, 64)  # base 2 bytes past an allocation: not 16-byte aligned for TMA
    b = randn(64, 64, torch.float16, 10)
    plan = tcgemm.plan(a, b)
    assert plan.backend == "cublas" and "16-byte" in plan.reason, plan
    assert plan.path == "cublas" and plan.block_n == 0, plan
    assert_matches(tcgemm.matmul(a, b), expected(a, b), 64, "unaligned a")


def test_output_view_with_leading_dimension() -> None:
    a, b = operands(128, 64, 64, "NN", torch.float16)
    big = torch.full((128, 200), float("nan"), device="cuda", dtype=torch.float16)
    out = big[:, 8:72]  # ldc = 200, 16-byte aligned base
    tcgemm.matmul(a, b, out=out)
    assert_matches(out, expected(a, b), 64, "out view")
    assert big[:, :8].isnan().all() and big[:, 72:].isnan().all()  # nothing outside the view written


def _error_cases() -> list:
    # (a, b, out, exception, message, whether mm(a, b) without out fails too)
    f16 = dict(device="cuda", dtype=torch.float16)
    a, b, out = torch.randn(64, 32, **f16), torch.randn(32, 48, **f16), torch.empty(64, 48, **f16)
    return [
        pytest.param(a.cpu(), b, out, ValueError, "a is on cpu", True, id="cpu-a"),
        pytest.param(a.cpu(), b.cpu(), out.cpu(), ValueError, "CUDA tensors only", True, id="all-cpu"),
        pytest.param(a, b.bfloat16(), out, TypeError, "same dtype", True, id="mixed-dtypes"),
        pytest.param(a.float(), b.float(), out.float(), TypeError, "not supported", True, id="float32"),
        pytest.param(a, torch.randn(33, 48, **f16), out, ValueError, "shapes do not match", True, id="shape-mismatch"),
        pytest.param(a[None], b, out, ValueError, "2-D", True, id="3d-a"),
        pytest.param(a, b, torch.empty(64, 40, **f16), ValueError, r"out must be \[64, 48\]", False, id="out-shape"),
        pytest.param(a, b, torch.empty(64, 48, device="cuda", dtype=torch.bfloat16), TypeError, "dtype of a and b",
                     False, id="out-dtype"),
        pytest.param(a, b, out.cpu(), ValueError, "out is on cpu", False, id="out-cpu"),
        pytest.param(a, b, torch.empty(48, 64, **f16).t(), ValueError, "row-major", False, id="out-transposed"),
    ]


@pytest.mark.parametrize("a,b,out,error,match,mm_too", _error_cases())
def test_bad_input_raises_and_leaves_out_untouched(a, b, out, error, match, mm_too) -> None:
    out.fill_(float("nan"))
    before = nan_bits(out)
    for call in (lambda: tcgemm.matmul(a, b, out=out), lambda: torch.ops.tcgemm.mm_out(a, b, out)):
        with pytest.raises(error, match=match):
            call()
        torch.cuda.synchronize()
        assert torch.equal(nan_bits(out), before), "a refused call wrote to out"
    if mm_too:
        with pytest.raises(error, match=match):
            torch.ops.tcgemm.mm(a, b)


def test_row_major_out_view_is_accepted() -> None:
    a, b = operands(64, 48, 32, "NN", torch.float16)
    out = torch.empty(64, 32, 48, device="cuda", dtype=torch.float16)[:, 0, :]  # ldc = 1536
    tcgemm.matmul(a, b, out=out)
    assert_matches(out, expected(a, b), 32, "out with ldc 1536")


def test_out_overlapping_an_operand_is_refused() -> None:
    buf = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    before = nan_bits(buf)
    with pytest.raises(ValueError, match="overlaps a"):
        tcgemm.matmul(buf, torch.randn(64, 64, device="cuda", dtype=torch.float16), out=buf)
    assert torch.equal(nan_bits(buf), before)


def test_out_sharing_memory_with_an_operand_in_views_torch_cannot_tell_apart() -> None:
    # Non-dense views of one buffer (torch's overlap check says "too hard"): out == a refused, two
    # disjoint column blocks taken.
    buf = torch.randn(64, 128, device="cuda", dtype=torch.float16)
    b = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    before = nan_bits(buf)
    for a, out in ((buf[:, :64], buf[:, :64]), (buf[:, :64], buf[:, 32:96])):
        with pytest.raises(ValueError, match="overlaps a"):
            tcgemm.matmul(a, b, out=out)
    assert torch.equal(nan_bits(buf), before)
    want = expected(buf[:, :64].clone(), b)
    tcgemm.matmul(buf[:, :64], b, out=buf[:, 64:])
    assert_matches(buf[:, 64:], want, 64, "out a disjoint column block of a's buffer")


def test_out_with_an_operand_that_requires_grad_is_refused() -> None:
    a = torch.randn(16, 16, device="cuda", dtype=torch.float16, requires_grad=True)
    out = torch.full((16, 16), float("nan"), device="cuda", dtype=torch.float16)
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        tcgemm.matmul(a, a.detach(), out=out)
    assert out.isnan().all()
    with torch.no_grad():
        tcgemm.matmul(a, a.detach(), out=out)
    assert_matches(out, expected(a.detach(), a.detach()), 16, "out= under no_grad")


def test_beta_without_out_is_refused() -> None:
    a = torch.randn(8, 8, device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="beta"):
        tcgemm.matmul(a, a, beta=1.0)


def test_library_rejections_carry_its_reason() -> None:
    # M = 2^31 is beyond the kernels' 32-bit coordinates: the library refuses
    # it (K = 0 keeps a and b empty; out is 4 GiB) and out stays as it was.
    f16 = dict(device="cuda", dtype=torch.float16)
    a, b = torch.empty(2 ** 31, 0, **f16), torch.empty(0, 1, **f16)
    out = torch.full((2 ** 31, 1), float("nan"), **f16)
    with pytest.raises(ValueError, match=r"tcgemm: sizes above 2\^31-1 are not supported \(m=2147483648"):
        tcgemm.matmul(a, b, out=out)
    assert out.isnan().all()
    assert tcgemm.plan(a, b, out).status == "invalid_argument"
    del out


def test_runs_on_the_current_stream() -> None:
    a_old, b = operands(512, 512, 512, "NN", torch.float16, seed=11)
    a_new = randn(512, 512, torch.float16, 12)
    want = expected(a_new, b)
    a = a_old.clone()
    out = torch.empty(512, 512, device="cuda", dtype=torch.float16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # keep `side` busy for ~0.1 s
        a.copy_(a_new)
        tcgemm.matmul(a, b, out=out)
        fresh = tcgemm.matmul(a, b)
    # On any other stream the products would have read a before the copy.
    torch.cuda.current_stream().wait_stream(side)
    assert_matches(out, want, 512, "mm_out on a side stream")
    assert_matches(fresh, want, 512, "mm on a side stream")


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_tensors_on_another_device() -> None:
    torch.cuda.set_device(0)
    a, b = randn(64, 64, torch.float16, 1).to("cuda:1"), randn(64, 64, torch.float16, 2).to("cuda:1")
    out = tcgemm.matmul(a, b)
    assert out.device == torch.device("cuda:1")
    assert_matches(out, expected(a, b), 64, "cuda:1 while cuda:0 is current")
    with pytest.raises(ValueError, match="one CUDA device"):
        tcgemm.matmul(a, b.to("cuda:0"))


def test_opcheck_mm() -> None:
    a, b = operands(96, 80, 64, "NT", torch.float16)
    torch.library.opcheck(torch.ops.tcgemm.mm.default, (a, b), {"alpha": 0.5})
    torch.library.opcheck(torch.ops.tcgemm.mm.default, (a.detach().requires_grad_(), b.detach().requires_grad_()))


def test_opcheck_mm_out() -> None:
    a, b = operands(96, 80, 64, "TN", torch.bfloat16)
    out = randn(96, 80, torch.bfloat16, 5)
    torch.library.opcheck(torch.ops.tcgemm.mm_out.default, (a, b, out), {"alpha": 1.0, "beta": 0.5})


def test_compile_fullgraph() -> None:
    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.ops.tcgemm.mm(a, b, 0.5))

    compiled = torch.compile(f, fullgraph=True)
    a, b = operands(256, 128, 64, "NN", torch.float16)
    assert torch.equal(compiled(a, b), f(a, b))
    dynamic = torch.compile(f, fullgraph=True, dynamic=True)
    for m, n, k in [(64, 64, 64), (128, 192, 96), (200, 72, 40)]:
        a, b = operands(m, n, k, "NT", torch.float16)
        assert torch.equal(dynamic(a, b), f(a, b)), f"{m}x{n}x{k}"


def test_compile_out_variant() -> None:
    def g(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        tcgemm.matmul(a, b, out=out, beta=1.0)
        return out

    a, b = operands(128, 64, 32, "NN", torch.float16)
    base = randn(128, 64, torch.float16, 3)
    out_eager, out_compiled = base.clone(), base.clone()
    g(a, b, out_eager)
    result = torch.compile(g, fullgraph=True)(a, b, out_compiled)
    assert torch.equal(out_compiled, out_eager)  # the mutation reaches the caller's tensor
    assert result.data_ptr() == out_compiled.data_ptr()


def test_autograd() -> None:
    a, b = operands(128, 96, 64, "NN", torch.float32)
    a16 = a.half().requires_grad_()
    b16 = b.half().requires_grad_()
    grad = randn(128, 96, torch.float16, 9)
    torch.ops.tcgemm.mm(a16, b16, 2.0).backward(grad)
    assert_matches(a16.grad, expected(grad, b16.detach().t(), 2.0), 96, "grad a")
    assert_matches(b16.grad, expected(a16.detach().t(), grad, 2.0), 128, "grad b")


def test_info_and_version() -> None:
    info = tcgemm.info()
    assert info["version"] == tcgemm.__version__
    assert "sm_90a" in info["cuda_archs"]
