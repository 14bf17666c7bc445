"""Testing with mcpclient: a demo server, record and replay, and a pytest plugin.

Three rooms, each usable on its own:

- ``mcpclient.testing.server``: a tiny, dependency-free MCP server over stdio (the tools, resources,
  prompts and completions of ``tests/servers/CONTRACT.md``, plus ``bad_output`` and ``mixed`` for
  testing output validation and content parsing). It is the server behind ``mcpclient demo`` and
  a convenient subprocess for your own tests::

      from mcpclient.testing import server_command
      # [python, "-m", "mcpclient.testing", "--page-size", "2"]
      cmd = server_command("--page-size", "2")

- ``mcpclient.testing.cassettes``: ``RecordingTransport(inner, path,
  redact=...)`` records a session to a cassette (JSON lines), ``ReplayTransport(path)`` serves it
  back without the server, and raises ``CassetteMismatch`` for a request the cassette does not have.
- ``mcpclient.testing.pytest_plugin``: the ``mcp_cassette`` fixture and ``--mcp-record``
  (registered with pytest on install).
"""
from __future__ import annotations

# Layers: anything below ``testing`` (``client``, ``transports``, ``auth``, ``types``); only ``cli``
# imports it. Inside, the rooms import nothing of each other but the plugin, which uses the cassettes.

from typing import TYPE_CHECKING

from .._util.lazy import lazy_names as _lazy_names
from .server import SERVER_NAME, SUPPORTED_VERSIONS, Server, serve, server_command

__all__ = ["CassetteMismatch", "RecordingTransport", "ReplayTransport", "SERVER_NAME", "SUPPORTED_VERSIONS",
           "Server", "serve", "server_command"]

if TYPE_CHECKING:
    from .cassettes import CassetteMismatch, RecordingTransport, ReplayTransport

__getattr__ = _lazy_names(__name__, {"CassetteMismatch": "cassettes", "RecordingTransport": "cassettes",
                                     "ReplayTransport": "cassettes"}, globals())
