"""``ServerGroup``: many MCP servers behind one tool list, for one model.

    with ServerGroup("~/.cursor/mcp.json") as group:     # or {"files": "npx ...", "web": "https://..."}
        tools = group.list_tools()                        # namespaced: files_read, web_fetch, ...
        result = group.call_tool("files_read", {"path": "a.txt"})
        results = group.call_tools([("files_read", {...}), ("web_fetch", {...})])   # in parallel

Servers connect in parallel; one that fails is recorded in ``status`` and its tools are absent,
the others work. ``connect()`` raises only when every enabled server failed.
"""
from __future__ import annotations

import functools
import logging
import os
import re
import threading
from concurrent.futures import Future, InvalidStateError
from concurrent.futures import wait as wait_all
from contextvars import copy_context
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._members import Member, in_parallel, watch
from ._naming import namespaced_names, sanitize  # noqa: F401 - namespaced_names: also importable from here
from .._util.sentinel import DEFAULT
from ._tooltable import ToolTable, excluded
from ..client import Client
from .config import ServerConfig, load_each
from ..errors import (
    ClientClosedError, ConnectError, MCPError, RequestTimeout, RPCError, ToolChangedError, ToolError, TransportError,
    UnknownToolError,
)
from .on_demand import OnDemandTools
from .pins import ToolChange, ToolPins
from .search import SEARCH_TOOL_NAME, ToolIndex, search_result
from ..policies.timeout import CallTimeout
from ..types._base import _SLOTS, _Value
from ..types._json import JSONObject
from ..transports.base import Transport
from ..types import Tool, ToolResult

__all__ = ["ServerGroup", "ServerStatus"]

log = logging.getLogger("mcpclient.group")

_WORKERS = 8


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ServerStatus(_Value):
    """One server of a group: ``state`` is ``"new"``, ``"ready"``, ``"failed"`` (could not
    connect or list its tools), ``"lost"`` (its connection ended), ``"closed"`` or ``"disabled"``;
    ``error`` the exception that put it there; ``tools`` how many of its tools the group exposes;
    ``protocol`` the revision agreed with it (None before it connected)."""

    state: str
    error: Optional[BaseException] = field(default=None, compare=False, hash=False)
    tools: int = 0
    protocol: Optional[str] = field(default=None, compare=False, hash=False)

    def to_json(self) -> JSONObject:
        """``{"state", "protocol", "tools", "error"}`` for a health endpoint: ``error`` is the
        exception's type and message (``None`` when there is none; errors carry no secrets)."""
        error = None if self.error is None else f"{type(self.error).__name__}: {self.error}".partition("\n")[0]
        return {"state": self.state, "protocol": self.protocol, "tools": self.tools, "error": error}


