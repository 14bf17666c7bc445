"""``ServerGroup``: many MCP servers behind one tool list, for one model.

    with ServerGroup("~/.cursor/mcp.json") as group:     # or {"files": "npx ...", "web": "https://..."}
        tools = group.list_tools()                        # namespaced: files_read, web_fetch, ...
        result = group.call_tool("files_read", {"path": "a.txt"})
        results = group.call_tools([("files_read", {...}), ("web_fetch", {...})])   # in parallel

Servers connect in parallel; one that fails is recorded in ``status`` and its tools are absent,
the others work. ``connect()`` raises only when every enabled server failed.
"""
from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import hashlib
import logging
import os
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._sentinel import DEFAULT
from .client import Client
from .config import ServerConfig, load_config
from .errors import ConnectError, MCPError, RequestTimeout, ToolChangedError, TransportError, UnknownToolError
from .pins import ToolChange, ToolPins
from .search import SEARCH_TOOL_NAME, ToolIndex
from .types import _SLOTS, TextContent, Tool, ToolResult, _Value

__all__ = ["ServerGroup", "ServerStatus"]

log = logging.getLogger("mcpclient.group")

#: The longest tool name OpenAI and Anthropic accept, and the characters they allow.
MAX_NAME = 64
_BAD = re.compile(r"[^a-zA-Z0-9_-]+")
_WORKERS = 8


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ServerStatus(_Value):
    """One server of a group: ``state`` is ``"new"``, ``"ready"``, ``"failed"`` (could not
    connect or list its tools), ``"lost"`` (its connection ended), ``"closed"`` or ``"disabled"``;
    ``error`` the exception that put it there; ``tools`` how many of its tools the group exposes."""

    state: str
    error: Optional[BaseException] = field(default=None, compare=False, hash=False)
    tools: int = 0


class _Member:
    """A server of the group and what is known of it (guarded by the group's lock)."""

    def __init__(self, name: str, source: Any, include: Sequence[str] = (), exclude: Sequence[str] = (),
                 enabled: bool = True) -> None:
        self.name = name
        self.source = source  # a ServerConfig, a target, or an adopted Client
        self.client: Optional[Client] = source if isinstance(source, Client) else None
        self.include, self.exclude = tuple(include), tuple(exclude)
        self.state = "new" if enabled else "disabled"
        self.error: Optional[BaseException] = None
        self.tools: List[Tool] = []


def _sanitize(text: str) -> str:
    return _BAD.sub("_", text) or "_"


def _hashed(text: str, key: str) -> str:
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
    return f"{text[:MAX_NAME - 9]}_{digest}"


def namespaced_names(pairs: Sequence[Tuple[str, str]], separator: str = "_") -> List[str]:
    """The exposed name of each ``(server, tool)``: ``<server><separator><tool>`` with characters
    outside ``[a-zA-Z0-9_-]`` made ``_``; longer than 64, cut and given ``_`` and 8 hex digits of
    the SHA-256 of the pair. Names two pairs would share are all given that suffix, so no name
    depends on the order of the servers or tools."""
    names = []
    for server, tool in pairs:
        base = f"{_sanitize(server)}{separator}{_sanitize(tool)}"
        names.append(base if len(base) <= MAX_NAME else _hashed(base, f"{server}\0{tool}"))
    claims: Dict[str, int] = {}
    for name in names:
        claims[name] = claims.get(name, 0) + 1
    return [_hashed(name, f"{server}\0{tool}") if claims[name] > 1 else name
            for name, (server, tool) in zip(names, pairs)]


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


