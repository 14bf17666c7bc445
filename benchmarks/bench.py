#!/usr/bin/env python3
"""mcpclient benchmark: latency, throughput and import cost, in one run, against raw_server.py.

    python benchmarks/bench.py            # full run (well under ~90 s on 2 cores)
    python benchmarks/bench.py --quick    # CI smoke (< ~20 s)
    python benchmarks/bench.py --json out.json --check

Rows: the raw floor (plain Popen + json, one line out, one line in), mcpclient (``Client``,
sequential and N threads sharing one client), and the official ``mcp`` SDK (``ClientSession``,
sequential and N asyncio tasks sharing one session). See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SERVER = os.path.join(HERE, "raw_server.py")
PY = sys.executable
CONCURRENCY = (8, 32)
ARGS = {"text": "x"}

SIZES = {
    # calls per measurement; *_conc is the total over all threads/tasks (split evenly)
    "full": dict(warmup=500, raw_seq=40000, raw_conc=100000, mc_seq=40000, mc_conc=64000,
                 off_seq=20000, off_conc=32000, import_runs=20),
    "quick": dict(warmup=200, raw_seq=4000, raw_conc=8000, mc_seq=4000, mc_conc=6400,
                  off_seq=2000, off_conc=3200, import_runs=10),
}

TARGETS = {
    "p50_vs_raw": 2.0,        # mcpclient p50 / raw p50  <=
    "vs_official_at_1": 4.0,  # mcpclient calls/s / official calls/s  >=
    "vs_official_at_8": 4.0,
    "import_ms": 30.0,        # import mcpclient - bare interpreter  <=
}

pc = time.perf_counter_ns


# --- helpers ------------------------------------------------------------------------------------

def percentile(sorted_ns: Sequence[int], q: float) -> float:
    """Nearest-rank percentile of sorted nanosecond samples, in microseconds."""
    if not sorted_ns:
        return float("nan")
    k = max(0, min(len(sorted_ns) - 1, int(round(q / 100.0 * len(sorted_ns) + 0.5)) - 1))
    return sorted_ns[k] / 1000.0


def summarize(lat_ns: List[int], wall_ns: int) -> Dict[str, Any]:
    s = sorted(lat_ns)
    return {"calls": len(s), "wall_s": wall_ns / 1e9, "calls_per_s": len(s) / (wall_ns / 1e9),
            "p50_us": percentile(s, 50), "p99_us": percentile(s, 99),
            "mean_us": (sum(s) / len(s) / 1000.0) if s else float("nan")}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- a. raw floor -------------------------------------------------------------------------------

def bench_raw(sz: Dict[str, int]) -> Dict[str, Any]:
    proc = subprocess.Popen([PY, SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    w, flush, readline = proc.stdin.write, proc.stdin.flush, proc.stdout.readline
    dumps, loads = json.dumps, json.loads
    rid = 0

    def call() -> Any:
        nonlocal rid
        rid += 1
        w(dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                 "params": {"name": "echo", "arguments": ARGS}}).encode() + b"\n")
        flush()
        return loads(readline())

    try:
        w(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
          b'"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}\n'
          b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        flush()
        assert loads(readline())["result"]["protocolVersion"] == "2025-06-18"
        assert call()["result"]["content"][0]["text"] == "x"
        for _ in range(sz["warmup"]):
            call()

        lat: List[int] = []
        append = lat.append
        start = pc()
        for _ in range(sz["raw_seq"]):
            t0 = pc()
            call()
            append(pc() - t0)
        out: Dict[str, Any] = {"seq": summarize(lat, pc() - start)}

        # Ceiling for many callers on one pipe: k requests in flight, written together, then k
        # replies read (a perfectly batching client). Per-call latency = round time.
        for k in CONCURRENCY:
            rounds = max(1, sz["raw_conc"] // k)
            lat = []
            start = pc()
            for _ in range(rounds):
                t0 = pc()
                lines = []
                for _ in range(k):
                    rid += 1
                    lines.append(dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                        "params": {"name": "echo", "arguments": ARGS}}).encode())
                w(b"\n".join(lines) + b"\n")
                flush()
                for _ in range(k):
                    loads(readline())
                dt = pc() - t0
                lat.extend([dt] * k)
            out[f"c{k}"] = summarize(lat, pc() - start)
        return out
    finally:
        proc.stdin.close()
        proc.wait(5)
        proc.stdout.close()


# --- b. mcpclient -------------------------------------------------------------------------------

def bench_mcpclient(sz: Dict[str, int]) -> Dict[str, Any]:
    from mcpclient import Client

    out: Dict[str, Any] = {}
    with Client([PY, SERVER]) as client:
        assert [t.name for t in client.list_tools()] == ["echo"]
        assert client.call_tool("echo", ARGS).text == "x"
        call = client.call_tool
        for _ in range(sz["warmup"]):
            call("echo", ARGS)

        lat: List[int] = []
        append = lat.append
        start = pc()
        for _ in range(sz["mc_seq"]):
            t0 = pc()
            call("echo", ARGS)
            append(pc() - t0)
        out["seq"] = summarize(lat, pc() - start)

        for k in CONCURRENCY:
            out[f"c{k}"] = _threaded(call, k, max(1, sz["mc_conc"] // k), warm=max(1, sz["warmup"] // k))
    return out


def _threaded(call: Any, k: int, n: int, warm: int) -> Dict[str, Any]:
    barrier = threading.Barrier(k + 1)
    results: List[Optional[List[int]]] = [None] * k
    errors: List[BaseException] = []

    def worker(j: int) -> None:
        try:
            for _ in range(warm):
                call("echo", ARGS)
            local: List[int] = []
            append = local.append
            barrier.wait()
            for _ in range(n):
                t0 = pc()
                call("echo", ARGS)
                append(pc() - t0)
            results[j] = local
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(j,), daemon=True) for j in range(k)]
    for t in threads:
        t.start()
    barrier.wait()
    start = pc()
    for t in threads:
        t.join()
    wall = pc() - start
    if errors:
        raise errors[0]
    lat = [x for r in results if r for x in r]
    return summarize(lat, wall)


# --- c. official mcp SDK ------------------------------------------------------------------------

def bench_official(sz: Dict[str, int]) -> Dict[str, Any]:
    return asyncio.run(_official(sz))


async def _official(sz: Dict[str, int]) -> Dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=PY, args=[SERVER])
    out: Dict[str, Any] = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()  # the handshake-era path (no server/discover probe)
            tools = await session.list_tools()  # caches output schemas, as call_tool wants
            assert [t.name for t in tools.tools] == ["echo"]
            first = await session.call_tool("echo", ARGS)
            assert first.content[0].text == "x"
            call = session.call_tool
            for _ in range(sz["warmup"]):
                await call("echo", ARGS)

            lat: List[int] = []
            append = lat.append
            start = pc()
            for _ in range(sz["off_seq"]):
                t0 = pc()
                await call("echo", ARGS)
                append(pc() - t0)
            out["seq"] = summarize(lat, pc() - start)

            for k in CONCURRENCY:
                n = max(1, sz["off_conc"] // k)

                async def worker(count: int) -> List[int]:
                    local: List[int] = []
                    for _ in range(count):
                        t0 = pc()
                        await call("echo", ARGS)
                        local.append(pc() - t0)
                    return local

                await asyncio.gather(*[worker(max(1, sz["warmup"] // k)) for _ in range(k)])
                start = pc()
                parts = await asyncio.gather(*[worker(n) for _ in range(k)])
                wall = pc() - start
                out[f"c{k}"] = summarize([x for p in parts for x in p], wall)
    return out


# --- d. import time -----------------------------------------------------------------------------

def bench_import(runs: int) -> Dict[str, Any]:
    env = dict(os.environ)
    env.pop("PYTHONPROFILEIMPORTTIME", None)

    def timed(code: str) -> float:
        t0 = pc()
        subprocess.run([PY, "-c", code], check=True, env=env, cwd=ROOT)
        return (pc() - t0) / 1e6

    timed("import mcpclient")  # make sure bytecode is cached
    bare: List[float] = []
    imp: List[float] = []
    for _ in range(runs):  # interleaved so drift hits both equally
        bare.append(timed("pass"))
        imp.append(timed("import mcpclient"))

    probe = ("import sys, json, mcpclient; print(json.dumps(sorted(m for m in "
             "('requests', 'jsonschema', 'httpx', 'pydantic', 'anyio', 'asyncio') if m in sys.modules)))")
    heavy = json.loads(subprocess.run([PY, "-c", probe], check=True, env=env, cwd=ROOT,
                                      capture_output=True, text=True).stdout)

    # The slowest modules (self time, µs) from -X importtime, for the JSON report.
    err = subprocess.run([PY, "-X", "importtime", "-c", "import mcpclient"], env=env, cwd=ROOT,
                         capture_output=True, text=True).stderr
    rows = []
    for line in err.splitlines():
        if line.startswith("import time:") and "|" in line and "self" not in line:
            self_us, cum_us, name = (p.strip() for p in line[len("import time:"):].split("|"))
            rows.append((int(self_us), int(cum_us), name.strip()))
    top = [{"module": n, "self_us": s, "cumulative_us": c} for s, c, n in sorted(rows, reverse=True)[:12]]
    return {"bare_ms": statistics.median(bare), "import_ms": statistics.median(imp),
            "overhead_ms": statistics.median(imp) - statistics.median(bare), "runs": runs,
            "heavy_modules_loaded": heavy, "slowest_modules": top}


# --- report -------------------------------------------------------------------------------------

def _fmt(v: Optional[float], width: int, digits: int = 0) -> str:
    if v is None:
        return "-".rjust(width)
    return f"{v:,.{digits}f}".rjust(width)


def report(res: Dict[str, Any]) -> List[Dict[str, Any]]:
    env = res["env"]
    print(f"Python {env['python']} ({env['implementation']}) on {env['platform']}; "
          f"CPUs: {env['cpu_count']} (usable {env['cpus_usable']}); mcpclient {env['mcpclient']}, "
          f"mcp {env['mcp']}; mode: {env['mode']}")
    print()
    head = f"{'':14}{'p50 µs':>10}{'p99 µs':>10}{'calls/s @1':>13}{'calls/s @8':>13}{'calls/s @32':>13}"
    print(head)
    print("-" * len(head))
    for key, label in (("raw", "raw floor*"), ("mcpclient", "mcpclient"), ("official", "official mcp")):
        r = res[key]
        print(f"{label:14}{_fmt(r['seq']['p50_us'], 10, 1)}{_fmt(r['seq']['p99_us'], 10, 1)}"
              f"{_fmt(r['seq']['calls_per_s'], 13)}{_fmt(r['c8']['calls_per_s'], 13)}"
              f"{_fmt(r['c32']['calls_per_s'], 13)}")
    print("* raw floor @8/@32 = k requests written at once, then k replies read (a perfectly "
          "batching client; a ceiling, not a target)")
    print()
    print(f"{'per-call latency under load':28}{'p50 @8':>10}{'p99 @8':>10}{'p50 @32':>10}{'p99 @32':>10}   (µs)")
    for key, label in (("mcpclient", "mcpclient (threads)"), ("official", "official mcp (tasks)")):
        r = res[key]
        print(f"{label:28}{_fmt(r['c8']['p50_us'], 10, 1)}{_fmt(r['c8']['p99_us'], 10, 1)}"
              f"{_fmt(r['c32']['p50_us'], 10, 1)}{_fmt(r['c32']['p99_us'], 10, 1)}")
    print()

    mc, off, raw, imp = res["mcpclient"], res["official"], res["raw"], res["import"]
    checks = [
        ("mcpclient p50 / raw p50", mc["seq"]["p50_us"] / raw["seq"]["p50_us"], "<=", TARGETS["p50_vs_raw"], "x"),
        ("mcpclient / official calls/s @1", mc["seq"]["calls_per_s"] / off["seq"]["calls_per_s"], ">=",
         TARGETS["vs_official_at_1"], "x"),
        ("mcpclient / official calls/s @8", mc["c8"]["calls_per_s"] / off["c8"]["calls_per_s"], ">=",
         TARGETS["vs_official_at_8"], "x"),
        ("mcpclient / official calls/s @32", mc["c32"]["calls_per_s"] / off["c32"]["calls_per_s"], None, None, "x"),
        ("import overhead (ms)", imp["overhead_ms"], "<=", TARGETS["import_ms"], " ms"),
    ]
    rows = []
    print(f"{'ratio':36}{'value':>10}  {'target':>10}  result")
    for name, value, op, target, unit in checks:
        if op is None:
            verdict, tgt = "(info)", "-"
        else:
            ok = value <= target if op == "<=" else value >= target
            verdict, tgt = ("PASS" if ok else "FAIL"), f"{op} {target:g}"
        print(f"{name:36}{value:>9.2f}{unit.strip() or ' ':>1}  {tgt:>10}  {verdict}")
        rows.append({"name": name, "value": value, "op": op, "target": target, "result": verdict})
    heavy = [m for m in imp["heavy_modules_loaded"] if m in ("requests", "jsonschema")]
    verdict = "PASS" if not heavy else "FAIL"
    print(f"{'requests/jsonschema after import':36}{(', '.join(heavy) or 'none'):>10}  {'none':>10}  {verdict}")
    rows.append({"name": "requests/jsonschema not imported", "value": heavy, "op": "==", "target": [],
                 "result": verdict})
    print(f"(import: bare interpreter {imp['bare_ms']:.1f} ms, with `import mcpclient` {imp['import_ms']:.1f} ms; "
          f"median of {imp['runs']}; also loaded: {', '.join(imp['heavy_modules_loaded']) or 'nothing heavy'})")
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes for a CI smoke run (< ~20 s)")
    ap.add_argument("--json", metavar="FILE", help="also write every number to FILE as JSON")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target fails")
    ap.add_argument("--only", choices=("raw", "mcpclient", "official", "import"), action="append",
                    help=argparse.SUPPRESS)  # debugging aid: run just some parts
    opts = ap.parse_args(argv)
    mode = "quick" if opts.quick else "full"
    sz = SIZES[mode]

    try:
        from importlib.metadata import version
        mcp_version = version("mcp")
    except Exception:  # noqa: BLE001
        mcp_version = "?"
    import mcpclient

    res: Dict[str, Any] = {"env": {
        "python": platform.python_version(), "implementation": platform.python_implementation(),
        "platform": platform.platform(), "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "mcpclient": mcpclient.__version__, "mcp": mcp_version, "mode": mode, "sizes": sz,
        "concurrency": list(CONCURRENCY)}}
    started = time.perf_counter()
    parts = [("raw", bench_raw), ("mcpclient", bench_mcpclient), ("official", bench_official),
             ("import", lambda s: bench_import(s["import_runs"]))]
    for name, fn in parts:
        if opts.only and name not in opts.only:
            continue
        t0 = time.perf_counter()
        gc.collect()
        res[name] = fn(sz)
        log(f"[bench] {name} done in {time.perf_counter() - t0:.1f} s")
    res["elapsed_s"] = time.perf_counter() - started

    rows: List[Dict[str, Any]] = []
    if all(k in res for k in ("raw", "mcpclient", "official", "import")):
        rows = report(res)
        print(f"\n(total {res['elapsed_s']:.1f} s)")
    else:
        print(json.dumps({k: v for k, v in res.items() if k != "env"}, indent=2))
    res["targets"] = rows
    if opts.json:
        with open(opts.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2)
    failed = [r for r in rows if r["result"] == "FAIL"]
    return 1 if (opts.check and failed) else 0


if __name__ == "__main__":
    sys.exit(main())
