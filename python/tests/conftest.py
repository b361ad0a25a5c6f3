"""Shared helpers for the Python tests.

Three kinds of tests live here:
- no-GPU tests (test_make_submission.py): the generator's text; they need
  neither torch nor the compiled package and run in CI;
- package tests without a GPU (test_torch_cpu.py): the operators on meta and
  CPU tensors; they need torch and the installed package (built in CI against
  a CUDA build of torch) but no device;
- GPU tests (test_ops.py, test_leaderboard.py, test_submission_file.py): they
  need torch, an sm_90 device and the installed package (scripts/device_python.sh)
  and skip, saying why, when torch or the device is missing.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIR = REPO / "python" / "tcgemm"


def load_generator() -> ModuleType:
    """make_submission.py loaded as a plain file: no package import, so no torch."""
    if "make_submission" not in sys.modules:
        sys.path.insert(0, str(PACKAGE_DIR))
        spec = importlib.util.spec_from_file_location("make_submission", PACKAGE_DIR / "make_submission.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["make_submission"] = module
        spec.loader.exec_module(module)
    return sys.modules["make_submission"]


def gpu_skip_reason() -> str | None:
    """Why the GPU tests cannot run here, or None when they can."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device is visible"
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) != (9, 0):
        return f"needs an sm_90 GPU, found {torch.cuda.get_device_name()} (sm_{major}{minor})"
    if importlib.util.find_spec("tcgemm") is None:
        return "the tcgemm package is not installed (pip install --no-build-isolation . from the checkout)"
    return None


def rand(*shape: int, dtype: Any, seed: int, ints: bool = False) -> Any:
    """A seeded CUDA tensor of `shape` and `dtype`: uniform in (-1, 1), or with
    `ints` integers in [-2, 2] (exact in fp16/bf16 and in every fp32 sum of
    the tests' sizes, so any correct kernel equals a float64 reference)."""
    import torch

    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    if ints:
        return torch.randint(-2, 3, shape, device="cuda", generator=gen).to(dtype)
    return torch.rand(*shape, device="cuda", generator=gen).mul_(2).sub_(1).to(dtype)


# The element-wise bound of README "Numerics" (support/error_bound.hpp):
# |c - ref| <= (1 + u) gamma_{terms} magnitude + u |ref| + eta, u the unit
# roundoff of the output type, eta half its smallest subnormal.
_UNIT = {"torch.float16": 2.0 ** -11, "torch.bfloat16": 2.0 ** -8}
_ETA = {"torch.float16": 2.0 ** -25, "torch.bfloat16": 2.0 ** -134}


def _gamma(n: int) -> float:
    e = n * 2.0 ** -24
    return e / (1.0 - e)


def assert_within_bound(got: Any, ref: Any, magnitude: Any, terms: int, what: str, slack: float = 1.0,
                        extra_rounding: bool = False, dtype: Any = None) -> None:
    """Every element of `got` within the bound of the exact `ref` (float64),
    `magnitude` the sum of the absolute values of the terms summed. `dtype`
    (default got's) is the type the result was rounded to, where got has
    since been widened; `slack` widens the summation term for calls
    documented to run on cuBLAS (its tensor cores need not round every fp32
    addition to nearest); `extra_rounding` adds the one more rounding README
    documents for cuBLAS paths with beta != 0. NaN counts as off."""
    import torch

    key = str(dtype or got.dtype)
    got = got.double().to(ref.device)
    assert got.shape == ref.shape, (what, tuple(got.shape), tuple(ref.shape))
    u = _UNIT[key]
    bound = slack * (1 + u) * _gamma(terms) * magnitude + u * ref.abs() + _ETA[key]
    if extra_rounding:
        bound = bound + u * magnitude
    err = (got - ref).abs()
    bad = ~(err <= bound)
    if bad.any():
        first = tuple(torch.nonzero(bad)[0].tolist())
        raise AssertionError(f"{what}: {int(bad.sum())} of {got.numel()} elements outside the bound; first at "
                             f"{first}: got {got[first].item()!r}, exact {ref[first].item()!r}, "
                             f"bound {bound[first].item():.3g}")


def mm_reference(a: Any, b: Any, alpha: float = 1.0, beta: float = 0.0, c0: Any = None) -> tuple[Any, Any]:
    """alpha * a @ b + beta * c0 in float64, and the magnitude of its terms."""
    ad, bd = a.double(), b.double()
    ref = alpha * (ad @ bd)
    magnitude = abs(alpha) * (ad.abs() @ bd.abs())
    if c0 is not None and beta != 0.0:
        ref = ref + beta * c0.double()
        magnitude = magnitude + abs(beta) * c0.double().abs()
    return ref, magnitude


def bits(t: Any) -> Any:
    """t's values as raw 16-bit patterns (NaN compares equal to itself), contiguous."""
    import torch

    return t.detach().clone().contiguous().view(torch.int16)


def capture_graph(fn: Callable[[], object], mode: str, warm_up: bool = True) -> Any:
    """fn's work as a torch.cuda.CUDAGraph, captured on a side stream in the
    capture mode `mode` ("global", "thread_local" or "relaxed"). With
    `warm_up`, fn runs once on that stream first, as torch's documentation
    asks of callers; without, the first call of fn is the captured one."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    if warm_up:
        with torch.cuda.stream(side):
            fn()
        torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side, capture_error_mode=mode):
        fn()
    torch.cuda.synchronize()
    return graph


def c_abi() -> Any:
    """The installed package's libtcgemm through ctypes, with the C ABI's
    signatures (include/tcgemm/tcgemm.h) declared: tcgemm_gemm,
    tcgemm_gemm_epilogue, tcgemm_gemm_strided_batched, tcgemm_gemm_m_grouped
    and tcgemm_last_error."""
    import ctypes

    import tcgemm

    lib_dir = Path(tcgemm.__file__).resolve().parent
    candidates = sorted(lib_dir.glob("libtcgemm.so*"))
    assert candidates, f"no libtcgemm.so in {lib_dir}"
    lib = ctypes.CDLL(str(candidates[0]))
    i, i64, f, p = ctypes.c_int, ctypes.c_int64, ctypes.c_float, ctypes.c_void_p
    signatures = {
        "tcgemm_gemm": [i, i, i, i64, i64, i64, f, p, i64, p, i64, f, p, i64, p],
        "tcgemm_gemm_epilogue": [i, i, i, i64, i64, i64, f, p, i64, p, i64, f, p, i64, p, i, i, p],
        "tcgemm_gemm_strided_batched": [i, i, i, i64, i64, i64, f, p, i64, i64, p, i64, i64, f, p, i64, i64, i64, p],
        "tcgemm_gemm_m_grouped": [i, i, i64, i64, i64, f, p, i64, p, i64, i64, f, p, i64, p, i64, p],
    }
    for name, argtypes in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = i
    lib.tcgemm_last_error.argtypes = []
    lib.tcgemm_last_error.restype = ctypes.c_char_p
    return lib
