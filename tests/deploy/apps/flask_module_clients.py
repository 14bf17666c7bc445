"""Flask behind gunicorn with module-level MCP clients (the pattern without ``mcpclient.contrib``),
shared by every request a worker serves; ``tests/deploy/test_gunicorn.py`` runs it.

    gunicorn --pythonpath tests/deploy/apps -w 2 -k gthread --threads 4 --preload flask_module_clients:app
    MCP_HTTP_URL=http://127.0.0.1:8000/mcp gunicorn ...      # also call a Streamable HTTP server
    curl 'http://127.0.0.1:8000/add?a=2&b=3'                  # {"sum": 5, ...}

One client per process is the pattern: a client is thread-safe (gthread workers share it), it
starts its stdio server once, and each request costs one round trip. A client belongs to the
process that made it. With ``--preload`` the module is imported by gunicorn's arbiter, before
it forks the workers: the clients below are made there and *inherited* by every worker.
``reconnect=Reconnect()`` is the opt-in that makes that safe: in a worker, the first call opens
the worker's own connection (its own server process, its own HTTP session); the arbiter's is
never touched, and a worker's exit (``--max-requests`` recycling) never stops it. Without
``reconnect=``, an inherited client raises ``ForkedClientError`` on first use in a worker
(``MCP_RECONNECT=0`` shows it: the view answers 500 naming the error), never a wrong answer.
Without ``--preload`` each worker imports the module itself and the clients are simply its own.
"""
import os

from flask import Flask, jsonify, request

from mcpclient import Client, MCPError, Reconnect
from mcpclient.testing import server_command

RECONNECT = Reconnect() if os.environ.get("MCP_RECONNECT", "1") != "0" else None
HTTP_URL = os.environ.get("MCP_HTTP_URL")  # optional: a Streamable HTTP MCP server with an "add" tool

# Module level: made once per process (per worker, or once in the arbiter with --preload).
tools = Client(server_command(), timeout=10, reconnect=RECONNECT).connect()
remote = Client(HTTP_URL, timeout=10, reconnect=RECONNECT).connect() if HTTP_URL else None

app = Flask(__name__)


@app.get("/add")
def add():
    a, b = int(request.args["a"]), int(request.args["b"])
    answer = {"sum": tools.call_tool("add", {"a": a, "b": b}).structured_content["sum"],
              "pid": os.getpid(), "server_pid": tools.transport.pid}
    if remote is not None:
        answer["remote_sum"] = remote.call_tool("add", {"a": a, "b": b}).structured_content["sum"]
    return jsonify(answer)


@app.errorhandler(MCPError)
def mcp_failed(exc):
    # Every mcpclient error is an MCPError; say which one (a real app would log it instead).
    return f"{type(exc).__name__}: {exc}\n", 500, {"Content-Type": "text/plain"}
