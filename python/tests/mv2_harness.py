"""The matmul_v2 leaderboard's harness as it generates, checks and times
(gpu-mode reference-kernels: problems/pmpp_v2 eval.py, utils.py,
matmul_py/reference.py and task.yml), for the tests and bench_overhead.py.

Needs torch and a CUDA device; imported only by GPU tests and the benchmark.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

# The reference runs under torch.use_deterministic_algorithms(True), which
# needs this for cuBLAS; it must be set before the first cuBLAS handle exists.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402

# (m, n, k, seed) of task.yml.
TESTS = [(64, 64, 64, 53124), (128, 128, 128, 3321), (256, 256, 256, 1200), (32, 512, 32, 32523),
         (64, 1024, 64, 4327)]
BENCHMARKS = [(128, 128, 128, 43214), (256, 256, 256, 423011), (512, 512, 512, 123456), (1024, 1024, 1024, 1029),
              (2048, 2048, 2048, 75342), (1024, 1536, 1024, 321), (2048, 3072, 2048, 32412),
              (4096, 5120, 4096, 123456)]
SEED_STEP = 13  # the ranked run's fresh inputs: seed += 13 before every timed call

Data = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


def generate_input(m: int, n: int, k: int, seed: int) -> Data:
    """As reference.py: uniform(0, 1) fp16 from a seeded CUDA generator, c empty."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    a = torch.empty(m, k, device="cuda", dtype=torch.float16)
    a.uniform_(0, 1, generator=gen)
    b = torch.empty(k, n, device="cuda", dtype=torch.float16)
    b.uniform_(0, 1, generator=gen)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    return a, b, c


def clone_data(data: Data) -> Data:
    return tuple(t.clone() for t in data)  # type: ignore[return-value]


def reference(data: Data) -> torch.Tensor:
    """torch's a @ b under deterministic settings (utils.DeterministicContext)."""
    a, b = data[0], data[1]
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        return a @ b
    finally:
        torch.use_deterministic_algorithms(previous)


def check(data: Data, output: torch.Tensor, rtol: float = 1e-5, atol: float = 1e-8) -> tuple[bool, str]:
    """utils.verbose_allclose against the reference: elementwise
    |out - ref| <= atol + rtol * |ref| in fp16, NaN and inf where the reference has them."""
    expected = reference(data)
    if output.shape != expected.shape:
        return False, f"SIZE MISMATCH: {tuple(output.shape)} vs {tuple(expected.shape)}"
    diff = torch.abs(output - expected)
    mismatched = diff > atol + rtol * torch.abs(expected)
    mismatched |= torch.isnan(output) ^ torch.isnan(expected)
    mismatched |= torch.isposinf(output) ^ torch.isposinf(expected)
    mismatched |= torch.isneginf(output) ^ torch.isneginf(expected)
    count = int(mismatched.count_nonzero().item())
    if count == 0:
        return True, ""
    where = [tuple(i.tolist()) for i in torch.nonzero(mismatched)[:5]]
    details = ", ".join(f"{i}: {output[i].item()} vs {expected[i].item()}" for i in where)
    return False, f"{count} mismatched elements of {output.numel()}, e.g. {details}"


def clear_l2_cache() -> None:
    """As utils.clear_l2_cache: write 256 MB (asynchronous, no sync)."""
    dummy = torch.empty((32, 1024, 1024), dtype=torch.int64, device="cuda")
    dummy.fill_(42)
    del dummy


@dataclass
class Timing:
    gpu_us: float   # CUDA events right around the Python call (the leaderboard's number)
    host_us: float  # wall time of the Python call itself


def time_call(fn: Callable[[Data], torch.Tensor], data: Data) -> Timing:
    """One timed call as eval.py's ranked loop takes it."""
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    clear_l2_cache()
    start.record()
    t0 = time.perf_counter_ns()
    fn(data)
    t1 = time.perf_counter_ns()
    end.record()
    torch.cuda.synchronize()
    return Timing(start.elapsed_time(end) * 1e3, (t1 - t0) / 1e3)


def summary(values: list[float]) -> tuple[float, float]:
    """(mean, median): the leaderboard ranks by the mean."""
    return statistics.fmean(values), statistics.median(values)
