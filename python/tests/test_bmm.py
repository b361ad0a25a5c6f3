"""tcgemm.bmm / torch.ops.tcgemm.bmm on a GPU: every problem bit-identical
to tcgemm.matmul on its own matrices (one batched launch, batch invariant),
exact against a float64 reference on small integers, close to torch.bmm on
random inputs, transposed and broadcast operands read in place, refusals,
gradients, opcheck, torch.compile and CUDA graphs. Skipped without torch or a
GPU tcgemm runs on.
"""

from __future__ import annotations

import pytest

from conftest import gpu_skip_reason, rand

_skip = gpu_skip_reason()
if _skip:
    pytest.skip(_skip, allow_module_level=True)

import torch  # noqa: E402

import tcgemm  # noqa: E402

DTYPES = [torch.float16, torch.bfloat16]


def operands(batch: int, m: int, n: int, k: int, layout: str, dtype: torch.dtype, seed: int, ints: bool = False):
    """a [batch, m, k] and b [batch, k, n]; layout's letters say whether each is stored transposed (T)."""
    a = rand(batch, m, k, dtype=dtype, seed=seed, ints=ints)
    b = rand(batch, k, n, dtype=dtype, seed=seed + 1, ints=ints)
    if layout[0] == "T":
        a = a.transpose(1, 2).contiguous().transpose(1, 2)
    if layout[1] == "T":
        b = b.transpose(1, 2).contiguous().transpose(1, 2)
    return a, b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("shape", [(3, 130, 200, 72), (37, 64, 64, 64), (8, 1, 4096, 256), (2, 77, 61, 40)])
def test_every_problem_equals_a_plain_call_and_exact_reference(dtype, layout, shape) -> None:
    batch, m, n, k = shape
    a, b = operands(batch, m, n, k, layout, dtype, seed=sum(shape), ints=True)
    c = tcgemm.bmm(a, b)
    assert c.shape == (batch, m, n) and c.dtype == dtype
    want = torch.bmm(a.double(), b.double()).to(dtype)
    assert torch.equal(c, want), (c.float() - want.float()).abs().max().item()
    for i in range(batch):  # batch invariance: the bits of one plain call
        assert torch.equal(c[i], tcgemm.matmul(a[i], b[i])), i


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["NN", "NT"])
def test_random_inputs_close_to_torch_bmm(dtype, layout) -> None:
    a, b = operands(32, 128, 128, 128, layout, dtype, seed=5)
    got, want = tcgemm.bmm(a, b), torch.bmm(a.float(), b.float()).to(dtype)
    tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
    torch.testing.assert_close(got.float(), want.float(), atol=tol, rtol=tol)
    for i in (0, 31):
        assert torch.equal(got[i], tcgemm.matmul(a[i], b[i]))


@pytest.mark.parametrize("which", ["a", "b"])
def test_a_broadcast_operand_is_one_matrix_for_every_problem(which) -> None:
    a, b = operands(6, 96, 80, 64, "NN", torch.bfloat16, seed=9, ints=True)
    if which == "a":
        a = a[:1]  # batch 1: broadcast
        wide = a.expand(6, -1, -1)  # stride 0 over the batch, read in place
    else:
        b = b[:1]
        wide = b.expand(6, -1, -1)
    c = tcgemm.bmm(a, b)
    assert c.shape == (6, 96, 80)
    c_expanded = tcgemm.bmm(wide, b) if which == "a" else tcgemm.bmm(a, wide)
    assert torch.equal(c, c_expanded)
    for i in range(6):
        ai = a[0] if which == "a" else a[i]
        bi = b[0] if which == "b" else b[i]
        assert torch.equal(c[i], tcgemm.matmul(ai, bi))


def test_strided_views_are_copied_or_read_and_give_the_same_bits() -> None:
    a, b = operands(4, 64, 96, 128, "NN", torch.float16, seed=3, ints=True)
    every_other = torch.zeros(8, 64, 128, device="cuda", dtype=torch.float16)
    every_other[::2] = a
    view = every_other[::2]  # batch stride 2 * 64 * 128: read in place
    assert torch.equal(tcgemm.bmm(view, b), tcgemm.bmm(a, b))
    cols = torch.zeros(4, 64, 256, device="cuda", dtype=torch.float16)
    cols[:, :, ::2] = a
    assert torch.equal(tcgemm.bmm(cols[:, :, ::2], b), tcgemm.bmm(a, b))  # copied first


@pytest.mark.parametrize("n", [1001, 4093])
def test_one_row_against_any_length_runs_tcgemm_batch_invariant(n) -> None:
    # A decoding step's attention scores: q [batch, 1, d] against keys of any
    # length. The problems start 8 elements apart (N rounded up), so
    # tcgemm's kernel stores them (a contiguous batch stride of N would go to
    # cuBLAS); on random inputs every row has the bits of tcgemm.matmul.
    a, b = operands(16, 1, n, 128, "NT", torch.bfloat16, seed=n)
    c = tcgemm.bmm(a, b)
    n8 = (n + 7) // 8 * 8
    assert c.shape == (16, 1, n) and c.stride() == (n8, n8, 1)
    for i in range(16):
        assert torch.equal(c[i], tcgemm.matmul(a[i], b[i])), i
    torch.testing.assert_close(c.float(), torch.bmm(a.float(), b.float()), atol=3e-2, rtol=2e-2)
    # The fake implementation (torch.compile) gives the same strides.
    compiled = torch.compile(lambda x, y: tcgemm.bmm(x, y) * 2, fullgraph=True)
    assert torch.equal(compiled(a, b), c * 2)


