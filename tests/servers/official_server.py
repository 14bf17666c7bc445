"""The interop contract (tests/servers/CONTRACT.md) served by the OFFICIAL Python MCP SDK.

Run (needs the ``mcp`` 2.x package installed; the HTTP modes also need ``uvicorn``):

- ``python tests/servers/official_server.py``: stdio (newline-delimited JSON-RPC).
- ``... --http [--json-response] [--stateless]``: Streamable HTTP (the SDK's own ASGI app,
  ``MCPServer.streamable_http_app()``) at ``/mcp``; ``--json-response`` answers POSTs with plain
  JSON instead of an SSE stream, ``--stateless`` runs the SDK's stateless mode (no session id).
- ``... --sse``: the legacy 2024-11-05 HTTP+SSE transport (``MCPServer.sse_app()``): GET ``/sse``
  sends an ``endpoint`` event, messages are POSTed to ``/messages/?session_id=...``.

The HTTP modes listen on 127.0.0.1 on an OS-chosen free port (``--port N``: that one, to restart a
server where its clients expect it), print exactly one line
``READY <url>`` (the MCP endpoint: ``.../mcp`` or ``.../sse``) to stdout once serving, and run
until SIGTERM/SIGINT or until stdin reaches EOF (so a dying parent never leaves one behind).

Built on ``mcp.server.mcpserver.MCPServer`` (the 2.x name of FastMCP). The high-level API cannot
express a few parts of the contract, so they use the SDK's low-level ``Server`` (reached through
``MCPServer._lowlevel_server``); the SDK still does all of the protocol work:

- The handshake-era capabilities declare ``listChanged`` for tools, prompts and resources (the
  server sends those notifications): MCPServer's own ``create_initialization_options`` is given
  the SDK's ``NotificationOptions``.
- ``resources/subscribe`` / ``resources/unsubscribe`` and ``logging/setLevel`` have no MCPServer
  decorator: registered with ``Server.add_request_handler`` (that also makes the SDK advertise
  ``resources.subscribe: true`` and the ``logging`` capability).
- MCPServer derives an outputSchema from the return annotation, adding pydantic ``title`` keys;
  the contract's exact schemas are set on the tool metadata after building the tools.
- ``logging/setLevel``: its handler records the level (per server process, not per session) and
  the ``log`` tool drops messages below it; the SDK itself does no level filtering for the
  handshake-era protocol versions.

Server -> client extras (``sample``, ``elicit_form``, ``elicit_url``, ``roots``, ``ping_client``;
CONTRACT.md "Server → client extras"): ``ServerSession`` picks the channel from
``related_request_id``: set = the calling request's own channel (stdio / legacy SSE: the one
stream; Streamable HTTP: the POST's SSE response stream), unset = the connection's standalone
channel (Streamable HTTP: the GET stream). The high-level helpers cannot be used as they are:

- ``Context.elicit``/``elicit_url`` always pass the request's id, and with ``--json-response`` the
  request-scoped channel refuses server->client requests (``NoBackChannelError``: a JSON body
  carries only the response). ``_related(ctx)`` therefore falls back to the standalone channel,
  i.e. the GET stream, when ``ctx.session.can_send_request`` is false.
- ``ServerSession.list_roots``/``send_ping`` take no ``related_request_id`` and always use the
  standalone channel, which over Streamable HTTP (SSE mode) is only the GET stream; they are
  replaced by ``ServerSession.send_request`` with ``ServerMessageMetadata(related_request_id=...)``.
- ``Context.elicit`` builds the schema from a pydantic model, where a field with a default is never
  ``required``; ``elicit_form`` sends its exact schema with ``ServerSession.elicit_form`` instead.
- A request sent to the standalone channel while the client has no GET stream open is silently
  dropped by the SDK's transport (the tool would then wait forever): ``_require_get_stream``
  looks into the SDK's session manager (private ``_server_instances`` / ``_request_streams``)
  and fails fast with a JSON-RPC error instead. (``--stateless`` has no channel for server->client
  requests at all: the SDK raises ``NoBackChannelError``, a -32600 JSON-RPC error, itself.)

2026-07-28 (modern) extras (``mrtr_elicit``, ``mrtr_sample``, ``mrtr_roots``, ``mrtr_two_rounds``, the
prompt ``mrtr_prompt``, the unlisted resource ``test://mrtr``; CONTRACT.md "2026-07-28 (modern) extras"):
the SDK is dual-era, and a client that opens with ``server/discover`` gets the 2026-07-28 era, where
the server never sends requests (the extras above then fail with the SDK's ``NoBackChannelError``).
These answer with an ``InputRequiredResult`` instead (multi round-trip requests) and read the retry's
``ctx.input_responses`` / ``ctx.request_state``; in the handshake era they fall back to ordinary
server->client requests (through ``_related``) and give the same final answer.

- ``requestState``: the handler mints plaintext (``"<name>/1"``, ...); the SDK's ``RequestStateBoundary``
  (always on: ``MCPServer`` uses ``RequestStateSecurity.ephemeral()``) seals it (``v1.<AES-GCM token>``,
  per-process key, bound to method + tool/prompt/uri + arguments, TTL) and rejects a tampered,
  foreign or expired echo with -32602 before the handler runs.
- ``test://mrtr``: ``MCPServer`` lets only resource *templates* return an ``InputRequiredResult``, and a
  new template would change ``resources/templates/list`` (fixed by the contract), so ``resources/read``
  is re-registered with ``Server.add_request_handler``: ``test://mrtr`` is served there, everything
  else goes on to ``MCPServer._handle_read_resource``.
- ``subscriptions/listen``: served by the SDK (``MCPServer`` registers a ``ListenHandler`` on an
  in-process ``SubscriptionBus``); ``touch`` and ``add_tool`` publish to that bus with
  ``ctx.notify_resource_updated`` / ``ctx.notify_tools_changed`` (in both eras; in the handshake era
  they also still send the session notification as before; in the 2026 era the SDK drops those).

MCP Apps (``--apps``; tests/servers/APPS.md): the SDK's own ``mcp.server.apps.Apps`` extension serves
the counter tools and the ``ui://counter/app.html`` resource (HTML and ``_meta.ui`` shared with our
test server through ``mcpclient.testing.server.apps_html``), and ``apps_supported`` answers the SDK's
``client_supports_apps(ctx)``: the official SDK's reading of our client's declaration. The flag
applies the extension after the module-level server is built (``MCPServer._apply_extension``, the
step its constructor runs for ``extensions=[...]``), so the default surface stays unchanged.

Note: an ordinary exception raised inside a tool reaches the client WITHOUT its text in this SDK
("Error executing tool X"); only ``ToolError`` keeps its message, so ``fail`` raises ``ToolError``.
An ``MCPError`` (``UrlElicitationRequiredError``, ``NoBackChannelError``) raised inside a tool is
answered as a JSON-RPC error, not as an ``isError`` result.
"""

