"""Smoke test: the benchmark script runs end to end and reports every number (no thresholds here:
timing targets are checked by running ``benchmarks/bench.py --check`` on a quiet machine)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench.py"


@pytest.mark.timeout(120)
def test_benchmark_quick_run_reports_every_row(tmp_path):
    pytest.importorskip("mcp", reason="the benchmark compares with the official `mcp` SDK (Python 3.10+)")
    out = tmp_path / "bench.json"
    run = subprocess.run([sys.executable, str(BENCH), "--quick", "--placement", "free", "--json", str(out)],
                         capture_output=True, text=True, timeout=110)
    assert run.returncode == 0, run.stderr[-2000:]
    for label in ("raw floor", "mcpclient", "official mcp", "import overhead", "== http", "raw requests",
                  "== 2026-07-28: stdio", "== 2026-07-28: http", "mcpclient / official calls/s @1 (2026, stdio)"):
        assert label in run.stdout
    report = json.loads(out.read_text())
    for section in (report["http"], report["modern"]["http"], report["modern"]["placements"]["free"]):
        assert sorted(section) == ["mcpclient", "official", "raw"]
        assert all(section[row][k]["calls"] > 0 for row in section for k in ("seq", "c8", "c32"))
    assert report["import"]["heavy_modules_loaded"] == []
