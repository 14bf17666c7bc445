"""A tiny, dependency-free MCP server for demos and tests.

``mcpclient.testing`` speaks the handshake-era protocol (2025-11-25, 2025-06-18, 2025-03-26,
2024-11-05) over stdio: newline-delimited JSON-RPC 2.0 on stdin/stdout. It implements the
interop contract of ``tests/servers/CONTRACT.md`` (tools ``echo``, ``add``, ``slow``,
``picture``, ``fail``, ``log``; resources ``test://text``, ``test://blob`` and the template
``test://greeting/{name}``; prompt ``greet``; completions; logging) plus two extra tools,
``bad_output`` and ``mixed``, for testing clients' output validation and content parsing.

It is the server behind ``mcpclient demo`` and a convenient subprocess for your own tests::

    from mcpclient.testing import server_command
    # [python, "-m", "mcpclient.testing", "--page-size", "2"]
    cmd = server_command("--page-size", "2")

It uses only the standard library.

Record and replay: ``RecordingTransport(inner, path, redact=...)`` records a session to a
cassette (JSON lines), ``ReplayTransport(path)`` serves it back without the server; the pytest
plugin (``mcpclient.testing.pytest_plugin``) gives tests the ``mcp_cassette`` fixture.
"""
# Record and replay load on first use.
#
# Imports: anything below it (``client``, ``transports``, ``auth``, ``types``); only ``cli`` above.

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, List

from .._util.lazy import lazy_names as _lazy_names
from .server import SERVER_NAME, SUPPORTED_VERSIONS, Server, serve

__all__ = ["RecordingTransport", "ReplayTransport", "SERVER_NAME", "SUPPORTED_VERSIONS", "Server", "serve",
           "server_command"]

if TYPE_CHECKING:
    from .cassette import RecordingTransport
    from .replay import ReplayTransport

__getattr__ = _lazy_names(__name__, {"RecordingTransport": "cassette", "ReplayTransport": "replay"}, globals())


def server_command(*extra_args: str) -> List[str]:
    """The argv that starts this server in a subprocess with the current interpreter."""
    return [sys.executable, "-m", "mcpclient.testing", *extra_args]
