#!/usr/bin/env python3
"""mcpclient benchmark: latency, throughput and import cost, in one run, against raw_server.py.

    python benchmarks/bench.py                 # full run (~4 min on 2 cores: both eras, stdio + HTTP)
    python benchmarks/bench.py --quick         # smaller, still meaningful (~33 s with --placement free)
    python benchmarks/bench.py --smoke         # a handful of calls per phase: does every row run? (~4 s)
    python benchmarks/bench.py --json out.json --check
    python benchmarks/bench.py --placement split
    python benchmarks/bench.py --transport http  # only the Streamable HTTP section
    python benchmarks/bench.py --era modern      # only the 2026-07-28 sections

Rows: the raw floor (plain Popen + json, one line out, one line in; @8/@32 a perfectly batching
client, a ceiling), the threaded raw floor (no library: N threads, a ``Future`` per call, a write
lock, one reader thread: the shape of mcpclient's engine, measured like mcpclient), mcpclient
(``Client``, sequential and N threads sharing one client), and the official ``mcp`` SDK
(``ClientSession``, sequential and N asyncio tasks sharing one session).

Placement: where the scheduler puts client and server changes a pipe round trip by 3-4x on small
(virtual) machines — the same process pair is either ~15 µs (same core) or ~70 µs (cross-core
wake-up) per round trip, and which one you get is luck that sticks for a whole run. So by default
every measurement runs twice, pinned (Linux ``sched_setaffinity``): ``same`` = client and server on
one core (the per-call CPU cost dominates), ``split`` = client on one core, server on another (the
cross-core wake-up dominates). ``--placement free`` runs unpinned. See benchmarks/README.md.

HTTP (``--transport http|both``): the same three rows over Streamable HTTP against
raw_http_server.py (the raw floor is a ``requests.Session`` POSTing the same JSON), unpinned.

Eras (``--era legacy|modern|both``): the handshake era (``initialize``; mcpclient with
``protocol="legacy"``) against the servers as they are, then the 2026-07-28 era against the same
servers started with ``--modern`` (``server/discover`` only, ``resultType`` on every result):
mcpclient with ``protocol="2026-07-28"``, the official client with ``ClientSession.discover()``
(asserted to have negotiated 2026-07-28), and a raw floor sending the same per-request ``_meta``.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SERVER = os.path.join(HERE, "raw_server.py")
HTTP_SERVER = os.path.join(HERE, "raw_http_server.py")
PY = sys.executable
CONCURRENCY = (8, 32)
ARGS = {"text": "x"}
CAN_PIN = hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity")
MODERN = "2026-07-28"
# What every 2026-07-28 request carries in params._meta (the raw floors send it too).
MODERN_META = {"io.modelcontextprotocol/protocolVersion": MODERN,
               "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}

SIZES = {
    # Calls per round; *_conc is the total over all threads/tasks (split evenly). Every measurement
    # runs `rounds` times; the median round's p50 and calls/s are reported (p99 pools all rounds).
    "full": dict(rounds=5, warmup=500, raw_seq=8000, raw_conc=16000, mc_seq=8000, mc_conc=9600,
                 off_seq=3000, off_conc=4800, import_runs=20, idle_s=6.0,
                 http_rounds=3, http_warmup=300, http_raw_seq=1500, http_raw_conc=2400, http_mc_seq=1500,
                 http_mc_conc=2400, http_off_seq=800, http_off_conc=1280,
                 cold_rounds=15, cold_rss_rounds=3, cold_official=True, scale_calls=12800),
    "quick": dict(rounds=3, warmup=200, raw_seq=1500, raw_conc=3200, mc_seq=1500, mc_conc=2400,
                  off_seq=600, off_conc=1280, import_runs=10, idle_s=3.0,
                  http_rounds=3, http_warmup=100, http_raw_seq=400, http_raw_conc=640, http_mc_seq=400,
                  http_mc_conc=640, http_off_seq=200, http_off_conc=320,
                  cold_rounds=7, cold_rss_rounds=2, cold_official=True, scale_calls=6400),
    # CI smoke (tests/benchmarks/test_bench_smoke.py): a handful of calls per phase, one round. It proves every
    # row and section runs and is reported; its numbers are noise, never read them as results.
    "smoke": dict(rounds=1, warmup=20, raw_seq=40, raw_conc=64, mc_seq=40, mc_conc=64,
                  off_seq=20, off_conc=64, import_runs=3, idle_s=0.3,
                  http_rounds=1, http_warmup=10, http_raw_seq=20, http_raw_conc=64, http_mc_seq=20,
                  http_mc_conc=64, http_off_seq=10, http_off_conc=64,
                  cold_rounds=1, cold_rss_rounds=0, cold_official=False, scale_calls=512),
}

TARGETS = {
    # The engine redesign sets these; each stdio placement is judged on its own.
    "p50_vs_raw": 2.0,               # mcpclient p50 / raw floor p50 (sequential)  <=
    "vs_official_at_1": 4.5,         # mcpclient calls/s / official calls/s, 1 caller  >=
    "vs_raw_threaded_at_8": 0.8,     # mcpclient calls/s / raw threaded calls/s, 8 threads  >=
    "vs_raw_threaded_at_32": 0.8,    # ... 32 threads  >=
    "scale_256_vs_64": 0.9,          # mcpclient calls/s with 256 threads / with 64 (unpinned)  >=
    # Cold paths (cold.py: fresh interpreters), medians
    "cold_stdio_connect": 1.2,       # mcpclient / floor, connect cold (after import)  <=
    "cold_stdio_one_shot": 1.2,      # mcpclient / floor, start + import + connect + 1 call + exit  <=
    "cold_http_one_shot": 1.1,       # mcpclient / raw requests  <=
    "cold_http_connect": 2.0,        # mcpclient+imp / raw requests, connect cold after import (each's HTTP stack)  <=
    "cold_stdio_rss": 1.25,          # mcpclient / floor, RSS after 1,000 calls  <=
    "cold_http_rss_mib": 2.0,        # mcpclient - raw requests, RSS after 1,000 calls (MiB)  <=
    "import_ms": 45.0,               # median(import mcpclient) - median(bare interpreter)  <=
    # Streamable HTTP (the HTTP section)
    "http_p50_vs_raw": 1.15,         # mcpclient p50 / requests.Session p50  <=
    "http_vs_official_at_1": 2.0,    # mcpclient calls/s / official calls/s  >=
    "http_vs_official_at_8": 2.0,
    "http_vs_official_at_32": 2.0,
    # 2026-07-28 era (the modern sections; the other modern ratios are reported only)
    "modern_vs_official_at_1": 3.0,  # stdio, each placement: mcpclient calls/s / official calls/s  >=
    # An idle client with keepalive on (1 s interval: it pings every other second)
    "idle_keepalive_cpu_ms_per_s": 1.0,  # CPU of the whole client process per idle second  <=
}
#: Modules ``import mcpclient`` must not load (the verdict) ...
HEAVY = ("requests", "jsonschema", "urllib3")
#: ... and others the import probe reports if loaded (information only).
NOTABLE = ("httpx", "pydantic", "anyio", "asyncio")

pc = time.perf_counter_ns


# --- statistics ---------------------------------------------------------------------------------


def _revision(client: Any) -> str:
    """The negotiated revision, on this checkout's surface (``client.server``) or an older
    install's (``compare.py`` runs these scripts with both)."""
    server = getattr(client, "server", None)
    return server.protocol_version if server is not None and not callable(server) else client.protocol_version

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