class ServerGroup:
    """Several MCP servers as one: namespaced tools, parallel connects and calls, per-server status.

    Args:
        servers: a config file path, an ``{"mcpServers": {...}}`` document, ``{name: ServerConfig}``
            (``load_config``), or ``{name: target}`` where a target is anything ``Client()`` takes,
            an ``mcpServers`` entry (``{"command": ..., "args": [...]}``, ``{"url": ...}``) or a
            ``Client`` to adopt (the group connects it if needed, and closes it).
        separator: between the server and the tool name (``files_read``); letters, digits, ``_``, ``-``.
        include / exclude: tool-name globs for every server, matched against the original tool name
            or the namespaced one (``exclude`` wins); config entries may add their own.
        client_options: keyword arguments for every ``Client`` the group makes (``reconnect=``,
            ``keepalive=``, ``timeout=``, handlers ...); a config entry's ``timeout``/``protocol`` win.
        connect_timeout: for each server's ``connect()`` (default: the client's timeout).
        pins: a ``ToolPins`` checked on every ``list_tools()``: new tools are pinned on first sight;
            a changed one is logged and kept in ``pin_changes`` (``on_pin_change="warn"``), or
            (``"refuse"``) left out of ``list_tools()`` and refused by ``call_tool`` (``ToolChangedError``).
        on_tools_changed: ``(server, tools)`` after a server said its tools changed and the group
            took its new list (on that client's notification thread).
    """

    def __init__(self, servers: Union[str, "os.PathLike[str]", Mapping[str, object]], *, separator: str = "_",
                 include: Sequence[str] = (), exclude: Sequence[str] = (),
                 client_options: Optional[Mapping[str, object]] = None, connect_timeout: Optional[float] = None,
                 pins: Optional[ToolPins] = None, on_pin_change: str = "warn",
                 on_tools_changed: Optional[Callable[[str, List[Tool]], object]] = None) -> None:
        if not isinstance(separator, str) or not re.fullmatch(r"[a-zA-Z0-9_-]{1,4}", separator):
            raise ValueError("separator must be 1-4 of the characters a-z, A-Z, 0-9, _ and -")
        if on_pin_change not in ("warn", "refuse"):
            raise ValueError("on_pin_change must be 'warn' or 'refuse'")
        if pins is not None and not isinstance(pins, ToolPins):
            raise TypeError("pins must be a ToolPins")
        for value, what in ((include, "include"), (exclude, "exclude")):
            if isinstance(value, str) or not all(isinstance(p, str) for p in value):
                raise TypeError(f"{what} must be a sequence of glob strings")
        if not isinstance(servers, Mapping) or _is_config(servers):
            servers = load_each(servers)  # an entry that cannot be used fails alone (its status)
        self.separator = separator
        self.include, self.exclude = tuple(include), tuple(exclude)
        self.client_options = dict(client_options or {})
        self.connect_timeout = connect_timeout
        self.pins = pins
        self.on_pin_change = on_pin_change
        self.on_tools_changed = on_tools_changed
        #: Pin changes seen by the latest ``list_tools()`` of each server (added tools excluded).
        self.pin_changes: List[ToolChange] = []
        self._lock = threading.RLock()
        self._members: Dict[str, Member] = {}
        for name, source in servers.items():
            if not isinstance(name, str) or not name:
                raise ValueError("server names must be non-empty strings")
            self._members[name] = _member(name, source)
        if not self._members:
            raise ValueError("a ServerGroup needs at least one server")
        self._table = ToolTable()
        self._index: Optional[ToolIndex] = None
        self._refused: Dict[Tuple[str, str], List[ToolChange]] = {}
        self._closed = False

    def __repr__(self) -> str:
        with self._lock:
            states = ", ".join(f"{m.name}={m.current_state}" for m in self._members.values())
        return f"<ServerGroup {states}>"

    def __enter__(self) -> "ServerGroup":
        try:
            return self.connect()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def names(self) -> List[str]:
        """The servers' names, in the order given."""
        return list(self._members)

    def client(self, server: str) -> Client:
        """The ``Client`` of one server (``KeyError`` if unknown, ``ConnectError`` if it never connected)."""
        member = self._members[server]
        if member.client is None:
            raise ConnectError(f"server {server!r} has no client ({member.state})")
        return member.client

    # --- lifecycle ------------------------------------------------------------------------------

    def connect(self) -> "ServerGroup":
        """Connect every enabled server in parallel and list its tools. A server that fails is
        recorded in ``status``; ``ConnectError`` only if every enabled server failed, or the tool
        pins could not be written (``with`` then stops every server it started). Called again,
        it retries the failed and lost servers. Returns self."""
        if self._closed:
            raise ClientClosedError("the group is closed; make a new ServerGroup")
        todo = [m for m in self._members.values() if m.current_state in ("new", "failed", "lost")]
        in_parallel(self._connect_one, todo, _WORKERS)
        try:
            self._rebuild()
        except OSError as exc:  # the pins file (``__enter__`` then closes every server it started)
            raise ConnectError(f"the group could not write its tool pins to {self.pins.path if self.pins else '?'}: "
                               f"{exc.strerror or exc}") from exc
        enabled = [m for m in self._members.values() if m.state != "disabled"]
        if enabled and all(m.state == "failed" for m in enabled):
            detail = "; ".join(f"{m.name}: {m.error}" for m in enabled)
            raise ConnectError(f"no server of the group could connect ({detail})") from enabled[0].error
        return self

    def close(self) -> None:
        """Close every server's client in parallel; idempotent, bounded (about 5 s at most)."""
        with self._lock:
            self._closed = True
            members = [m for m in self._members.values() if m.client is not None]
        in_parallel(self._close_one, members, len(members))  # all at once: each close() is bounded

    def _connect_one(self, member: Member) -> None:
        try:
            tools = member.open(self.client_options, self.connect_timeout)
            watch(self, member, self.on_tools_changed)
        except Exception as exc:  # recorded, not raised: the other servers keep working
            log.warning("server %r failed: %s", member.name, exc)
            with self._lock:
                member.state, member.error, member.tools = "failed", exc, []
            return
        with self._lock:
            member.state, member.error, member.tools, member.down = "ready", None, tools, False

    def _tools_changed(self, server: str, tools: List[Tool]) -> None:
        with self._lock:
            member = self._members[server]
            if member.state == "ready":
                member.tools = tools
                self._rebuild()

    def _close_one(self, member: Member) -> None:
        assert member.client is not None
        try:
            member.client.close()
        except Exception as exc:  # close() is bounded and should not raise; keep closing the rest
            log.warning("closing server %r failed: %s", member.name, exc)
        with self._lock:
            if member.state != "disabled":
                member.state = "closed"

    # --- status ---------------------------------------------------------------------------------

    @property
    def status(self) -> Dict[str, ServerStatus]:
        """``{server: ServerStatus}`` now, in the order given."""
        with self._lock:
            counts = self._table.counts()
            return {m.name: ServerStatus(m.current_state, m.error, counts.get(m.name, 0) if m.listed else 0,
                                         m.client.server.protocol_version if m.client is not None
                                         and m.client.server is not None else None)
                    for m in self._members.values()}

    def health(self) -> JSONObject:
        """The group's status as JSON for a health endpoint: ``{"ok": bool, "servers": {name:
        ServerStatus.to_json()}}``; ``ok`` when every enabled server is ready. Sends nothing."""
        statuses = self.status
        servers: JSONObject = {name: status.to_json() for name, status in statuses.items()}
        ok = all(s.state == "ready" for s in statuses.values() if s.state != "disabled")
        return {"ok": ok, "servers": servers}

    # --- tools ----------------------------------------------------------------------------------

    def list_tools(self, refresh: bool = False) -> List[Tool]:
        """Every ready server's tools, namespaced (``<server><separator><tool>``, at most 64 of
        ``[a-zA-Z0-9_-]``), filtered by the include/exclude globs. ``refresh=True`` asks the servers
        again (a lost server with a ``Reconnect`` policy comes back); otherwise the lists from
        ``connect()`` are used."""
        if refresh:
            live = [m for m in self._members.values() if m.client is not None and m.state in ("ready", "lost")]
            in_parallel(self._connect_one, live, _WORKERS)
        self._rebuild()
        with self._lock:
            return list(self._table.tools)

    def _rebuild(self) -> None:
        with self._lock:
            members = [m for m in self._members.values() if m.listed]
            self.pin_changes = self._check_pins(members)
            entries = [(m.name, tool) for m in members for tool in m.tools
                       if (m.name, tool.name) not in self._refused and not excluded(
                           (tool.name, f"{sanitize(m.name)}{self.separator}{sanitize(tool.name)}"),
                           ((self.include, self.exclude), (m.include, m.exclude)))]
            self._table, self._index = ToolTable(entries, self.separator), None

    def _check_pins(self, members: List[Member]) -> List[ToolChange]:
        if self.pins is None:
            return []
        known = {(c.server, c.tool, c.diff) for c in self.pin_changes}
        found = [c for m in members for c in self.pins.review(m.name, m.tools)]
        self._refused = {}
        for change in (c for c in found if c.kind == "changed"):
            if (change.server, change.tool, change.diff) not in known:
                log.warning("tool %r of server %r changed since it was pinned:\n%s", change.tool, change.server,
                            change.diff)
            if self.on_pin_change == "refuse":
                self._refused.setdefault((change.server, change.tool), []).append(change)
        return found

    def accept_tool_changes(self, server: Optional[str] = None) -> None:
        """Pin the current definitions of ``server``'s tools (every ready server's by default)."""
        if self.pins is None:
            raise ValueError("the group has no pins")
        with self._lock:
            for m in self._members.values():
                if (server is None or m.name == server) and m.state == "ready":
                    self.pins.update(m.name, m.tools)
        self._rebuild()

    def resolve(self, name: str) -> Tuple[str, str]:
        """``(server, tool)`` for an exposed name, or for ``"server.tool"``; ``UnknownToolError``
        (a ``KeyError``) with close matches otherwise."""
        if not isinstance(name, str):
            raise TypeError("a tool name must be a string")
        with self._lock:
            route = self._table.lookup(name)
            if route is not None:
                return route
            for (server, tool), changes in self._refused.items():
                if name in (f"{server}.{tool}", f"{sanitize(server)}{self.separator}{sanitize(tool)}"):
                    raise ToolChangedError(server, tool, changes)
            states = {m.name: m.current_state for m in self._members.values()}
            detail = " (not connected: call connect())" if set(states.values()) <= {"new", "disabled"} else ""
            for server, state in states.items():
                prefixes = (server + ".", sanitize(server) + self.separator)
                if not detail and state != "ready" and name.startswith(prefixes):
                    detail = f" (server {server!r} is {state})"
            raise UnknownToolError(name, self._table.suggestions(name), detail)

    def known_tool(self, name: str) -> Optional[Tool]:
        """The exposed tool ``name`` from the group's latest listing, without a request (None:
        no listing named it): how the adapters check a model's call without a request."""
        with self._lock:
            tools = self._table.tools
        return next((tool for tool in tools if tool.name == name), None)

    def call_tool(self, name: str, arguments: Optional[Mapping[str, object]] = None, *, timeout: CallTimeout = DEFAULT,
                  raise_on_error: bool = False) -> ToolResult:
        """Call a tool by its exposed (or ``"server.tool"``) name. ``search_tools`` is answered
        here (see ``search_tools``) unless a server's tool has that name."""
        if name == SEARCH_TOOL_NAME and name not in self._table.routes:
            return self._search_result(arguments)
        server, tool = self.resolve(name)
        client = self.client(server)
        try:
            result = client.call_tool(tool, arguments, timeout=timeout, raise_on_error=raise_on_error)
        except TransportError as exc:
            self._record(server, exc)
            raise
        except (RPCError, ToolError):
            self._record(server, None)  # (the server answered)
            raise
        self._record(server, None)
        return result

    def _record(self, server: str, exc: Optional[BaseException]) -> None:
        """How the latest call to ``server`` went: a transport error marks it down (``"lost"``,
        with the error) until a call answers again, which clears both."""
        member = self._members[server]
        if exc is None and not member.down:
            return
        with self._lock:
            member.error, member.down = exc, exc is not None

    def call_tools(self, calls: Sequence[Tuple[str, Optional[Mapping[str, object]]]], *,
                   timeout: Optional[float] = None) -> List[Union[ToolResult, MCPError]]:
        """Run ``(name, arguments)`` calls in parallel; their results in the same order. A call that
        fails is its exception in the list, never raised; after ``timeout`` seconds (overall) the
        unfinished calls are cancelled and reported as ``RequestTimeout``."""
        if isinstance(calls, (str, bytes)):
            raise TypeError("calls must be a sequence of (name, arguments) pairs")
        calls = list(calls)  # an iterator is checked, then run, not used up by the check
        if not all(isinstance(c, (tuple, list)) and len(c) == 2 for c in calls):
            raise TypeError("calls must be a sequence of (name, arguments) pairs")
        slots: List[Any] = []  # a result or an error now, or the call's future
        for name, arguments in calls:
            try:
                if name == SEARCH_TOOL_NAME and name not in self._table.routes:
                    slots.append(self._search_result(arguments))
                    continue
                server, tool = self.resolve(name)
                future = _start_call(self.client(server), tool, arguments)
                future.add_done_callback(functools.partial(self._note, server))
                slots.append(future)
            except Exception as exc:  # per call, as a value
                slots.append(exc)
        wait_all([s for s in slots if isinstance(s, Future)], timeout=timeout)
        results: List[Union[ToolResult, MCPError]] = []
        for slot in slots:
            if isinstance(slot, Future):
                if slot.done() and not slot.cancelled():
                    slot = slot.exception() or slot.result()
                else:
                    slot.cancel()
                    slot = RequestTimeout(f"call_tools: no answer within {timeout} s; the call was cancelled")
            results.append(slot)
        return results

    def _note(self, server: str, future: "Future[Any]") -> None:
        error = None if future.cancelled() else future.exception()
        if error is None or isinstance(error, (TransportError, RPCError, ToolError)):
            self._record(server, error if isinstance(error, TransportError) else None)

    # --- search ---------------------------------------------------------------------------------

    def on_demand(self, *, always: Sequence[str] = (), k: int = 10, max_loaded: int = 64) -> "OnDemandTools":
        """A conversation's tools loaded on demand: ``search_tools`` and ``always`` at first, then
        what the model's searches find (``OnDemandTools``; hand it to the adapters)."""
        return OnDemandTools(self, always=always, k=k, max_loaded=max_loaded)

    def search_tools(self, query: str, k: int = 10, always: Sequence[str] = ()) -> List[Tool]:
        """The exposed tools best matching ``query`` (BM25, ``ToolIndex``); ``always`` names come first.
        MCP Apps' app-only tools are never among them (the search serves a model)."""
        return self._tool_index().search(query, k, always)

    def _tool_index(self) -> ToolIndex:
        with self._lock:
            if self._index is None:
                # Model-visible tools only: MCP Apps' app-only tools never reach the model.
                self._index = ToolIndex(t for t in self._table.tools if t.model_visible)
            return self._index

    def _search_result(self, arguments: Optional[Mapping[str, object]]) -> ToolResult:
        return search_result(self._tool_index(), arguments)


