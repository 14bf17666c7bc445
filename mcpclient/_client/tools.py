"""``ToolRegistry``: the tools seen in the latest listing, for what calls need to know of them.

A ``tools/call`` is validated against the tool's ``outputSchema``, a task-augmented call checks
its ``execution.taskSupport``, and a 2026 call over HTTP mirrors its ``x-mcp-header`` arguments
into headers: all from the tool's last listing. A ``tools/list_changed`` notification forgets
everything; each listing carries the generation it started in and writes only if no change
came meanwhile, so a listing that raced with a change can never put old schemas back.

``lookup`` is how a call learns a tool it has not seen listed (so that validation never depends
on whether the caller happened to list first): one listing per generation, however many threads
ask at once (``SingleFlight``); a tool missing from a complete listing is not listed for again
until the tools change. A tool's description is cut to ``Limits(server_text=)`` as it is
parsed (``server_text``): what every caller of ``list_tools`` hands on is bounded.
"""
from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Protocol, Union

from .._engine.deadline import Deadline
from .._engine.futures import CallFuture, ProgressCallback
from .._util.threads import FlightTimeout, SingleFlight
from .._util.waiting import wait_for
from ..errors import MCPError, RequestCancelled, RequestTimeout
from ..protocol import params as _params
from ..protocol.stateless import ToolHeaders, header_params
from .. import types as _types  # (its classes load with the first result: see there)
from .._util.sentinel import replaced
from .server_text import TextLimit

if TYPE_CHECKING:
    from .._engine.session import Session
    from ..types import Tool
    from ..extensions.registry import Registry
    from ..protocol.eras import Era

__all__ = ["ToolRegistry", "ToolsOwner", "call_tool", "list_tools", "tool_parser"]

log = logging.getLogger("mcpclient")

#: Listings one lookup may start: again after a change notification dropped one, or after the
#: thread that started a shared one gave up at its (shorter) timeout; then the call goes on.
_LISTINGS = 3


class ToolRegistry:
    """Thread-safe: listings write from callers' or worker threads, changes come on the
    notification thread."""

    def __init__(self, limit: Optional[TextLimit] = None) -> None:
        self._limit = limit  # how much of each description is kept
        self._tools: Dict[str, Tool] = {}
        self._generation = 0
        self._listed = -1  # the generation a lookup's listing completed in (-1: none yet)
        self._lock = threading.Lock()
        self._flights = SingleFlight()  # keyed by generation: one lookup listing per change

    def forked(self) -> None:
        """In a forked child (at-fork hook): a new lock, the old one may be held by a parent thread."""
        self._lock = threading.Lock()
        self._flights = SingleFlight()

    def get(self, name: str) -> Optional[Tool]:
        return self._tools.get(name)

    def lookup(self, name: str, fetch: Callable[[Deadline], Any], deadline: Deadline) -> Optional[Tool]:
        """The tool ``name``, listed first (``fetch(deadline)``: the whole listing, which fills
        this registry) if no listing since the last change has seen it, within the asking call's
        ``deadline``. Threads asking at once share one listing; a tool absent from it gives None
        until the tools change. Raises what ``fetch`` raises, or ``FlightTimeout`` once the
        deadline passed while waiting for another thread's listing (a listing that ended at its
        starter's earlier deadline is started again, by the first waiter with time left)."""
        tool = self._tools.get(name)
        generation = self._generation
        if tool is not None or self._listed == generation:
            return tool

        def listing() -> None:  # (run by the thread that starts the flight, within its deadline;
            try:                # reads generation as it is when it runs)
                fetch(deadline)
            except (RequestTimeout, RequestCancelled):  # asked again by the next call
                raise
            except MCPError:  # the server's answer, or a failed request: not asked again until the
                self._mark(generation)  # tools change (a lost connection forgets them: asked again)
                raise
            self._mark(generation)

        for attempt in range(_LISTINGS):
            try:
                self._flights.run(generation, listing, deadline.remaining())
            except RequestTimeout:
                # Maybe the deadline of the thread that started the shared listing, not ours: with
                # time left, list again (the next flight is ours).
                if deadline.passed() or self._listed == generation or attempt == _LISTINGS - 1:
                    raise
                generation = self._generation
                continue
            tool = self._tools.get(name)
            if tool is not None or generation == self._generation:
                return tool
            # The tools changed while they were listed (the listing was dropped): list again.
            if deadline.passed():
                break
            generation = self._generation
        return self._tools.get(name)

    def _mark(self, generation: int) -> None:
        with self._lock:
            if self._generation == generation:
                self._listed = generation

    def generation(self) -> int:
        """Pass to ``parse`` for every tool of the listing that starts now."""
        return self._generation

    def forget(self) -> None:
        """The server's tools changed: what earlier listings said no longer holds."""
        with self._lock:
            self._generation += 1
            self._tools = {}  # (and _listed now names an older generation: lookups list again)

    def parse(self, raw: Any, generation: int, headers: Optional[ToolHeaders]) -> Optional[Tool]:
        """One listed tool, remembered unless the tools changed since ``generation``. With a
        ``headers`` table (2026 over HTTP) its ``x-mcp-header`` arguments go there, and a tool
        whose annotations break the rules is dropped (None) with a warning."""
        tool = _types.Tool.from_wire(raw)
        if self._limit is not None and tool.description is not None:
            description = self._limit.cut(tool.description, "tool description")
            if description is not tool.description:
                tool = replaced(tool, {"description": description})
        if headers is not None:  # a call without them may be refused: the newest listing's are kept
            try:
                headers[tool.name] = header_params(tool.input_schema)  # type: ignore[assignment]
            except (ValueError, RecursionError) as exc:  # (a schema nested too deep to walk)
                log.warning("dropped tool %r: invalid x-mcp-header annotation: %s", tool.name, exc)
                return None
        with self._lock:
            if generation == self._generation:
                self._tools[tool.name] = tool
        return tool


