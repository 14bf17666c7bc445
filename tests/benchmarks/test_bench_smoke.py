"""Smoke test: the benchmark script runs end to end and reports every row, section and verdict
of the handshake era (no thresholds here: ``--smoke`` makes a handful of calls per phase, one
round, so its numbers are noise; timing targets are checked by running
``benchmarks/bench.py --check`` on a quiet machine).

A row subset, to keep the suite's time: the 2026-07-28 sections run the same measuring and
reporting code with ``modern=True`` (its wire is covered by the modern tests), and the idle
section only sleeps; they are left out here (``--era legacy``, no ``idle`` part). The cold-path
and many-threads parts run with one round and a few calls, about 6 s of the 8.5 s on 2 cores."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_official_sdk

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench.py"

STDIO_ROWS = ["mcpclient", "official", "raw", "raw_threaded", "raw_threaded_pgroup"]
HTTP_ROWS = ["mcpclient", "official", "raw"]


@pytest.mark.timeout(60)
def test_benchmark_smoke_run_reports_every_row(tmp_path):
    require_official_sdk()
    out = tmp_path / "bench.json"
    parts = [arg for part in ("raw", "raw_threaded", "raw_threaded_pgroup", "mcpclient", "official", "import",
                              "scaling", "cold") for arg in ("--only", part)]
    run = subprocess.run([sys.executable, str(BENCH), "--smoke", "--placement", "free", "--era", "legacy", *parts,
                          "--json", str(out)], capture_output=True, text=True, timeout=50)
    assert run.returncode == 0, run.stderr[-2000:]
    for label in ("raw floor", "raw threaded", "mcpclient", "official mcp", "raw threaded (threads)",
                  "== placement free", "== http", "raw requests", "mcpclient / official calls/s @1",
                  "mcpclient / raw threaded calls/s @8", "mcpclient / raw threaded calls/s @32",
                  "raw floor / official calls/s @1 (bound)", "import overhead",
                  "requests/jsonschema/urllib3 after import", "raw thr. pgrp", "mcpclient / raw thr. (pgroup) calls/s @8",
                  "== many threads on one client", "mcpclient calls/s @256 / @64", "== cold paths, stdio",
                  "== cold paths, http", "stdio one-shot: mcpclient / floor", "http connect cold: mcpclient / raw requests",
                  "http connect cold: mcpclient+imp / requests"):
        assert label in run.stdout, label
    report = json.loads(out.read_text())
    assert report["env"]["mode"] == "smoke" and report["env"]["eras"] == ["legacy"]
    assert "== 2026-07-28" not in run.stdout and "modern" not in report and "idle" not in report
    sections = [(report["placements"]["free"], STDIO_ROWS), (report["http"], HTTP_ROWS)]
    for section, rows in sections:
        assert sorted(section) == rows
        assert all(section[row][k]["calls"] > 0 for row in section for k in ("seq", "c8", "c32"))
    names = {(t["placement"], t["name"]): t for t in report["targets"]}
    for k in (1, 8, 32):
        assert ("free", f"mcpclient / raw threaded calls/s @{k}") in names
    assert names[("free", "mcpclient / raw threaded calls/s @8")]["target"] == 0.8
    assert names[("free", "mcpclient calls/s @256 / @64")]["target"] == 0.9
    assert names[("cold", "stdio one-shot: mcpclient / floor")]["target"] == 1.2
    assert names[("cold", "http connect cold: mcpclient+imp / requests")]["target"] == 2.0  # like for like
    assert names[("cold", "http connect cold: mcpclient / raw requests")]["target"] is None
    assert sorted(report["cold"]["stdio"]) == ["floor", "mcpclient"]  # (the official SDK: not in smoke runs)
    assert sorted(report["cold"]["http"]) == ["floor", "mcpclient", "mcpclient+imp", "requests"]
    assert names[(None, "import overhead (ms)")]["target"] == 45
    for k in (1, 8, 32):
        assert names[("http", f"mcpclient / official calls/s @{k}")]["target"] == 2
    assert report["import"]["heavy_modules_loaded"] == []
