#!/usr/bin/env python3
"""A minimal, fast MCP server over stdio (newline-delimited JSON-RPC), standard library only.

Used by ``bench.py`` as the "other end" of every measurement so that the numbers reflect the
client, not the server. It speaks just enough MCP for a handshake-era client:

* ``initialize``  -> echoes a known protocolVersion (else offers the newest), tools capability
* ``ping``        -> ``{}``
* ``tools/list``  -> one tool, ``echo`` (``{"text": string}``)
* ``tools/call``  -> ``{"content": [{"type": "text", "text": <arguments.text>}], "isError": false}``
* notifications  -> ignored;  any other request (``server/discover`` too) -> JSON-RPC error -32601

``--modern`` makes it a 2026-07-28-only server instead (no handshake; the per-request ``_meta``
the client sends is not checked):

* ``server/discover`` -> ``supportedVersions: ["2026-07-28"]``, tools capability, serverInfo in
  ``_meta``, ``ttlMs: 0``, ``cacheScope: "private"``
* every result carries ``"resultType": "complete"`` (``tools/list`` also ``ttlMs: 0``, ``cacheScope: "private"``)
* ``initialize``  -> -32601 (a modern-only server)

Requests may arrive pipelined (many before the client reads anything): the loop reads whatever
bytes are available from fd 0, answers every complete line in order, and writes all of those
answers with one ``os.write``. It exits on stdin EOF.

``--cpu N`` pins the server to CPU N (Linux), so a benchmark can place it deterministically.
"""
import json
import os
import sys

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

_TOOLS = {"tools": [{
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}]}


MODERN_VERSION = "2026-07-28"
_TOOLS_MODERN = dict(_TOOLS, resultType="complete", ttlMs=0, cacheScope="private")
_DISCOVER = {"resultType": "complete", "supportedVersions": [MODERN_VERSION], "capabilities": {"tools": {}},
             "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "raw", "version": "1"}},
             "ttlMs": 0, "cacheScope": "private"}


def _answer(msg, modern=False, dumps=json.dumps):
    """The encoded response line for one decoded message, or None for a notification.
    ``modern``: answer as a 2026-07-28-only server (see the module docstring)."""
    if type(msg) is not dict or "id" not in msg:
        return None
    rid = msg["id"]
    method = msg.get("method")
    params = msg.get("params") or {}
    if method == "tools/call":
        args = params.get("arguments") or {}
        text = args.get("text", "") if type(args) is dict else ""
        result = ({"content": [{"type": "text", "text": text}], "isError": False, "resultType": "complete"}
                  if modern else {"content": [{"type": "text", "text": text}], "isError": False})
    elif method == "ping":
        result = {"resultType": "complete"} if modern else {}
    elif method == "tools/list":
        result = _TOOLS_MODERN if modern else _TOOLS
    elif method == "server/discover" and modern:
        result = _DISCOVER
    elif method == "initialize" and not modern:
        wanted = params.get("protocolVersion")
        result = {"protocolVersion": wanted if wanted in VERSIONS else VERSIONS[0],
                  "capabilities": {"tools": {}},
                  "serverInfo": {"name": "raw", "version": "1"}}
    else:
        return dumps({"jsonrpc": "2.0", "id": rid,
                      "error": {"code": -32601, "message": f"method not found: {method}"}},
                     separators=(",", ":")).encode() + b"\n"
    return dumps({"jsonrpc": "2.0", "id": rid, "result": result}, separators=(",", ":")).encode() + b"\n"


def main():
    if "--cpu" in sys.argv[1:] and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(sys.argv[sys.argv.index("--cpu") + 1])})
    modern = "--modern" in sys.argv[1:]
    read, write, loads = os.read, os.write, json.loads
    rest = b""
    while True:
        try:
            chunk = read(0, 1 << 16)
        except InterruptedError:
            continue
        if not chunk:
            return
        data = rest + chunk if rest else chunk
        lines = data.split(b"\n")
        rest = lines.pop()  # the incomplete tail (b"" when the chunk ended on a newline)
        out = []
        for line in lines:
            if not line.strip():
                continue
            try:
                msg = loads(line)
            except ValueError:
                out.append(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}\n')
                continue
            reply = _answer(msg, modern)
            if reply is not None:
                out.append(reply)
        if out:
            buf = memoryview(b"".join(out))
            while buf:
                try:
                    n = write(1, buf)
                except BrokenPipeError:
                    return
                buf = buf[n:]


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
    sys.exit(0)