from __future__ import annotations

import _preload  # tests/servers/_preload.py: a fork of a process that imported the SDK may serve this run

_preload.hand_over()

import argparse
import base64
import json
import struct
import warnings
import zlib
from itertools import count
from typing import Annotated, Any, TypeVar, get_args

import anyio
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CallToolResult,
    ClientCapabilities,
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitationCapability,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    EmptyResult,
    FormElicitationCapability,
    ImageContent,
    InputRequiredResult,
    ListRootsRequest,
    ListRootsResult,
    LoggingLevel,
    MissingRequiredClientCapabilityErrorData,
    ModelHint,
    ModelPreferences,
    PingRequest,
    PromptReference,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceTemplateReference,
    RootsCapability,
    SamplingCapability,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, ValidationError

from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.streamable_http import GET_STREAM_KEY
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError, UrlElicitationRequiredError
from mcp.shared.message import ServerMessageMetadata

from _serve import serve_http  # noqa: E402  (tests/servers/_serve.py: uvicorn, READY, stdin EOF)

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
#: The form `elicit_form` asks for (sent as is: defaults included, only `name` required).
ELICIT_FORM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "anon"},
        "age": {"type": "integer", "default": 30, "minimum": 0},
        "subscribe": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
    },
    "required": ["name"],
}
#: RFC 5424 severities, ascending (the order of mcp_types.LoggingLevel).
LOG_LEVELS: tuple[str, ...] = get_args(LoggingLevel)
#: How long a server->client request waits for the client's GET stream in --json-response mode.
GET_STREAM_WAIT = 2.0

#: The first protocol version of the 2026-07-28 ("modern") era: MRTR instead of server->client requests.
MODERN_VERSION = "2026-07-28"
ResultT = TypeVar("ResultT", bound=BaseModel)