class ServerGroup:
    """Several MCP servers as one: namespaced tools, parallel connects and calls, per-server status.

    Args:
        servers: a config file path, ``{name: ServerConfig}`` (``load_config``), or
            ``{name: target}`` where a target is anything ``Client()`` takes or a ``Client`` to
            adopt (the group connects it if needed, and closes it).
        separator: between the server and the tool name (``files_read``); letters, digits, ``_``, ``-``.
        include / exclude: tool-name globs for every server, matched against the original tool name
            or the namespaced one (``exclude`` wins); config entries may add their own.
        client_options: keyword arguments for every ``Client`` the group makes (``reconnect=``,
            ``keepalive=``, ``timeout=``, handlers ...); a config entry's ``timeout``/``protocol`` win.
        connect_timeout: for each server's ``connect()`` (default: the client's timeout).
        pins: a ``ToolPins`` checked on every ``list_tools()``: new tools are pinned on first sight;
            a changed one is logged and kept in ``pin_changes`` (``on_pin_change="warn"``), or
            (``"refuse"``) left out of ``list_tools()`` and refused by ``call_tool`` (``ToolChangedError``).
    """

    def __init__(self, servers: Union[str, "os.PathLike[str]", Mapping[str, Any]], *, separator: str = "_",
                 include: Sequence[str] = (), exclude: Sequence[str] = (),
                 client_options: Optional[Mapping[str, Any]] = None, connect_timeout: Optional[float] = None,
                 pins: Optional[ToolPins] = None, on_pin_change: str = "warn") -> None:
        if not isinstance(separator, str) or not re.fullmatch(r"[a-zA-Z0-9_-]{1,4}", separator):
            raise ValueError("separator must be 1-4 of the characters a-z, A-Z, 0-9, _ and -")
        if on_pin_change not in ("warn", "refuse"):
            raise ValueError("on_pin_change must be 'warn' or 'refuse'")
        if pins is not None and not isinstance(pins, ToolPins):
            raise TypeError("pins must be a ToolPins")
        for value, what in ((include, "include"), (exclude, "exclude")):
            if isinstance(value, str) or not all(isinstance(p, str) for p in value):
                raise TypeError(f"{what} must be a sequence of glob strings")
        if not isinstance(servers, Mapping):
            servers = load_config(servers)
        self.separator = separator
        self.include, self.exclude = tuple(include), tuple(exclude)
        self.client_options = dict(client_options or {})
        self.connect_timeout = connect_timeout
        self.pins = pins
        self.on_pin_change = on_pin_change
        #: Pin changes seen by the latest ``list_tools()`` of each server (added tools excluded).
        self.pin_changes: List[ToolChange] = []
        self._lock = threading.RLock()
        self._members: Dict[str, _Member] = {}
        for name, source in servers.items():
            if not isinstance(name, str) or not name:
                raise ValueError("server names must be non-empty strings")
            if isinstance(source, ServerConfig):
                member = _Member(name, source, source.include, source.exclude, source.enabled)
            else:
                member = _Member(name, source)
            self._members[name] = member
        if not self._members:
            raise ValueError("a ServerGroup needs at least one server")
        self._routes: Dict[str, Tuple[str, str]] = {}
        self._exposed: List[Tool] = []
        self._index: Optional[ToolIndex] = None
        self._refused: Dict[Tuple[str, str], List[ToolChange]] = {}
        self._closed = False

    def __repr__(self) -> str:
        with self._lock:
            states = ", ".join(f"{m.name}={self._state(m)}" for m in self._members.values())
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
        recorded in ``status``; ``ConnectError`` only if every enabled server failed. Returns self."""
        if self._closed:
            raise ConnectError("the group is closed")
        todo = [m for m in self._members.values() if m.state in ("new", "failed", "lost")]
        self._parallel(self._connect_one, todo)
        self._rebuild()
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
        self._parallel(self._close_one, members)

    def _parallel(self, work: Any, members: List[_Member]) -> None:
        if not members:
            return
        with ThreadPoolExecutor(min(_WORKERS, len(members)), thread_name_prefix="mcpclient-group") as pool:
            for future in [pool.submit(work, m) for m in members]:
                future.result()

    def _connect_one(self, member: _Member) -> None:
        try:
            if member.client is None:
                source = member.source
                if isinstance(source, ServerConfig):
                    member.client = source.client(**self.client_options)
                else:
                    member.client = Client(source, **self.client_options)
            if member.client.state != "ready":
                member.client.connect(**({"timeout": self.connect_timeout} if self.connect_timeout else {}))
            tools = member.client.list_tools()
        except Exception as exc:  # recorded, not raised: the other servers keep working
            log.warning("server %r failed: %s", member.name, exc)
            with self._lock:
                member.state, member.error, member.tools = "failed", exc, []
            return
        with self._lock:
            member.state, member.error, member.tools = "ready", None, tools

    def _close_one(self, member: _Member) -> None:
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
            counts: Dict[str, int] = {}
            for server, _ in self._routes.values():
                counts[server] = counts.get(server, 0) + 1
            return {m.name: ServerStatus(self._state(m), m.error, counts.get(m.name, 0) if self._state(m) == "ready" else 0)
                    for m in self._members.values()}

    def _state(self, member: _Member) -> str:
        if member.state == "ready" and member.client is not None and member.client.state in ("lost", "closed", "forked"):
            return "lost" if member.client.state != "closed" else "closed"
        return member.state

    # --- tools ----------------------------------------------------------------------------------

    def list_tools(self, refresh: bool = False) -> List[Tool]:
        """Every ready server's tools, namespaced (``<server><separator><tool>``, at most 64 of
        ``[a-zA-Z0-9_-]``), filtered by the include/exclude globs. ``refresh=True`` asks the servers
        again (a lost server with a ``Reconnect`` policy comes back); otherwise the lists from
        ``connect()`` are used."""
        if refresh:
            live = [m for m in self._members.values() if m.client is not None and m.state in ("ready", "lost")]
            self._parallel(self._connect_one, live)
        self._rebuild()
        with self._lock:
            return list(self._exposed)

    def _rebuild(self) -> None:
        with self._lock:
            members = [m for m in self._members.values() if self._state(m) == "ready"]
            changes = self._check_pins(members)
            wanted: List[Tuple[str, Tool]] = []
            for m in members:
                for tool in m.tools:
                    plain = f"{_sanitize(m.name)}{self.separator}{_sanitize(tool.name)}"
                    if not (self._filtered(m, tool.name, plain) or (m.name, tool.name) in self._refused):
                        wanted.append((m.name, tool))
            names = namespaced_names([(server, tool.name) for server, tool in wanted], self.separator)
            routes = {name: (server, tool.name) for name, (server, tool) in zip(names, wanted)}
            exposed = [dataclasses.replace(tool, name=name, raw=dict(tool.raw, name=name))
                       for name, (_, tool) in zip(names, wanted)]
            self._routes, self._exposed, self._index = routes, exposed, None
            self.pin_changes = changes

    def _filtered(self, member: _Member, tool: str, exposed: str) -> bool:
        for include, exclude in ((self.include, self.exclude), (member.include, member.exclude)):
            if include and not (_matches(tool, include) or _matches(exposed, include)):
                return True
            if _matches(tool, exclude) or _matches(exposed, exclude):
                return True
        return False

    def _check_pins(self, members: List[_Member]) -> List[ToolChange]:
        if self.pins is None:
            return []
        found: List[ToolChange] = []
        known = {(c.server, c.tool, c.kind, c.diff) for c in self.pin_changes}
        self._refused = {}
        for m in members:
            changes = self.pins.check(m.name, m.tools)
            added = {c.tool for c in changes if c.kind == "added"}
            if added:  # trust on first use
                self.pins.pin(m.name, [t for t in m.tools if t.name in added])
            for change in changes:
                if change.kind == "added":
                    continue
                found.append(change)
                if change.kind == "changed" and (m.name, change.tool, change.kind, change.diff) not in known:
                    log.warning("tool %r of server %r changed since it was pinned:\n%s", change.tool, m.name, change.diff)
                if change.kind == "changed" and self.on_pin_change == "refuse":
                    self._refused.setdefault((m.name, change.tool), []).append(change)
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
            route = self._routes.get(name)
            if route is not None:
                return route
            server, dot, tool = name.partition(".")
            while dot:
                if any(r == (server, tool) for r in self._routes.values()):
                    return server, tool
                head, dot, tool = tool.partition(".")
                server = f"{server}.{head}"
            for (srv, tl), changes in self._refused.items():
                if name in (f"{srv}.{tl}", f"{_sanitize(srv)}{self.separator}{_sanitize(tl)}"):
                    raise ToolChangedError(srv, tl, changes)
            known = list(self._routes) + [f"{s}.{t}" for s, t in self._routes.values()]
            detail = ""
            for m in self._members.values():
                if name.startswith((m.name + ".", _sanitize(m.name) + self.separator)) and self._state(m) != "ready":
                    detail = f" (server {m.name!r} is {self._state(m)})"
        raise UnknownToolError(name, difflib.get_close_matches(name, known, n=3, cutoff=0.6), detail)

    def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT,
                  raise_on_error: bool = False) -> ToolResult:
        """Call a tool by its exposed (or ``"server.tool"``) name. ``search_tools`` is answered
        here (see ``search_tools``) unless a server's tool has that name."""
        if name == SEARCH_TOOL_NAME and name not in self._routes:
            return self._search_result(arguments)
        server, tool = self.resolve(name)
        client = self.client(server)
        try:
            return client.call_tool(tool, arguments, timeout=timeout, raise_on_error=raise_on_error)
        except TransportError as exc:
            self._record(server, exc)
            raise

    def _record(self, server: str, exc: BaseException) -> None:
        with self._lock:
            self._members[server].error = exc

    def call_tools(self, calls: Sequence[Tuple[str, Optional[Dict[str, Any]]]], *,
                   timeout: Optional[float] = None) -> List[Union[ToolResult, MCPError]]:
        """Run ``(name, arguments)`` calls in parallel; their results in the same order. A call that
        fails is its exception in the list, never raised; after ``timeout`` seconds (overall) the
        unfinished calls are cancelled and reported as ``RequestTimeout``."""
        if isinstance(calls, (str, bytes)) or not all(isinstance(c, (tuple, list)) and len(c) == 2 for c in calls):
            raise TypeError("calls must be a sequence of (name, arguments) pairs")
        slots: List[Union[ToolResult, MCPError, Future]] = []
        for name, arguments in calls:
            try:
                if name == SEARCH_TOOL_NAME and name not in self._routes:
                    slots.append(self._search_result(arguments))
                    continue
                server, tool = self.resolve(name)
                future = self.client(server).call_tool_future(tool, arguments)
                future.add_done_callback(lambda f, s=server: self._note(s, f))
                slots.append(future)
            except Exception as exc:  # per call, as a value
                slots.append(exc)  # type: ignore[arg-type]
        pending = [s for s in slots if isinstance(s, Future)]
        wait_all(pending, timeout=timeout)
        results: List[Union[ToolResult, MCPError]] = []
        for slot in slots:
            if not isinstance(slot, Future):
                results.append(slot)
            elif not slot.done():
                slot.cancel()
                results.append(RequestTimeout(f"call_tools: no answer within {timeout} s (cancelled)"))
            elif slot.cancelled() or slot.exception() is not None:
                results.append(slot.exception() if not slot.cancelled() else RequestTimeout("cancelled"))  # type: ignore[arg-type]
            else:
                results.append(slot.result())
        return results

    def _note(self, server: str, future: Future) -> None:
        if not future.cancelled() and isinstance(future.exception(), TransportError):
            self._record(server, future.exception())  # type: ignore[arg-type]

    # --- search ---------------------------------------------------------------------------------

    def search_tools(self, query: str, k: int = 10, always: Sequence[str] = ()) -> List[Tool]:
        """The exposed tools best matching ``query`` (BM25, ``ToolIndex``); ``always`` names come first."""
        with self._lock:
            if self._index is None:
                self._index = ToolIndex(self._exposed)
            index = self._index
        return index.search(query, k, always)

    def _search_result(self, arguments: Optional[Dict[str, Any]]) -> ToolResult:
        arguments = arguments or {}
        query, k = arguments.get("query"), arguments.get("k", 10)
        if not isinstance(query, str) or isinstance(k, bool) or not isinstance(k, int) or k < 1:
            text = "search_tools needs {\"query\": string, \"k\": positive integer}"
            return ToolResult([TextContent(text)], None, True, tool=SEARCH_TOOL_NAME)
        found = self.search_tools(query, min(k, 50))
        listing = [{"name": t.name, "description": t.description or ""} for t in found]
        text = "\n".join(f"{t['name']}: {t['description']}" for t in listing) or "no matching tools"
        return ToolResult([TextContent(text)], {"tools": listing}, False, tool=SEARCH_TOOL_NAME)
