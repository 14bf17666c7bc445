#!/usr/bin/env python3
"""Cold paths, where users wait before anything is warm: each client in a fresh interpreter.

For every client, each round runs one fresh ``python`` that imports the client, connects
(spawning ``raw_server.py`` over stdio, or a new session with ``raw_http_server.py``), makes one
``tools/call``, then (RSS rounds) 999 more, and exits. Measured:

* **one-shot**: the whole process, from ``Popen`` to its exit (interpreter start, import,
  connect, one call, close, exit), timed from outside;
* **connect cold**: inside the process, from after the imports to the end of the handshake
  (what a first ``connect()`` costs: what it loads lazily, the spawn or the TCP connect, the
  handshake); over HTTP ``mcpclient+imp`` is mcpclient with ``requests`` imported first, as raw
  ``requests`` is timed after ``import requests`` (``mcpclient`` alone loads requests inside its
  first ``connect()``);
* **first call**: the first ``tools/call`` after that;
* **RSS**: the client process's resident set after 1,000 calls (``/proc/self/status``).

Clients over stdio: the floor (no library: ``subprocess`` + ``json``), the official ``mcp`` SDK,
mcpclient. Over HTTP: the floor (``http.client``), raw ``requests`` (what mcpclient's HTTP
transport is built on), the official SDK, mcpclient. Rounds are interleaved (client A, B, C, A,
B, C, ...) so that drift of the machine hits every client alike; medians with the spread
(min-max) across rounds are reported.

    python benchmarks/cold.py [--rounds 15] [--json out.json]     # ~1 min
    python benchmarks/bench.py                                    # runs this as its "cold" section
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
STDIO_SERVER = [PY, os.path.join(HERE, "raw_server.py")]
HTTP_SERVER = [PY, os.path.join(HERE, "raw_http_server.py")]

# Each script: PHASES is filled in around the client's own code; ``server`` / ``url`` and ``n``
# (the calls to make: 1, or 1000 for the RSS rounds) come from argv.
_HEAD = "import time\nt0 = time.perf_counter()\n"
_TAIL = """
import json as _json
def _rss():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
print(_json.dumps({"import": t1 - t0, "connect": t2 - t1, "first_call": t3 - t2, "rss": _rss() if n > 1 else None}))
"""

# The official client's session, the same over both transports (only how it opens differs).
_OFFICIAL_SESSION = '''async def main():
    global t2, t3
    async with {opener} as {streams}:
        async with ClientSession(r, w) as session:
            await session.initialize()
            t2 = time.perf_counter()
            await session.call_tool("echo", {{"text": "x"}})
            t3 = time.perf_counter()
            for _ in range(n - 1):
                await session.call_tool("echo", {{"text": "x"}})
asyncio.run(main())
'''

STDIO: Dict[str, str] = {
    "floor": """
import json, subprocess, sys
t1 = time.perf_counter()
server, n = json.loads(sys.argv[1]), int(sys.argv[2])
p = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
def rpc(msg):
    p.stdin.write(json.dumps(msg).encode() + b"\\n"); p.stdin.flush()
    return json.loads(p.stdout.readline()) if "id" in msg else None
rpc({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
     "capabilities": {}, "clientInfo": {"name": "floor", "version": "0"}}})
rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})
t2 = time.perf_counter()
assert rpc({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}})["result"]
t3 = time.perf_counter()
for i in range(n - 1):
    rpc({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}})
""",
    "official": """
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
t1 = time.perf_counter()
server, n = json.loads(sys.argv[1]), int(sys.argv[2])
""" + _OFFICIAL_SESSION.format(
        opener="stdio_client(StdioServerParameters(command=server[0], args=server[1:]))", streams="(r, w)"),
    "mcpclient": """