#: The level last set by logging/setLevel (per server process, shared by all sessions); None = send all.
_min_log_level: str | None = None


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
    # Honour logging/setLevel (see set_level); a level outside LOG_LEVELS is never filtered.
    threshold = _min_log_level
    if threshold is not None and level in LOG_LEVELS and LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
        return "logged"
    await ctx.log(level, message, logger_name="contract")  # type: ignore[arg-type]
    return "logged"


async def touch(uri: str, ctx: Context) -> str:
    """Send notifications/resources/updated for `uri` to the calling session (official-server-only extra)."""
    # 2026-07-28 era: published to the SDK's subscription bus, i.e. to every open
    # subscriptions/listen stream (of any client of this process) whose filter lists `uri`.
    await ctx.notify_resource_updated(uri)
    if not _is_modern(ctx):
        # Not request-scoped (no related_request_id): the SDK sends it on the session's standalone
        # channel, i.e. inline over stdio / legacy SSE, and on the GET stream over Streamable HTTP.
        await ctx.session.send_resource_updated(uri)
    return "touched"


# ---------------------------------------------------------------- server -> client extras


async def _related(ctx: Context, method: str) -> str | None:
    """The ``related_request_id`` to send a server->client request for this tool call with.

    The call's own channel when it can carry requests (stdio, legacy SSE, Streamable HTTP with SSE
    responses); otherwise (``--json-response``) None = the standalone channel, the GET stream.
    """
    if ctx.session.can_send_request:
        return ctx.request_id
    await _require_get_stream(ctx, method)
    return None


async def _require_get_stream(ctx: Context, method: str) -> None:
    """Fail fast if a Streamable HTTP session has no GET stream open (waiting ``GET_STREAM_WAIT`` s).

    The SDK's transport drops a standalone message when no GET stream is open, so a request sent
    then would never be answered. Stateless mode has no standalone channel at all: nothing to check,
    the SDK raises ``NoBackChannelError`` (-32600) itself.
    """
    headers = ctx.headers or {}
    session_id = headers.get("mcp-session-id")
    if session_id is None:
        return
    manager = mcp.session_manager
    with anyio.move_on_after(GET_STREAM_WAIT):
        while True:
            transport = manager._server_instances.get(session_id)  # pyright: ignore[reportPrivateUsage]
            streams = transport._request_streams if transport is not None else {}  # pyright: ignore[reportPrivateUsage]
            if transport is None or GET_STREAM_KEY in streams:
                return
            await anyio.sleep(0.01)
    raise MCPError(
        INVALID_REQUEST,
        f"Cannot send {method!r}: --json-response mode sends server->client requests on the GET stream, "
        "and this session has none open",
    )


async def sample(prompt: str, ctx: Context, max_tokens: int = 50) -> str:
    """Ask the client to sample (sampling/createMessage); returns "{model}: {text}"."""
    result = await ctx.session.create_message(  # pyright: ignore[reportDeprecated]
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=max_tokens,
        system_prompt="Answer briefly.",
        model_preferences=ModelPreferences(hints=[ModelHint(name="claude")], intelligence_priority=0.5),
        related_request_id=await _related(ctx, "sampling/createMessage"),
    )
    content = result.content
    if isinstance(content, TextContent):
        text = content.text
    else:  # not asked for, but a client may answer with an image/audio block
        text = json.dumps(content.model_dump(mode="json", by_alias=True, exclude_none=True))
    return f"{result.model}: {text}"


async def elicit_form(message: str, ctx: Context) -> str:
    """Ask the client for a form (elicitation/create, form mode); returns "accept {json}" or the action."""
    result = await ctx.session.elicit_form(
        message=message,
        requested_schema=ELICIT_FORM_SCHEMA,
        related_request_id=await _related(ctx, "elicitation/create"),
    )
    if result.action == "accept":
        return "accept " + json.dumps(result.content, sort_keys=True)
    return result.action


_elicitation_ids = count(1)


async def elicit_url(url: str, ctx: Context) -> str:
    """Ask the client to open `url` (elicitation/create, URL mode); on accept also send
    notifications/elicitation/complete; returns "url {action}"."""
    elicitation_id = f"url-{next(_elicitation_ids)}"
    related = await _related(ctx, "elicitation/create")
    result = await ctx.session.elicit_url(
        message="Please sign in", url=url, elicitation_id=elicitation_id, related_request_id=related
    )
    if result.action == "accept":
        # Same channel as the request: the POST stream, or the GET stream in --json-response mode.
        await ctx.session.send_elicit_complete(elicitation_id, related_request_id=related)
    return f"url {result.action}"


