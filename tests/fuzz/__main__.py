"""``python -m tests.fuzz``: run the fuzzer, print its counts, exit 1 on any violation.

    python -m tests.fuzz --exchanges 20000 --seed 1 --transport all --jobs 4

Each job is a worker process (``--worker``) with its own seed (``seed + job``), client, servers
and memory probe; the parent adds their counts up. Every violation class is replayed alone on a
fresh connection and shrunk frame by frame; the smallest script that still fails is printed.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections import Counter
from typing import Any, Dict, List, Optional

from .gen import make_case
from .harness import MiB, Runner, Violation, summarize


def render(case: Dict[str, Any]) -> str:
    """A readable reproducer: the call, the HTTP options, and each frame's bytes."""
    lines = [f"  call={case['call']} method={case['method']} timeout={case['timeout']}"
             + (f" times={case['times']}" if case.get("times") else "")]
    if case.get("http"):
        lines.append(f"  http={json.dumps(case['http'])}")
    for where in ("get", "frames"):
        for frame in case.get(where) or []:
            parts = []
            for p in frame:
                if "b" in p:
                    parts.append(repr(p["b"])[1:-1])
                elif "r" in p:
                    parts.append(f"<{p['r']!r} x {p['n']}>")
                elif "id" in p:
                    parts.append({0: "<ID>", -1: "<PREVIOUS-ID>"}.get(p["id"], "<UNKNOWN-ID>"))
                else:
                    parts.append(f"<{next(iter(p))}{'' if next(iter(p.values())) == 1 else ' ' + str(next(iter(p.values())))}>")
            text = "".join(parts)
            lines.append(f"  {where}: {text[:400]}{'...' if len(text) > 400 else ''}")
    return "\n".join(lines)


def _still_fails(runner: Runner, kind: str, cases: List[Dict[str, Any]]) -> bool:
    runner._disconnect({"family": "minimize", "call": "-"})
    before = len(runner.violations)
    for c in cases:
        runner.run_case(json.loads(json.dumps(c)))
    runner._disconnect({"family": "minimize", "call": "-"})
    return any(v.kind == kind for v in runner.violations[before:])


def minimize(runner: Runner, v: Violation, budget: int = 16) -> Dict[str, Any]:
    """The violating case alone (or after its history if alone it passes), with frames dropped while
    it still fails; ``reproduced`` says whether it failed again at all."""
    case = json.loads(json.dumps(v.case))
    prefix: List[Dict[str, Any]] = []
    tries = 1
    if not _still_fails(runner, v.kind, [case]):
        prefix = [c for c in v.history if c is not v.case][-12:]
        tries += 1
        if not _still_fails(runner, v.kind, prefix + [case]):
            return dict(case, reproduced=False, prefix=len(prefix), before=prefix)
    for key in ("get", "frames"):
        i = len(case.get(key) or []) - 1
        while i >= 0 and tries < budget:
            trial = dict(case)
            trial[key] = case[key][:i] + case[key][i + 1:]
            tries += 1
            if _still_fails(runner, v.kind, prefix + [trial]):
                case = trial
            i -= 1
    return dict(case, reproduced=True, prefix=len(prefix), before=prefix)


