"""A tiny, dependency-free MCP server for demos and tests.

``mcpclient.testing`` speaks the handshake-era protocol (2025-11-25, 2025-06-18, 2025-03-26,
2024-11-05) over stdio: newline-delimited JSON-RPC 2.0 on stdin/stdout. It implements the
interop contract of ``tests/servers/CONTRACT.md`` (tools ``echo``, ``add``, ``slow``,
``picture``, ``fail``, ``log``; resources ``test://text``, ``test://blob`` and the template
``test://greeting/{name}``; prompt ``greet``; completions; logging) plus two extra tools,
``bad_output`` and ``mixed``, for testing clients' output validation and content parsing.

It is the server behind ``mcpclient demo`` and a convenient subprocess for your own tests::

    from mcpclient.testing import server_command
    cmd = server_command("--page-size", "2")   # [python, "-m", "mcpclient.testing", ...]

It uses only the standard library.
"""

from __future__ import annotations

import sys
from typing import List

from .server import SERVER_NAME, SUPPORTED_VERSIONS, Server, serve

__all__ = ["SERVER_NAME", "SUPPORTED_VERSIONS", "Server", "serve", "server_command"]


def server_command(*extra_args: str) -> List[str]:
    """The argv that starts this server in a subprocess with the current interpreter."""
    return [sys.executable, "-m", "mcpclient.testing", *extra_args]
