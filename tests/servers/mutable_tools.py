"""A handshake-era stdio MCP server whose one tool, ``lookup``, is defined by the environment:
``TOOL_DESCRIPTION`` (its description), ``TOOL_SCHEMA`` (its inputSchema, JSON) and
``TOOL_OUTPUT_FILE`` (its output schema and structured result, below). Restarted with
other values it offers a changed tool under the same name (tests/group/test_server_group.py, pinned tools).
Stdlib only; exits at stdin EOF."""
import json
import os
import sys

SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
TOOL = {"name": "lookup", "description": os.environ.get("TOOL_DESCRIPTION", "Look a key up."),
        "inputSchema": json.loads(os.environ["TOOL_SCHEMA"]) if os.environ.get("TOOL_SCHEMA") else SCHEMA}
# TOOL_OUTPUT_FILE: a JSON file read at start, {"outputSchema": ..., "structured": ...}: the tool's
# output schema and the structuredContent its calls return (a restarted server may change both).
OUTPUT = None
if os.environ.get("TOOL_OUTPUT_FILE"):
    with open(os.environ["TOOL_OUTPUT_FILE"]) as f:
        OUTPUT = json.load(f)
    TOOL["outputSchema"] = OUTPUT["outputSchema"]


def answer(method, params):
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "mutable", "version": "1"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call":
        key = (params.get("arguments") or {}).get("key", "")
        result = {"content": [{"type": "text", "text": f"value of {key}"}]}
        if OUTPUT is not None:
            result["structuredContent"] = OUTPUT["structured"]
        return result
    return None


for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    result = answer(msg["method"], msg.get("params") or {})
    reply = {"jsonrpc": "2.0", "id": msg["id"]}
    if result is None:
        reply["error"] = {"code": -32601, "message": "Method not found"}
    else:
        reply["result"] = result
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
