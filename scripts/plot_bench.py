#!/usr/bin/env python3
"""Draws a `tcgemm bench --json` record as an SVG picture:

    python3 scripts/plot_bench.py RUN.json RUN.svg [TITLE]

The renderer is python/tcgemm/bench_plot.py (plain Python, no torch), loaded
as a file so that neither torch nor the built package is needed;
`tcgemm bench --plot FILE.svg` runs this script.
"""

import importlib.util
import sys
from pathlib import Path

RENDERER = Path(__file__).resolve().parent.parent / "python" / "tcgemm" / "bench_plot.py"
spec = importlib.util.spec_from_file_location("bench_plot", RENDERER)
bench_plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_plot)

if __name__ == "__main__":
    sys.exit(bench_plot.main())