async def url_required(url: str) -> str:
    """Fail with JSON-RPC error -32042 (URL elicitation required) for `url`."""
    raise UrlElicitationRequiredError(
        [ElicitRequestURLParams(mode="url", message="Sign in first", url=url, elicitation_id="e-1")]
    )


async def roots(ctx: Context) -> str:
    """List the client's roots (roots/list); returns JSON [[uri, name], ...]."""
    # Not ServerSession.list_roots(): it always uses the standalone channel (see the module docstring).
    result = await ctx.session.send_request(
        ListRootsRequest(),
        ListRootsResult,
        metadata=ServerMessageMetadata(related_request_id=await _related(ctx, "roots/list")),
    )
    return json.dumps([[str(root.uri), root.name] for root in result.roots])


async def add_tool(name: str, ctx: Context) -> str:
    """Register a tool `name` (answering "I am {name}") and send notifications/tools/list_changed."""

    async def added() -> str:
        return f"I am {name}"

    mcp.add_tool(added, name=name, description=f"Added at run time by add_tool ({name}).", structured_output=False)
    # The SDK's own helper: the standalone channel (stdio / legacy SSE: the one stream; Streamable
    # HTTP: the GET stream, dropped if none is open; never sent in --stateless mode).
    # 2026-07-28 era: published to every open subscriptions/listen stream asking for toolsListChanged.
    await ctx.notify_tools_changed()
    if not _is_modern(ctx):
        await ctx.session.send_tool_list_changed()
    return "added"


async def ping_client(ctx: Context) -> str:
    """Send a ping request to the client; returns "pong"."""
    # Not ServerSession.send_ping(): it always uses the standalone channel (see the module docstring).
    await ctx.session.send_request(
        PingRequest(), EmptyResult, metadata=ServerMessageMetadata(related_request_id=await _related(ctx, "ping"))
    )
    return "pong"


# ---------------------------------------------------------------- 2026-07-28 (modern) extras
#
# Multi round-trip requests (MRTR): in the 2026-07-28 era a server never sends requests to the
# client; a tools/call, prompts/get or resources/read answers with an InputRequiredResult and the
# client repeats the call with `inputResponses` (+ the echoed `requestState`). The SDK seals every
# outgoing requestState (RequestStateBoundary: AES-GCM with a per-process key, bound to the method,
# the tool/prompt/uri, the arguments and a TTL) and hands the handler back the plaintext it minted,
# rejecting a tampered or foreign state before the handler runs. In the handshake era the same
# tools/prompt/resource fall back to ordinary server->client requests (as `elicit_form` etc. do)
# and produce the same final answer.

#: The resource that needs one MRTR round (served by `read_resource`; not in resources/list).
MRTR_RESOURCE = "test://mrtr"
#: The form the MRTR elicitations ask for.
MRTR_FORM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "default": "anon"}},
    "required": ["name"],
}


def _is_modern(ctx: Context) -> bool:
    """True when this request runs in the 2026-07-28 era (MRTR, subscriptions/listen)."""
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, MODERN_VERSION)


def _require_modern_capability(ctx: Context, capability: str) -> None:
    """Refuse (-32021, like the SDK's resolvers) to ask for input the client did not declare."""
    caps = ctx.client_capabilities
    if capability == "elicitation":
        elicitation = caps.elicitation if caps is not None else None
        if elicitation is not None and (elicitation.form is not None or elicitation.url is None):
            return  # a bare `elicitation: {}` means form support
        required = ClientCapabilities(elicitation=ElicitationCapability(form=FormElicitationCapability()))
    elif capability == "sampling":
        if caps is not None and caps.sampling is not None:
            return
        required = ClientCapabilities(sampling=SamplingCapability())
    else:
        if caps is not None and caps.roots is not None:
            return
        required = ClientCapabilities(roots=RootsCapability())
    raise MCPError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Client did not declare the {capability} capability",
        data=MissingRequiredClientCapabilityErrorData(required_capabilities=required).model_dump(
            by_alias=True, mode="json", exclude_none=True
        ),
    )


def _elicit_request(message: str) -> ElicitRequest:
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=MRTR_FORM_SCHEMA))


