#!/usr/bin/env python3
"""Key figures from `ncu --csv --page raw` logs (scripts/device_profile.sh).

One block per profiled kernel: time, launch shape, tensor-pipe utilization,
L2 hit rate, DRAM and SM throughput, and the largest warp stall reasons.
With --ranges, one block per kernel name instead: how many launches, and each
figure's median and range over them (launches of one kernel vary: quote the
spread, not one launch).
Usage: ncu_summary.py [--ranges] FILE.csv [FILE.csv ...]
"""
import csv
import io
import statistics
import sys

FIGURES = [
    ("time us", "gpu__time_duration.sum", 1e-3),
    ("SM clock MHz", "sm__cycles_elapsed.avg.per_second", 1e-6),
    ("grid", "launch__grid_size", 1),
    ("block", "launch__block_size", 1),
    ("regs/thread", "launch__registers_per_thread", 1),
    ("dyn smem B", "launch__shared_mem_per_block_dynamic", 1),
    ("SM throughput %", "sm__throughput.avg.pct_of_peak_sustained_elapsed", 1),
    ("DRAM throughput %", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 1),
    # Bytes moved to and from DRAM, in MB (10^6): what a kernel re-reads shows against its operands' size.
    ("DRAM read MB", "dram__bytes_read.sum", 1),
    ("DRAM write MB", "dram__bytes_write.sum", 1),
    # wgmma counts as the HMMA pipe on sm_90; the share of cycles it is busy.
    ("tensor pipe %", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 1),
    ("L2 hit rate %", "lts__t_sector_hit_rate.pct", 1),
    # How busy L2 is (its busiest unit against its peak): where operands come from L2 many times over.
    ("L2 throughput %", "lts__throughput.avg.pct_of_peak_sustained_elapsed", 1),
    ("L1/smem hit %", "l1tex__t_sector_hit_rate.pct", 1),
]


# The bench's own kernels (inputs, NaN poison, comparison, the peak loop), not GEMMs.
SKIP = ("fill_random_kernel", "fill_bits_kernel", "compare_kernel", "value_stats_kernel", "reference_gemm_kernel",
        "scale_kernel", "sm90_wgmma_peak")


def rows_of(path):
    text = open(path, errors="replace").read()
    # ncu prefixes its own messages with ==PROF== / ==WARNING==; the CSV starts at the header.
    start = text.find('"ID"')
    if start < 0:
        return None
    reader = list(csv.reader(io.StringIO(text[start:])))
    header, units, data = reader[0], reader[1], reader[2:]
    return header, [dict(zip(header, r)) for r in data if len(r) == len(header)], dict(zip(header, units))


def number(value):
    try:
        return float(value.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def figures_of(row, units):
    """(label, value) of each FIGURES metric the row holds, in the units FIGURES names."""
    out = []
    for label, metric, scale in FIGURES:
        v = number(row.get(metric))
        if v is None:
            continue
        unit = units.get(metric, "")
        if metric == "gpu__time_duration.sum":
            scale = {"ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3}.get(unit, 1e-3)
        if metric.startswith("dram__bytes_"):
            scale = {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1, "Gbyte": 1e3, "Tbyte": 1e6}.get(unit, 1e-6)
        if metric.endswith("per_second"):
            scale = {"Ghz": 1e3, "GHz": 1e3, "Mhz": 1, "MHz": 1, "hz": 1e-6, "Hz": 1e-6}.get(unit, 1e-6)
        out.append((label, v * scale))
    return out


def ranges(path, rows, units):
    """Per kernel name, in order of first launch: launches, then each figure's median [min, max]."""
    by_name = {}
    for row in rows:
        name = row.get("Kernel Name", "?")
        if not any(s in name for s in SKIP):
            by_name.setdefault(name, []).append(figures_of(row, units))
    print(f"== {path}")
    for name, launches in by_name.items():
        print(f"-- {name[:110]}")
        print(f"   {'launches':18s} {len(launches):12d}")
        for label, _, _ in FIGURES:
            values = [v for figures in launches for lab, v in figures if lab == label]
            if values:
                print(f"   {label:18s} {statistics.median(values):12.2f}  [{min(values):.2f}, {max(values):.2f}]")


def main(args):
    by_kernel = "--ranges" in args
    for path in (a for a in args if a != "--ranges"):
        parsed = rows_of(path)
        if not parsed:
            print(f"{path}: no kernels profiled")
            continue
        header, rows, units = parsed
        if by_kernel:
            ranges(path, rows, units)
            continue
        print(f"== {path}")
        for row in rows:
            name = row.get("Kernel Name", "?")
            if any(s in name for s in SKIP):
                continue
            print(f"-- {name[:110]}")
            for label, value in figures_of(row, units):
                print(f"   {label:18s} {value:12.2f}")
            stalls = []
            for k in header:
                if k.startswith("smsp__average_warps_issue_stalled_") and k.endswith("_per_issue_active.ratio"):
                    v = number(row[k])
                    if v:
                        stalls.append((v, k[len("smsp__average_warps_issue_stalled_"):-len("_per_issue_active.ratio")]))
            stalls.sort(reverse=True)
            if stalls:
                print("   stalls/issue      " + ", ".join(f"{n} {v:.2f}" for v, n in stalls[:5]))


if __name__ == "__main__":
    main(sys.argv[1:])