def combine(rounds: List[Dict[str, Any]], lat_ns: List[int]) -> Dict[str, Any]:
    """Median round's p50 and calls/s; p99 over every sample of every round."""
    return {"calls_per_s": statistics.median(r["calls_per_s"] for r in rounds),
            "p50_us": statistics.median(r["p50_us"] for r in rounds),
            "p99_us": percentile(sorted(lat_ns), 99),
            "calls": sum(r["calls"] for r in rounds), "rounds": rounds}


def sequential(call: Callable[[], Any], n: int, rounds: int) -> Dict[str, Any]:
    """``rounds`` x ``n`` timed calls of the blocking ``call()``."""
    per, pooled = [], []
    for _ in range(rounds):
        lat: List[int] = []
        append = lat.append
        start = pc()
        for _ in range(n):
            t0 = pc()
            call()
            append(pc() - t0)
        per.append(summarize(lat, pc() - start))
        pooled += lat
    return combine(per, pooled)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- placement ----------------------------------------------------------------------------------

class Placement:
    """Pin this thread (and so every thread and child it creates) to ``client_cpu`` and tell the
    server to pin itself to ``server_cpu`` (``raw_server.py --cpu``); ``None`` = leave alone."""

    def __init__(self, name: str, client_cpu: Optional[int], server_cpu: Optional[int]) -> None:
        self.name, self.client_cpu, self.server_cpu = name, client_cpu, server_cpu
        self._saved: Optional[set] = None

    def server_argv(self, modern: bool = False) -> List[str]:
        extra = ["--cpu", str(self.server_cpu)] if self.server_cpu is not None else []
        return [PY, SERVER] + extra + (["--modern"] if modern else [])

    def __enter__(self) -> "Placement":
        if self.client_cpu is not None:
            self._saved = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {self.client_cpu})
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._saved is not None:
            os.sched_setaffinity(0, self._saved)

    def describe(self) -> str:
        if self.client_cpu is None:
            return "free: unpinned, wherever the scheduler puts them"
        if self.client_cpu == self.server_cpu:
            return f"same: client and server both pinned to CPU {self.client_cpu}"
        return f"split: client pinned to CPU {self.client_cpu}, server to CPU {self.server_cpu}"


def placements(choice: str) -> List[Placement]:
    cpus = sorted(os.sched_getaffinity(0)) if CAN_PIN else []
    if choice == "free" or not cpus:
        return [Placement("free", None, None)]
    same = Placement("same", cpus[0], cpus[0])
    split = Placement("split", cpus[0], cpus[1]) if len(cpus) > 1 else None
    if choice == "same":
        return [same]
    if choice == "split":
        if split is None:
            raise SystemExit("--placement split needs at least 2 usable CPUs")
        return [split]
    return [p for p in (split, same) if p is not None]  # both: the headline (split) first


# --- a. raw floor -------------------------------------------------------------------------------

