"""A picture of a benchmark run: the record `tcgemm bench --json` writes
(docs/BENCH_JSON.md) as one self-contained SVG, 800 px wide, on white.

    python3 scripts/plot_bench.py RUN.json RUN.svg      (from a checkout; plain Python, no torch)
    tcgemm bench --suite large --plot large.svg         (the command line tool runs the same)

One row per case the automatic choice ran (shape, dtype, layout): tcgemm's bar
above cuBLAS's, the speedup written at the right. Compute-bound cases (more
FLOPs per byte than the GPU's tensor ceiling over its HBM ceiling) are drawn
in TFLOP/s against the tensor-core ceiling measured in the same run, marked on
each row; memory-bound ones in TB/s (the least bytes the GEMM moves: A and B
read, C written, once) against the HBM read ceiling measured in the same run.
Only the standard library is used: the output depends only on the record.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from xml.sax.saxutils import escape

WIDTH = 800
LABEL_X = 8            # left edge of the row labels
BAR_X0, BAR_X1 = 215, 690  # the bars' value axis
SPEEDUP_X = 792        # right edge of the speedup column
ROW_H = 22             # a row: two bars of 8 px and the gaps
BAR_H = 8
OURS, THEIRS, CEILING = "#2b6cb0", "#a0aec0", "#e53e3e"
FASTER, SLOWER, INK, FAINT = "#276749", "#9b2c2c", "#1a202c", "#e2e8f0"
FONT = 'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"'
# Without measured ceilings: the H200's balance point (~850 TFLOP/s over ~4.3 TB/s).
DEFAULT_BALANCE = 200.0


def _rows(record: dict) -> list[dict]:
    """The timed rows of the automatic choice, in the record's order."""
    return [r for r in record.get("results", [])
            if r.get("heuristic", True) and r.get("ours_us_median") and r.get("cublas_us_median")]


def _nice_step(span: float) -> float:
    """A round tick step giving 4-8 ticks over `span`."""
    raw = span / 6.0
    power = 10.0 ** math.floor(math.log10(raw))
    for mult in (1.0, 2.0, 2.5, 5.0, 10.0):
        if raw <= mult * power:
            return mult * power
    return 10.0 * power


def _text(x: float, y: float, content: str, size: int = 12, anchor: str = "start", weight: str = "normal",
          fill: str = INK) -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" {FONT} font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}">{escape(content)}</text>')


class _Panel:
    """Rows sharing one value axis (TFLOP/s or TB/s)."""

    def __init__(self, title: str, unit: str, rows: list[tuple[dict, float, float, float | None]]):
        self.title, self.unit, self.rows = title, unit, rows  # (row, ours, theirs, ceiling)
        top = max([max(o, t, c or 0.0) for _, o, t, c in rows] + [1e-9])
        self.step = _nice_step(top)
        self.top = math.ceil(top * 1.02 / self.step) * self.step

    def x(self, value: float) -> float:
        return BAR_X0 + (BAR_X1 - BAR_X0) * value / self.top

    def height(self) -> int:
        return self._head() + 4 + ROW_H * len(self.rows) + 30

    def _head(self) -> int:
        # A tall panel repeats its scale under its title.
        return 42 if len(self.rows) > 12 else 26

    def draw(self, y0: float) -> list[str]:
        out = [_text(LABEL_X, y0 + 18, self.title, 14, weight="bold")]
        body0 = y0 + self._head() + 4
        body1 = body0 + ROW_H * len(self.rows)
        # Grid and axis.
        ticks = int(round(self.top / self.step))
        for i in range(ticks + 1):
            v = i * self.step
            x = self.x(v)
            out.append(f'<line x1="{x:.1f}" y1="{body0:.1f}" x2="{x:.1f}" y2="{body1:.1f}" stroke="{FAINT}"/>')
            label = f"{v:g}"
            out.append(_text(x, body1 + 14, label, 11, "middle"))
            if len(self.rows) > 12:
                out.append(_text(x, body0 - 4, label, 10, "middle", fill="#4a5568"))
        out.append(_text((BAR_X0 + BAR_X1) / 2, body1 + 27, self.unit, 11, "middle"))
        for i, (row, ours, theirs, ceiling) in enumerate(self.rows):
            y = body0 + ROW_H * i
            if i % 2 == 1:
                out.append(f'<rect x="0" y="{y:.1f}" width="{WIDTH}" height="{ROW_H}" fill="#f7fafc"/>')
            batch = f'{row["batch"]} x ' if row.get("batch", 1) > 1 else ""
            name = f'{batch}{row["m"]}x{row["n"]}x{row["k"]} {row["dtype"]} {row["layout"]}'
            out.append(_text(LABEL_X, y + ROW_H / 2 + 4, name, 11))
            for j, (value, colour) in enumerate(((ours, OURS), (theirs, THEIRS))):
                by = y + 3 + j * (BAR_H + 1)
                out.append(f'<rect x="{BAR_X0}" y="{by:.1f}" width="{max(self.x(value) - BAR_X0, 0.5):.1f}" '
                           f'height="{BAR_H}" fill="{colour}"/>')
            if ceiling:
                cx = self.x(ceiling)
                out.append(f'<line x1="{cx:.1f}" y1="{y + 1:.1f}" x2="{cx:.1f}" y2="{y + ROW_H - 1:.1f}" '
                           f'stroke="{CEILING}" stroke-width="2"/>')
            speedup = row["cublas_us_median"] / row["ours_us_median"]
            out.append(_text(SPEEDUP_X, y + ROW_H / 2 + 4, f"{speedup:.3f}x", 11, "end", "bold",
                             FASTER if speedup >= 1.0 else SLOWER))
        return out


