"""The interop contract (tests/servers/CONTRACT.md) served by the OFFICIAL Python MCP SDK over stdio.

Run: ``python tests/servers/official_server.py`` (needs the ``mcp`` 2.x package installed).

Built on ``mcp.server.mcpserver.MCPServer`` (the 2.x name of FastMCP). The high-level API cannot
express a few parts of the contract, so they use the SDK's low-level ``Server`` (reached through
``MCPServer._lowlevel_server``); the SDK still does all of the protocol work:

- ``resources/subscribe`` / ``resources/unsubscribe`` and ``logging/setLevel`` have no MCPServer
  decorator: registered with ``Server.add_request_handler`` (that also makes the SDK advertise
  ``resources.subscribe: true`` and the ``logging`` capability).
- MCPServer derives an outputSchema from the return annotation, adding pydantic ``title`` keys;
  the contract's exact schemas are set on the tool metadata after building the tools.

Note: an ordinary exception raised inside a tool reaches the client WITHOUT its text in this SDK
("Error executing tool X"); only ``ToolError`` keeps its message, so ``fail`` raises ``ToolError``.
"""

from __future__ import annotations

import base64
import json
import struct
import warnings
import zlib
from typing import Annotated, Any

import anyio
from mcp_types import (
    CallToolResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    EmptyResult,
    ImageContent,
    PromptReference,
    ResourceTemplateReference,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPDeprecationWarning

# The logging capability is deprecated in the 2026-07-28 protocol; the contract still uses it.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

ADD_OUTPUT_SCHEMA = {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}
PICTURE_OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"width": {"type": "integer"}, "height": {"type": "integer"}},
    "required": ["width", "height"],
}
STYLES = ["formal", "friendly", "funny"]
NAMES = ["alice", "bob", "carol"]


def _png_1x1() -> bytes:
    """A valid 1x1 RGBA PNG (one transparent pixel), built with the stdlib."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    pixels = zlib.compress(b"\x00\x00\x00\x00\x00")  # filter byte + one RGBA pixel
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


PNG_B64 = base64.b64encode(_png_1x1()).decode()


# ---------------------------------------------------------------- tools


class SumOutput(BaseModel):
    sum: float


class PictureOutput(BaseModel):
    width: int
    height: int


async def echo(text: str) -> str:
    """Echo the text back."""
    return text


async def add(a: float, b: float) -> Annotated[CallToolResult, SumOutput]:
    """Add two numbers."""
    structured = {"sum": a + b}
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(structured))], structured_content=structured)


async def slow(ctx: Context, steps: int = 3, delay: float = 0.01) -> str:
    """Report progress `steps` times, sleeping `delay` seconds between steps."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")  # a no-op without a progressToken
        if i < steps:
            await anyio.sleep(delay)
    return f"done after {steps} steps"


async def picture() -> Annotated[CallToolResult, PictureOutput]:
    """A 1x1 pixel image."""
    return CallToolResult(
        content=[
            ImageContent(type="image", data=PNG_B64, mime_type="image/png"),
            TextContent(type="text", text="a 1x1 pixel"),
        ],
        structured_content={"width": 1, "height": 1},
    )


async def fail(message: str) -> str:
    """Fail with the given message (an isError result)."""
    raise ToolError(message)


async def log(level: str, message: str, ctx: Context) -> str:
    """Send a notifications/message with the given level, logger "contract"."""
    await ctx.log(level, message, logger_name="contract")  # type: ignore[arg-type]
    return "logged"


def _tools() -> list[Tool]:
    tools = [
        Tool.from_function(echo, structured_output=False),
        Tool.from_function(add),
        Tool.from_function(slow, structured_output=False),
        Tool.from_function(picture),
        Tool.from_function(fail, structured_output=False),
        Tool.from_function(log, structured_output=False),
    ]
    by_name = {t.name: t for t in tools}
    # Exact schemas (the derived ones carry pydantic titles); the models above still validate.
    by_name["add"].fn_metadata.output_schema = ADD_OUTPUT_SCHEMA
    by_name["picture"].fn_metadata.output_schema = PICTURE_OUTPUT_SCHEMA
    return tools


mcp = MCPServer(
    "contract-official",
    version="1.0.0",
    instructions="Interop contract server (official MCP Python SDK). See tests/servers/CONTRACT.md.",
    tools=_tools(),
    log_level="WARNING",
)


# ---------------------------------------------------------------- resources


@mcp.resource("test://text", name="text", mime_type="text/plain")
async def text_resource() -> str:
    return "hello, world"


@mcp.resource("test://blob", name="blob", mime_type="application/octet-stream")
async def blob_resource() -> bytes:
    return b"\x00\x01\x02\xff"


@mcp.resource("test://greeting/{name}", name="greeting", mime_type="text/plain")
async def greeting(name: str) -> str:
    return f"Hello, {name}!"


# ---------------------------------------------------------------- prompts


@mcp.prompt(name="greet", description="Greet someone")
async def greet(name: str, style: str = "friendly") -> str:
    return f"Please greet {name} in a {style} way."


# ---------------------------------------------------------------- completions


@mcp.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: CompletionContext | None,
) -> Completion | None:
    if isinstance(ref, PromptReference) and ref.name == "greet" and argument.name == "style":
        pool = STYLES
    elif isinstance(ref, ResourceTemplateReference) and ref.uri == "test://greeting/{name}" and argument.name == "name":
        pool = NAMES
    else:
        return None
    values = [v for v in pool if v.startswith(argument.value)]
    return Completion(values=values, total=len(values), has_more=False)


# ---------------------------------------------------------------- low-level handlers


async def subscribe(ctx: ServerRequestContext[Any], params: SubscribeRequestParams) -> EmptyResult:
    return EmptyResult()


async def unsubscribe(ctx: ServerRequestContext[Any], params: UnsubscribeRequestParams) -> EmptyResult:
    return EmptyResult()


async def set_level(ctx: ServerRequestContext[Any], params: SetLevelRequestParams) -> EmptyResult:
    return EmptyResult()  # accepted; the contract does not ask the server to filter by level


_lowlevel = mcp._lowlevel_server  # pyright: ignore[reportPrivateUsage]
_lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
_lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
_lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)


if __name__ == "__main__":
    mcp.run("stdio")