def bench_raw(sz: Dict[str, int], where: Placement, modern: bool = False) -> Dict[str, Any]:
    proc = subprocess.Popen(where.server_argv(modern), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    w, flush, readline = proc.stdin.write, proc.stdin.flush, proc.stdout.readline  # type: ignore[union-attr]
    dumps, loads = json.dumps, json.loads
    # 2026-07-28: every request carries the protocol version, capabilities and identity in _meta.
    params: Dict[str, Any] = {"name": "echo", "arguments": ARGS}
    if modern:
        params["_meta"] = MODERN_META
    rid = 0

    def call() -> Any:
        nonlocal rid
        rid += 1
        w(dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}).encode() + b"\n")
        flush()
        return loads(readline())

    try:
        if modern:
            w(dumps({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": MODERN_META}}
                    ).encode() + b"\n")
            flush()
            assert MODERN in loads(readline())["result"]["supportedVersions"]
        else:
            w(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
              b'"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}\n'
              b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            flush()
            assert loads(readline())["result"]["protocolVersion"] == "2025-06-18"
        assert call()["result"]["content"][0]["text"] == "x"
        for _ in range(sz["warmup"]):
            call()

        out: Dict[str, Any] = {"seq": sequential(call, sz["raw_seq"], sz["rounds"])}

        # Ceiling for many callers on one pipe: k requests in flight, written together, then k
        # replies read (a perfectly batching client). Per-call latency = round time.
        for k in CONCURRENCY:
            per, pooled = [], []
            for _ in range(sz["rounds"]):
                lat: List[int] = []
                start = pc()
                for _ in range(max(1, sz["raw_conc"] // k)):
                    t0 = pc()
                    lines = []
                    for _ in range(k):
                        rid += 1
                        lines.append(dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                            "params": params}).encode())
                    w(b"\n".join(lines) + b"\n")
                    flush()
                    for _ in range(k):
                        loads(readline())
                    lat.extend([pc() - t0] * k)
                per.append(summarize(lat, pc() - start))
                pooled += lat
            out[f"c{k}"] = combine(per, pooled)
        return out
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(5)
        proc.stdout.close()  # type: ignore[union-attr]


# --- a2. threaded raw floor ----------------------------------------------------------------------

class RawThreaded:
    """The shape of a threaded client with no library: plain ``Popen`` + ``json``; every caller
    takes an id, registers a ``concurrent.futures.Future`` by id (under a lock), writes its line
    (under a write lock) and flushes, then blocks on ``future.result()``; ONE reader thread reads
    lines, ``json.loads`` them and completes the future by id. What a per-call engine costs at
    least in CPython (ids, a future, two locks, a thread hand-off per reply), and nothing else:
    no timeouts, no result parsing, no error mapping."""

    def __init__(self, argv: List[str], modern: bool, **popen: Any) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **popen)
        self.pending: Dict[int, Future] = {}
        self.lock = threading.Lock()
        self.write_lock = threading.Lock()
        self.ids = itertools.count(1)  # next() on it is atomic under the GIL
        self.modern = modern
        self.reader = threading.Thread(target=self._read, name="raw-threaded-reader", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        readline, loads, pending, lock = self.proc.stdout.readline, json.loads, self.pending, self.lock  # type: ignore[union-attr]
        for line in iter(readline, b""):
            msg = loads(line)
            with lock:
                fut = pending.pop(msg["id"])
            fut.set_result(msg)
        with lock:  # EOF: fail whatever is still waiting
            left, self.pending = list(pending.values()), {}
        for fut in left:
            fut.set_exception(ConnectionError("raw_server.py closed its stdout"))

    def request(self, method: str, params: Dict[str, Any]) -> Any:
        rid = next(self.ids)
        fut: Future = Future()
        with self.lock:
            self.pending[rid] = fut
        data = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n"
        with self.write_lock:
            self.proc.stdin.write(data)  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        msg = fut.result()
        return msg["result"]

    def call(self, name: str, arguments: Any) -> Any:
        # 2026-07-28: the same params._meta the raw floor (and every 2026 client) sends.
        params = {"name": name, "arguments": arguments, "_meta": MODERN_META} if self.modern else \
            {"name": name, "arguments": arguments}
        return self.request("tools/call", params)

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(5)
        self.reader.join(5)
        self.proc.stdout.close()  # type: ignore[union-attr]


#: How the threaded floor starts raw_server.py: in a new session, as mcpclient's StdioTransport
#: and the official client's stdio_client both do (to signal the server's whole process group).
#: It matters: with Linux's scheduler autogroups (on by default) a new session is a new group, and
#: that changes how often the server preempts the client (see benchmarks/PROFILE-threaded-stdio.md).
RAW_THREADED_POPEN: Dict[str, Any] = {"start_new_session": True} if os.name == "posix" else {}
#: The same floor with its server in a process group of its own in the benchmark's session (what
#: ``StdioTransport`` would do with ``process_group=0``): the other launch, so that the comparison
#: is honest whichever one the client uses.
RAW_THREADED_PGROUP_POPEN: Dict[str, Any] = (
    {} if os.name != "posix" else {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp})


def bench_raw_threaded_pgroup(sz: Dict[str, int], where: Placement, modern: bool = False) -> Dict[str, Any]:
    """The threaded floor with its server in a process group rather than a new session."""
    return bench_raw_threaded(sz, where, modern, RAW_THREADED_PGROUP_POPEN)


def bench_raw_threaded(sz: Dict[str, int], where: Placement, modern: bool = False,
                       popen: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The threaded raw floor, measured exactly like mcpclient (``_threads_rounds``: same warm-up,
    rounds, barrier, call counts)."""
    raw = RawThreaded(where.server_argv(modern), modern, **(RAW_THREADED_POPEN if popen is None else popen))
    try:
        if modern:
            assert MODERN in raw.request("server/discover", {"_meta": MODERN_META})["supportedVersions"]
        else:
            assert raw.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                              "clientInfo": {"name": "raw", "version": "0"}}
                               )["protocolVersion"] == "2025-06-18"
            with raw.write_lock:
                raw.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')  # type: ignore[union-attr]
                raw.proc.stdin.flush()  # type: ignore[union-attr]
        assert raw.call("echo", ARGS)["content"][0]["text"] == "x"
        return _threads_rounds(raw.call, sz["warmup"], sz["mc_seq"], sz["mc_conc"], sz["rounds"])
    finally:
        raw.close()


# --- b. mcpclient -------------------------------------------------------------------------------

def bench_mcpclient(sz: Dict[str, int], where: Placement, modern: bool = False) -> Dict[str, Any]:
    return _mcpclient(where.server_argv(modern), sz["warmup"], sz["mc_seq"], sz["mc_conc"], sz["rounds"], modern)


def _mcpclient(target: Any, warmup: int, n_seq: int, n_conc: int, rounds: int, modern: bool) -> Dict[str, Any]:
    """``Client(target)`` in the given era (no probe): sequential calls, then k threads sharing it."""
    from mcpclient import Client

    with Client(target, protocol=MODERN if modern else "legacy") as client:
        if modern:
            assert _revision(client) == MODERN, _revision(client)
        else:
            assert _revision(client) < MODERN, _revision(client)
        assert [t.name for t in client.list_tools()] == ["echo"]
        assert client.call_tool("echo", ARGS).text == "x"
        return _threads_rounds(client.call_tool, warmup, n_seq, n_conc, rounds)


def _threads_rounds(call: Any, warmup: int, n_seq: int, n_conc: int, rounds: int) -> Dict[str, Any]:
    """Warm up, then ``sequential`` and, for each k in CONCURRENCY, ``rounds`` of ``_threaded``."""
    for _ in range(warmup):
        call("echo", ARGS)
    out: Dict[str, Any] = {"seq": sequential(lambda: call("echo", ARGS), n_seq, rounds)}
    for k in CONCURRENCY:
        out[f"c{k}"] = _k_threads(call, k, n_conc, rounds, warm=max(1, warmup // k))
    return out


def _k_threads(call: Any, k: int, n_total: int, rounds: int, warm: int) -> Dict[str, Any]:
    """``rounds`` of ``_threaded`` (k threads, ``n_total`` calls in all; the first round warms
    up with ``warm`` calls per thread), combined."""
    per, pooled = [], []
    for r in range(rounds):
        summary, lat = _threaded(call, k, max(1, n_total // k), warm=warm if r == 0 else 0)
        per.append(summary)
        pooled += lat
    return combine(per, pooled)


def _threaded(call: Any, k: int, n: int, warm: int) -> Tuple[Dict[str, Any], List[int]]:
    """k threads released together by a barrier, each making n calls; wall time from release."""
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
        except BaseException as exc:  # noqa: BLE001 - re-raised on the main thread
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(j,), daemon=True) for j in range(k)]
    for t in threads:
        t.start()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass
    start = pc()
    for t in threads:
        t.join()
    wall = pc() - start
    if errors:
        raise errors[0]
    lat = [x for r in results if r for x in r]
    return summarize(lat, wall), lat


# --- c. official mcp SDK ------------------------------------------------------------------------

def bench_official(sz: Dict[str, int], where: Placement, modern: bool = False) -> Dict[str, Any]:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    argv = where.server_argv(modern)
    return asyncio.run(_official(lambda: stdio_client(StdioServerParameters(command=argv[0], args=argv[1:])),
                                 sz["warmup"], sz["off_seq"], sz["off_conc"], sz["rounds"], modern))


async def _official(connect: Callable[[], Any], warmup: int, n_seq: int, n_conc: int,
                    rounds: int, modern: bool) -> Dict[str, Any]:
    """``ClientSession`` over the transport ``connect()`` opens: sequential, then k tasks."""
    from mcp import ClientSession

    out: Dict[str, Any] = {}
    async with connect() as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            if modern:  # 2026-07-28: server/discover, no handshake; every request then carries _meta
                await session.discover()
                assert session.protocol_version == MODERN and session.initialize_result is None, \
                    session.protocol_version
            else:
                await session.initialize()  # the handshake-era path (no server/discover probe)
                assert session.protocol_version and session.protocol_version < MODERN, session.protocol_version
            tools = await session.list_tools()  # caches output schemas, as call_tool wants
            assert [t.name for t in tools.tools] == ["echo"]
            first = await session.call_tool("echo", ARGS)
            assert first.content[0].text == "x"  # type: ignore[union-attr]
            call = session.call_tool
            for _ in range(warmup):
                await call("echo", ARGS)

            async def worker(count: int) -> List[int]:
                local: List[int] = []
                append = local.append
                for _ in range(count):
                    t0 = pc()
                    await call("echo", ARGS)
                    append(pc() - t0)
                return local

            per, pooled = [], []
            for _ in range(rounds):
                start = pc()
                lat = await worker(n_seq)
                per.append(summarize(lat, pc() - start))
                pooled += lat
            out["seq"] = combine(per, pooled)

            for k in CONCURRENCY:
                n = max(1, n_conc // k)
                await asyncio.gather(*[worker(max(1, warmup // k)) for _ in range(k)])
                per, pooled = [], []
                for _ in range(rounds):
                    start = pc()
                    parts = await asyncio.gather(*[worker(n) for _ in range(k)])
                    wall = pc() - start
                    lat = [x for p in parts for x in p]
                    per.append(summarize(lat, wall))
                    pooled += lat
                out[f"c{k}"] = combine(per, pooled)
    return out


# --- e. Streamable HTTP -------------------------------------------------------------------------

class HTTPServer:
    """raw_http_server.py in a child process (unpinned); ``url`` once it printed READY."""

    def __init__(self, modern: bool = False) -> None:
        self.argv = [PY, HTTP_SERVER] + (["--modern"] if modern else [])

    def __enter__(self) -> "HTTPServer":
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line.startswith("READY "):
            self.__exit__()
            raise RuntimeError(f"raw_http_server.py did not start: {line!r}")
        self.url = line.split()[1]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()  # type: ignore[union-attr]


def bench_http_raw(sz: Dict[str, int], modern: bool = False) -> Dict[str, Any]:
    """The floor: a ``requests.Session`` (pool of 32) POSTing the tools/call JSON and decoding the
    JSON reply; k threads share the Session. Modern: ``server/discover`` instead of the handshake,
    no session id, ``_meta`` in every request and the ``Mcp-Method``/``Mcp-Name`` routing headers."""
    import requests
    from requests.adapters import HTTPAdapter

    with HTTPServer(modern) as server, requests.Session() as http:
        http.mount("http://", HTTPAdapter(pool_connections=1, pool_maxsize=max(CONCURRENCY), max_retries=0))
        url, post, dumps, loads = server.url, http.post, json.dumps, json.loads
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if modern:
            found = post(url, headers={**headers, "MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"},
                         data=dumps({"jsonrpc": "2.0", "id": 0, "method": "server/discover",
                                     "params": {"_meta": MODERN_META}}))
            assert MODERN in found.json()["result"]["supportedVersions"] and "Mcp-Session-Id" not in found.headers
            headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "echo"})
        else:
            init = post(url, headers=headers, data=dumps({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "0"}}}))
            assert init.json()["result"]["protocolVersion"] == "2025-06-18"
            headers.update({"Mcp-Session-Id": init.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-06-18"})
            assert post(url, headers=headers, data=b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
                        ).status_code == 202
        ids = iter(range(1, 1 << 62))  # next() on it is atomic under the GIL
        meta = {"_meta": MODERN_META} if modern else {}

        def call(name: str = "echo", arguments: Any = ARGS) -> Any:
            body = dumps({"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
                          "params": {"name": name, "arguments": arguments, **meta}})
            return loads(post(url, data=body, headers=headers).content)

        assert call()["result"]["content"][0]["text"] == "x"
        return _threads_rounds(call, sz["http_warmup"], sz["http_raw_seq"], sz["http_raw_conc"], sz["http_rounds"])


def bench_http_mcpclient(sz: Dict[str, int], modern: bool = False) -> Dict[str, Any]:
    with HTTPServer(modern) as server:
        return _mcpclient(server.url, sz["http_warmup"], sz["http_mc_seq"], sz["http_mc_conc"], sz["http_rounds"],
                          modern)


def bench_http_official(sz: Dict[str, int], modern: bool = False) -> Dict[str, Any]:
    from mcp.client.streamable_http import streamable_http_client

    with HTTPServer(modern) as server:
        url = server.url
        return asyncio.run(_official(lambda: streamable_http_client(url), sz["http_warmup"],
                                     sz["http_off_seq"], sz["http_off_conc"], sz["http_rounds"], modern))


# --- d. import time -----------------------------------------------------------------------------

_SITE = "import site, sys; sys.path.extend(site.getsitepackages()); "


def bench_import(runs: int) -> Dict[str, Any]:
    # Measured as an installed package would be: an editable install's .pth finder (run at startup
    # by site) preloads re, enum, functools... into the *bare* interpreter too, hiding several ms.
    # So both runs skip the .pth files (-S), import site by hand (under -S that loads it, with os &
    # co, without processing .pth files) and put site-packages on the path (the probe below can see
    # requests & co loaded), and mcpclient is found through PYTHONPATH: the mcpclient this
    # interpreter imports (this checkout when installed editable, else the installed wheel; under
    # -S a venv's sys.prefix is its base interpreter's, so site-packages alone would miss it).
    import importlib.util

    spec = importlib.util.find_spec("mcpclient")
    home = os.path.dirname(os.path.dirname(spec.origin)) if spec and spec.origin else ROOT
    env = dict(os.environ)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    env["PYTHONPATH"] = home + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")

    def run(args: List[str], code: str, **kw: Any) -> "subprocess.CompletedProcess[str]":
        # cwd: not the checkout's root, which ``-c`` would put first on sys.path (before PYTHONPATH)
        return subprocess.run([PY, "-S", *args, "-c", _SITE + code], env=kw.pop("env", env), cwd=HERE, **kw)

    def timed(code: str) -> float:
        t0 = pc()
        run([], code, check=True)
        return (pc() - t0) / 1e6

    # Warm up with bytecode writing allowed: an installed package has its .pyc files, and with
    # PYTHONDONTWRITEBYTECODE set a freshly edited checkout would be recompiled on every import.
    warm_env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    run([], "import mcpclient", check=True, env=warm_env)
    timed("import mcpclient")  # page cache warm
    bare: List[float] = []
    imp: List[float] = []
    for _ in range(runs):  # interleaved so drift hits both equally
        bare.append(timed("pass"))
        imp.append(timed("import mcpclient"))

    probe = ("import sys, json, mcpclient; print(json.dumps(sorted(m for m in "
             f"{HEAVY + NOTABLE!r} if m in sys.modules)))")
    heavy = json.loads(run([], probe, check=True, capture_output=True, text=True).stdout)

    # The slowest modules (self time, µs) from -X importtime, for the JSON report.
    err = run(["-X", "importtime"], "import mcpclient", capture_output=True, text=True).stderr
    rows = []
    for line in err.splitlines():
        if line.startswith("import time:") and "|" in line and "self [us]" not in line:
            self_us, cum_us, name = (p.strip() for p in line[len("import time:"):].split("|"))
            rows.append((int(self_us), int(cum_us), name))
    top = [{"module": n, "self_us": s, "cumulative_us": c} for s, c, n in sorted(rows, reverse=True)[:12]]
    return {"bare_ms": statistics.median(bare), "import_ms": statistics.median(imp),
            "overhead_ms": statistics.median(imp) - statistics.median(bare), "runs": runs,
            "bare_all_ms": bare, "import_all_ms": imp,
            "heavy_modules_loaded": heavy, "slowest_modules": top}


IDLE_PROBE = """
import sys, time
from mcpclient import Client
keepalive = float(sys.argv[2]) or None
with Client([sys.executable, sys.argv[3]], protocol="legacy", keepalive=keepalive) as client:
    client.ping()
    t0, c0 = time.monotonic(), time.process_time()
    time.sleep(float(sys.argv[1]))
    idle_s, cpu_s = time.monotonic() - t0, time.process_time() - c0
    pings = client._channel.conn._watch.pings if keepalive else 0
print(cpu_s * 1000 / idle_s, pings)
"""


def bench_idle(seconds: float) -> Dict[str, Any]:
    """CPU an idle connected client burns per second, without and with a 1 s keepalive."""
    out: Dict[str, Any] = {"seconds": seconds}
    for label, keepalive in (("no_keepalive", 0.0), ("keepalive_1s", 1.0)):
        got = subprocess.run([PY, "-c", IDLE_PROBE, str(seconds), str(keepalive), SERVER], check=True,
                             capture_output=True, text=True, cwd=HERE).stdout.split()  # (as above)
        out[label] = {"cpu_ms_per_s": float(got[0]), "pings": int(got[1])}
    return out


def report_idle(idle: Dict[str, Any]) -> List[Dict[str, Any]]:
    base, kept = idle["no_keepalive"], idle["keepalive_1s"]
    print(f"== idle client for {idle['seconds']:g} s: CPU {base['cpu_ms_per_s']:.3f} ms/s without keepalive, "
          f"{kept['cpu_ms_per_s']:.3f} ms/s with keepalive=1 ({kept['pings']} pings)")
    ok = kept["cpu_ms_per_s"] <= TARGETS["idle_keepalive_cpu_ms_per_s"]
    print(f"  {'idle CPU with keepalive (ms/s)':{NAME_W}}{kept['cpu_ms_per_s']:>7.3f}    "
          f"{'<= ' + format(TARGETS['idle_keepalive_cpu_ms_per_s'], 'g'):>6}  {'PASS' if ok else 'FAIL'}")
    return [{"placement": None, "name": "idle CPU with keepalive (ms/s)", "value": kept["cpu_ms_per_s"], "op": "<=",
             "target": TARGETS["idle_keepalive_cpu_ms_per_s"], "result": "PASS" if ok else "FAIL"}]


# --- report -------------------------------------------------------------------------------------

def _fmt(v: Optional[float], width: int, digits: int = 0) -> str:
    return "-".rjust(width) if v is None else f"{v:,.{digits}f}".rjust(width)


def _table(res: Dict[str, Any], raw_label: str) -> None:
    head = f"{'':14}{'p50 µs':>10}{'p99 µs':>10}{'calls/s @1':>13}{'calls/s @8':>13}{'calls/s @32':>13}"
    print(head)
    print("-" * len(head))
    rows = [("raw", raw_label), ("raw_threaded", "raw threaded"), ("raw_threaded_pgroup", "raw thr. pgrp"),
            ("mcpclient", "mcpclient"), ("official", "official mcp")]
    for key, label in rows:
        if key not in res:  # HTTP has no separate threaded floor: its raw row is threaded already
            continue
        r = res[key]
        print(f"{label:14}{_fmt(r['seq']['p50_us'], 10, 1)}{_fmt(r['seq']['p99_us'], 10, 1)}"
              f"{_fmt(r['seq']['calls_per_s'], 13)}{_fmt(r['c8']['calls_per_s'], 13)}"
              f"{_fmt(r['c32']['calls_per_s'], 13)}")
    print(f"{'per-call latency under load':28}{'p50 @8':>10}{'p99 @8':>10}{'p50 @32':>10}{'p99 @32':>10}   (µs)")
    for key, label in (("raw_threaded", "  raw threaded (threads)"), ("mcpclient", "  mcpclient (threads)"),
                       ("official", "  official mcp (tasks)")):
        if key not in res:
            continue
        r = res[key]
        print(f"{label:28}{_fmt(r['c8']['p50_us'], 10, 1)}{_fmt(r['c8']['p99_us'], 10, 1)}"
              f"{_fmt(r['c32']['p50_us'], 10, 1)}{_fmt(r['c32']['p99_us'], 10, 1)}")


NAME_W = 46  # width of a check's name in the verdict lines


def _verdicts(placement: str, checks: List[Tuple[str, float, Optional[str], Optional[float]]]) -> List[Dict[str, Any]]:
    rows = []
    for name, value, op, target in checks:
        if op is None:
            verdict, tgt = "(info)", ""
        else:
            ok = value <= target if op == "<=" else value >= target  # type: ignore[operator]
            verdict, tgt = ("PASS" if ok else "FAIL"), f"{op} {target:g}"
        unit = " " if name.endswith("(MiB)") else "x"  # a difference, not a ratio
        print(f"  {name:{NAME_W}}{value:>8.2f}{unit}  {tgt:>6}  {verdict}")
        rows.append({"placement": placement, "name": name, "value": value, "op": op, "target": target,
                     "result": verdict})
    print()
    return rows


def _ratio(a: Dict[str, Any], b: Dict[str, Any], col: str) -> float:
    return a[col]["calls_per_s"] / b[col]["calls_per_s"]


def report_placement(where: Placement, res: Dict[str, Any], modern: bool = False) -> List[Dict[str, Any]]:
    mc, off, raw, thr = res["mcpclient"], res["official"], res["raw"], res["raw_threaded"]
    if modern:
        print(f"== {MODERN}: stdio (raw_server.py --modern), placement {where.describe()}")
        _table(res, "raw floor*")
        return _verdicts(f"{MODERN}/{where.name}", [
            ("mcpclient p50 / raw p50", mc["seq"]["p50_us"] / raw["seq"]["p50_us"], None, None),
            ("mcpclient / official calls/s @1 (2026, stdio)", _ratio(mc, off, "seq"),
             ">=", TARGETS["modern_vs_official_at_1"]),
            ("mcpclient / official calls/s @8", _ratio(mc, off, "c8"), None, None),
            ("mcpclient / official calls/s @32", _ratio(mc, off, "c32"), None, None),
            # The engine redesign's ratios, reported for this era too (judged in the handshake era).
            ("mcpclient / raw threaded calls/s @1", _ratio(mc, thr, "seq"), None, None),
            ("mcpclient / raw threaded calls/s @8", _ratio(mc, thr, "c8"), None, None),
            ("mcpclient / raw threaded calls/s @32", _ratio(mc, thr, "c32"), None, None),
            # What no client can beat at @1 in this placement (read a FAIL above against it).
            ("raw floor / official calls/s @1 (bound)", _ratio(raw, off, "seq"), None, None),
        ])
    print(f"== placement {where.describe()}  (handshake era)")
    _table(res, "raw floor*")
    checks = [
        ("mcpclient p50 / raw p50", mc["seq"]["p50_us"] / raw["seq"]["p50_us"], "<=", TARGETS["p50_vs_raw"]),
        ("mcpclient / official calls/s @1", _ratio(mc, off, "seq"), ">=", TARGETS["vs_official_at_1"]),
        ("mcpclient / official calls/s @8", _ratio(mc, off, "c8"), None, None),
        ("mcpclient / official calls/s @32", _ratio(mc, off, "c32"), None, None),
        ("mcpclient / raw threaded calls/s @1", _ratio(mc, thr, "seq"), None, None),
        ("mcpclient / raw threaded calls/s @8", _ratio(mc, thr, "c8"), ">=", TARGETS["vs_raw_threaded_at_8"]),
        ("mcpclient / raw threaded calls/s @32", _ratio(mc, thr, "c32"), ">=", TARGETS["vs_raw_threaded_at_32"]),
        ("raw floor / official calls/s @1 (bound)", _ratio(raw, off, "seq"), None, None),
    ]
    if "raw_threaded_pgroup" in res:  # the floor's other launch (process group, same session)
        pgrp = res["raw_threaded_pgroup"]
        checks += [("mcpclient / raw thr. (pgroup) calls/s @8", _ratio(mc, pgrp, "c8"), None, None),
                   ("mcpclient / raw thr. (pgroup) calls/s @32", _ratio(mc, pgrp, "c32"), None, None)]
    return _verdicts(where.name, checks)


# --- scaling and cold paths ---------------------------------------------------------------------

SCALE_THREADS = (64, 256)


def bench_scaling(sz: Dict[str, Any]) -> Dict[str, Any]:
    """mcpclient with 64 and 256 threads on one client (unpinned): calls/s must not collapse."""
    from mcpclient import Client

    out: Dict[str, Any] = {}
    with Client([PY, SERVER], protocol="legacy") as client:
        for _ in range(sz["warmup"]):
            client.call_tool("echo", ARGS)
        for k in SCALE_THREADS:
            out[f"c{k}"] = _k_threads(client.call_tool, k, sz["scale_calls"], sz["rounds"], warm=1)
    return out


def report_scaling(res: Dict[str, Any]) -> List[Dict[str, Any]]:
    print("== many threads on one client (stdio, unpinned)")
    for k in SCALE_THREADS:
        r = res[f"c{k}"]
        print(f"  mcpclient @{k}: {r['calls_per_s']:,.0f} calls/s, p50 {r['p50_us']:,.0f} µs, p99 {r['p99_us']:,.0f} µs")
    ratio = res["c256"]["calls_per_s"] / res["c64"]["calls_per_s"]
    return _verdicts("free", [("mcpclient calls/s @256 / @64", ratio, ">=", TARGETS["scale_256_vs_64"])])


def bench_cold(sz: Dict[str, Any], transport: str) -> Dict[str, Any]:
    """cold.py's rows: each client in fresh interpreters (one-shot, connect cold, RSS)."""
    import cold  # benchmarks/cold.py (this script's folder is first on sys.path)

    return cold.run(sz["cold_rounds"], sz["cold_rss_rounds"], transport, official=sz["cold_official"])


def report_cold(res: Dict[str, Any]) -> List[Dict[str, Any]]:
    import cold  # (as in bench_cold)

    cold.print_report(res)
    print()
    checks: List[Tuple[str, float, Optional[str], Optional[float]]] = []

    def med(transport: str, client: str, phase: str) -> float:
        return float(res[transport][client][phase]["median"])

    if "stdio" in res:
        checks += [
            ("stdio connect cold: mcpclient / floor", med("stdio", "mcpclient", "connect") / med("stdio", "floor", "connect"),
             "<=", TARGETS["cold_stdio_connect"]),
            ("stdio one-shot: mcpclient / floor", med("stdio", "mcpclient", "one_shot") / med("stdio", "floor", "one_shot"),
             "<=", TARGETS["cold_stdio_one_shot"])]
        if "rss" in res["stdio"]["mcpclient"]:
            checks.append(("stdio RSS @1000 calls: mcpclient / floor",
                           med("stdio", "mcpclient", "rss") / med("stdio", "floor", "rss"), "<=", TARGETS["cold_stdio_rss"]))
    if "http" in res:
        checks += [
            ("http one-shot: mcpclient / raw requests",
             med("http", "mcpclient", "one_shot") / med("http", "requests", "one_shot"), "<=", TARGETS["cold_http_one_shot"]),
            ("http connect cold: mcpclient / raw requests",
             med("http", "mcpclient", "connect") / med("http", "requests", "connect"), None, None)]
        if "mcpclient+imp" in res["http"]:  # like for like: each timed after importing its HTTP stack
            checks.append(("http connect cold: mcpclient+imp / requests",
                           med("http", "mcpclient+imp", "connect") / med("http", "requests", "connect"), "<=",
                           TARGETS["cold_http_connect"]))
        if "rss" in res["http"]["mcpclient"]:
            checks.append(("http RSS @1000 calls: mcpclient - requests (MiB)",
                           (med("http", "mcpclient", "rss") - med("http", "requests", "rss")) / 1048576, "<=",
                           TARGETS["cold_http_rss_mib"]))
    return _verdicts("cold", checks)


def report_http(res: Dict[str, Any], modern: bool = False) -> List[Dict[str, Any]]:
    mc, off, raw = res["mcpclient"], res["official"], res["raw"]
    if modern:
        print(f"== {MODERN}: http (Streamable HTTP, raw_http_server.py --modern, JSON responses, no session), "
              "placement free: client and server unpinned")
        _table(res, "raw requests")
        return _verdicts(f"{MODERN}/http", [
            ("mcpclient p50 / raw p50", mc["seq"]["p50_us"] / raw["seq"]["p50_us"], None, None),
            ("mcpclient / official calls/s @1", mc["seq"]["calls_per_s"] / off["seq"]["calls_per_s"], None, None),
            ("mcpclient / official calls/s @8", mc["c8"]["calls_per_s"] / off["c8"]["calls_per_s"], None, None),
            ("mcpclient / official calls/s @32", mc["c32"]["calls_per_s"] / off["c32"]["calls_per_s"], None, None),
            ("mcpclient / raw calls/s @32", mc["c32"]["calls_per_s"] / raw["c32"]["calls_per_s"], None, None),
        ])
    print("== http (Streamable HTTP, raw_http_server.py, JSON responses), placement free: client and server "
          "unpinned  (handshake era)")
    _table(res, "raw requests")
    checks = [
        ("mcpclient p50 / raw p50", mc["seq"]["p50_us"] / raw["seq"]["p50_us"], "<=", TARGETS["http_p50_vs_raw"]),
        ("mcpclient / official calls/s @1", mc["seq"]["calls_per_s"] / off["seq"]["calls_per_s"], ">=",
         TARGETS["http_vs_official_at_1"]),
        ("mcpclient / official calls/s @8", mc["c8"]["calls_per_s"] / off["c8"]["calls_per_s"], ">=",
         TARGETS["http_vs_official_at_8"]),
        ("mcpclient / official calls/s @32", mc["c32"]["calls_per_s"] / off["c32"]["calls_per_s"], ">=",
         TARGETS["http_vs_official_at_32"]),
        ("mcpclient / raw calls/s @32", mc["c32"]["calls_per_s"] / raw["c32"]["calls_per_s"], None, None),
    ]
    return _verdicts("http", checks)


def report_import(imp: Dict[str, Any]) -> List[Dict[str, Any]]:
    print(f"== import: bare interpreter {imp['bare_ms']:.1f} ms, `import mcpclient` {imp['import_ms']:.1f} ms "
          f"(medians of {imp['runs']} fresh interpreters)")
    rows = []
    ok = imp["overhead_ms"] <= TARGETS["import_ms"]
    print(f"  {'import overhead':{NAME_W}}{imp['overhead_ms']:>7.1f}ms  "
          f"{'<= ' + format(TARGETS['import_ms'], 'g'):>6}  "
          f"{'PASS' if ok else 'FAIL'}")
    rows.append({"placement": None, "name": "import overhead (ms)", "value": imp["overhead_ms"], "op": "<=",
                 "target": TARGETS["import_ms"], "result": "PASS" if ok else "FAIL"})
    heavy = [m for m in imp["heavy_modules_loaded"] if m in HEAVY]
    print(f"  {'requests/jsonschema/urllib3 after import':{NAME_W}}{(', '.join(heavy) or 'none'):>8}   {'none':>6}  "
          f"{'FAIL' if heavy else 'PASS'}")
    rows.append({"placement": None, "name": "requests/jsonschema/urllib3 not imported", "value": heavy, "op": "==",
                 "target": [], "result": "FAIL" if heavy else "PASS"})
    others = [m for m in imp["heavy_modules_loaded"] if m not in heavy]
    if others:
        print(f"  (also loaded by `import mcpclient`: {', '.join(others)})")
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="smaller sizes, still meaningful numbers (~33 s with --placement free)")
    size.add_argument("--smoke", action="store_true",
                      help="a handful of calls per phase: checks that every row runs (CI, ~5 s); numbers are noise")
    ap.add_argument("--json", metavar="FILE", help="also write every number to FILE as JSON")
    ap.add_argument("--check", action="store_true", help="exit 1 if any target fails")
    ap.add_argument("--placement", choices=("both", "split", "same", "free"), default="both",
                    help="CPU placement of client and server for stdio (default: both split and same)")
    ap.add_argument("--transport", choices=("both", "stdio", "http"), default="both",
                    help="which transports to measure (default: both; HTTP runs unpinned)")
    ap.add_argument("--era", choices=("both", "legacy", "modern"), default="both",
                    help="protocol era: the handshake era (initialize), 2026-07-28 (server/discover, "
                         "servers run with --modern), or both (default)")
    ap.add_argument("--only", choices=("raw", "raw_threaded", "raw_threaded_pgroup", "mcpclient", "official",
                                       "import", "idle", "scaling", "cold"),
                    action="append",
                    help=argparse.SUPPRESS)  # debugging aid: run just some parts
    opts = ap.parse_args(argv)
    mode = "smoke" if opts.smoke else "quick" if opts.quick else "full"
    sz = SIZES[mode]
    wheres = placements(opts.placement) if opts.transport in ("both", "stdio") else []

    try:
        from importlib.metadata import version
        mcp_version = version("mcp")
    except Exception:  # noqa: BLE001
        mcp_version = "?"
    import mcpclient

    usable = len(os.sched_getaffinity(0)) if CAN_PIN else os.cpu_count()
    res: Dict[str, Any] = {"env": {
        "python": platform.python_version(), "implementation": platform.python_implementation(),
        "platform": platform.platform(), "cpu_count": os.cpu_count(), "cpus_usable": usable,
        "mcpclient": mcpclient.__version__, "mcp": mcp_version, "mode": mode, "sizes": sz,
        "concurrency": list(CONCURRENCY), "placements": [w.name for w in wheres],
        "transports": ["stdio", "http"] if opts.transport == "both" else [opts.transport],
        "eras": ["legacy", "modern"] if opts.era == "both" else [opts.era]},
        "placements": {}}
    print(f"Python {res['env']['python']} ({res['env']['implementation']}) on {res['env']['platform']}")
    print(f"CPUs: {os.cpu_count()} (usable {usable}); mcpclient {mcpclient.__version__}, mcp {mcp_version}; "
          f"mode: {mode}, {sz['rounds']} rounds per measurement (median round shown)")
    if wheres:
        print("* raw floor @8/@32 = k requests written at once, then k replies read (a perfectly batching "
              "client: a ceiling, not a target)")
        print("  raw threaded = no library: N threads, a Future per call, write lock, one reader thread "
              "(the threaded floor; @1 = the same code, one caller; its server starts in a new session, "
              "as both clients' do)")
    print(flush=True)

    started = time.perf_counter()
    rows: List[Dict[str, Any]] = []
    parts: List[Tuple[str, Callable[..., Dict[str, Any]]]] = [
        ("raw", bench_raw), ("raw_threaded", bench_raw_threaded), ("raw_threaded_pgroup", bench_raw_threaded_pgroup),
        ("mcpclient", bench_mcpclient), ("official", bench_official)]
    http_parts: List[Tuple[str, Callable[..., Dict[str, Any]]]] = [
        ("raw", bench_http_raw), ("mcpclient", bench_http_mcpclient), ("official", bench_http_official)]
    for modern in ((False, True) if opts.era == "both" else (opts.era == "modern",)):
        # The handshake era fills res["placements"] / res["http"]; 2026-07-28 res["modern"][...].
        into = res.setdefault("modern", {"placements": {}}) if modern else res
        tag = f"{MODERN}/" if modern else ""
        for where in wheres:
            out: Dict[str, Any] = {}
            with where:
                for name, fn in parts:
                    if opts.only and name not in opts.only:
                        continue
                    t0 = time.perf_counter()
                    gc.collect()
                    out[name] = fn(sz, where, modern)
                    log(f"[bench] {tag}{where.name}/{name} done in {time.perf_counter() - t0:.1f} s")
            into["placements"][where.name] = out
            if all(name in out for name in ("raw", "raw_threaded", "mcpclient", "official")):
                rows += report_placement(where, out, modern)
        if opts.transport in ("both", "http"):
            out = {}
            for name, hfn in http_parts:
                if opts.only and name not in opts.only:
                    continue
                t0 = time.perf_counter()
                gc.collect()
                out[name] = hfn(sz, modern)
                log(f"[bench] {tag}http/{name} done in {time.perf_counter() - t0:.1f} s")
            into["http"] = out
            if len(out) == len(http_parts):
                rows += report_http(out, modern)
    if opts.transport in ("both", "stdio") and (not opts.only or "scaling" in opts.only):
        t0 = time.perf_counter()
        res["scaling"] = bench_scaling(sz)
        log(f"[bench] scaling done in {time.perf_counter() - t0:.1f} s")
        rows += report_scaling(res["scaling"])
    if not opts.only or "cold" in opts.only:
        t0 = time.perf_counter()
        res["cold"] = bench_cold(sz, opts.transport)
        log(f"[bench] cold done in {time.perf_counter() - t0:.1f} s")
        rows += report_cold(res["cold"])
    if not opts.only or "import" in opts.only:
        t0 = time.perf_counter()
        res["import"] = bench_import(sz["import_runs"])
        log(f"[bench] import done in {time.perf_counter() - t0:.1f} s")
        rows += report_import(res["import"])
    if not opts.only or "idle" in opts.only:
        t0 = time.perf_counter()
        res["idle"] = bench_idle(sz["idle_s"])
        log(f"[bench] idle done in {time.perf_counter() - t0:.1f} s")
        rows += report_idle(res["idle"])
    res["elapsed_s"] = time.perf_counter() - started
    res["targets"] = rows
    failed = [r for r in rows if r["result"] == "FAIL"]
    print(f"\n{len(rows) - len(failed) - sum(r['result'] == '(info)' for r in rows)} passed, {len(failed)} failed"
          f"{': ' + '; '.join((r['placement'] + ': ' if r['placement'] else '') + r['name'] for r in failed) if failed else ''}"
          f"  (total {res['elapsed_s']:.1f} s)")
    if opts.json:
        with open(opts.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2)
    return 1 if (opts.check and failed) else 0


if __name__ == "__main__":
    sys.exit(main())
