#!/usr/bin/env python3
"""Where does a threaded stdio call's time go? A harness for one row of ``bench.py`` at a time.

    python benchmarks/profile_stdio.py --row mcpclient --threads 8 --placement same
    python benchmarks/profile_stdio.py --row raw_threaded --threads 32 --placement split --switch 0.0005
    python benchmarks/profile_stdio.py --row mcpclient --threads 8 --profile yappi   # CPU per function

Runs ``--calls`` calls on ``--threads`` threads (``bench._threaded``: barrier, one client shared),
``--repeat`` times, and prints per repeat: calls/s, then, per call, the client process's CPU time
(user+sys, all threads), its voluntary and involuntary context switches, and the server's CPU time
(its ``/proc`` stat). In *split* throughput is bounded by the client's CPU per call, in *same* by
client + server CPU per call, so "client CPU µs/call" is the number to shrink.

``--row`` also takes ablation variants (the threaded floor plus one piece of mcpclient, or
mcpclient minus its Client layer): see ``VARIANTS`` and benchmarks/PROFILE-threaded-stdio.md.
``--profile yappi`` (``pip install yappi``) adds a CPU-clock profile of every thread (top
functions by own time, per call; yappi itself inflates the time ~5x: read shares, not µs).
For a sampling view with little overhead: ``py-spy record --nonblocking --gil --threads -f raw
-o out.txt -- python benchmarks/profile_stdio.py ...``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import threading
import time
from _thread import allocate_lock as _allocate_lock
from concurrent.futures import Future

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


class _LockWait(bench.RawThreaded):
    """The threaded floor waiting like mcpclient's blocking path: a pre-acquired lock per call
    (released by the reader) instead of a ``Future`` (``Condition`` + a waiter lock)."""

    def _read(self) -> None:
        readline, loads, pending, lock = self.proc.stdout.readline, json.loads, self.pending, self.lock
        for line in iter(readline, b""):
            msg = loads(line)
            with lock:
                slot = pending.pop(msg["id"])
            slot[1] = msg
            slot[0].release()

    def request(self, method, params):
        rid = next(self.ids)
        done = _allocate_lock()
        done.acquire()
        slot = [done, None]
        with self.lock:
            self.pending[rid] = slot
        data = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n"
        with self.write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        done.acquire()
        return slot[1]["result"]


def _calibrate_spin() -> float:
    """µs per iteration of an empty ``for _ in range(n)`` loop."""
    n = 200000
    t0 = time.perf_counter()
    for _ in range(n):
        pass
    return (time.perf_counter() - t0) / n * 1e6


def _variant(row: str, where: bench.Placement, modern: bool):
    """(call, server pid, close) for a row or an ablation variant."""
    if row.startswith("raw"):
        cls = _LockWait if row == "raw+lockwait" else bench.RawThreaded
        # raw_threaded starts the server as bench.py does (a new session, like both clients);
        # raw+samesession in this process's session, raw+pgroup in a new process group only
        popen = {"raw+samesession": {}, "raw+pgroup": {"process_group": 0}}.get(row, bench.RAW_THREADED_POPEN)
        raw = cls(where.server_argv(modern), modern, **popen)
        if modern:
            raw.request("server/discover", {"_meta": bench.MODERN_META})
        else:
            raw.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": "raw", "version": "0"}})
        if row == "raw+parse":  # + mcpclient's result parsing (ToolResult.from_wire) on the caller
            from mcpclient.types import ToolResult

            def call(name, arguments, _call=raw.call, _parse=ToolResult.from_wire):  # type: ignore[misc]  # noqa: F811
                return _parse(_call(name, arguments), name)
        elif row.startswith("raw+spin"):  # + N µs of pure-Python work per call on the caller (after the reply)
            spin_us = float(row[len("raw+spin"):])
            per_iter = _calibrate_spin()
            loops = max(1, int(spin_us / per_iter))

            def call(name, arguments, _call=raw.call, _loops=range(loops)):  # type: ignore[misc]
                result = _call(name, arguments)
                for _ in _loops:
                    pass
                return result
        elif row == "raw+coalesce":
            # "group commit": a caller that finds another one writing queues its line and leaves; the
            # writer loops, writing everything queued meanwhile with one os.write
            fd, qlock, queue, state = raw.proc.stdin.fileno(), threading.Lock(), [], [False]

            def call(name, arguments, _raw=raw, _write=os.write):  # type: ignore[misc]
                rid = next(_raw.ids)
                fut = Future()
                with _raw.lock:
                    _raw.pending[rid] = fut
                data = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                   "params": {"name": name, "arguments": arguments}}).encode() + b"\n"
                with qlock:
                    queue.append(data)
                    lead = not state[0]
                    state[0] = True
                while lead:
                    with qlock:
                        if not queue:
                            state[0] = False
                            break
                        buf = b"".join(queue)
                        queue.clear()
                    _write(fd, buf)
                return fut.result()["result"]
        elif row.startswith("raw+oswrite"):  # write like mcpclient's StdioTransport: os.write on the fd, no BufferedWriter
            fd = raw.proc.stdin.fileno()
            if "nonblock" in row:
                os.set_blocking(fd, False)

            def call(name, arguments, _raw=raw, _write=os.write, _fd=fd):  # type: ignore[misc]
                rid = next(_raw.ids)
                fut = Future()
                with _raw.lock:
                    _raw.pending[rid] = fut
                data = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                   "params": {"name": name, "arguments": arguments}}).encode() + b"\n"
                with _raw.write_lock:
                    _write(_fd, data)
                return fut.result()["result"]
        elif row == "raw+timed":  # + timed waits (mcpclient's default timeout=60 makes every wait timed)
            def call(name, arguments, _raw=raw):  # type: ignore[misc]
                rid = next(_raw.ids)
                fut = Future()
                with _raw.lock:
                    _raw.pending[rid] = fut
                data = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                   "params": {"name": name, "arguments": arguments}}).encode() + b"\n"
                if not _raw.write_lock.acquire(timeout=60):
                    raise TimeoutError
                try:
                    _raw.proc.stdin.write(data)
                    _raw.proc.stdin.flush()
                finally:
                    _raw.write_lock.release()
                return fut.result(60)["result"]
        else:
            call = raw.call
        return call, raw.proc.pid, raw.close
    from mcpclient import Client
    from mcpclient._engine.deadline import Deadline

    import subprocess

    client = Client(where.server_argv(modern), protocol=bench.MODERN if modern else "legacy")
    real_popen = subprocess.Popen
    if row.endswith(("-samesession", "-pgroup")):
        # StdioTransport starts the server with start_new_session=True (a new session, so a new
        # scheduler autogroup); start it in this session instead, or in a new process group only.
        pgroup = row.endswith("-pgroup")

        def popen(*args, **kwargs):
            kwargs.pop("start_new_session", None)
            if pgroup:
                kwargs["process_group"] = 0
            return real_popen(*args, **kwargs)
        subprocess.Popen = popen  # type: ignore[misc]
    try:
        client.__enter__()
    finally:
        subprocess.Popen = real_popen  # type: ignore[misc]
    client.list_tools()
    session = getattr(client, "_session", None) or client.session  # (older installs: public)
    call = client.call_tool
    if row.startswith("mc-session") and not row.startswith("mc-session-no") and "+" not in row:  # the engine alone: no Client layer, no ToolResult, timeout=60 as Client passes
        def call(name, arguments, _call=session.call):  # type: ignore[misc]
            return _call("tools/call", {"name": name, "arguments": arguments}, deadline=Deadline(60.0)).result()
    elif row == "mc-session-notimeout":
        def call(name, arguments, _call=session.call):  # type: ignore[misc]
            return _call("tools/call", {"name": name, "arguments": arguments}).result()
    elif row in ("mc-session+bufwrite", "mcpclient+bufwrite", "mc-minreq", "mc-minreq-floorsend",
            "mcpclient-samesession", "mcpclient-pgroup", "mc-session-samesession"):
        # mcpclient with the floor's write: BufferedWriter.write + flush under a lock, blocking fd
        stdin = session.transport._proc.stdin
        os.set_blocking(stdin.fileno(), True)
        wlock = threading.Lock()
        from mcpclient.transports.base import encode_frame

        def send(message, **_):
            data = encode_frame(message) + b"\n"
            with wlock:
                stdin.write(data)
                stdin.flush()
        session.transport.send = send
        if row == "mc-session+bufwrite":
            def call(name, arguments, _call=session.call):  # type: ignore[misc]
                return _call("tools/call", {"name": name, "arguments": arguments}, deadline=Deadline(60.0)).result()
    elif row.startswith("mc-minreq"):
        # mcpclient's reader, transport and CallFuture, but a minimal request path (no Session.call
        # bookkeeping, untimed wait); "-floorsend": and the floor's write
        from mcpclient._engine.futures import CallFuture

        transport = session.transport
        send = transport.send
        if row.endswith("-floorsend"):
            fd, wlock = transport._stdin_fd, threading.Lock()

            def send(message, _dumps=json.dumps, **_):  # type: ignore[misc]
                data = _dumps(message).encode() + b"\n"
                with wlock:
                    os.write(fd, data)

        def call(name, arguments, _s=session):  # type: ignore[misc]
            rid = next(_s._ids)
            c = CallFuture(_s, "tools/call", None)
            c.request_id = rid
            with _s._lock:
                _s._pending[rid] = c
            send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                  "params": {"name": name, "arguments": arguments}})
            return c.result()
    elif row == "mc-notimeout":
        def call(name, arguments, _call=client.call_tool):  # type: ignore[misc]
            return _call(name, arguments, timeout=None)
    return call, session.transport.pid, lambda: client.__exit__(None, None, None)


VARIANTS = ("raw_threaded", "raw+parse", "raw+timed", "raw+lockwait", "raw+oswrite", "raw+oswrite-nonblock", "raw+samesession", "raw+pgroup", "raw+coalesce", "mcpclient", "mc-notimeout",
            "mc-session", "mc-session-notimeout", "mc-session+bufwrite", "mcpclient+bufwrite", "mc-minreq", "mc-minreq-floorsend",
            "mcpclient-samesession", "mcpclient-pgroup", "mc-session-samesession")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--row", default="mcpclient", help=f"one of {', '.join(VARIANTS)}, or raw+spinN "
                    "(the threaded floor plus N µs of Python work per call)")
    ap.add_argument("--threads", type=int, default=8, help="0 = sequential on the main thread")
    ap.add_argument("--calls", type=int, default=8000, help="calls per repeat (total over all threads)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--placement", choices=("same", "split", "free"), default="same")
    ap.add_argument("--era", choices=("legacy", "modern"), default="legacy")
    ap.add_argument("--switch", type=float, help="sys.setswitchinterval (default 0.005)")
    ap.add_argument("--profile", choices=("none", "yappi"), default="none")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--perf", action="store_true",
                    help="count syscalls (futex/read/write) and context switches per call with `perf stat`, "
                         "for the client (c:) and the server (s:)")
    opts = ap.parse_args()
    if opts.switch:
        sys.setswitchinterval(opts.switch)
    cpus = sorted(os.sched_getaffinity(0))
    where = {"same": bench.Placement("same", cpus[0], cpus[0]),
             "split": bench.Placement("split", cpus[0], cpus[-1]),
             "free": bench.Placement("free", None, None)}[opts.placement]
    modern = opts.era == "modern"
    with where:
        call, pid, close = _variant(opts.row, where, modern)
        try:
            for _ in range(500):
                call("echo", bench.ARGS)
            if opts.threads:
                bench._threaded(call, opts.threads, 200 // opts.threads + 1, warm=2)
            if opts.profile == "yappi":
                import yappi

                yappi.set_clock_type("cpu")
                yappi.start(builtins=True, profile_threads=True)
            perf = _perf_start(pid) if opts.perf else None
            before = thread_stats()
            total_calls = 0
            for _ in range(opts.repeat):
                r0, s0, t0 = resource.getrusage(resource.RUSAGE_SELF), proc_cpu_s(pid), time.perf_counter()
                if opts.threads:
                    n = opts.calls // opts.threads
                    bench._threaded(call, opts.threads, n, warm=0)
                    calls = n * opts.threads
                else:
                    for _ in range(opts.calls):
                        call("echo", bench.ARGS)
                    calls = opts.calls
                total_calls += calls
                wall = time.perf_counter() - t0
                r1, s1 = resource.getrusage(resource.RUSAGE_SELF), proc_cpu_s(pid)
                cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) / calls * 1e6
                print(f"{opts.row:20} @{opts.threads:<2} {opts.placement:5} {opts.era:6} "
                      f"switch={sys.getswitchinterval():g}: {calls / wall:8,.0f} calls/s | per call: "
                      f"client CPU {cpu:5.1f} µs (user {(r1.ru_utime - r0.ru_utime) / calls * 1e6:4.1f}), "
                      f"server CPU {(s1 - s0) / calls * 1e6:5.1f} µs, "
                      f"vol cs {(r1.ru_nvcsw - r0.ru_nvcsw) / calls:4.2f}, "
                      f"invol cs {(r1.ru_nivcsw - r0.ru_nivcsw) / calls:4.2f}", flush=True)
            if perf is not None:
                _perf_report(perf, total_calls)
            after = thread_stats()
            print("  per call, per long-lived thread (cpu µs, vol cs, invol cs):", "; ".join(
                f"{name.split('/')[0]} {(after[name][0] - before[name][0]) / total_calls * 1e6:.1f} "
                f"{(after[name][1] - before[name][1]) / total_calls:.2f} {(after[name][2] - before[name][2]) / total_calls:.2f}"
                for name in sorted(after) if name in before and after[name] != before[name]), flush=True)
            if opts.profile == "yappi":
                yappi.stop()
                _yappi_report(yappi, opts.calls * opts.repeat, opts.top)
        finally:
            close()


def thread_stats():
    """{thread name: (cpu s, voluntary cs, involuntary cs)} for this process's live threads."""
    out = {}
    names = {t.native_id: t.name for t in threading.enumerate()}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/self/task/{tid}/status") as fh:
                status = dict(line.split(":", 1) for line in fh.read().splitlines() if ":" in line)
            name = names.get(int(tid), "?")
        except OSError:
            continue
        out[f"{name}/{tid}"] = ((int(fields[11]) + int(fields[12])) / TICK,
                                int(status["voluntary_ctxt_switches"]), int(status["nonvoluntary_ctxt_switches"]))
    return out


