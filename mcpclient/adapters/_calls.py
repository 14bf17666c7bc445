"""Running a model's tool calls, shared by the adapters: argument parsing, the parallel call
(``ToolHost.call_tools``: a ``ServerGroup``'s, or a ``Client``'s through ``ClientTools``), and MCP content as provider parts.

A call that cannot run (arguments that are not a JSON object, an unknown tool, a failed
request) becomes an error result for the model, never an exception: the model reads what went
wrong and may try again.
"""
from __future__ import annotations

import base64
import json
import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Protocol, Sequence, Set, Tuple, TypeVar, Union

from .._client.tool_host import ClientTools
from .._util.lazy import load
from ..client import Client
from ..errors import MCPError
from ..types import (
    AudioContent, Content, EmbeddedResource, ImageContent, ResourceLink, TextContent,
    JSONValue, Tool, ToolResult,
)
from ._schema import prune_nulls

Outcome = Union[ToolResult, MCPError, str]  # a str: why the call was not made
T = TypeVar("T")

log = logging.getLogger("mcpclient.adapters")
_warned: Dict[str, None] = {}  # warnings given (insertion-ordered: the oldest goes past _MAX_WARNED)
_warned_lock = threading.Lock()
_MAX_WARNED = 1024


def warn_once(message: str, *args: object) -> None:
    """Log a warning about a tool the first time only: the adapters convert the same tools on
    every model turn, and the same warning each turn would bury the log."""
    text = message % args
    with _warned_lock:
        if text in _warned:
            return
        _warned[text] = None
        if len(_warned) > _MAX_WARNED:
            del _warned[next(iter(_warned))]
    log.warning("%s", text)


