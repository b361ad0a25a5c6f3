"""The benchmark picture (tcgemm/bench_plot.py), without a GPU or torch (runs in CI):
well-formed SVG, one row per case the automatic choice ran, each case in the
right panel, the speedups and ceilings the record holds."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import PACKAGE_DIR, REPO

spec = importlib.util.spec_from_file_location("bench_plot", PACKAGE_DIR / "bench_plot.py")
bench_plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_plot)

SVG = "{http://www.w3.org/2000/svg}"


def _row(m: int, n: int, k: int, dtype: str, ours: float, theirs: float, heuristic: bool = True) -> dict:
    return {"m": m, "n": n, "k": k, "dtype": dtype, "layout": "NT", "heuristic": heuristic,
            "ours_us_median": ours, "cublas_us_median": theirs, "speedup": theirs / ours}


RECORD = {
    "tool": "tcgemm bench", "schema_version": 2, "timestamp": "2026-12-01T12:00:00Z",
    "library": {"version": "1.0.0"},
    "device": {"name": "NVIDIA H200 <test & co>", "driver_version": 13000, "cublas_version": "13.1.0"},
    "settings": {"suites": ["llm"]},
    "peak_tflops": {"bf16": 850.0, "f16": 820.0}, "hbm_read_gbps": 4300.0,
    "results": [
        _row(4096, 4096, 4096, "bf16", 200.0, 210.0),        # compute-bound, faster
        _row(4096, 4096, 4096, "bf16", 300.0, 210.0, False),  # another configuration: not drawn
        _row(1, 4096, 4096, "bf16", 18.0, 17.0),              # memory-bound, slower
        _row(8192, 8192, 8192, "f16", 1400.0, 1400.0),        # compute-bound, even
        {"m": 2, "n": 2, "k": 2, "dtype": "f16", "layout": "NN", "heuristic": True, "error": "x"},  # untimed
    ],
    "geomean_speedup": {"bf16": 1.01},
}


def _texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def test_well_formed_800_wide_on_white() -> None:
    svg = bench_plot.render(RECORD)
    root = ET.fromstring(svg)  # raises on malformed XML (e.g. an unescaped '&')
    assert root.get("width") == "800"
    assert root.find(f"{SVG}rect").get("fill") == "#ffffff"
    assert any("NVIDIA H200 <test & co>" in t for t in _texts(svg))


def test_one_row_per_automatic_case_in_its_panel() -> None:
    texts = _texts(bench_plot.render(RECORD))
    labels = [t for t in texts if t.endswith(" NT") or t.endswith(" NN")]
    assert labels == ["4096x4096x4096 bf16 NT", "8192x8192x8192 f16 NT", "1x4096x4096 bf16 NT"]
    compute = texts.index(next(t for t in texts if t.startswith("Compute-bound")))
    memory = texts.index(next(t for t in texts if t.startswith("Memory-bound")))
    assert compute < texts.index("4096x4096x4096 bf16 NT") < memory < texts.index("1x4096x4096 bf16 NT")
    assert [t for t in texts if t.endswith("x") and t[0].isdigit() and "." in t] == ["1.050x", "1.000x", "0.944x"]


def test_ceilings_are_the_records() -> None:
    texts = _texts(bench_plot.render(RECORD))
    assert any("bf16 850 TFLOP/s" in t and "f16 820 TFLOP/s" in t and "HBM read 4.30 TB/s" in t for t in texts)
    bare = dict(RECORD, peak_tflops={}, hbm_read_gbps=None)
    assert any(t.startswith("ceilings: not measured") for t in _texts(bench_plot.render(bare)))


def test_script_writes_the_file(tmp_path: Path) -> None:
    import json

    record = tmp_path / "run.json"
    record.write_text(json.dumps(RECORD), encoding="utf-8")
    out = tmp_path / "run.svg"
    subprocess.run([sys.executable, str(REPO / "scripts" / "plot_bench.py"), str(record), str(out)], check=True)
    assert out.read_text(encoding="utf-8") == bench_plot.render(RECORD)
    bad = subprocess.run([sys.executable, str(REPO / "scripts" / "plot_bench.py"), str(tmp_path / "missing.json"),
                          str(out)], capture_output=True, text=True)
    assert bad.returncode == 1 and "cannot read" in bad.stderr