PERF_EVENTS = "syscalls:sys_enter_futex,syscalls:sys_enter_read,syscalls:sys_enter_write,context-switches"


def _perf_start(server_pid: int):
    import subprocess

    procs = [subprocess.Popen(["perf", "stat", "-x", ",", "-e", PERF_EVENTS, "-p", str(p)],
                              stderr=subprocess.PIPE, text=True) for p in (os.getpid(), server_pid)]
    time.sleep(0.5)  # let perf attach
    return procs


def _perf_report(procs, calls: int) -> None:
    import signal

    out = []
    for tag, proc in zip("cs", procs):
        proc.send_signal(signal.SIGINT)
        err = proc.communicate()[1]
        for line in err.splitlines():
            parts = line.split(",")
            if len(parts) > 2 and parts[0].strip().isdigit():
                out.append(f"{tag}:{parts[2].replace('syscalls:sys_enter_', '')} {int(parts[0]) / calls:.2f}")
    print("  per call (perf; includes perf's attach/detach idle time):", ", ".join(out), flush=True)


def _yappi_report(yappi, calls, top):
    stats = yappi.get_func_stats()
    stats.sort("tsub")
    total = sum(s.tsub for s in stats)
    print(f"\nyappi (CPU clock, all threads): {total / calls * 1e6:.1f} µs/call of profiled CPU; top by own time")
    print(f"{'own µs/call':>11} {'share':>6} {'ncall/call':>10}  function")
    for s in list(stats)[:top]:
        print(f"{s.tsub / calls * 1e6:11.2f} {s.tsub / total:6.1%} {s.ncall / calls:10.2f}  "
              f"{s.name} ({os.path.basename(s.module)}:{s.lineno})")
    print("\nper thread (CPU):")
    by_name = {}
    for t in yappi.get_thread_stats():
        key = t.name if not t.name.startswith("Thread") else "worker threads"
        by_name[key] = by_name.get(key, 0.0) + t.ttot
    for name, ttot in sorted(by_name.items(), key=lambda kv: -kv[1]):
        print(f"  {name:40} {ttot / calls * 1e6:7.2f} µs/call")


if __name__ == "__main__":
    main()