def render(record: dict, title: str | None = None) -> str:
    """The SVG text for a bench record."""
    rows = _rows(record)
    peaks = record.get("peak_tflops") or {}
    hbm = record.get("hbm_read_gbps")
    compute, memory = [], []
    for r in rows:
        batch = r.get("batch", 1)  # a strided batch: every problem counts
        flops = 2.0 * r["m"] * r["n"] * r["k"] * batch
        moved = 2.0 * (r["m"] * r["k"] + r["k"] * r["n"] + r["m"] * r["n"]) * batch
        peak = peaks.get(r["dtype"])
        balance = peak * 1e12 / (hbm * 1e9) if peak and hbm else DEFAULT_BALANCE
        if flops / moved >= balance:
            compute.append((r, flops / r["ours_us_median"] / 1e6, flops / r["cublas_us_median"] / 1e6, peak))
        else:
            memory.append((r, moved / r["ours_us_median"] / 1e6, moved / r["cublas_us_median"] / 1e6,
                           hbm / 1e3 if hbm else None))
    device = record.get("device", {})
    library = record.get("library", {})
    settings = record.get("settings", {})
    suites = ", ".join(settings.get("suites") or []) or "shapes"
    heading = title or f"tcgemm {library.get('version', '')} against cuBLAS: {suites}"
    facts = [device.get("name", "GPU ?")]
    if device.get("driver_version"):
        v = device["driver_version"]
        facts.append(f"CUDA driver {v // 1000}.{v % 1000 // 10}")
    if device.get("cublas_version"):
        facts.append(f"cuBLAS {device['cublas_version']}")
    if record.get("timestamp"):
        facts.append(record["timestamp"][:10])
    ceilings = [f"{d} {p:.0f} TFLOP/s" for d, p in sorted(peaks.items()) if p]
    if hbm:
        ceilings.append(f"HBM read {hbm / 1e3:.2f} TB/s")
    geomeans = record.get("geomean_speedup") or {}
    panels = []
    if compute:
        panels.append(_Panel("Compute-bound: TFLOP/s (red: tensor-core ceiling measured in the same run)", "TFLOP/s",
                             compute))
    if memory:
        panels.append(_Panel("Memory-bound: TB/s moved (red: HBM read ceiling measured in the same run)", "TB/s",
                             memory))
    header_h = 96
    height = header_h + sum(p.height() for p in panels) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}">',
           f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
           _text(LABEL_X, 22, heading, 16, weight="bold"),
           _text(LABEL_X, 42, ", ".join(facts), 12)]
    line3 = "ceilings: " + ", ".join(ceilings) if ceilings else "ceilings: not measured (--no-peak)"
    if geomeans:
        line3 += "; geomean speedup " + ", ".join(f"{d} {g:.3f}x" for d, g in sorted(geomeans.items()))
    out.append(_text(LABEL_X, 60, line3, 12))
    # Legend.
    out.append(f'<rect x="{LABEL_X}" y="70" width="14" height="9" fill="{OURS}"/>')
    out.append(_text(LABEL_X + 19, 79, "tcgemm", 12))
    out.append(f'<rect x="{LABEL_X + 80}" y="70" width="14" height="9" fill="{THEIRS}"/>')
    out.append(_text(LABEL_X + 99, 79, "cuBLAS (as torch.matmul calls it)", 12))
    out.append(_text(SPEEDUP_X, 79, "speedup", 12, "end", "bold"))
    y = header_h
    for panel in panels:
        out += panel.draw(y)
        y += panel.height()
    if not panels:
        out.append(_text(LABEL_X, header_h + 20, "no timed rows in this record", 12))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print("usage: plot_bench.py RUN.json OUT.svg [TITLE]", file=sys.stderr)
        return 2
    try:
        record = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        print(f"plot_bench: cannot read {args[0]}: {error}", file=sys.stderr)
        return 1
    Path(args[1]).write_text(render(record, args[2] if len(args) == 3 else None), encoding="utf-8")
    print(f"plot_bench: wrote {args[1]} ({len(_rows(record))} cases)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