def _answer(ctx: Context, key: str, model: type[ResultT]) -> ResultT | None:
    """The client's answer to input request `key` of the previous round, or None if absent."""
    responses = ctx.input_responses or {}
    if key not in responses:
        return None
    raw = responses[key]
    try:
        return model.model_validate(raw.model_dump(by_alias=True, mode="json", exclude_unset=True))
    except ValidationError:
        raise MCPError(INVALID_PARAMS, f"inputResponses[{key!r}] is not a valid {model.__name__}") from None


def _round_state(ctx: Context, prefix: str) -> str | None:
    """The echoed (already unsealed) requestState if it starts with `prefix`, else None."""
    state = ctx.request_state
    return state[len(prefix) :] if state is not None and state.startswith(prefix) else None


def _elicit_text(result: ElicitResult) -> str:
    if result.action == "accept":
        return "accept " + json.dumps(result.content, sort_keys=True)
    return result.action


async def _legacy_elicit(ctx: Context, message: str) -> ElicitResult:
    """Handshake era: an ordinary elicitation/create request (see `_related`)."""
    return await ctx.session.elicit_form(
        message=message,
        requested_schema=MRTR_FORM_SCHEMA,
        related_request_id=await _related(ctx, "elicitation/create"),
    )


async def _modern_elicit_once(ctx: Context, name: str, key: str, message: str) -> InputRequiredResult | str:
    """One elicitation round for `name`: ask (state "<name>/1"), or return the answer's text."""
    if _round_state(ctx, f"{name}/1") == "":
        answer = _answer(ctx, key, ElicitResult)
        if answer is not None:
            return _elicit_text(answer)
    # First round, or a retry without the answer: (re-)ask.
    _require_modern_capability(ctx, "elicitation")
    return InputRequiredResult(input_requests={key: _elicit_request(message)}, request_state=f"{name}/1")


async def mrtr_elicit(message: str, ctx: Context) -> str | InputRequiredResult:
    """2026-07-28: one MRTR elicitation round (input request "who"); returns "accept {json}" or the action."""
    if not _is_modern(ctx):
        return _elicit_text(await _legacy_elicit(ctx, message))
    return await _modern_elicit_once(ctx, "mrtr_elicit", "who", message)


def _sampling_params(prompt: str) -> CreateMessageRequestParams:
    return CreateMessageRequestParams(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=20
    )


def _sample_text(result: CreateMessageResult) -> str:
    content = result.content
    if isinstance(content, TextContent):
        return f"{result.model}: {content.text}"
    return f"{result.model}: " + json.dumps(content.model_dump(mode="json", by_alias=True, exclude_none=True))


async def mrtr_sample(prompt: str, ctx: Context) -> str | InputRequiredResult:
    """2026-07-28: one MRTR sampling round (input request "llm"); returns "{model}: {text}"."""
    params = _sampling_params(prompt)
    if not _is_modern(ctx):
        result = await ctx.session.send_request(
            CreateMessageRequest(params=params),
            CreateMessageResult,
            metadata=ServerMessageMetadata(related_request_id=await _related(ctx, "sampling/createMessage")),
        )
        return _sample_text(result)
    if _round_state(ctx, "mrtr_sample/1") == "":
        answer = _answer(ctx, "llm", CreateMessageResult)
        if answer is not None:
            return _sample_text(answer)
    _require_modern_capability(ctx, "sampling")
    return InputRequiredResult(
        input_requests={"llm": CreateMessageRequest(params=params)}, request_state="mrtr_sample/1"
    )


def _roots_text(result: ListRootsResult) -> str:
    return json.dumps([[str(root.uri), root.name] for root in result.roots])


async def mrtr_roots(ctx: Context) -> str | InputRequiredResult:
    """2026-07-28: one MRTR roots round (input request "roots"); returns JSON [[uri, name], ...]."""
    if not _is_modern(ctx):
        return await roots(ctx)
    if _round_state(ctx, "mrtr_roots/1") == "":
        answer = _answer(ctx, "roots", ListRootsResult)
        if answer is not None:
            return _roots_text(answer)
    _require_modern_capability(ctx, "roots")
    return InputRequiredResult(input_requests={"roots": ListRootsRequest()}, request_state="mrtr_roots/1")


