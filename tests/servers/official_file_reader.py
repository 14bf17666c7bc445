"""A file reader on the OFFICIAL Python MCP SDK (``MCPServer``, 2.x) that answers as the reference
filesystem server (``@modelcontextprotocol/server-filesystem``) answers ``read_text_file``: the
file's text as a text block, and the same text again as ``structuredContent: {"content": ...}``
(its ``outputSchema``). Tools: ``read_text_file(path)``; ``stat(path)`` answers a size as text
and ``{"size": <n>}`` (structured content that says something the text does not). Stdio only.
"""
from __future__ import annotations

import _preload  # tests/servers/_preload.py: a fork of a process that imported the SDK may serve this run

_preload.hand_over()

import os
from typing import Any, Dict

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

mcp = MCPServer("file-reader", version="1.0.0", log_level="WARNING")


@mcp.tool(structured_output=False)
def read_text_file(path: str) -> CallToolResult:
    """Read a file as UTF-8 text."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content={"content": text})


@mcp.tool(structured_output=False)
def stat(path: str) -> CallToolResult:
    """A file's size in bytes."""
    size: Dict[str, Any] = {"size": os.path.getsize(path)}
    return CallToolResult(content=[TextContent(type="text", text=str(size["size"]))], structured_content=size)


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