def run_worker(args: argparse.Namespace) -> Dict[str, Any]:
    transports = ["stdio", "http"] if args.transport == "all" else [args.transport]
    counts: Counter = Counter()
    classes: Dict[str, Any] = {}
    peak, bound = 0, 0
    start = time.monotonic()
    for i, transport in enumerate(transports):
        n = args.exchanges // len(transports) + (1 if i < args.exchanges % len(transports) else 0)
        rng = random.Random(f"{args.seed}-{transport}")
        runner = Runner(transport, max_size=args.max_message_size, batch=args.batch)
        until = time.monotonic() + args.budget / len(transports)  # each transport gets its share
        try:
            for _ in range(n):
                runner.run_case(make_case(rng, transport, args.max_message_size))
                if args.budget and time.monotonic() > until:
                    break
            shrink_until = time.monotonic() + 30  # shrinking is bounded too
            runner._disconnect({"family": "close", "call": "close"})
            for k, v in runner.counts.items():  # before any shrinking: replays are not counted
                counts[f"{transport}:{k}"] += v
            peak = max(peak, runner.peak_growth)
            bound = runner.memory_bound
            shrinker: Optional[Runner] = None
            for key, found in summarize(runner.violations).items():
                entry = classes.setdefault(f"[{transport}] {key}", {"count": 0, "where": {}})
                entry["count"] += len(found)
                for v in found:
                    entry["where"][v.where] = entry["where"].get(v.where, 0) + 1
                if args.minimize and "repro" not in entry and len(classes) <= args.minimize \
                        and time.monotonic() < shrink_until:
                    if shrinker is None:  # replays run on their own runner (and connections)
                        shrinker = Runner(transport, max_size=args.max_message_size, batch=args.batch)
                    small = minimize(shrinker, found[0])
                    entry["repro"] = render(small)
                    if small.get("before"):
                        entry["repro"] = "\n".join(f"  earlier case {i + 1}:\n{render(c)}" for i, c in
                                                   enumerate(small["before"])) + "\n  then:\n" + entry["repro"]
                    entry["reproduced"] = small["reproduced"]
                    entry["prefix"] = small["prefix"]
            if shrinker is not None:
                shrinker.close()
        finally:
            runner.close()
    return {"counts": dict(counts), "classes": classes, "peak_growth": peak, "memory_bound": bound,
            "seconds": round(time.monotonic() - start, 1)}


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("--exchanges", type=int, default=2000, help="exchanges in all (split over jobs and transports)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--transport", choices=["stdio", "http", "all"], default="all")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (seeds seed .. seed+jobs-1)")
    ap.add_argument("--budget", type=float, default=0,
                    help="stop each worker's cases after this many seconds (0: none); shrinking adds at most 30 s")
    ap.add_argument("--max-message-size", type=int, default=MiB)
    ap.add_argument("--batch", type=int, default=500, help="exchanges per connection")
    ap.add_argument("--minimize", type=int, default=12, help="shrink the first violation of up to N classes (0: off)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(args)))
        return 0
    start = time.monotonic()
    procs = []
    per = [args.exchanges // args.jobs + (1 if j < args.exchanges % args.jobs else 0) for j in range(args.jobs)]
    for j in range(args.jobs):
        cmd = [sys.executable, "-m", "tests.fuzz", "--worker", "--exchanges", str(per[j]), "--seed", str(args.seed + j),
               "--transport", args.transport, "--max-message-size", str(args.max_message_size),
               "--batch", str(args.batch), "--minimize", str(args.minimize), "--budget", str(args.budget)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE))
    counts: Counter = Counter()
    classes: Dict[str, Any] = {}
    peak, bound, failed = 0, 0, False
    for p in procs:
        out, _ = p.communicate()
        if p.returncode != 0:
            failed = True
            print(f"worker exited {p.returncode}", file=sys.stderr)
            continue
        report = json.loads(out.decode().strip().splitlines()[-1])
        counts.update(report["counts"])
        peak, bound = max(peak, report["peak_growth"]), report["memory_bound"]
        for key, entry in report["classes"].items():
            mine = classes.setdefault(key, {"count": 0, "where": Counter()})
            mine["count"] += entry["count"]
            mine["where"].update(entry["where"])
            for k in ("repro", "reproduced", "prefix"):
                if k in entry and k not in mine:
                    mine[k] = entry[k]
    elapsed = time.monotonic() - start
    total = sum(v for k, v in counts.items() if k.endswith(":exchanges"))
    print(f"fuzz: {total} exchanges in {elapsed:.0f} s ({args.jobs} jobs, seeds {args.seed}..{args.seed + args.jobs - 1}, "
          f"transport {args.transport}, max_message_size {args.max_message_size})")
    for transport in ("stdio", "http"):
        mine = {k.split(":", 1)[1]: v for k, v in counts.items() if k.startswith(transport + ":")}
        if not mine:
            continue
        outcomes = ", ".join(f"{k.split(':')[1]} {v}" for k, v in sorted(mine.items(), key=lambda kv: -kv[1])
                             if k.startswith("outcome:"))
        print(f"  {transport}: {mine.get('exchanges', 0)} exchanges: {outcomes}")
    kinds = ["untyped", "dead-thread", "thread-crash", "dead-connection", "late", "memory", "leak"]
    viol = {k: sum(v for key, v in counts.items() if key.endswith(f"violation:{k}")) for k in kinds}
    print("  violations: " + ", ".join(f"{k} {v}" for k, v in viol.items()))
    held = sum(v for k, v in counts.items() if k.endswith("info:fds-held-until-gc"))
    if held:
        print(f"  info: {held} connection(s) kept file descriptors open after close() until garbage collection")
    print(f"  peak client memory growth in one exchange: {peak / MiB:.1f} MiB (bound {bound / MiB:.0f} MiB)")
    for key, entry in sorted(classes.items(), key=lambda kv: -kv[1]["count"]):
        print(f"VIOLATION x{entry['count']}  {key}")
        print("  in: " + ", ".join(f"{w} {n}" for w, n in entry["where"].most_common(6)))
        if "repro" in entry:
            how = ("alone" if not entry.get("prefix") else f"after {entry['prefix']} earlier cases") \
                if entry.get("reproduced") else "did not fail again on replay (timing?); as found"
            print(f"  reproducer ({how}):\n{entry['repro']}")
    return 1 if failed or any(viol.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
