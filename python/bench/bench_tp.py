"""Tensor-parallel linear layers across the GPUs of one machine:
tcgemm.distributed against NCCL's collectives with torch's matmul (cuBLAS),
and against torch's own fused all-gather-matmul / matmul-reduce-scatter
(symmetric memory) where the installed torch has them.

    torchrun --nproc-per-node 2 python/bench/bench_tp.py [--tokens 1024,4096,8192,16384]

The layers are a Llama-70B-like MLP in bf16 (--hidden 8192, --intermediate
28672), W = the world size:
- column-parallel up projection: x_shard [T / W, hidden] -> [T, intermediate / W];
- row-parallel down projection: x [T, intermediate / W] -> [T / W, hidden].
Rows of each table (per token count T):
    comm alone        the all-gather (or reduce-scatter) collective by itself
    (a) torch         all_gather_into_tensor, then torch's linear (or linear, then reduce_scatter_tensor)
    (b) tcgemm plain  tcgemm.distributed with overlap=False (the same bits as (c))
    (c) c=N sm=S      tcgemm.distributed overlapped, N chunks a peer's shard, the products beside
                      transfers on S SMs (sm_count; 0 all)
    (d) torch fused   torch.ops.symm_mem.fused_all_gather_matmul / fused_matmul_reduce_scatter
Times are the slowest rank's (CUDA events around one call after a barrier),
the median of --rounds interleaved rounds (every row once a round). Columns:
the time, the speedup over (a), and `hidden`: the share of the collective's
own time that overlapping saves, (b - c) / comm alone. Rank 0 prints a
markdown table; --out also writes it to a file.
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable

import torch
import torch.distributed as dist
import torch.nn.functional as F

import tcgemm
import tcgemm.distributed as tp


def timed(fn: Callable[[], object]) -> float:
    """fn's GPU time in ms on this rank, all ranks starting together."""
    torch.cuda.synchronize()
    dist.barrier()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def symm_mem_ops(group_name: str) -> tuple[Callable | None, Callable | None, str]:
    """torch's fused ops with symmetric memory enabled for the group, or why not."""
    try:
        from torch.distributed import _symmetric_memory as symm

        symm.enable_symm_mem_for_group(group_name)
        ops = torch.ops.symm_mem
        return ops.fused_all_gather_matmul, ops.fused_matmul_reduce_scatter, ""
    except (ImportError, AttributeError, RuntimeError) as error:
        return None, None, f"{type(error).__name__}: {error}"


def layer_calls(tokens: int, w_up: torch.Tensor, w_down: torch.Tensor, variants: list[tuple[int, int]],
                rand: Callable[..., torch.Tensor], fused: tuple[Callable | None, Callable | None]
                ) -> tuple[dict[str, Callable[[], object]], dict[str, Callable[[], object]]]:
    """The rows of the column-parallel and of the row-parallel table at T = tokens."""
    group = dist.group.WORLD
    rows = tokens // group.size()
    hidden = w_up.shape[1]
    x_shard, x_k_shard = rand(rows, hidden), rand(tokens, w_down.shape[1])
    gathered = x_shard.new_empty(tokens, hidden)
    partial = x_shard.new_empty(tokens, hidden)
    scattered = x_shard.new_empty(rows, hidden)

    def ag_then_mm() -> torch.Tensor:
        dist.all_gather_into_tensor(gathered, x_shard)
        return F.linear(gathered, w_up)

    def mm_then_rs() -> torch.Tensor:
        dist.reduce_scatter_tensor(scattered, F.linear(x_k_shard, w_down))
        return scattered

    column: dict[str, Callable[[], object]] = {
        "comm alone": lambda: dist.all_gather_into_tensor(gathered, x_shard),
        "(a) torch": ag_then_mm,
        "(b) tcgemm plain": lambda: tp.all_gather_linear(x_shard, w_up, overlap=False),
    }
    row: dict[str, Callable[[], object]] = {
        "comm alone": lambda: dist.reduce_scatter_tensor(scattered, partial),
        "(a) torch": mm_then_rs,
        "(b) tcgemm plain": lambda: tp.linear_reduce_scatter(x_k_shard, w_down, overlap=False),
    }
    for c, sms in variants:
        name = f"(c) c={c} sm={sms}"
        column[name] = lambda c=c, sms=sms: tp.all_gather_linear(x_shard, w_up, chunks=c, sm_count=sms)
        row[name] = lambda c=c, sms=sms: tp.linear_reduce_scatter(x_k_shard, w_down, chunks=c, sm_count=sms)
    fused_ag, fused_rs = fused
    if fused_ag is not None and fused_rs is not None:
        column["(d) torch fused"] = lambda: fused_ag(x_shard, [w_up.t()], 0, group.group_name)
        row["(d) torch fused"] = lambda: fused_rs(x_k_shard, w_down.t(), "sum", 0, group.group_name)
    # The overlapped and plain products give the same bits; (a) is close.
    with torch.no_grad():
        for calls, compare in ((column, True), (row, False)):
            plain = calls["(b) tcgemm plain"]()
            for c, sms in variants:
                assert torch.equal(calls[f"(c) c={c} sm={sms}"](), plain), (c, sms)
            if compare:
                torch.testing.assert_close(plain, calls["(a) torch"](), atol=0.05, rtol=0.02)
            if "(d) torch fused" in calls:
                calls["(d) torch fused"]()  # raises here where this torch cannot run it
    return column, row