async def mrtr_two_rounds(ctx: Context) -> str | InputRequiredResult:
    """2026-07-28: two MRTR elicitation rounds ("first", then "second"); returns both answers."""
    if not _is_modern(ctx):
        first = _elicit_text(await _legacy_elicit(ctx, "First?"))
        second = _elicit_text(await _legacy_elicit(ctx, "Second?"))
        return f"first: {first}; second: {second}"
    # Round 3: the state carries round 1's answer (the retry only carries round 2's).
    first = _round_state(ctx, "mrtr_two_rounds/2 ")
    if first is not None:
        answer = _answer(ctx, "second", ElicitResult)
        if answer is not None:
            return f"first: {first}; second: {_elicit_text(answer)}"
        _require_modern_capability(ctx, "elicitation")
        return InputRequiredResult(
            input_requests={"second": _elicit_request("Second?")}, request_state=f"mrtr_two_rounds/2 {first}"
        )
    # Round 2 (or a retry of round 1 without its answer: ask "first" again).
    if _round_state(ctx, "mrtr_two_rounds/1") == "":
        answer = _answer(ctx, "first", ElicitResult)
        if answer is not None:
            _require_modern_capability(ctx, "elicitation")
            return InputRequiredResult(
                input_requests={"second": _elicit_request("Second?")},
                request_state=f"mrtr_two_rounds/2 {_elicit_text(answer)}",
            )
    _require_modern_capability(ctx, "elicitation")
    return InputRequiredResult(input_requests={"first": _elicit_request("First?")}, request_state="mrtr_two_rounds/1")


