"""Flask: the app's MCP servers from its config, one group per worker process (``mcpclient.contrib.flask``).

    gunicorn --pythonpath examples -w 2 -k gthread --threads 4 --preload flask_app:app
    curl 'http://127.0.0.1:8000/add?a=2&b=3'          # {"sum": 5, ...}
    curl 'http://127.0.0.1:8000/mcp/health'           # {"ok": true, "servers": {...}}
    flask --app examples/flask_app.py mcp tools       # the servers' tools from a shell

``MCP(app)`` reads ``MCP_SERVERS`` (the ``mcpServers`` format of mcp.json files) and gives each
process its own group, made on first use: with ``--preload`` the app is imported in gunicorn's
arbiter, which never calls a tool, so only the workers start servers, one each. The group is
shared by the worker's threads and closed when the worker exits.
"""
import os
import sys

from typing import Dict, Tuple

from flask import Flask, Response, jsonify, request

from mcpclient import MCPError, StdioTransport, ToolResult
from mcpclient.contrib.flask import MCP, health_blueprint

app = Flask(__name__)
app.config["MCP_SERVERS"] = {  # here the server bundled with mcpclient; yours: npx/uvx commands or URLs
    "tools": {"command": sys.executable, "args": ["-m", "mcpclient.testing"]},
}
app.config["MCP_OPTIONS"] = {"client_options": {"timeout": 20}}
mcp = MCP(app)
app.register_blueprint(health_blueprint, url_prefix="/mcp")


def total(result: ToolResult) -> object:
    """The ``sum`` of an ``add`` result (its structured content is JSON: look before indexing)."""
    structured = result.structured_content
    return structured.get("sum") if isinstance(structured, dict) else None


@app.get("/add")
def add() -> Response:
    a, b = int(request.args["a"]), int(request.args["b"])
    result = mcp.call_tool("tools_add", {"a": a, "b": b})  # the group's name: <server>_<tool>
    transport = mcp["tools"].transport
    server_pid = transport.pid if isinstance(transport, StdioTransport) else None
    return jsonify(sum=total(result), pid=os.getpid(), server_pid=server_pid)


@app.errorhandler(MCPError)
def mcp_failed(exc: MCPError) -> Tuple[str, int, Dict[str, str]]:
    # Every mcpclient error is an MCPError; say which one (a real app would log it instead).
    return f"{type(exc).__name__}: {exc}\n", 500, {"Content-Type": "text/plain"}