# --- what a client's tool requests do (``Client.list_tools``, ``Client.call_tool_future``) ---------


class ToolsOwner(Protocol):
    """What tool requests use of the client they are made for (``Channel``)."""

    tools: ToolRegistry
    validate_output: Union[bool, str]
    extensions: Optional[Registry]

    @property
    def session(self) -> Session:
        """The current session."""

    def ready(self, method: str, deadline: Deadline) -> Era:
        """The negotiated era's strategy, once calls are allowed."""

    def listing(self, method: str, key: str, parse: Callable[[Any], Any], deadline: Deadline) -> CallFuture[Any]:
        """A whole listing as one call."""

    def call(self, method: str, params: Optional[Mapping[str, object]], transform: Any, deadline: Deadline, *,
             check: bool = True, on_progress: Optional[ProgressCallback] = None) -> CallFuture[Any]:
        """Send ``method`` the negotiated era's way."""


def tool_parser(channel: ToolsOwner, deadline: Deadline) -> Callable[[Any], Optional[Tool]]:
    """How a listing's tools are parsed (and remembered in ``channel.tools``: output schemas,
    routing headers)."""
    tools = channel.tools  # (not the channel: a future nobody waits on keeps nothing else alive)
    generation, headers = tools.generation(), channel.ready("tools/list", deadline).tool_headers
    return lambda raw: tools.parse(raw, generation, headers)


def list_tools(channel: ToolsOwner, deadline: Deadline) -> CallFuture[List[Tool]]:
    """``tools/list``, every page, within ``deadline`` (the tools are remembered)."""
    return channel.listing("tools/list", "tools", tool_parser(channel, deadline), deadline)


def call_tool(channel: ToolsOwner, name: str, arguments: Optional[Mapping[str, object]], raise_on_error: bool,
              meta: Optional[Mapping[str, object]], deadline: Deadline,
              on_progress: Optional[ProgressCallback]) -> CallFuture[Any]:
    """``tools/call``: validated against the tool's ``outputSchema`` (when none is known, the
    tools are listed once the answer came, within the call's deadline, as the official SDKs
    do: ``Client(validate_output=)``), taken over by a declared extension that claims it (the
    Tasks extension)."""
    known, learn = None, None
    validate = channel.validate_output
    if validate and isinstance(name, str):
        known = channel.tools.get(name)
        if known is None and validate is True:  # (a known tool costs nothing more)
            learn = lambda: _learn_tool(channel, name, deadline)  # noqa: E731
    params, transform = _params.tool_call(name, arguments, raise_on_error, meta, known, learn)
    registry = channel.extensions
    taken = None if registry is None else registry.call_future("tools/call", params, transform, deadline, on_progress)
    if taken is not None:
        return taken
    return channel.call("tools/call", params, transform, deadline, on_progress=on_progress)


def _learn_tool(channel: ToolsOwner, name: str, deadline: Deadline) -> Optional[Tool]:
    """List the tools to learn ``name``'s ``outputSchema`` (``ToolRegistry.lookup``) within
    the call's ``deadline`` (moved by its progress, where it resets). Returns the tool, or
    None: the listing does not name it, or it failed (the call then goes ahead unvalidated).
    ``RequestTimeout`` if the deadline passed first. (On a worker, the wait for another
    thread's listing lets the pool grow by one: that listing's answer may need a worker.)"""
    try:
        with channel.session.worker_waits():
            known = channel.tools.lookup(name, lambda within: wait_for(list_tools, channel, within), deadline)
    except (RequestTimeout, FlightTimeout):
        raise RequestTimeout(f"tools/call {name!r}: no outputSchema known and the tools could not be listed "
                             f"within the call's timeout ({deadline.seconds} s; validate_output='listed' never "
                             "lists)", method="tools/call") from None
    except MCPError as exc:  # refused, malformed, or the connection failed: the call goes ahead
        log.debug("tools/call %r: could not list the tools (%s); its output is not validated", name,
                  type(exc).__name__)
        return None
    if known is None:
        log.debug("tools/call %r: no listed tool of that name; its output is not validated", name)
    return known