def _tools() -> list[Tool]:
    tools = [
        Tool.from_function(echo, structured_output=False),
        Tool.from_function(add),
        Tool.from_function(slow, structured_output=False),
        Tool.from_function(picture),
        Tool.from_function(fail, structured_output=False),
        Tool.from_function(log, structured_output=False),
        Tool.from_function(touch, structured_output=False),
        Tool.from_function(sample, structured_output=False),
        Tool.from_function(elicit_form, structured_output=False),
        Tool.from_function(elicit_url, structured_output=False),
        Tool.from_function(url_required, structured_output=False),
        Tool.from_function(roots, structured_output=False),
        Tool.from_function(add_tool, structured_output=False),
        Tool.from_function(ping_client, structured_output=False),
        Tool.from_function(mrtr_elicit, structured_output=False),
        Tool.from_function(mrtr_sample, structured_output=False),
        Tool.from_function(mrtr_roots, structured_output=False),
        Tool.from_function(mrtr_two_rounds, structured_output=False),
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


@mcp.prompt(name="mrtr_prompt", description="Ask who is asking (2026-07-28: one MRTR elicitation round)")
async def mrtr_prompt(ctx: Context) -> str | InputRequiredResult:
    """One user message: "accept {json}" or the elicitation's action (like `mrtr_elicit`)."""
    if not _is_modern(ctx):
        return _elicit_text(await _legacy_elicit(ctx, "Who is asking?"))
    return await _modern_elicit_once(ctx, "mrtr_prompt", "who", "Who is asking?")


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
    global _min_log_level
    _min_log_level = params.level  # the `log` tool drops messages below it
    return EmptyResult()


_lowlevel = mcp._lowlevel_server  # pyright: ignore[reportPrivateUsage]
# The handshake era's capabilities say what the server sends: add_tool and friends send list
# changes, so listChanged is declared for tools, prompts and resources (MCPServer declares
# false unless given NotificationOptions, which its run() and apps do not take).
_initialization_options = _lowlevel.create_initialization_options
_lowlevel.create_initialization_options = lambda notification_options=None, *args, **kwargs: \
    _initialization_options(notification_options or NotificationOptions(prompts_changed=True, resources_changed=True,
                                                                         tools_changed=True), *args, **kwargs)
_lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
_lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
async def read_resource(
    ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
) -> ReadResourceResult | InputRequiredResult:
    """MCPServer's resources/read, plus the unlisted `test://mrtr` (one MRTR elicitation round).

    MCPServer lets only resource *templates* return an InputRequiredResult (a static resource function
    gets no Context), and a new template would change resources/templates/list, which the contract
    fixes; so `test://mrtr` is served here, in front of MCPServer's own handler.
    """
    if params.uri != MRTR_RESOURCE:
        return await mcp._handle_read_resource(ctx, params)  # pyright: ignore[reportPrivateUsage]
    context = Context(
        request_context=ctx,
        mcp_server=mcp,
        input_params=params,
        subscriptions=mcp._subscriptions,  # pyright: ignore[reportPrivateUsage]
    )
    if _is_modern(context):
        outcome = await _modern_elicit_once(context, "mrtr_resource", "who", "Who is reading?")
        if isinstance(outcome, InputRequiredResult):
            return outcome
        text = outcome
    else:
        text = _elicit_text(await _legacy_elicit(context, "Who is reading?"))
    return ReadResourceResult(contents=[TextResourceContents(uri=MRTR_RESOURCE, text=text, mime_type="text/plain")])


_lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
_lowlevel.add_request_handler("resources/read", ReadResourceRequestParams, read_resource)


# ---------------------------------------------------------------- MCP Apps (--apps)


class CountOutput(BaseModel):
    count: int


#: The counter's value (per server process, shared by its sessions) and mcpclient.testing.server.apps_html (set by --apps).
_count = [0]
_apps_html: Any = None


def _counted() -> CallToolResult:
    result = _apps_html.count_result(_count[0])
    return CallToolResult(content=[TextContent(type="text", text=result["content"][0]["text"])],
                          structured_content=result["structuredContent"])


async def counter() -> Annotated[CallToolResult, CountOutput]:
    """Show the counter app; returns the current count."""
    return _counted()


async def increment(by: int = 1) -> Annotated[CallToolResult, CountOutput]:
    """Add `by` (default 1) to the count (app only)."""
    _count[0] += by
    return _counted()


async def lookup_secret() -> str:
    """Return a secret (model only)."""
    return _apps_html.SECRET


async def apps_supported(ctx: Context) -> str:
    """Whether the client declared MCP Apps with mimeTypes containing text/html;profile=mcp-app."""
    from mcp.server.apps import client_supports_apps

    return json.dumps(client_supports_apps(ctx))


def _apps_extension() -> Any:
    """The counter app (tests/servers/APPS.md) as the SDK's ``Apps`` extension (+ ``apps_supported``)."""
    global _apps_html
    import sys
    from pathlib import Path

    from mcp.server.apps import Apps, ResourceCsp, ResourcePermissions

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's mcpclient, not another install
    from mcpclient.testing.server import apps_html

    _apps_html = apps_html
    apps, uri, ui = Apps(), apps_html.APP_URI, apps_html.APP_UI_META
    apps.tool(resource_uri=uri, name="counter", title="Counter")(counter)
    apps.tool(resource_uri=uri, visibility=["app"], name="increment", title="Increment")(increment)
    apps.tool(resource_uri=uri, visibility=["model"], name="lookup_secret", title="Lookup secret",
              structured_output=False)(lookup_secret)
    apps.add_html_resource(uri, apps_html.APP_HTML, name="counter-app", title="Counter app",
                           description="The counter MCP App", csp=ResourceCsp.model_validate(ui["csp"]),
                           permissions=ResourcePermissions.model_validate(ui["permissions"]),
                           prefers_border=ui["prefersBorder"])
    mcp.add_tool(apps_supported, name="apps_supported", title="Apps supported", structured_output=False)
    return apps


# ---------------------------------------------------------------- HTTP serving


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--http", action="store_true", help="Streamable HTTP at /mcp")
    mode.add_argument("--sse", action="store_true", help="legacy HTTP+SSE at /sse (+ /messages/)")
    parser.add_argument("--json-response", action="store_true", help="--http: answer POSTs with JSON, not SSE")
    parser.add_argument("--stateless", action="store_true", help="--http: the SDK's stateless mode (no session)")
    parser.add_argument("--port", type=int, default=0, help="--http: listen on this port (default: a free one)")
    parser.add_argument("--apps", action="store_true", help="add the MCP Apps counter (tests/servers/APPS.md)")
    args = parser.parse_args(argv)
    if args.apps:
        mcp._apply_extension(_apps_extension())  # pyright: ignore[reportPrivateUsage]
    if (args.json_response or args.stateless) and not args.http:
        parser.error("--json-response and --stateless need --http")

    if args.http:
        serve_http(mcp.streamable_http_app(json_response=args.json_response, stateless_http=args.stateless), "/mcp",
                   args.port)
    elif args.sse:
        serve_http(mcp.sse_app(), "/sse")
    else:
        mcp.run("stdio")


if __name__ == "__main__":
    main()
