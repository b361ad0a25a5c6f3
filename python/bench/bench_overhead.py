"""Per-call cost of tcgemm from Python, timed the way the matmul_v2 leaderboard
times a submission: fresh inputs for every call, L2 flushed (256 MB written)
right before it, CUDA events recorded right around the one Python call.

    python3 python/bench/bench_overhead.py [--repeats 100] [--submission submission.py]

Rows per shape (all on the same inputs, interleaved call by call so clock
drift hits every row alike):
    torch a @ b           torch.matmul, a new output (what the leaderboard's reference does)
    torch.matmul(out=c)   torch.matmul into the preallocated c
    tcgemm.matmul(out=c)  the package's Python entry point
    matmul_v2             tcgemm.matmul_v2.custom_kernel (the package as a submission)
    submission file       custom_kernel of a generated one-file submission (--submission)
Prints mean (the leaderboard's statistic) and median GPU time, the host time
of the Python call alone, and the ratio to `torch a @ b`, as a markdown table.
Every output is checked once against torch's a @ b (bit-exact).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

# The harness lives with the tests; this folder (on sys.path first) holds no `tcgemm`
# that could shadow the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import torch  # noqa: E402

import mv2_harness as mv2  # noqa: E402
import tcgemm  # noqa: E402
from tcgemm.matmul_v2 import custom_kernel  # noqa: E402

SHAPES = [(128, 128, 128, 43214), (4096, 5120, 4096, 123456)]  # (m, n, k, seed) of the benchmark list


def load_submission(path: str) -> Callable:
    spec = importlib.util.spec_from_file_location("tcgemm_bench_submission", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # compiles on first use
    return module.custom_kernel


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=100, help="timed calls per row (default 100)")
    parser.add_argument("--submission", help="a generated submission file to time as well")
    args = parser.parse_args()

    calls: dict[str, Callable[[mv2.Data], torch.Tensor]] = {
        "torch a @ b": lambda d: d[0] @ d[1],
        "torch.matmul(out=c)": lambda d: torch.matmul(d[0], d[1], out=d[2]),
        "tcgemm.matmul(out=c)": lambda d: tcgemm.matmul(d[0], d[1], out=d[2]),
        "matmul_v2": custom_kernel,
    }
    if args.submission:
        try:
            calls["submission file"] = load_submission(args.submission)
        except Exception as error:  # the package's rows are still worth having
            print(f"cannot load {args.submission}: {error}", file=sys.stderr)

    props = torch.cuda.get_device_properties(0)
    print(f"# {props.name}, torch {torch.__version__}, CUDA {torch.version.cuda}, tcgemm {tcgemm.__version__}; "
          f"{args.repeats} calls per row, L2 flushed before each, fresh inputs every call")
    print()
    print("| shape | call | kernel | mean us | median us | host us (median) | vs torch a @ b (mean) |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    status = 0
    for m, n, k, seed in SHAPES:
        # Warm up and verify once per call (compiles nothing after this).
        data = mv2.generate_input(m, n, k, seed)
        for name, fn in calls.items():
            good, message = mv2.check(mv2.clone_data(data), fn(mv2.clone_data(data)))
            if not good:
                print(f"{name} at {m}x{n}x{k} FAILS the check: {message}", file=sys.stderr)
                status = 1
        gpu = {name: [] for name in calls}
        host = {name: [] for name in calls}
        for i in range(args.repeats):
            data = mv2.generate_input(m, n, k, seed + mv2.SEED_STEP * (i + 1))
            for name, fn in calls.items():
                t = mv2.time_call(fn, data)
                gpu[name].append(t.gpu_us)
                host[name].append(t.host_us)
        kernel = tcgemm.plan(data[0], data[1], data[2]).kernel
        base, _ = mv2.summary(gpu["torch a @ b"])
        for name in calls:
            mean, median = mv2.summary(gpu[name])
            _, host_median = mv2.summary(host[name])
            shown = kernel if name not in ("torch a @ b", "torch.matmul(out=c)") else "cuBLAS"
            print(f"| {m}x{n}x{k} | {name} | {shown} | {mean:.1f} | {median:.1f} | {host_median:.1f} | "
                  f"{base / mean:.3f}x |")
    return status


if __name__ == "__main__":
    sys.exit(main())
