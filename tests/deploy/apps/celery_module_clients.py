"""Celery with module-level MCP clients (the pattern without ``mcpclient.contrib``): tasks run by a
prefork worker; ``tests/deploy/test_celery.py`` runs it.

    export CELERY_BROKER_URL=redis://127.0.0.1:6379/0
    celery --workdir tests/deploy/apps -A celery_module_clients worker --pool=prefork --concurrency=2

A prefork worker imports this module in its main process, then forks the pool processes that run
the tasks. Two ways to give each pool process a client:

- ``client``: made in each pool process by the ``worker_process_init`` signal (after the fork),
  closed by ``worker_process_shutdown``. Nothing crosses the fork; the recommended pattern.
- ``shared``: one module-level client, made (and connected) in the main process before the fork
  and inherited by every pool process. ``reconnect=Reconnect()`` makes that safe: in a pool
  process the first call opens that process's own connection, and the main process's server is
  never touched. (Without ``reconnect=`` the first call raises ``ForkedClientError``.)
"""
import os

from celery import Celery
from celery.signals import worker_process_init, worker_process_shutdown

from mcpclient import Client, Reconnect
from mcpclient.testing import server_command

BROKER = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
app = Celery("celery_module_clients", broker=BROKER, backend=os.environ.get("CELERY_RESULT_BACKEND", BROKER))

client = None  # this pool process's own client (see open_client)
shared = Client(server_command(), timeout=10, reconnect=Reconnect()).connect()  # made before the fork


@worker_process_init.connect
def open_client(**_):
    global client
    client = Client(server_command(), timeout=10).connect()


@worker_process_shutdown.connect
def close_client(**_):
    if client is not None:
        client.close()


def _add(mcp, a, b):
    total = mcp.call_tool("add", {"a": a, "b": b}).structured_content["sum"]
    return {"sum": total, "pid": os.getpid(), "server_pid": mcp.transport.pid}


@app.task
def add(a, b):
    """``add`` through this pool process's own client."""
    return _add(client, a, b)


@app.task
def add_shared(a, b):
    """``add`` through the inherited module-level client."""
    return _add(shared, a, b)
