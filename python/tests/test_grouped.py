"""tcgemm.grouped_mm / torch.ops.tcgemm.grouped_mm on a GPU: the M-grouped
product of a mixture of experts. Every group's rows bit-identical to
tcgemm.matmul on those rows alone, exact against a float64 reference on small
integers, close to torch._grouped_mm where torch has it; the nn.Linear weight
stack read in place; offs read on the device (new ends replayed through a CUDA
graph, and under torch.compile); refusals. Skipped without torch or a GPU
tcgemm runs on.
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


def ends_of(sizes: list[int]) -> torch.Tensor:
    return torch.tensor(sizes, dtype=torch.int32, device="cuda").cumsum(0, dtype=torch.int32)


def expect_grouped(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, sizes: list[int], exact: bool) -> None:
    start = 0
    for g, size in enumerate(sizes):
        rows = slice(start, start + size)
        if size:
            assert torch.equal(out[rows], tcgemm.matmul(a[rows], b[g])), f"group {g}"
            if exact:
                want = (a[rows].double() @ b[g].double()).to(a.dtype)
                assert torch.equal(out[rows], want), f"group {g} against float64"
        start += size


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weights", ["stack [G, N, K] transposed", "[G, K, N]"])
@pytest.mark.parametrize("sizes", [[0, 1, 130, 64, 0, 257, 5], [200], [3] * 8 + [0] * 8, [7, 300]])
def test_every_group_equals_a_plain_call(dtype, weights, sizes) -> None:
    m, n, k = sum(sizes), 192, 136
    groups = len(sizes)
    for ints in (True, False):
        a = rand(m, k, dtype=dtype, seed=m, ints=ints)
        if weights.startswith("stack"):  # nn.Linear weights, one per expert: x @ w[g]^T
            b = rand(groups, n, k, dtype=dtype, seed=groups, ints=ints).transpose(1, 2)
        else:
            b = rand(groups, k, n, dtype=dtype, seed=groups, ints=ints)
        out = tcgemm.grouped_mm(a, b, ends_of(sizes))
        assert out.shape == (m, n) and out.dtype == dtype
        expect_grouped(out, a, b, sizes, exact=ints)


def test_decode_rows_and_torch_grouped_mm() -> None:
    # A few tokens per expert (the 64-row tiles), against torch's own op where it exists.
    sizes = [2, 0, 1, 5, 3, 1, 0, 4]
    a = rand(sum(sizes), 512, dtype=torch.bfloat16, seed=3)
    w = rand(len(sizes), 1024, 512, dtype=torch.bfloat16, seed=4)
    offs = ends_of(sizes)
    out = tcgemm.grouped_mm(a, w.transpose(1, 2), offs)
    expect_grouped(out, a, w.transpose(1, 2), sizes, exact=False)
    if hasattr(torch, "_grouped_mm"):
        theirs = torch._grouped_mm(a, w.transpose(1, 2), offs=offs)
        assert torch.allclose(out.float(), theirs.float(), rtol=1e-2, atol=1e-2)


def test_rows_past_the_last_end_are_not_written() -> None:
    a = rand(100, 64, dtype=torch.float16, seed=5)
    b = rand(2, 64, 64, dtype=torch.float16, seed=6)
    offs = ends_of([30, 40])
    out = torch.ops.tcgemm.grouped_mm(a, b, offs)
    expect_grouped(out, a, b, [30, 40], exact=False)
    assert out.shape == (100, 64)


def test_operands_the_kernels_cannot_address_are_copied() -> None:
    # b's groups a stride apart that is not a whole 16 bytes, and operands
    # starting 2 bytes past an aligned address: copied, then the same bits.
    sizes, k, n = [40, 0, 90], 64, 48
    a = rand(sum(sizes), k, dtype=torch.bfloat16, seed=13)
    b = rand(len(sizes), k, n, dtype=torch.bfloat16, seed=14)
    offs = ends_of(sizes)
    want = tcgemm.grouped_mm(a, b, offs)
    expect_grouped(want, a, b, sizes, exact=False)
    padded = torch.zeros(len(sizes), k * n + 4, dtype=b.dtype, device="cuda")
    padded[:, : k * n] = b.reshape(len(sizes), -1)
    b_odd_stride = padded[:, : k * n].view(len(sizes), k, n)
    assert b_odd_stride.stride(0) % 8 != 0
    assert torch.equal(tcgemm.grouped_mm(a, b_odd_stride, offs), want)

    def shifted(x: torch.Tensor) -> torch.Tensor:
        flat = torch.empty(x.numel() + 1, dtype=x.dtype, device="cuda")
        out = flat[1:].view(x.shape)
        out.copy_(x)
        assert out.data_ptr() % 16 != 0
        return out

    assert torch.equal(tcgemm.grouped_mm(shifted(a), shifted(b), offs), want)

    # Rows a pitch apart that is not a whole 16 bytes: a column slice of a
    # [M, K + 4] buffer, b's of a [G, K, N + 4] one (copied, not refused).
    a_wide = torch.zeros(sum(sizes), k + 4, dtype=a.dtype, device="cuda")
    a_wide[:, :k] = a
    b_wide = torch.zeros(len(sizes), k, n + 4, dtype=b.dtype, device="cuda")
    b_wide[:, :, :n] = b
    assert a_wide[:, :k].stride(0) % 8 != 0 and b_wide[:, :, :n].stride(1) % 8 != 0
    assert torch.equal(tcgemm.grouped_mm(a_wide[:, :k], b, offs), want)
    assert torch.equal(tcgemm.grouped_mm(a, b_wide[:, :, :n], offs), want)


def test_new_ends_replay_in_a_cuda_graph() -> None:
    a = rand(300, 128, dtype=torch.bfloat16, seed=7, ints=True)
    b = rand(2, 128, 96, dtype=torch.bfloat16, seed=8, ints=True)
    offs = ends_of([100, 200])
    tcgemm.grouped_mm(a, b, offs)  # warm-up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tcgemm.grouped_mm(a, b, offs)
    for sizes in ([100, 200], [250, 10]):
        offs.copy_(ends_of(sizes))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        expect_grouped(out, a, b, sizes, exact=True)
        assert out[sum(sizes):].isnan().all(), f"{sizes}: rows past the last end were written"
        assert not out[:sum(sizes)].isnan().any(), f"{sizes}: rows of the groups left unwritten"


def test_compiled_fullgraph() -> None:
    a = rand(96, 64, dtype=torch.bfloat16, seed=9)
    w = rand(4, 80, 64, dtype=torch.bfloat16, seed=10)
    offs = ends_of([10, 50, 0, 36])

    def moe(x, weights, ends):
        return torch.relu(tcgemm.grouped_mm(x, weights.transpose(1, 2), ends))

    compiled = torch.compile(moe, fullgraph=True)
    assert torch.equal(compiled(a, w, offs), moe(a, w, offs))


def test_refusals() -> None:
    a = rand(16, 32, dtype=torch.float16, seed=11)
    b = rand(2, 32, 16, dtype=torch.float16, seed=12)
    offs = ends_of([8, 8])
    with pytest.raises(TypeError, match="int32"):
        tcgemm.grouped_mm(a, b, offs.long())
    with pytest.raises(ValueError, match="one end per group"):
        tcgemm.grouped_mm(a, b, offs[:1])
    with pytest.raises(ValueError, match="CUDA device"):
        tcgemm.grouped_mm(a, b, offs.cpu())
    with pytest.raises(ValueError, match="shapes do not match"):
        tcgemm.grouped_mm(a, b[:, :16], offs)
    # K or N not a multiple of 8 (no cuBLAS path takes it): said so, whatever a's strides (K = 1 is a column).
    for a_k, b_k in ((a[:, :12], b[:, :12]), (a[:, :1], b[:, :1]), (a, b[:, :, :12])):
        with pytest.raises(ValueError, match="K and N must be multiples of 8"):
            tcgemm.grouped_mm(a_k, b_k, offs)
    with pytest.raises(ValueError, match="no backward"):
        tcgemm.grouped_mm(a.requires_grad_(), b, offs)
