"""Celery: ``init_app(app, servers)`` gives every worker process its own group of MCP servers.

    app = Celery("tasks", broker="redis://127.0.0.1:6379/0")
    servers = {"files": {"command": "npx", "args": ["server-filesystem", "/srv"]}}
    mcp = init_app(app, servers, client_options={"timeout": 30})

    @app.task
    def summarize(path):
        return mcp.call_tool("files_read_text_file", {"path": path}).text

    # a Django project's worker: the group of settings.MCP_SERVERS
    from mcpclient.contrib.django import mcp
    init_app(app, mcp)

Prefork pool: each pool process connects its group when it starts (``worker_process_init``: its
first task does not wait for the servers) and closes it when it stops (``worker_process_shutdown``);
the worker's main process never makes one. Threads and solo pools: the tasks run in the main
process, whose group is made by the first task and closed at ``worker_shutdown``. Tasks reach the
group through the object ``init_app`` returns (a ``PerProcessGroup``).
"""
from __future__ import annotations

import logging
from typing import Any, Union

from ..errors import MCPError, MissingExtraError

try:
    from celery import Celery
    from celery.signals import worker_process_init, worker_process_shutdown, worker_shutdown
except ImportError as exc:
    raise MissingExtraError("mcpclient.contrib.celery needs Celery: pip install 'mcpclient[celery]'",
                            extra="celery", name="celery") from exc

from .process import PerProcessGroup, settings_problems

__all__ = ["init_app"]

log = logging.getLogger("mcpclient.contrib.celery")


def init_app(app: Celery, servers: Union[PerProcessGroup, Any], **options: Any) -> PerProcessGroup:
    """Give each worker process of ``app`` its own group: ``servers`` is a ``PerProcessGroup``
    (Django's ``mcp``), or what ``MCP_SERVERS`` takes (an ``mcpServers`` mapping or a path), with
    ``ServerGroup``'s keyword arguments as ``options`` (checked now: ``ValueError``). Returns the
    ``PerProcessGroup`` the tasks use."""
    if isinstance(servers, PerProcessGroup):
        if options:
            raise TypeError("options go to the PerProcessGroup's own settings, not to init_app()")
        mcp = servers
    else:
        errors = [f"{p.setting} {p.message}" for p in settings_problems(servers, options) if p.error]
        if errors:
            raise ValueError("; ".join(errors))
        mcp = PerProcessGroup(lambda: (servers, options), name=f"{app.main or 'celery'} MCP servers")

    def process_started(**_: Any) -> None:
        try:
            mcp.connect()
        except MCPError as exc:  # the pool process runs on: its first task tries again
            log.warning("a worker process could not connect its MCP servers: %s", exc)

    def process_stopping(**_: Any) -> None:
        mcp.close()

    worker_process_init.connect(process_started, weak=False)
    worker_process_shutdown.connect(process_stopping, weak=False)
    worker_shutdown.connect(process_stopping, weak=False)
    return mcp
