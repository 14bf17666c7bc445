"""A handshake-era stdio MCP server with no tools: it declares only ``prompts`` (an empty list),
as a prompts- or resources-only server in a desktop host's config does. Stdlib only; exits at stdin EOF."""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    method, params = msg["method"], msg.get("params") or {}
    reply = {"jsonrpc": "2.0", "id": msg["id"]}
    if method == "initialize":
        reply["result"] = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                           "capabilities": {"prompts": {}}, "serverInfo": {"name": "no-tools", "version": "1"}}
    elif method == "ping":
        reply["result"] = {}
    elif method == "prompts/list":
        reply["result"] = {"prompts": []}
    else:
        reply["error"] = {"code": -32601, "message": "Method not found"}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