def field(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` for a dict, ``obj.key`` for an SDK object."""
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def parse_arguments(raw: Any) -> Union[Dict[str, Any], str]:
    """The arguments object from a JSON string (or a dict), or why it is not one."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return f"arguments must be a JSON object, got {type(raw).__name__}"
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return f"arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return f"arguments must be a JSON object, got {type(value).__name__}"
    return value


@dataclass
class Call:
    """One tool call the model asked for: its id, tool name and parsed arguments (or the error)."""

    id: str
    name: str
    arguments: Union[Dict[str, Any], str]


class ToolHost(Protocol):
    """What the adapters need of whoever holds the tools: a ``Client`` or a ``ServerGroup`` (both
    implement it, as may any object that lists and calls tools)."""

    def list_tools(self) -> List[Tool]:
        """Every tool offered."""

    def known_tool(self, name: str) -> Optional[Tool]:
        """The tool ``name`` from the latest listing, without a request (None: not seen)."""

    def call_tools(self, calls: Sequence[Tuple[str, Optional[Dict[str, Any]]]], *,
                   timeout: Optional[float] = None) -> List[Union[ToolResult, MCPError]]:
        """Run the ``(name, arguments)`` calls at once; each result, or its error, in order."""


def host(target: Union[ToolHost, Client]) -> ToolHost:
    """``target`` as a ``ToolHost``: a ``Client`` through ``ClientTools``, anything else as it is."""
    return ClientTools(target) if isinstance(target, Client) else target


def tool_list(tools: Union[ToolHost, Client, Iterable[Tool]]) -> List[Tool]:
    """``tools`` as a list: the tools given (any iterable of them), or a host's ``list_tools()``."""
    return list(tools) if isinstance(tools, Iterable) else list(tools.list_tools())


def model_tools(tools: Any) -> List[Tool]:
    """The tools a model may see (``tools``: ``Tool``s, or a group or client: its ``list_tools()``):
    all but MCP Apps' app-only ones, whose ``ui.visibility`` leaves out ``"model"`` (a host must
    keep those out of the agent's list; only the app's UI calls them)."""
    return [tool for tool in tool_list(tools) if tool.model_visible]


def offered(tools: Any, include_app_only: bool) -> List[Tool]:
    """What a ``to_*_tools`` converts: ``model_tools(tools)``, or every tool with ``include_app_only``."""
    return tool_list(tools) if include_app_only else model_tools(tools)


class _Listing:
    """The tools ``run_calls`` consults: ``tools`` if given, else the target's ``list_tools()``,
    asked at most once (and only when needed); a failed listing counts as empty."""

    def __init__(self, target: ToolHost, tools: Optional[Sequence[Tool]]) -> None:
        self._target, self._given = target, tools
        self._listed: Optional[Sequence[Tool]] = None

    def _listing(self) -> Sequence[Tool]:
        if self._listed is None:
            try:
                self._listed = self._target.list_tools() or ()
            except MCPError:
                self._listed = ()
        return self._listed

    def tools(self) -> Sequence[Tool]:
        return self._listing() if self._given is None else self._given

    def app_only(self, names: Sequence[str]) -> Set[str]:
        """Which of ``names`` are MCP Apps app-only tools: by the given ``tools``, then the
        target's ``known_tool`` (no request), then the target's listing (once) for names still unknown. A
        name left out of the given ``tools`` is looked up too: they are what the model was shown,
        app-only tools are (rightly) not among them, and a model may name one anyway."""
        found: Dict[str, Tool] = {}
        wanted = set(names)
        for tool in self._given or ():
            if tool.name in wanted:
                found.setdefault(tool.name, tool)
        for name in wanted - set(found):
            tool = self._target.known_tool(name)
            if tool is not None:
                found[name] = tool
        if wanted - set(found):  # a name no listing has shown yet: list once rather than let it through
            for tool in self._listing():
                if tool.name in wanted:
                    found.setdefault(tool.name, tool)
        return {name for name, tool in found.items() if not tool.model_visible}


def _has_null(value: Any) -> bool:
    if isinstance(value, dict):
        return any(v is None or _has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(v is None or _has_null(v) for v in value)
    return False


def run_calls(target: Union[ToolHost, Client], calls: List[Call], *, tools: Optional[Sequence[Tool]] = None,
              timeout: Optional[float] = None) -> List[Outcome]:
    """Run ``calls`` at once through ``target.call_tools``; one outcome per call, in order. ``null``s for omitted optional arguments (strict
    mode) are dropped first, using ``tools``' schemas. A call to an MCP Apps app-only tool is
    refused (an error outcome; nothing is sent): the model was never meant to call it. Without
    ``tools``: the target's ``known_tool`` (its latest listing), else ``target.list_tools()`` once."""
    target = host(target)
    listing = _Listing(target, tools)
    app_only = listing.app_only([c.name for c in calls])
    for call in calls:
        if call.name in app_only and isinstance(call.arguments, dict):
            call.arguments = f"tool {call.name!r} is only available to its MCP App's UI, not to the model"
    outcomes: List[Outcome] = [c.arguments if isinstance(c.arguments, str) else "" for c in calls]
    runnable = [(i, c) for i, c in enumerate(calls) if isinstance(c.arguments, dict)]
    if any(_has_null(c.arguments) for _, c in runnable):  # at any depth: strict mode nests them too
        schemas = {tool.name: tool.input_schema for tool in listing.tools()}
        for _, call in runnable:
            if call.name in schemas:
                call.arguments = prune_nulls(schemas[call.name], call.arguments)
    pairs: List[Tuple[str, Dict[str, Any]]] = [(c.name, c.arguments) for _, c in runnable]  # type: ignore[misc]
    if not pairs:
        return outcomes
    results = target.call_tools(pairs, timeout=timeout)
    for (index, _), result in zip(runnable, results):
        outcomes[index] = result
    return outcomes


# --- content --------------------------------------------------------------------------------------

async def on_a_worker_thread(run: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``run(*args, **kwargs)`` on a worker thread of the running event loop's default executor
    (``asyncio.to_thread``), in a copy of the caller's context (its trace span...): the awaitable
    twins' shared contract. The loop is never blocked; nothing of mcpclient runs on it. A
    cancelled await stops waiting at once; the calls already sent still end on their own (by
    their timeout at the latest) on that thread, and their answers are dropped. ``asyncio``
    loads here (tens of ms): a synchronous program never pays for it."""
    asyncio = load("asyncio")  # the async back ends only
    return await asyncio.to_thread(run, *args, **kwargs)


def data_url(mime_type: str, data: bytes) -> str:
    return f"data:{mime_type};base64,{base64.b64encode(data).decode('ascii')}"


def describe(block: Content) -> str:
    """A text stand-in for a block the provider cannot take as it is."""
    if isinstance(block, (ImageContent, AudioContent)):
        return f"[{block.type}: {block.mime_type or 'unknown type'}, {len(block.data)} bytes]"
    if isinstance(block, ResourceLink):
        parts = [f"[resource link: {block.name or block.uri} <{block.uri}>"]
        if block.mime_type:
            parts.append(f" ({block.mime_type})")
        if block.description:
            parts.append(f": {block.description}")
        return "".join(parts) + "]"
    if isinstance(block, EmbeddedResource):
        res = block.resource
        if res.text is not None:
            return f"[resource <{res.uri}>]\n{res.text}"
        return f"[resource <{res.uri}>: {res.mime_type or 'binary'}, {len(res.blob or b'')} bytes]"
    if isinstance(block, TextContent):
        return block.text
    return f"[unsupported content: {block.type}]"


def structured_text(result: ToolResult) -> Optional[str]:
    """``structured_content`` as JSON text for the model, or None when it only mirrors the text
    blocks, which the model gets already (tokens are money): the same value as a text block (as
    text, or as JSON text that parses to it); an object with one key whose string value is that
    text (``{"content": <the text>}``, as the reference filesystem server sends), or the official
    SDK's ``{"result": <the value>}`` wrapping; a list that the blocks carry one item each."""
    value = result.structured_content
    if value is None:
        return None
    same: List[JSONValue] = [value]
    if isinstance(value, dict) and len(value) == 1:
        (key, inner), = value.items()
        if key == "result" or isinstance(inner, str):  # (another single key names what the text does not)
            same.append(inner)
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    if len(texts) > 1:
        texts.append("\n".join(texts))  # one text split over several blocks
    for text in texts:
        if text in same or _json(text) in same:
            return None
    items = same[-1]
    if isinstance(items, list) and items and len(texts) - (len(texts) > 1) == len(items) \
            and all(t == v or _json(t) == v for t, v in zip(texts, items)):  # a list: one block per item
        return None
    return json.dumps(value, ensure_ascii=False)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON


_NOT_JSON = object()


def error_text(outcome: Union[MCPError, str]) -> str:
    if isinstance(outcome, str):
        return f"Error: {outcome}"
    return f"Error: {type(outcome).__name__}: {outcome}"


def as_text(result: ToolResult) -> str:
    """The whole result as one string (images and other binary content as placeholders)."""
    parts = [describe(block) for block in result.content]
    extra = structured_text(result)
    if extra is not None:
        parts.append(extra)
    text = "\n".join(p for p in parts if p)
    return f"Error: {text}" if result.is_error else text
