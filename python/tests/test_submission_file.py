"""The generated one-file submission on an sm_90 GPU: it compiles through
load_inline, passes the leaderboard's check, runs the same kernel as the
package, and works with and without the harness's `task` module.
Skipped without torch or an sm_90 GPU.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import REPO, capture_graph, gpu_skip_reason, load_generator

_skip = gpu_skip_reason()
if _skip:
    pytest.skip(_skip, allow_module_level=True)

import torch  # noqa: E402

import mv2_harness as mv2  # noqa: E402
import tcgemm  # noqa: E402

SHAPES = mv2.TESTS + [mv2.BENCHMARKS[3], mv2.BENCHMARKS[5], mv2.BENCHMARKS[-1]]


@pytest.fixture(scope="module")
def submission_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("submission") / "submission.py"
    assert load_generator().main([str(path), "--root", str(REPO)]) == 0
    return path


@pytest.fixture(scope="module")
def submission(submission_path: Path) -> ModuleType:
    # The first import compiles the library (about a minute).
    spec = importlib.util.spec_from_file_location("tcgemm_generated_submission", submission_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("m,n,k,seed", SHAPES, ids=[f"{m}x{n}x{k}" for m, n, k, _ in SHAPES])
def test_passes_the_check(submission: ModuleType, m: int, n: int, k: int, seed: int) -> None:
    for call in range(2):
        data = mv2.generate_input(m, n, k, seed + mv2.SEED_STEP * call)
        data[2].fill_(float("nan"))
        check_copy = mv2.clone_data(data)
        output = submission.custom_kernel(data)
        assert output is data[2]
        good, message = mv2.check(check_copy, output)
        assert good, f"{m}x{n}x{k}: {message}"


@pytest.mark.parametrize("m,n,k,seed", SHAPES, ids=[f"{m}x{n}x{k}" for m, n, k, _ in SHAPES])
def test_runs_the_package_kernel(submission: ModuleType, m: int, n: int, k: int, seed: int) -> None:
    a, b, c = mv2.generate_input(m, n, k, seed)
    status, backend, kernel, reason, layout = submission.plan(a, b, c)
    package = tcgemm.plan(a, b, c)
    assert (status, backend, kernel, layout) == (package.status, package.backend, package.kernel, package.layout)
    assert backend == "sm90", reason
    assert torch.equal(submission.custom_kernel((a, b, c)).clone(), tcgemm.matmul(a, b))


@pytest.mark.parametrize("mode", ["global", "thread_local", "relaxed"])
def test_custom_kernel_in_a_cuda_graph(submission: ModuleType, mode: str) -> None:
    # Captured, then replayed on new inputs written into the captured tensors:
    # the same bits as the eager call. The fallback path too (an unaligned a).
    m, n, k, seed = mv2.BENCHMARKS[5]
    a, b, c = mv2.generate_input(m, n, k, seed)
    flat = torch.empty(64 * 64 + 1, device="cuda", dtype=torch.float16)
    unaligned = (flat[1:].view(64, 64), torch.rand(64, 32, device="cuda", dtype=torch.float16),
                 torch.empty(64, 32, device="cuda", dtype=torch.float16))
    assert submission.plan(*unaligned)[1] == "cublas"
    for data in ((a, b, c), unaligned):
        graph = capture_graph(lambda: submission.custom_kernel(data), mode)
        data[0].copy_(torch.rand_like(data[0]))
        data[1].copy_(torch.rand_like(data[1]))
        want = submission.custom_kernel(data).clone()
        data[2].fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(data[2], want), f"mode {mode}, {tuple(data[0].shape)} @ {tuple(data[1].shape)}"


def test_refuses_bad_input_like_the_package(submission: ModuleType) -> None:
    a = torch.randn(64, 32, device="cuda", dtype=torch.float16)
    c = torch.full((64, 48), float("nan"), device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="shapes do not match"):
        submission.custom_kernel((a, a, c))
    with pytest.raises(TypeError, match="same dtype"):
        submission.custom_kernel((a, torch.randn(32, 48, device="cuda"), c))
    assert c.isnan().all()


def test_bf16_is_left_out_with_a_reason(submission: ModuleType) -> None:
    x = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(RuntimeError, match="no bf16 kernels"):
        submission._ext.mm_out(x, x, torch.empty_like(x))


def test_in_a_fresh_process_with_the_harness_task_module(submission: ModuleType, submission_path: Path) -> None:
    # As eval.py runs it: a spawned process, `task` importable, `from submission import custom_kernel`.
    workdir = submission_path.parent
    (workdir / "task.py").write_text(
        "from typing import Tuple\nimport torch\n"
        "input_t = Tuple[torch.Tensor, torch.Tensor, torch.Tensor]\noutput_t = torch.Tensor\n")
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import mv2_harness as mv2\n"
        "from submission import custom_kernel, input_t\n"
        "import task\n"
        "assert input_t is task.input_t\n"
        "for m, n, k, seed in mv2.TESTS:\n"
        "    data = mv2.generate_input(m, n, k, seed)\n"
        "    good, message = mv2.check(mv2.clone_data(data), custom_kernel(data))\n"
        "    assert good, message\n"
        "print('submission ok')\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=workdir, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and "submission ok" in result.stdout, result.stdout + result.stderr
