"""The demo server: a tiny, dependency-free MCP server speaking the handshake-era protocol
(2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05) over stdio, newline-delimited JSON-RPC 2.0.

It implements the interop contract of ``tests/servers/CONTRACT.md`` (tools ``echo``, ``add``,
``slow``, ``picture``, ``fail``, ``log``; resources ``test://text``, ``test://blob`` and the
template ``test://greeting/{name}``; prompt ``greet``; completions; logging) plus ``bad_output``
and ``mixed``; ``--apps`` adds an MCP App, ``--tasks-ext`` the Tasks extension. It uses only the
standard library, and starts without loading the client.
"""

from __future__ import annotations

import sys
from typing import List

from .stdio import SERVER_NAME, SUPPORTED_VERSIONS, Server, serve

__all__ = ["SERVER_NAME", "SUPPORTED_VERSIONS", "Server", "serve", "server_command"]


def server_command(*extra_args: str) -> List[str]:
    """The argv that starts this server in a subprocess with the current interpreter
    (``python -m mcpclient.testing``; ``extra_args`` are its options, as ``--page-size 2``)."""
    return [sys.executable, "-m", "mcpclient.testing", *extra_args]
