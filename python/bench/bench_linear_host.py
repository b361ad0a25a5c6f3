"""Host time of one linear layer call, the cost a decoding step pays per layer when the host sets
the pace (eager decoding of small batches): torch.nn.functional.linear, tcgemm's linear operator
and tcgemm.nn.Linear, on a decoding step's shapes.

    python3 python/bench/bench_linear_host.py [--calls 500] [--rounds 7]

Each round times `--calls` back-to-back calls of one variant (after 50 unsynchronized warm-up
calls) by the host clock, then synchronizes; the variants alternate in order round by round.
The GPU work of these shapes is a few microseconds a call, less than the host's, so the loop's
time per call is the host's. Weights are Parameters (requires_grad), as in a model; rows with
gradients off (inference) and on. Prints the median per call over the rounds.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import tcgemm
from tcgemm import _ops

SHAPES = [(8, 2048, 2048), (8, 5632, 2048), (8, 2048, 5632), (1, 4096, 4096)]  # (M, N, K)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    torch.manual_seed(0)
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, tcgemm {tcgemm.__version__}; bf16, "
          f"{args.calls} calls x {args.rounds} rounds, host us per call (median)")
    print("| M x N x K | grad | F.linear | tcgemm linear op | tcgemm.nn.Linear |")
    print("| --- | --- | ---: | ---: | ---: |")
    for m, n, k in SHAPES:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        layer = torch.nn.Linear(k, n, bias=False, device="cuda", dtype=torch.bfloat16)
        ours = tcgemm.nn.Linear.from_linear(layer)
        w = layer.weight
        calls = {"F.linear": lambda: torch.nn.functional.linear(x, w),
                 "op": lambda: _ops.linear_op(x, w, None, 0),
                 "module": lambda: ours(x)}
        for grad in (False, True):
            times: dict[str, list[float]] = {name: [] for name in calls}
            with torch.set_grad_enabled(grad):
                for r in range(args.rounds):
                    order = list(calls.items()) if r % 2 == 0 else list(reversed(calls.items()))
                    for name, call in order:
                        for _ in range(50):
                            call()
                        torch.cuda.synchronize()
                        start = time.perf_counter()
                        for _ in range(args.calls):
                            call()
                        times[name].append((time.perf_counter() - start) / args.calls * 1e6)
                        torch.cuda.synchronize()
            row = " | ".join(f"{statistics.median(times[name]):.1f}" for name in calls)
            print(f"| {m}x{n}x{k} | {'on' if grad else 'off'} | {row} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
