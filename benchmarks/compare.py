#!/usr/bin/env python3
"""Two installs of mcpclient side by side, in one run: is a change slower anywhere?

    python benchmarks/compare.py OLD_VENV/bin/python NEW_VENV/bin/python [--rounds 5]

Each interpreter runs the same mcpclient rows, alternately, in the order A B, B A, A B, ...
(drift of the machine's load hits both alike): ``bench.py --quick --era legacy --only mcpclient --only import``
(stdio pinned *split* and *same*, where the numbers are steady, and Streamable HTTP: p50,
calls/s @1/@8/@32; the import overhead) and
``cold.py --client mcpclient`` (one-shot, connect cold, first call, RSS after 1,000 calls).
Both installs run this checkout's benchmark scripts, which use only the public API. Printed per
row: the median of the rounds for A and for B, and B against A as "slower by" (positive: B is
slower), with the rounds' spread; then the median of the rounds' own B-against-A ratios
("paired": each round's A and B ran back to back, so a load that comes and goes between rounds
cancels out); then B against A on each one's best round ("best"): a busy machine only ever slows
a round, so on a noisy host the best rounds come closest to what each install costs. Running
an install against itself (A = B) shows how far apart these columns land by chance on the
machine at hand. ``--json`` writes every round.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))

#: (row, higher is better) from one bench.py report.
def _bench_rows(report: Dict[str, Any]) -> Dict[str, Tuple[float, bool]]:
    rows: Dict[str, Tuple[float, bool]] = {}
    sections = [(f"stdio {where}", res["mcpclient"]) for where, res in report["placements"].items()]
    for section, res in sections + [("http", report["http"]["mcpclient"])]:
        rows[f"{section} p50 µs"] = (res["seq"]["p50_us"], False)
        for key, label in (("seq", "@1"), ("c8", "@8"), ("c32", "@32")):
            rows[f"{section} calls/s {label}"] = (res[key]["calls_per_s"], True)
    rows["import overhead ms"] = (report["import"]["overhead_ms"], False)
    return rows


def _cold_rows(report: Dict[str, Any]) -> Dict[str, Tuple[float, bool]]:
    rows: Dict[str, Tuple[float, bool]] = {}
    for transport, clients in report.items():
        row = clients["mcpclient"]
        for phase in ("one_shot", "connect", "first_call"):
            rows[f"{transport} {phase.replace('_', '-')} ms"] = (row[phase]["median"] * 1000, False)
        if "rss" in row:
            rows[f"{transport} RSS MiB"] = (row["rss"]["median"] / 1048576, False)
    return rows


def one_round(python: str, tmp: str) -> Dict[str, Tuple[float, bool]]:
    bench_json, cold_json = os.path.join(tmp, "bench.json"), os.path.join(tmp, "cold.json")
    subprocess.run([python, os.path.join(HERE, "bench.py"), "--quick", "--era", "legacy",
                    "--only", "mcpclient", "--only", "import", "--json", bench_json],
                   check=True, stdout=subprocess.DEVNULL, cwd=tmp)
    subprocess.run([python, os.path.join(HERE, "cold.py"), "--client", "mcpclient", "--rounds", "5",
                    "--rss-rounds", "1", "--json", cold_json], check=True, stdout=subprocess.DEVNULL, cwd=tmp)
    with open(bench_json) as f:
        rows = _bench_rows(json.load(f))
    with open(cold_json) as f:
        rows.update(_cold_rows(json.load(f)))
    return rows


def main(argv: List[str] = sys.argv[1:]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="the baseline's interpreter (a venv with that mcpclient installed)")
    ap.add_argument("b", help="the change's interpreter")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", metavar="FILE")
    opts = ap.parse_args(argv)
    rounds: Dict[str, List[Dict[str, Tuple[float, bool]]]] = {"a": [], "b": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(opts.rounds):
            for side in (("a", "b") if r % 2 == 0 else ("b", "a")):
                rounds[side].append(one_round(getattr(opts, side), tmp))
                print(f"[compare] round {r + 1}/{opts.rounds} {side} done", file=sys.stderr, flush=True)
    print(f"A = {opts.a}\nB = {opts.b}\n{opts.rounds} rounds, alternating; medians (min-max)\n")
    print(f"{'row':<26}{'A':>30}{'B':>30}{'B slower by':>14}{'paired':>9}{'best':>9}")
    for row in rounds["a"][0]:
        higher_better = rounds["a"][0][row][1]
        cells = []
        for side in ("a", "b"):
            values = sorted(rnd[row][0] for rnd in rounds[side])
            cells.append((statistics.median(values), values[0], values[-1]))
        (ma, lo_a, hi_a), (mb, lo_b, hi_b) = cells
        slower = (ma / mb - 1) if higher_better else (mb / ma - 1)
        best = (hi_a / hi_b - 1) if higher_better else (lo_b / lo_a - 1)
        pairs = zip((rnd[row][0] for rnd in rounds["a"]), (rnd[row][0] for rnd in rounds["b"]))
        paired = statistics.median((a / b - 1) if higher_better else (b / a - 1) for a, b in pairs)
        shown = [f"{m:,.1f} ({lo:,.1f}-{hi:,.1f})" for m, lo, hi in cells]
        print(f"{row:<26}{shown[0]:>30}{shown[1]:>30}{slower * 100:>13.1f}%{paired * 100:>8.1f}%{best * 100:>8.1f}%")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({side: [{k: v[0] for k, v in rnd.items()} for rnd in rounds[side]] for side in rounds}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
