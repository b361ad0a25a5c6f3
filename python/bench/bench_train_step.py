"""A model's layers on tcgemm beside the same layers on torch, as a user
runs them: whole calls, timed with CUDA events around each, L2 flushed
(a 256 MiB write) before each, medians of interleaved rounds.

    python3 python/bench/bench_train_step.py [--rounds 3] [--repeats 10]

Two tables:

- A training step of a Llama-like MLP block (up, SiLU, down; bf16):
  forward and backward of the model as built (torch.nn.Linear) and of a
  copy put on tcgemm by `tcgemm.patch_linear` (which fuses the SiLU into
  the up projection). The backward runs dx = dz W (B stored N x K: layout
  NN) and dW = dz^T x (A stored transposed: layout TN) on tcgemm. Also the
  forward alone, under no_grad.
- An LM head of an odd vocabulary (GPT-2's 50257) and the same rounded up
  to 8 (50264): `tcgemm.linear` against `F.linear`. At an odd width
  tcgemm computes into rows padded to 8 columns and returns a contiguous
  copy (batch invariance: docs/DESIGN.md); the second row shows the
  product without that copy.

The ratio columns are torch's time over tcgemm's: above 1, tcgemm is faster.
"""

from __future__ import annotations

import argparse
import copy
import statistics

import torch
import torch.nn.functional as F

import tcgemm


class MLP(torch.nn.Module):
    def __init__(self, hidden: int, inter: int, bias: bool) -> None:
        super().__init__()
        self.up = torch.nn.Linear(hidden, inter, bias=bias)
        self.act = torch.nn.SiLU()
        self.down = torch.nn.Linear(inter, hidden, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.act(self.up(x)))


class Timer:
    def __init__(self) -> None:
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def median_us(self, fn, repeats: int) -> float:
        times = []
        for _ in range(repeats):
            self.flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3)
        return statistics.median(times)


def interleaved(timer: Timer, theirs, ours, rounds: int, repeats: int) -> tuple[float, float]:
    """Medians over rounds of (torch, tcgemm), each round timing both."""
    a, b = [], []
    for _ in range(rounds):
        a.append(timer.median_us(theirs, repeats))
        b.append(timer.median_us(ours, repeats))
    return statistics.median(a), statistics.median(b)


def train_steps(timer: Timer, rounds: int, repeats: int) -> None:
    print("| tokens | hidden x intermediate | bias | torch us | tcgemm us | torch / tcgemm | forward alone: torch / tcgemm |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: |")
    for tokens, hidden, inter, bias in ((4096, 4096, 14336, False), (512, 4096, 14336, False),
                                        (2048, 2048, 5632, True)):
        torch.manual_seed(0)
        ref = MLP(hidden, inter, bias).to("cuda", torch.bfloat16)
        ours = tcgemm.patch_linear(copy.deepcopy(ref))
        x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)

        def step(model: torch.nn.Module) -> None:
            model(x).float().square().mean().backward()

        for model in (ref, ours):  # warm up (and allocate the gradients)
            step(model)
            step(model)
        t_ref, t_ours = interleaved(timer, lambda: step(ref), lambda: step(ours), rounds, repeats)
        with torch.no_grad():
            f_ref, f_ours = interleaved(timer, lambda: ref(x), lambda: ours(x), rounds, repeats)
        print(f"| {tokens} | {hidden} x {inter} | {bias} | {t_ref:.0f} | {t_ours:.0f} | {t_ref / t_ours:.3f} | "
              f"{f_ref / f_ours:.3f} |", flush=True)


def lm_heads(timer: Timer, rounds: int, repeats: int) -> None:
    print()
    print("| tokens | vocabulary (N) | tcgemm.linear us | F.linear us | F.linear / tcgemm |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for tokens in (1, 16, 64, 512, 2048):
        for vocab in (50257, 50264):
            torch.manual_seed(0)
            x = torch.randn(tokens, 4096, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(vocab, 4096, device="cuda", dtype=torch.bfloat16)
            t_ref, t_ours = interleaved(timer, lambda: F.linear(x, w), lambda: tcgemm.linear(x, w), rounds, repeats)
            print(f"| {tokens} | {vocab} | {t_ours:.1f} | {t_ref:.1f} | {t_ref / t_ours:.3f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--repeats", type=int, default=10, help="timed calls of each side a round (default 10)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench_train_step.py needs a CUDA GPU")
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, tcgemm {tcgemm.__version__}; "
          f"medians of {args.rounds} interleaved rounds of {args.repeats} calls, L2 flushed before each")
    print()
    timer = Timer()
    train_steps(timer, args.rounds, args.repeats)
    lm_heads(timer, args.rounds, args.repeats)


if __name__ == "__main__":
    main()
