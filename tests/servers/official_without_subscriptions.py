"""A server on the OFFICIAL Python MCP SDK (``MCPServer``, 2.x) made without subscriptions: one
tool (``echo``) and one resource (``test://plain``), no ``resources/subscribe`` handler, no
list-change notifications, and ``subscriptions=False``, so in the 2026-07-28 era it serves no
``subscriptions/listen`` (-32601). It declares ``resources.subscribe: false`` and
``tools.listChanged: false`` in both eras. Stdio only.
"""
from __future__ import annotations

import _preload  # tests/servers/_preload.py: a fork of a process that imported the SDK may serve this run

_preload.hand_over()

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("without-subscriptions", version="1.0.0", log_level="WARNING", subscriptions=False)


@mcp.tool()
def echo(text: str) -> str:
    """Return ``text``."""
    return text


@mcp.resource("test://plain", name="plain", mime_type="text/plain")
def plain() -> str:
    return "plain"


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
