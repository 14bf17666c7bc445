"""The smallest handshake-era stdio MCP server: ``initialize``, ``ping``, ``tools/list`` and an
``add`` tool, nothing imported but ``json`` and ``sys``. It starts in a few milliseconds, for
tests that start thousands of connections (tests/client/test_soak.py). Exits at stdin EOF.
``--no-ping``: answers ``ping`` with -32601, as some real servers do (they implement no ping)."""
import json
import sys

TOOLS = [{"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                                                                        "b": {"type": "number"}}}}]


def answer(msg):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "minimal", "version": "1"}}
    if method == "ping":
        return None if "--no-ping" in sys.argv else {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        args = params.get("arguments") or {}
        total = args.get("a", 0) + args.get("b", 0)
        return {"content": [{"type": "text", "text": str(total)}], "structuredContent": {"sum": total}}
    return None


for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    result = answer(msg)
    reply = {"jsonrpc": "2.0", "id": msg["id"]}
    if result is None:
        reply["error"] = {"code": -32601, "message": "Method not found"}
    else:
        reply["result"] = result
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
