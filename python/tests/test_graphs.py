"""CUDA graphs through PyTorch on an sm_90 GPU: every entry point (the operators,
tcgemm.matmul, the C ABI through ctypes; tcgemm's kernel, the cuBLAS fallback,
the K == 0 path) captured with torch.cuda.graph in each capture mode replays
the eager bits, also after its inputs are rewritten in place; and
torch.compile(mode="reduce-overhead") really runs a tcgemm MLP as CUDA graphs.
The one-file submission's capture test is in test_submission_file.py.
Skipped without torch or such a GPU.
"""

from __future__ import annotations

import ctypes
from typing import Callable

import pytest

from conftest import c_abi, capture_graph as capture, gpu_skip_reason

_skip = gpu_skip_reason()
if _skip:
    pytest.skip(_skip, allow_module_level=True)

import torch  # noqa: E402

import tcgemm  # noqa: E402

MODES = ["global", "thread_local", "relaxed"]


def randn_(t: torch.Tensor, seed: int) -> torch.Tensor:
    """Fills t in place (same storage, same pointer) from a seeded generator."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    return t.copy_(torch.randn(t.shape, device="cuda", dtype=t.dtype, generator=gen))


class Case:
    """Static inputs and output of one call, and how to issue it."""

    def __init__(self, name: str, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor,
                 issue: Callable[["Case"], None], backend: str):
        self.name, self.a, self.b, self.out, self.issue, self.backend = name, a, b, out, issue, backend

    def run(self) -> None:
        self.issue(self)

    def refill(self, seed: int) -> None:
        for i, t in enumerate((self.a, self.b, self.out)):
            if t.numel():
                randn_(t, seed + i)


def _tensors(m: int, n: int, k: int, dtype: torch.dtype, b_transposed: bool = True):
    a = torch.empty(m, k, device="cuda", dtype=dtype)
    b = torch.empty(n, k, device="cuda", dtype=dtype).t() if b_transposed else torch.empty(k, n, device="cuda",
                                                                                          dtype=dtype)
    return a, b, torch.empty(m, n, device="cuda", dtype=dtype)


def _unaligned(rows: int, cols: int, dtype: torch.dtype) -> torch.Tensor:
    flat = torch.empty(rows * cols + 1, device="cuda", dtype=dtype)
    return flat[1:].view(rows, cols)  # base 2 bytes past the allocation: the cuBLAS fallback


def _cases() -> list[Case]:
    bf16, f16 = torch.bfloat16, torch.float16

    def op_mm_out(c: Case) -> None:
        torch.ops.tcgemm.mm_out(c.a, c.b, c.out, 0.5, 0.75)

    def op_mm(c: Case) -> None:
        c.out.copy_(torch.ops.tcgemm.mm(c.a, c.b))  # mm's output is allocated inside the graph

    def matmul_out(c: Case) -> None:
        tcgemm.matmul(c.a, c.b, out=c.out, beta=-1.0)

    def matmul_new(c: Case) -> None:
        c.out.copy_(tcgemm.matmul(c.a, c.b))

    cases = [
        Case("mm_out, kernel, nn.Linear layout", *_tensors(16, 1024, 512, bf16), op_mm_out, "sm90"),
        Case("mm, kernel", *_tensors(200, 264, 136, f16, b_transposed=False), op_mm, "sm90"),
        Case("matmul(out=), kernel", *_tensors(1, 4096, 1024, bf16), matmul_out, "sm90"),
        Case("matmul, kernel", *_tensors(64, 512, 2048, f16), matmul_new, "sm90"),
    ]
    a, b, out = _tensors(72, 40, 64, f16, b_transposed=False)
    cases.append(Case("mm_out, cuBLAS fallback", _unaligned(72, 64, f16), b, out, op_mm_out, "cublas"))
    a, b, out = _tensors(48, 80, 0, bf16)
    cases.append(Case("mm_out, K == 0", a, b, out, op_mm_out, "none"))
    return cases


@pytest.mark.parametrize("mode", MODES)
def test_every_operator_path_captures_and_replays_eager_bits(mode: str) -> None:
    for case in _cases():
        plan = tcgemm.plan(case.a, case.b, case.out)
        assert plan.backend == case.backend, (case.name, plan)
        case.refill(1)
        graph = capture(case.run, mode)
        for round_ in range(2):
            # New inputs in the captured tensors (same pointers), then the
            # eager result on copies, then the replay.
            case.refill(10 * round_ + 2)
            start = case.out.clone()
            case.run()
            want = case.out.clone()
            assert not torch.equal(want.view(torch.int16), start.view(torch.int16)), \
                f"{case.name}: the eager call left its output as it was (nothing to compare the replay with)"
            case.out.copy_(start)
            graph.replay()
            torch.cuda.synchronize()
            assert torch.equal(case.out.view(torch.int16), want.view(torch.int16)), \
                f"{case.name}, mode {mode}, replay {round_}: the graph's bits differ from the eager call"


@pytest.mark.parametrize("mode", MODES)
def test_first_call_inside_the_capture(mode: str) -> None:
    # No warm-up call: whatever the library sets up once happens inside the capture.
    a, b, out = _tensors(24, 2048, 1024, torch.bfloat16)
    for t, s in ((a, 1), (b, 2)):
        randn_(t, s)
    graph = capture(lambda: torch.ops.tcgemm.mm_out(a, b, out), mode, warm_up=False)
    out.fill_(float("nan"))
    graph.replay()
    want = torch.empty_like(out)
    torch.ops.tcgemm.mm_out(a, b, want)
    torch.cuda.synchronize()
    assert torch.equal(out, want)


@pytest.mark.parametrize("mode", MODES)
def test_c_abi_through_ctypes(mode: str) -> None:
    lib = c_abi()
    m, n, k = 64, 4096, 1024
    x = randn_(torch.empty(m, k, device="cuda", dtype=torch.bfloat16), 3)
    w = randn_(torch.empty(n, k, device="cuda", dtype=torch.bfloat16), 4)  # nn.Linear's weight: op_b = T
    y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    rcs: list[int] = []

    def call() -> None:
        stream = torch.cuda.current_stream().cuda_stream
        rcs.append(lib.tcgemm_gemm(1, 0, 1, m, n, k, 1.0, x.data_ptr(), k, w.data_ptr(), k, 0.0, y.data_ptr(), n,
                                   ctypes.c_void_p(stream)))
        assert rcs[-1] == 0, lib.tcgemm_last_error().decode()

    graph = capture(call, mode)
    randn_(x, 5)
    call()  # eager, on the new input
    want = y.clone()
    y.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert all(rc == 0 for rc in rcs)
    assert torch.equal(y, want), "the captured C ABI call's replay differs from the eager call"


def test_compile_reduce_overhead_runs_cudagraphs() -> None:
    from torch._dynamo.utils import counters
    from torch._inductor import cudagraph_trees

    torch._dynamo.reset()
    counters.clear()
    d, hidden = 1024, 2816
    w_up = randn_(torch.empty(hidden, d, device="cuda", dtype=torch.bfloat16), 6) / d ** 0.5
    w_down = randn_(torch.empty(d, hidden, device="cuda", dtype=torch.bfloat16), 7) / hidden ** 0.5

    def mlp(x: torch.Tensor) -> torch.Tensor:
        h = torch.ops.tcgemm.mm(x, w_up.t())
        return torch.ops.tcgemm.mm(torch.relu(h), w_down.t())  # relu: exact, so eager and inductor agree

    compiled = torch.compile(mlp, mode="reduce-overhead", fullgraph=True)
    for step in range(5):
        x = randn_(torch.empty(32, d, device="cuda", dtype=torch.bfloat16), 100 + step)  # fresh input each step
        y = compiled(x).clone()
        assert torch.equal(y, mlp(x)), f"step {step}: the compiled graph differs from eager"
    assert counters["inductor"]["cudagraph_skips"] == 0, dict(counters["inductor"])
    manager = cudagraph_trees.get_manager(torch.cuda.current_device(), create_if_none_exists=False)
    assert manager is not None and sum(len(nodes) for nodes in manager.roots.values()) >= 1, \
        "torch.compile recorded no CUDA graph"