def _member(name: str, source: Any) -> Member:
    """The group's member for one ``servers`` value (``TypeError`` for what names no server)."""
    if isinstance(source, Mapping) and not isinstance(source, ServerConfig):  # one mcpServers entry
        source = load_each({"mcpServers": {name: source}})[name]
    if isinstance(source, ServerConfig):
        return Member(name, functools.partial(Client, source), source.include, source.exclude, source.enabled)
    if isinstance(source, ValueError):  # (from load_each: this entry cannot be used)
        member = Member(name, source)
        member.state, member.error = "failed", source
        return member
    if isinstance(source, Client):
        return Member(name, source, adopted=True)
    if isinstance(source, (str, list, tuple, Transport)):
        return Member(name, functools.partial(Client, source))
    raise TypeError(f"server {name!r}: expected a command string, an argv list, an http(s) URL, a Transport, a "
                    f"Client, a ServerConfig or an mcpServers entry (a dict with \"command\" or \"url\"), not "
                    f"{type(source).__name__}")


def _is_config(servers: Mapping[str, Any]) -> bool:
    """Whether ``servers`` is a whole configuration document (``{"mcpServers": {...}}``, or VS
    Code's ``{"servers": {...}}``) rather than ``{name: target}``."""
    if len(servers) != 1:
        return False
    (key, value), = servers.items()
    return key in ("mcpServers", "servers") and isinstance(value, Mapping) \
        and all(isinstance(entry, Mapping) for entry in value.values())


