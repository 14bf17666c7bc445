"""What the multiprocessing tests run in pool processes (a module, so spawned processes import it).

``open_client`` is the pool's initializer: each process makes its own client and closes it when
the process exits normally (``multiprocessing.util.Finalize``: pool workers end with
``os._exit``, which skips ``atexit``). ``inherited`` is set by the parent before it forks a pool.
"""
from __future__ import annotations

import os
from multiprocessing.util import Finalize
from typing import Any, Dict, Optional

from mcpclient import Client
from mcpclient.testing import server_command

client: Optional[Client] = None  # this process's own (open_client)
inherited: Optional[Client] = None  # made by the parent, before the fork


def open_client() -> None:
    global client
    client = Client(server_command(), timeout=10).connect()
    Finalize(client, client.close, exitpriority=10)


def _add(mcp: Optional[Client], a: int, b: int) -> Dict[str, Any]:
    assert mcp is not None, "no client in this process"
    total = mcp.call_tool("add", {"a": a, "b": b}).structured_content["sum"]
    return {"sum": total, "pid": os.getpid(), "server_pid": mcp.transport.pid}


def add_own(a: int, b: int) -> Dict[str, Any]:
    return _add(client, a, b)


def add_inherited(a: int, b: int) -> Dict[str, Any]:
    return _add(inherited, a, b)


def call_unknown_tool(name: str) -> None:
    """Call a tool the server does not have: the server's error is raised in the pool process."""
    assert client is not None, "no client in this process"
    client.call_tool(name)
