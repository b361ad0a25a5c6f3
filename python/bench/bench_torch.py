"""tcgemm against cuBLAS as PyTorch calls it: torch.matmul with torch's own
cuBLAS settings (workspace, reduced-precision reductions as torch allows them),
kernel time per call, interleaved, L2 flushed before each call.

    python3 python/bench/bench_torch.py [--suite decode|small|llm|prefill|bmm|moe|large|matmul_v2] [--dtype bf16|f16|both] [--repeats 20]
                                        [--flush write|read] [--json RUN.json] [--plot RUN.svg]

Per case: fresh random inputs (uniform(-1, 1); matmul_v2 uniform(0, 1)),
one verified call of each (bit-identical fraction against torch), then
`repeats` timed pairs, alternating which goes first. Each timed call is
preceded by a 256 MiB L2 flush (a write; with --flush read a read, which
leaves L2 holding clean lines as a model's layer finds it, so that a
memory-bound call does not also write back the flush's dirty lines) and a
~40 us GPU spin, so the host has queued the call before the GPU reaches it:
the events time the kernel, not torch's or tcgemm's host work. Model suites run the nn.Linear layout
(x @ W^T, W stored N x K); large and matmul_v2 run A @ B, both row-major.
--json writes the run in the record format of `tcgemm bench --json`
(docs/BENCH_JSON.md: the keys this benchmark has), --plot draws it with the
same renderer (tcgemm.bench_plot). The moe suite times tcgemm.grouped_mm
against torch._grouped_mm (where this torch has it; else a loop of
torch.matmul over the experts, named in the table) on a mixture of experts'
layers: tokens routed top-k at random, the rows sorted by expert.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import sys
from pathlib import Path

import torch

import tcgemm
from tcgemm import bench_plot

LAYERS = [(12288, 4096), (4096, 4096), (22016, 4096), (4096, 11008), (6144, 4096), (28672, 4096), (4096, 14336),
          (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672), (4608, 3584), (3584, 3584), (37888, 3584),
          (3584, 18944)]  # (N, K): Llama 2/3 7-8B and 70B, Mistral 7B, Qwen2 7B
# A small model's layers as transformers' Llama runs them (separate q, k, v, gate, up): hidden 2048,
# MLP 5632, vocabulary 32000 (TinyLlama-1.1B's k/v with 4 KV heads of 64: 256; python/examples/llama_decode.py).
SMALL_LAYERS = [(2048, 2048), (256, 2048), (5632, 2048), (2048, 5632), (32000, 2048)]
SUITES = {
    "decode": [(m, n, k, "NT") for m in (1, 2, 4, 8, 16, 32, 64) for n, k in LAYERS],
    "small": [(m, n, k, "NT") for m in (1, 2, 4, 8, 16, 32, 64) for n, k in SMALL_LAYERS],
    "prefill": [(m, n, k, "NT") for m in (512, 2048, 4096) for n, k in LAYERS[:7]],
    # Attention-like batches (m, n, k, layout, batch): scores = Q K^T (NT) and
    # out = P V (NN) per head, tcgemm.bmm against torch.bmm.
    "bmm": [(s, s, d, "NT", batch) for batch in (32, 128) for s, d in ((128, 128), (512, 128), (2048, 128))] +
           [(s, d, s, "NN", batch) for batch in (32, 128) for s, d in ((128, 128), (512, 128), (2048, 128))] +
           [(s, s, s, layout, 32) for s in (128, 512, 1024, 2048) for layout in ("NN", "NT")],
    # Mixture-of-experts layers (rows = tokens x top-k, n, k, layout, experts, "moe"): Mixtral 8x7B's
    # fused gate+up (28672 x 4096) and down (4096 x 14336), 8 experts, top 2; Qwen3-30B-A3B's
    # (1536 x 2048, 2048 x 768), 128 experts, top 8; at 16 (decoding), 512 and 4096 tokens.
    "moe": [(t * top, n, k, "NT", experts, "moe") for t in (16, 512, 4096)
            for n, k, experts, top in ((28672, 4096, 8, 2), (4096, 14336, 8, 2), (1536, 2048, 128, 8),
                                       (2048, 768, 128, 8))],
    "llm": [(m, n, k, "NT") for m in (1, 2, 4, 8, 16, 32, 64, 128, 512, 4096) for n, k in LAYERS],
    "large": [(8192, 8192, 8192, "NN"), (4096, 5120, 4096, "NN"), (6144, 4096, 12288, "NN"),
              (16384, 8192, 1024, "NN"), (4096, 4096, 4096, "NN")],
    "matmul_v2": [(s, s, s, "NN") for s in (128, 256, 512, 1024, 2048)] +
                 [(1024, 1536, 1024, "NN"), (2048, 3072, 2048, "NN"), (4096, 5120, 4096, "NN")],
}
FLUSH_BYTES = 256 << 20
SPIN_CYCLES = 80_000  # ~40 us at the H200's clocks


def operands(m: int, n: int, k: int, layout: str, dtype: torch.dtype, lo: float, seed: int):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    a = torch.empty(m, k, device="cuda", dtype=dtype).uniform_(lo, 1.0, generator=gen)
    if layout == "NT":
        w = torch.empty(n, k, device="cuda", dtype=dtype).uniform_(lo, 1.0, generator=gen)
        b = w.t()  # a transposed view: op_b = T for tcgemm, the nn.Linear layout for torch
    else:
        b = torch.empty(k, n, device="cuda", dtype=dtype).uniform_(lo, 1.0, generator=gen)
    return a, b


def _activation(y: torch.Tensor, name: str) -> torch.Tensor:
    F = torch.nn.functional
    if name == "relu":
        return F.relu(y)
    if name == "silu":
        return F.silu(y)
    return F.gelu(y, approximate="tanh" if name == "gelu_tanh" else "none")


def fused_calls(x: torch.Tensor, w_t: torch.Tensor, activation: str, bias_kind: str, n: int, dtype: torch.dtype):
    """The ways of act(x @ W^T + bias): tcgemm's fused call, torch's F.linear
    then the activation, torch's matmul, + bias, activation, tcgemm's plain x
    @ W^T (what the fused epilogue costs), and F.linear alone (what a fused
    call can be against F.linear + activation at most: F.linear's own time, the
    activation's pass over the output free). Each call leaves its result in a
    holder, so the verification compares them."""
    w = w_t.t()  # W stored N x K (w_t is its transposed view)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(n)
    bias = None if bias_kind == "none" else torch.empty(n, device="cuda", dtype=torch.float32 if bias_kind == "f32"
                                                        else dtype).uniform_(-1.0, 1.0, generator=gen)
    torch_bias = None if bias is None else bias.to(dtype)  # F.linear wants x's dtype
    held = {}

    def ours():
        held["ours"] = tcgemm.linear(x, w, bias, activation)

    def torch_linear():
        held["torch"] = _activation(torch.nn.functional.linear(x, w, torch_bias), activation)

    def torch_three():
        y = x @ w_t
        held["three"] = _activation(y if torch_bias is None else y + torch_bias, activation)

    def ours_plain():
        held["plain"] = tcgemm.linear(x, w)

    def torch_linear_only():
        held["linear"] = torch.nn.functional.linear(x, w, torch_bias)

    class Holder:  # the verification reads held results through these
        def __init__(self, key):
            self.key = key

        def view(self, dtype):
            return held[self.key].view(dtype)

    return [ours, torch_linear, torch_three, ours_plain, torch_linear_only], Holder("ours"), Holder("torch")


def batched_calls(m: int, n: int, k: int, layout: str, batch: int, dtype: torch.dtype, seed: int):
    """tcgemm.bmm and torch.bmm on one batch (a [batch, m, k], b [batch, k, n];
    NT: b a transposed view of [batch, n, k]); results kept for the check."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    a = torch.empty(batch, m, k, device="cuda", dtype=dtype).uniform_(-1.0, 1.0, generator=gen)
    if layout == "NT":
        b = torch.empty(batch, n, k, device="cuda", dtype=dtype).uniform_(-1.0, 1.0, generator=gen).transpose(1, 2)
    else:
        b = torch.empty(batch, k, n, device="cuda", dtype=dtype).uniform_(-1.0, 1.0, generator=gen)
    held = {}

    def ours():
        held["ours"] = tcgemm.bmm(a, b)

    def theirs():
        held["torch"] = torch.bmm(a, b)

    class Holder:
        def __init__(self, key):
            self.key = key

        def view(self, dtype):
            return held[self.key].view(dtype)

    return [ours, theirs], Holder("ours"), Holder("torch"), a, b


def grouped_calls(m: int, n: int, k: int, experts: int, dtype: torch.dtype, seed: int):
    """tcgemm.grouped_mm and torch's grouped product on one MoE layer: m rows
    (tokens x top-k) sent to the experts at random, sorted by expert; the
    weights an nn.Linear stack [experts, n, k] passed transposed. torch's side
    is torch._grouped_mm where it runs here, else a loop of matmuls over the
    experts (sizes known on the host). Returns the calls, the result holders,
    the baseline's name, and the operands."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    x = torch.empty(m, k, device="cuda", dtype=dtype).uniform_(-1.0, 1.0, generator=gen)
    w = torch.empty(experts, n, k, device="cuda", dtype=dtype).uniform_(-1.0, 1.0, generator=gen)
    expert_of_row = torch.randint(0, experts, (m,), device="cuda", generator=gen)
    sizes = torch.bincount(expert_of_row, minlength=experts)
    offs = sizes.cumsum(0).to(torch.int32)
    b = w.transpose(1, 2)
    held = {}

    def ours():
        held["ours"] = tcgemm.grouped_mm(x, b, offs)

    def torch_grouped():
        held["torch"] = torch._grouped_mm(x, b, offs=offs)

    host_sizes = sizes.tolist()

    def torch_loop():
        out = torch.empty(m, n, device="cuda", dtype=dtype)
        start = 0
        for g, size in enumerate(host_sizes):
            if size:
                torch.matmul(x[start:start + size], b[g], out=out[start:start + size])
            start += size
        held["torch"] = out

    baseline, name = torch_loop, "loop of torch.matmul"
    if hasattr(torch, "_grouped_mm"):
        try:
            torch_grouped()
            torch.cuda.synchronize()
            baseline, name = torch_grouped, "torch._grouped_mm"
        except RuntimeError:
            pass

    class Holder:
        def __init__(self, key):
            self.key = key

        def view(self, dtype):
            return held[self.key].view(dtype)

    return [ours, baseline], Holder("ours"), Holder("torch"), name, x, b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="decode", choices=sorted(SUITES))
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "both"])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--flush", default="write", choices=["write", "read"],
                        help="empty L2 before each timed call by writing 256 MiB (default) or by reading it")
    parser.add_argument("--json", help="write the run as a bench record (docs/BENCH_JSON.md) to this file")
    parser.add_argument("--plot", help="draw the run as an SVG picture into this file")
    parser.add_argument("--activation", choices=["relu", "gelu", "gelu_tanh", "silu"],
                        help="time the fused linear instead (model suites): tcgemm.linear(x, W, bias, act) against "
                             "torch's F.linear(x, W, bias) then the activation (the 'torch us' column), against "
                             "x @ W^T, then + bias, then the activation, and against tcgemm.linear(x, W) alone (the "
                             "fused epilogue's cost)")
    parser.add_argument("--bias", default="same", choices=["none", "same", "f32"],
                        help="with --activation: no bias, one of x's dtype, or float32 (default same)")
    args = parser.parse_args()
    if args.activation and args.suite not in ("decode", "small", "llm", "prefill"):
        parser.error("--activation times nn.Linear layers: use --suite decode, small, llm or prefill")
    dtypes = {"bf16": [torch.bfloat16], "f16": [torch.float16], "both": [torch.bfloat16, torch.float16]}[args.dtype]
    lo = 0.0 if args.suite == "matmul_v2" else -1.0

    flush = torch.zeros(FLUSH_BYTES, dtype=torch.uint8, device="cuda")

    def flush_l2() -> None:
        if args.flush == "read":
            flush.view(torch.int64).sum()  # reads every byte; L2 keeps clean lines of it
        else:
            flush.zero_()

    props = torch.cuda.get_device_properties(0)
    print(f"# {props.name}, torch {torch.__version__} (CUDA {torch.version.cuda}), tcgemm {tcgemm.__version__}; "
          f"allow_fp16_reduced_precision_reduction={torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction}, "
          f"allow_bf16_reduced_precision_reduction={torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction}; "
          f"median of {args.repeats} interleaved pairs, L2 flushed ({args.flush}) before each call")
    if args.activation:
        print(f"# fused: activation {args.activation}, bias {args.bias}; torch us = F.linear then the activation; "
              "3 ops = matmul, + bias, activation; plain = tcgemm.linear(x, W) alone; at most = torch us / "
              "F.linear alone (a fused call as fast as F.linear without the activation)")
        print("| shape | dtype | layout | tcgemm kernel | tcgemm us | torch us | vs torch | at most | vs 3 ops | "
              "plain us | epilogue cost |")
        print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    else:
        print("| shape | dtype | layout | tcgemm kernel | tcgemm us | torch us | vs torch | =torch |")
        print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: |")
    costs: dict[str, list[float]] = {}
    bounds: dict[str, list[float]] = {}
    logs: dict[str, list[float]] = {}
    results: list[dict] = []
    for dtype in dtypes:
        dname = "bf16" if dtype == torch.bfloat16 else "f16"
        for index, entry in enumerate(SUITES[args.suite]):
            m, n, k, layout = entry[:4]
            batch = entry[4] if len(entry) > 4 else 1
            grouped = len(entry) > 5 and entry[5] == "moe"
            if grouped:
                calls, c_ours, c_torch, baseline, a, b = grouped_calls(m, n, k, batch, dtype, seed=1234 + index)
            elif batch > 1:
                calls, c_ours, c_torch, a, b = batched_calls(m, n, k, layout, batch, dtype, seed=1234 + index)
            else:
                a, b = operands(m, n, k, layout, dtype, lo, seed=1234 + index)
                c_ours = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
                c_torch = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
                calls = [lambda: tcgemm.matmul(a, b, out=c_ours), lambda: torch.matmul(a, b, out=c_torch)]
            if args.activation:
                calls, c_ours, c_torch = fused_calls(a, b, args.activation, args.bias, n, dtype)
            for call in calls:
                call()  # warm-up and the verification call
            torch.cuda.synchronize()
            same = (c_ours.view(torch.int16) == c_torch.view(torch.int16)).float().mean().item()
            times: list[list[float]] = [[] for _ in calls]
            events = []
            for r in range(args.repeats):
                for i in range(len(calls)):  # the side that goes first rotates
                    side = (r + i) % len(calls)
                    flush_l2()
                    torch.cuda._sleep(SPIN_CYCLES)
                    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    calls[side]()
                    stop.record()
                    events.append((side, start, stop))
            torch.cuda.synchronize()
            for side, start, stop in events:
                times[side].append(1e3 * start.elapsed_time(stop))
            ours, theirs = statistics.median(times[0]), statistics.median(times[1])
            # (A batch's kernel is chosen for all its tiles, which tcgemm.plan
            # of one problem does not see: `tcgemm bench --batch N` names it.)
            kernel = f"grouped vs {baseline}" if grouped else "batched" if batch > 1 else tcgemm.plan(a, b).kernel
            logs.setdefault(dname, []).append(math.log(theirs / ours))
            results.append({"source": args.suite, "m": m, "n": n, "k": k, "batch": batch, "dtype": dname,
                            "layout": layout,
                            "kernel": kernel, "heuristic": True, "ours_us_median": ours, "cublas_us_median": theirs,
                            "speedup": theirs / ours, "identical_fraction_vs_baseline": same,
                            "ours_us": times[0], "cublas_us": times[1]})
            if args.activation:  # torch's matmul, + bias, activation; tcgemm without the epilogue
                three, plain, linear = (statistics.median(times[i]) for i in (2, 3, 4))
                results[-1]["torch_three_ops_us_median"] = three
                results[-1]["tcgemm_plain_us_median"] = plain
                results[-1]["torch_linear_alone_us_median"] = linear
                results[-1]["epilogue_overhead"] = ours / plain - 1.0
                bounds.setdefault(dname, []).append(math.log(theirs / linear))
                costs.setdefault(dname, []).append(math.log(ours / plain))
                print(f"| {m}x{n}x{k} | {dname} | {layout} | {kernel} | {ours:.1f} | {theirs:.1f} | "
                      f"{theirs / ours:.3f}x | {theirs / linear:.3f}x | {three / ours:.3f}x | {plain:.1f} | "
                      f"{100 * (ours / plain - 1):+.2f}% |",
                      flush=True)
            else:
                shape = (f"{m} rows, {batch} experts, {n}x{k}" if grouped else
                         f"{batch} x {m}x{n}x{k}" if batch > 1 else f"{m}x{n}x{k}")
                print(f"| {shape} | {dname} | {layout} | {kernel} | {ours:.1f} | {theirs:.1f} | "
                      f"{theirs / ours:.3f}x | {100 * same:.1f}% |", flush=True)
    geomeans = {d: math.exp(sum(v) / len(v)) for d, v in logs.items()}
    for dname, values in logs.items():
        versus = (f"F.linear + {args.activation}" if args.activation else "torch's grouped product" if args.suite == "moe"
                  else "torch.bmm" if args.suite == "bmm" else "torch.matmul")
        print(f"geomean vs {versus}, {dname}: {geomeans[dname]:.3f}x over {len(values)} cases")
    for dname, values in costs.items():
        print(f"geomean fused epilogue cost, {dname}: {100 * math.expm1(sum(values) / len(values)):+.2f}%")
    for dname, values in bounds.items():
        print(f"geomean at most (F.linear + {args.activation} / F.linear alone), {dname}: "
              f"{math.exp(sum(values) / len(values)):.3f}x")
    record = {
        "tool": "python/bench/bench_torch.py", "schema_version": 2,
        "timestamp": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "library": {"version": tcgemm.__version__},
        "device": {"name": props.name, "sm_count": props.multi_processor_count,
                   "compute_capability": f"{props.major}.{props.minor}", "torch_version": torch.__version__,
                   "cuda_version": torch.version.cuda},
        "settings": {"suites": [args.suite], "repeats": args.repeats, "statistic": "median", "l2_flush": args.flush,
                     "baseline": "torch.matmul with torch's own cuBLAS settings"},
        "peak_tflops": {}, "hbm_read_gbps": None, "results": results, "geomean_speedup": geomeans,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    if args.plot:
        Path(args.plot).write_text(bench_plot.render(record, f"tcgemm {tcgemm.__version__} against torch.matmul: "
                                                             f"{args.suite}"), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