def test_empty_and_zero_k() -> None:
    a = torch.empty(0, 8, 16, device="cuda", dtype=torch.float16)
    b = torch.empty(0, 16, 24, device="cuda", dtype=torch.float16)
    assert tcgemm.bmm(a, b).shape == (0, 8, 24)
    assert tcgemm.bmm(a, b[:0].new_empty(1, 16, 24)).shape == (0, 8, 24)  # a batch of 1 broadcasts to 0
    a = torch.empty(3, 8, 0, device="cuda", dtype=torch.float16)
    b = torch.empty(3, 0, 24, device="cuda", dtype=torch.float16)
    assert torch.equal(tcgemm.bmm(a, b), torch.zeros(3, 8, 24, device="cuda", dtype=torch.float16))


def test_bad_input_is_refused_with_the_reason() -> None:
    a = torch.ones(2, 8, 16, device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="3-D"):
        tcgemm.bmm(a[0], a[0].t())
    with pytest.raises(ValueError, match="batch sizes 2 and 3"):
        tcgemm.bmm(a, torch.ones(3, 16, 8, device="cuda", dtype=torch.float16))
    with pytest.raises(ValueError, match="do not match"):
        tcgemm.bmm(a, a)
    with pytest.raises(TypeError):
        tcgemm.bmm(a, torch.ones(2, 16, 8, device="cuda", dtype=torch.bfloat16))
    with pytest.raises(ValueError, match="CUDA"):
        tcgemm.bmm(a.cpu(), a.cpu().transpose(1, 2))


def test_gradients_match_torch() -> None:
    a, b = operands(4, 64, 48, 32, "NN", torch.float32, seed=11)
    a, b = a.to(torch.bfloat16).requires_grad_(), b.to(torch.bfloat16).requires_grad_()
    grad = rand(4, 64, 48, dtype=torch.bfloat16, seed=12)
    tcgemm.bmm(a, b).backward(grad)
    ga, gb = a.grad.clone(), b.grad.clone()
    a.grad = b.grad = None
    torch.bmm(a, b).backward(grad)
    torch.testing.assert_close(ga.float(), a.grad.float(), atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(gb.float(), b.grad.float(), atol=2e-2, rtol=2e-2)


def test_a_broadcast_operand_gets_the_sum_of_its_gradients() -> None:
    a = rand(1, 64, 32, dtype=torch.bfloat16, seed=21).requires_grad_()  # one matrix for all 6 problems
    b = rand(6, 32, 48, dtype=torch.bfloat16, seed=22).requires_grad_()
    grad = rand(6, 64, 48, dtype=torch.bfloat16, seed=23)
    tcgemm.bmm(a, b).backward(grad)
    assert a.grad.shape == (1, 64, 32)
    want = torch.einsum("bmn,bkn->mk", grad.double(), b.detach().double()).unsqueeze(0)
    torch.testing.assert_close(a.grad.double(), want, atol=5e-2, rtol=2e-2)
    want_b = torch.bmm(a.detach().double().expand(6, -1, -1).transpose(1, 2), grad.double())
    torch.testing.assert_close(b.grad.double(), want_b, atol=5e-2, rtol=2e-2)


def test_opcheck() -> None:
    a, b = operands(3, 32, 40, 16, "NT", torch.float16, seed=13)
    torch.library.opcheck(torch.ops.tcgemm.bmm.default, (a, b))
    # With gradients (the autograd registration), and a broadcast operand.
    torch.library.opcheck(torch.ops.tcgemm.bmm.default, (a[:1].clone().requires_grad_(), b.requires_grad_()))


def test_torch_compile_fullgraph_and_cuda_graph() -> None:
    a, b = operands(8, 128, 128, 64, "NT", torch.bfloat16, seed=17)

    def f(x, y):
        scores = tcgemm.bmm(x, y)
        return scores, scores.float().softmax(-1)

    eager_scores, eager_probs = f(a, b)
    compiled_scores, compiled_probs = torch.compile(f, fullgraph=True)(a, b)
    # The GEMM is the same kernel either way: bit for bit. The softmax is
    # torch's own (a fused Triton kernel when compiled), equal to rounding.
    assert torch.equal(compiled_scores, eager_scores)
    torch.testing.assert_close(compiled_probs, eager_probs, rtol=1e-5, atol=1e-7)
    graph_out = torch.empty(8, 128, 128, device="cuda", dtype=torch.bfloat16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        graph_out.copy_(tcgemm.bmm(a, b))  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        graph_out.copy_(tcgemm.bmm(a, b))
    a.copy_(rand(8, 128, 64, dtype=torch.bfloat16, seed=18))  # new inputs, same pointers
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(graph_out, tcgemm.bmm(a, b))