import json, sys
from mcpclient import Client
t1 = time.perf_counter()
server, n = json.loads(sys.argv[1]), int(sys.argv[2])
with Client(server, protocol="legacy") as client:
    t2 = time.perf_counter()
    client.call_tool("echo", {"text": "x"})
    t3 = time.perf_counter()
    for _ in range(n - 1):
        client.call_tool("echo", {"text": "x"})
""",
}

HTTP: Dict[str, str] = {
    "floor": """
import http.client, json, sys, urllib.parse
t1 = time.perf_counter()
url, n = sys.argv[1], int(sys.argv[2])
u = urllib.parse.urlsplit(url)
conn = http.client.HTTPConnection(u.hostname, u.port)
headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
def post(msg):
    conn.request("POST", u.path, json.dumps(msg), headers)
    r = conn.getresponse(); body = r.read()
    return r, (json.loads(body) if body else None)
r, init = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
                "capabilities": {}, "clientInfo": {"name": "floor", "version": "0"}}})
headers.update({"Mcp-Session-Id": r.getheader("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-06-18"})
post({"jsonrpc": "2.0", "method": "notifications/initialized"})
t2 = time.perf_counter()
assert post({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}})[1]
t3 = time.perf_counter()
for i in range(n - 1):
    post({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}})
conn.request("DELETE", u.path, headers=headers); conn.getresponse().read()
""",
    "requests": """
import json, sys
import requests
t1 = time.perf_counter()
url, n = sys.argv[1], int(sys.argv[2])
http = requests.Session()
headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
init = http.post(url, headers=headers, data=json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
       "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
headers.update({"Mcp-Session-Id": init.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-06-18"})
http.post(url, headers=headers, data=b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
t2 = time.perf_counter()
def call(i):
    return http.post(url, headers=headers, data=json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"text": "x"}}})).json()
assert call(1)["result"]
t3 = time.perf_counter()
for i in range(n - 1):
    call(i + 2)
http.delete(url, headers=headers); http.close()
""",
    "official": """
import asyncio, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
t1 = time.perf_counter()
url, n = sys.argv[1], int(sys.argv[2])
""" + _OFFICIAL_SESSION.format(opener="streamable_http_client(url)", streams="(r, w, *_)"),
    "mcpclient": STDIO["mcpclient"].replace("server, n = json.loads(sys.argv[1]), int(sys.argv[2])",
                                            "server, n = sys.argv[1], int(sys.argv[2])"),
}
# Like for like with raw requests, whose connect cold is timed after ``import requests``: the same
# mcpclient script with ``requests`` imported before the clock starts. (``import mcpclient`` and
# ``Client(url)`` leave requests unloaded, so the row above pays for it inside connect.)
HTTP["mcpclient+imp"] = HTTP["mcpclient"].replace(
    "from mcpclient import Client\n", "from mcpclient import Client\nimport requests\n")
assert HTTP["mcpclient+imp"] != HTTP["mcpclient"]


def _have_official() -> bool:
    try:
        from importlib.metadata import version

        return int(version("mcp").split(".")[0]) >= 2
    except Exception:
        return False


def run_one(script: str, target: str, n: int) -> Dict[str, Any]:
    """One fresh interpreter running ``script`` against ``target``: its inner phases and the
    whole process's wall time (``one_shot``)."""
    started = time.perf_counter()
    out = subprocess.run([PY, "-c", _HEAD + script + _TAIL, target, str(n)], capture_output=True, text=True,
                         timeout=120, cwd=HERE)
    one_shot = time.perf_counter() - started
    if out.returncode != 0:
        raise RuntimeError(f"a cold run failed ({out.returncode}):\n{out.stderr[-2000:]}")
    result: Dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["one_shot"] = one_shot
    return result


