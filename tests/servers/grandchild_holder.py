"""A stdio MCP server that leaves a descendant holding its stdout and stderr.

At start it spawns a grandchild in a session of its own (``setsid``: not in the server's process
group, so signalling that group does not reach it) that inherits fd 1 and fd 2 and just sleeps.
When this server exits, the client's end of the stdout pipe sees no EOF while the grandchild
lives. Tools: ``pids`` (``{"server": pid, "grandchild": pid}``, so the test can kill the
grandchild at the end), ``hang`` (never answered) and ``die`` (the server exits at once, code 3,
without answering). Exits on stdin EOF and on SIGTERM (the default action) too. Standard library
only, handshake era.
"""
import json
import os
import subprocess
import sys

GRANDCHILD = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(120)"],
    stdin=subprocess.DEVNULL, start_new_session=True)  # stdout and stderr: ours, inherited

TOOLS = [{"name": name, "inputSchema": {"type": "object"}} for name in ("pids", "hang", "die")]


def answer(method, params):
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "grandchild-holder", "version": "1"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name = params.get("name")
        if name == "pids":
            data = {"server": os.getpid(), "grandchild": GRANDCHILD.pid}
            return {"content": [{"type": "text", "text": json.dumps(data)}], "structuredContent": data}
        if name == "die":
            sys.stderr.write("dying on request\n")
            sys.stderr.flush()
            os._exit(3)
        if name == "hang":
            return None
    return {"error": True}


for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    result = answer(msg["method"], msg.get("params") or {})
    if result is None:
        continue
    reply = {"jsonrpc": "2.0", "id": msg["id"]}
    if result == {"error": True}:
        reply["error"] = {"code": -32601, "message": "Method not found"}
    else:
        reply["result"] = result
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