def table(title: str, calls: dict[str, Callable[[], object]], rounds: int) -> list[str]:
    """Times every call in `rounds` interleaved rounds (after a warm-up call
    each): a markdown table of the slowest rank's medians."""
    device = torch.device("cuda", torch.cuda.current_device())
    with torch.no_grad():
        for fn in calls.values():  # first calls: NCCL's connections, workspaces
            fn()
        times: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(rounds):
            for name, fn in calls.items():
                t = torch.tensor([timed(fn)], device=device)
                dist.all_reduce(t, op=dist.ReduceOp.MAX)
                times[name].append(t.item())
    ms = {name: statistics.median(v) for name, v in times.items()}
    lines = [f"## {title}", "", "| call | ms | vs (a) | hidden |", "| --- | --- | --- | --- |"]
    for name, t in ms.items():
        hidden = f"{(ms['(b) tcgemm plain'] - t) / ms['comm alone']:.0%}" if name.startswith("(c)") else ""
        lines.append(f"| {name} | {t:.3f} | {ms['(a) torch'] / t:.3f}x | {hidden} |")
    return [*lines, ""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", default="1024,2048,4096,8192,16384", help="sequence lengths T")
    parser.add_argument("--hidden", type=int, default=8192)
    parser.add_argument("--intermediate", type=int, default=28672)
    parser.add_argument("--chunks", default="1,2,4", help="chunk counts of the overlapped rows")
    parser.add_argument("--sm-counts", default="0,124,116",
                        help="SMs of the products beside transfers, each with every chunk count (0: all)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--out", help="also write the table to this file (rank 0)")
    args = parser.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    fused_ag, fused_rs, why_not = symm_mem_ops(dist.group.WORLD.group_name)
    if args.intermediate % world:
        raise SystemExit(f"--intermediate must be a multiple of the world size {world}")
    gen = torch.Generator(device=device).manual_seed(1234 + rank)

    def rand(*shape: int) -> torch.Tensor:
        return torch.rand(*shape, device=device, generator=gen).sub_(0.5).to(torch.bfloat16)

    hidden, inter = args.hidden, args.intermediate // world
    nccl = ".".join(map(str, torch.cuda.nccl.version()))
    lines = [f"# Tensor-parallel MLP layers, {world} x {torch.cuda.get_device_name(device)}, bf16, "
             f"hidden {hidden}, intermediate {args.intermediate}",
             f"torch {torch.__version__}, NCCL {nccl}, tcgemm {tcgemm.__version__}; "
             f"median of {args.rounds} rounds, slowest rank", ""]
    w_up, w_down = rand(inter, hidden), rand(hidden, inter)
    variants = [(int(c), int(sms)) for c in args.chunks.split(",") for sms in args.sm_counts.split(",")]
    for tokens in [int(t) for t in args.tokens.split(",") if int(t) % world == 0]:
        try:
            column, row = layer_calls(tokens, w_up, w_down, variants, rand, (fused_ag, fused_rs))
        except (RuntimeError, ValueError, NotImplementedError) as error:
            # torch's fused ops refused (every rank alike): time the rest
            if fused_ag is None:
                raise
            fused_ag = fused_rs = None
            why_not = f"{type(error).__name__}: {str(error).splitlines()[0]}"
            column, row = layer_calls(tokens, w_up, w_down, variants, rand, (None, None))
        lines += table(f"column-parallel {tokens} x {hidden} -> {inter} a rank", column, args.rounds)
        lines += table(f"row-parallel {tokens} x {inter} -> {hidden}, {tokens // world} rows a rank", row,
                       args.rounds)
    if why_not:
        lines.insert(2, f"(d) not run: {why_not}")
    if rank == 0:
        text = "\n".join(lines)
        print(text)
        if args.out:
            with open(args.out, "w") as f:
                f.write(text + "\n")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
