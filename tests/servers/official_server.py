"""The interop contract (tests/servers/CONTRACT.md) served by the OFFICIAL Python MCP SDK.

Run (needs the ``mcp`` 2.x package installed; the HTTP modes also need ``uvicorn``):

- ``python tests/servers/official_server.py``: stdio (newline-delimited JSON-RPC).
- ``... --http [--json-response] [--stateless]``: Streamable HTTP (the SDK's own ASGI app,
  ``MCPServer.streamable_http_app()``) at ``/mcp``; ``--json-response`` answers POSTs with plain
  JSON instead of an SSE stream, ``--stateless`` runs the SDK's stateless mode (no session id).
- ``... --sse``: the legacy 2024-11-05 HTTP+SSE transport (``MCPServer.sse_app()``): GET ``/sse``
  sends an ``endpoint`` event, messages are POSTed to ``/messages/?session_id=...``.

The HTTP modes listen on 127.0.0.1 on an OS-chosen free port, print exactly one line
``READY <url>`` (the MCP endpoint: ``.../mcp`` or ``.../sse``) to stdout once serving, and run
until SIGTERM/SIGINT or until stdin reaches EOF (so a dying parent never leaves one behind).

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

import argparse
import base64
import json
import logging
import os
import socket
import struct
import sys
import threading
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


async def touch(uri: str, ctx: Context) -> str:
    """Send notifications/resources/updated for `uri` to the calling session (official-server-only extra)."""
    # Not request-scoped (no related_request_id): the SDK sends it on the session's standalone
    # channel, i.e. inline over stdio / legacy SSE, and on the GET stream over Streamable HTTP.
    await ctx.session.send_resource_updated(uri)
    return "touched"


def _tools() -> list[Tool]:
    tools = [
        Tool.from_function(echo, structured_output=False),
        Tool.from_function(add),
        Tool.from_function(slow, structured_output=False),
        Tool.from_function(picture),
        Tool.from_function(fail, structured_output=False),
        Tool.from_function(log, structured_output=False),
        Tool.from_function(touch, structured_output=False),
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


# ---------------------------------------------------------------- HTTP serving


def _serve_http(app: Any, path: str) -> None:
    """Serve the ASGI ``app`` with uvicorn on 127.0.0.1:<free port>; print ``READY <url><path>``."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}{path}"

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and not self.should_exit:  # lifespan ran and the socket is being served
                print(f"READY {url}", flush=True)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Streams still open at shutdown are cut off; uvicorn and the SDK's SSE app then log
            # tracebacks ("ASGI callable returned without completing response", ...): only noise here.
            logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
            await super().shutdown(sockets)

    # timeout_graceful_shutdown: open SSE streams would otherwise hold a graceful shutdown forever.
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1)
    server = Server(config)

    def watch_stdin() -> None:
        try:
            while os.read(0, 65536):  # the raw fd: a thread blocked in sys.stdin would hang interpreter exit
                pass
        except OSError:
            pass
        server.should_exit = True  # EOF: the parent is gone (or closed our stdin); shut down
        threading.Event().wait(5)
        os._exit(0)  # still here 5 s later: do not linger

    threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()
    try:
        server.run(sockets=[sock])  # installs SIGINT/SIGTERM handlers that stop the server
    except KeyboardInterrupt:  # uvicorn re-raises the SIGINT it caught once it has shut down
        sys.exit(130)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--http", action="store_true", help="Streamable HTTP at /mcp")
    mode.add_argument("--sse", action="store_true", help="legacy HTTP+SSE at /sse (+ /messages/)")
    parser.add_argument("--json-response", action="store_true", help="--http: answer POSTs with JSON, not SSE")
    parser.add_argument("--stateless", action="store_true", help="--http: the SDK's stateless mode (no session)")
    args = parser.parse_args(argv)
    if (args.json_response or args.stateless) and not args.http:
        parser.error("--json-response and --stateless need --http")

    if args.http:
        _serve_http(mcp.streamable_http_app(json_response=args.json_response, stateless_http=args.stateless), "/mcp")
    elif args.sse:
        _serve_http(mcp.sse_app(), "/sse")
    else:
        mcp.run("stdio")


if __name__ == "__main__":
    main()
