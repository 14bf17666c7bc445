"""Smoke test: the benchmark script runs end to end and reports every row, section and verdict
(no thresholds here: ``--smoke`` makes a handful of calls per phase, so its numbers are noise;
timing targets are checked by running ``benchmarks/bench.py --check`` on a quiet machine)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench.py"

STDIO_ROWS = ["mcpclient", "official", "raw", "raw_threaded"]
HTTP_ROWS = ["mcpclient", "official", "raw"]


@pytest.mark.timeout(60)
def test_benchmark_smoke_run_reports_every_row(tmp_path):
    pytest.importorskip("mcp", reason="the benchmark compares with the official `mcp` SDK (Python 3.10+)")
    out = tmp_path / "bench.json"
    run = subprocess.run([sys.executable, str(BENCH), "--smoke", "--placement", "free", "--json", str(out)],
                         capture_output=True, text=True, timeout=50)
    assert run.returncode == 0, run.stderr[-2000:]
    for label in ("raw floor", "raw threaded", "mcpclient", "official mcp", "raw threaded (threads)",
                  "== placement free", "== http", "raw requests", "== 2026-07-28: stdio", "== 2026-07-28: http",
                  "mcpclient / official calls/s @1 (2026, stdio)", "mcpclient / official calls/s @1",
                  "mcpclient / raw threaded calls/s @8", "mcpclient / raw threaded calls/s @32",
                  "raw floor / official calls/s @1 (bound)", "import overhead",
                  "requests/jsonschema/urllib3 after import"):
        assert label in run.stdout, label
    report = json.loads(out.read_text())
    assert report["env"]["mode"] == "smoke"
    sections = [(report["placements"]["free"], STDIO_ROWS), (report["modern"]["placements"]["free"], STDIO_ROWS),
                (report["http"], HTTP_ROWS), (report["modern"]["http"], HTTP_ROWS)]
    for section, rows in sections:
        assert sorted(section) == rows
        assert all(section[row][k]["calls"] > 0 for row in section for k in ("seq", "c8", "c32"))
    names = {(t["placement"], t["name"]): t for t in report["targets"]}
    for placement in ("free", "2026-07-28/free"):
        for k in (1, 8, 32):
            assert (placement, f"mcpclient / raw threaded calls/s @{k}") in names
    assert names[("free", "mcpclient / raw threaded calls/s @8")]["target"] == 0.7
    assert names[(None, "import overhead (ms)")]["target"] == 45
    for k in (1, 8, 32):
        assert names[("http", f"mcpclient / official calls/s @{k}")]["target"] == 2
    assert report["import"]["heavy_modules_loaded"] == []