def _start_call(client: Client, tool: str, arguments: Optional[Mapping[str, object]]) -> "Future[Any]":
    """``client.call_tool_future(...)``, never blocking the caller: a client that is not ready
    (lost, with a ``Reconnect`` policy) reconnects inside that call, so it is made on a thread of
    its own, and the returned future follows it (cancelling it cancels the call)."""
    if client.state not in ("lost", "connecting", "forked"):  # ready, or an error at once (closed, new)
        return client.call_tool_future(tool, arguments)
    outer: "Future[Any]" = Future()

    def follow(inner: "Future[Any]") -> None:
        try:
            if inner.cancelled():
                outer.cancel()
            elif inner.exception() is not None:
                outer.set_exception(inner.exception())
            else:
                outer.set_result(inner.result())
        except InvalidStateError:  # cancelled meanwhile (call_tools' overall timeout)
            pass

    def run() -> None:
        try:
            inner = client.call_tool_future(tool, arguments)
        except BaseException as exc:  # the reconnect failed: the call's error
            try:
                outer.set_exception(exc)
            except InvalidStateError:
                pass
            return
        outer.add_done_callback(lambda f: inner.cancel() if f.cancelled() else None)
        inner.add_done_callback(follow)

    # In the caller's context (its trace span...): the call is the caller's, made on another thread.
    threading.Thread(target=copy_context().run, args=(run,), name=f"mcpclient-group-call-{tool}", daemon=True).start()
    return outer