def measure(scripts: Dict[str, str], target: str, rounds: int, rss_rounds: int) -> Dict[str, Dict[str, Any]]:
    """Interleaved rounds of every client: per client, each phase's median, min and max (seconds;
    RSS in bytes)."""
    samples: Dict[str, List[Dict[str, Any]]] = {name: [] for name in scripts}
    rss: Dict[str, List[int]] = {name: [] for name in scripts}
    for _ in range(rounds):
        for name, script in scripts.items():
            samples[name].append(run_one(script, target, 1))
    for _ in range(rss_rounds):
        for name, script in scripts.items():
            rss[name].append(run_one(script, target, 1000)["rss"])
    report: Dict[str, Dict[str, Any]] = {}
    for name in scripts:
        row: Dict[str, Any] = {}
        for phase in ("one_shot", "import", "connect", "first_call"):
            values = sorted(s[phase] for s in samples[name])
            row[phase] = {"median": statistics.median(values), "min": values[0], "max": values[-1]}
        if rss[name]:
            values = sorted(rss[name])
            row["rss"] = {"median": statistics.median(values), "min": values[0], "max": values[-1]}
        report[name] = row
    return report


def run(rounds: int, rss_rounds: int, transports: str = "both", official: bool = True,
        clients: Optional[List[str]] = None) -> Dict[str, Any]:
    """Both transports' cold rows (official only where ``mcp`` 2.x is installed and ``official``;
    only ``clients`` if given)."""
    official = official and _have_official()

    def chosen(name: str) -> bool:
        return (official or name != "official") and (clients is None or name in clients)

    result: Dict[str, Any] = {}
    if transports in ("both", "stdio"):
        scripts = {k: v for k, v in STDIO.items() if chosen(k)}
        result["stdio"] = measure(scripts, json.dumps(STDIO_SERVER), rounds, rss_rounds)
    if transports in ("both", "http"):
        scripts = {k: v for k, v in HTTP.items() if chosen(k)}
        proc = subprocess.Popen(HTTP_SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line.startswith("READY "):
                raise RuntimeError(f"raw_http_server.py did not start: {line!r}")
            result["http"] = measure(scripts, line.split()[1], rounds, rss_rounds)
        finally:
            proc.stdin.close()  # type: ignore[union-attr]
            proc.wait(10)
            proc.stdout.close()  # type: ignore[union-attr]
    return result


def _ms(cell: Optional[Dict[str, Any]]) -> str:
    if not cell:
        return "-"
    return f"{cell['median'] * 1000:.1f} ({cell['min'] * 1000:.1f}-{cell['max'] * 1000:.1f})"


def _mib(cell: Optional[Dict[str, Any]]) -> str:
    if not cell:
        return "-"
    return f"{cell['median'] / 1048576:.1f} ({cell['min'] / 1048576:.1f}-{cell['max'] / 1048576:.1f})"


def print_report(result: Dict[str, Any]) -> None:
    """A table per transport: ms as median (min-max); RSS in MiB."""
    for transport, rows in result.items():
        print(f"\n== cold paths, {transport} (ms: median (min-max) of the rounds; RSS after 1,000 calls, MiB)")
        print(f"{'client':<13} {'one-shot':>22} {'import':>20} {'connect cold':>20} {'first call':>18} {'RSS':>18}")
        for name, row in rows.items():
            print(f"{name:<13} {_ms(row['one_shot']):>22} {_ms(row['import']):>20} {_ms(row['connect']):>20} "
                  f"{_ms(row['first_call']):>18} {_mib(row.get('rss')):>18}")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15, help="fresh interpreters per client (default 15)")
    ap.add_argument("--rss-rounds", type=int, default=3, help="1,000-call runs per client for RSS (default 3)")
    ap.add_argument("--transport", choices=("both", "stdio", "http"), default="both")
    ap.add_argument("--client", action="append", choices=sorted(set(STDIO) | set(HTTP)),
                    help="only this client (repeatable; default: all)")
    ap.add_argument("--json", metavar="FILE", help="also write the numbers to FILE")
    args = ap.parse_args(argv)
    result = run(args.rounds, args.rss_rounds, args.transport, clients=args.client)
    print_report(result)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
