"""``PerProcessGroup``: the ``ServerGroup`` of the current process, for apps whose servers are
declared in settings and whose processes fork (gunicorn ``--preload``, Celery prefork).

A group belongs to the process that made it: its stdio servers are that process's children, its
connections that process's sockets. So the group is made on first use in each process, never
before a fork is inherited, and a process that finds a group made by its parent makes its own
(leaving the parent's alone: it is not this process's to close). Threads share the process's
group (a ``ServerGroup`` is thread-safe); the first of them connects it while the others wait.
It is closed at interpreter exit, or by ``close()`` (a worker's shutdown signal).

``settings_problems`` checks the settings without starting anything: the Django system check and
``MCP.init_app`` report what it finds.
"""
from __future__ import annotations

import atexit
import inspect
import os
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from ..client import Client
from .._util.sentinel import DEFAULT
from ..errors import MCPError
from ..group.config import load_each
from ..group.pins import ToolPins
from ..group.server_group import ServerGroup, ServerStatus

if TYPE_CHECKING:
    from ..group.on_demand import OnDemandTools
    from ..types import Tool, ToolResult

__all__ = ["PerProcessGroup", "Problem", "Settings", "settings_problems"]

#: What settings give: the servers (an ``mcpServers`` mapping or document, or a path to one) and
#: the options (``ServerGroup``'s keyword arguments; ``pins`` may be a path).
Settings = Tuple[Any, Mapping[str, Any]]
#: The options ``MCP_OPTIONS`` may carry: ``ServerGroup``'s keyword arguments.
OPTIONS = ("separator", "include", "exclude", "client_options", "connect_timeout", "pins", "on_pin_change",
           "on_tools_changed")


class PerProcessGroup:
    """The current process's ``ServerGroup``, made from ``settings()`` on first use.

    Use it where you would use the group: ``list_tools()``, ``call_tool()``, ``call_tools()``,
    ``known_tool()`` (so the LLM adapters take it as it is), ``status``, ``health()``,
    ``search_tools()``, ``on_demand()``, and ``mcp["files"]`` for one server's ``Client``.
    ``group()`` is the group itself. Each makes and connects the group in a process that has none
    yet (``ConnectError`` if no server could connect: the next use tries again).

    Args:
        settings: returns ``(servers, options)``: read when a process makes its group, so the
            framework's settings are read after the app is configured.
        name: what the group is called in errors and ``repr`` (the framework's setting).
    """

    def __init__(self, settings: Callable[[], Settings], *, name: str = "MCP_SERVERS") -> None:
        self._settings = settings
        self.name = name
        self._lock = threading.Lock()
        self._group: Optional[ServerGroup] = None
        self._pid = 0
        self._at_exit = False

    def __repr__(self) -> str:
        group = self._group if self._pid == os.getpid() else None
        return f"<PerProcessGroup {self.name} {group!r}>" if group is not None else \
            f"<PerProcessGroup {self.name} (not made in process {os.getpid()})>"

    # --- the group of this process ----------------------------------------------------------------

    def group(self) -> ServerGroup:
        """This process's group: made and connected now if it has none (a forked process makes
        its own; the parent's is left to the parent)."""
        group, pid = self._group, os.getpid()
        if group is not None and self._pid == pid:
            return group
        with self._lock:
            if self._group is not None and self._pid == pid:
                return self._group
            self._group = None  # (made in the parent before a fork: not this process's)
            servers, options = self._settings()
            group = ServerGroup(servers, **group_options(options))
            try:
                group.connect()
            except BaseException:
                group.close()  # nothing started stays running; the next use tries again
                raise
            self._group, self._pid = group, pid
            if not self._at_exit:  # once: a forked process inherits the registration
                self._at_exit = True
                atexit.register(_close_at_exit, weakref.ref(self))
            return group

    def connect(self) -> "PerProcessGroup":
        """Make this process's group now (a worker's start), or retry its failed and lost servers."""
        group = self.group()
        if any(s.state in ("failed", "lost") for s in group.status.values()):
            group.connect()
        return self

    def close(self) -> None:
        """Close this process's group (its servers stop); the next use makes a new one. A group
        made by another process (the parent of a fork) is left alone. Idempotent."""
        with self._lock:
            group, self._group = (self._group, None) if self._pid == os.getpid() else (None, None)
        if group is not None:
            group.close()

    @property
    def made(self) -> bool:
        """Whether this process has its group (without making it)."""
        return self._group is not None and self._pid == os.getpid()

    # --- what a group does ------------------------------------------------------------------------

    def __getitem__(self, server: str) -> Client:
        """One server's ``Client`` (``KeyError`` if the settings name no such server)."""
        return self.group().client(server)

    @property
    def names(self) -> List[str]:
        """The servers' names, in the order of the settings."""
        return self.group().names

    @property
    def status(self) -> Dict[str, ServerStatus]:
        """``{server: ServerStatus}`` of this process's group (``ServerGroup.status``)."""
        return self.group().status

    def health(self) -> Dict[str, Any]:
        """``ServerGroup.health()`` of this process's group, as JSON for a health endpoint; a group
        that could not be made is ``{"ok": false, "error": ..., "servers": {}}`` (never raises an
        ``MCPError``)."""
        try:
            return self.group().health()
        except MCPError as exc:
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}".partition("\n")[0], "servers": {}}

    def list_tools(self, refresh: bool = False) -> List[Tool]:
        """``ServerGroup.list_tools``: every ready server's tools, namespaced."""
        return self.group().list_tools(refresh)

    def known_tool(self, name: str) -> Optional[Tool]:
        """``ServerGroup.known_tool``: the exposed tool ``name`` from the latest listing."""
        return self.group().known_tool(name)

    def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT,
                  raise_on_error: bool = False) -> ToolResult:
        """``ServerGroup.call_tool``: call a tool by its exposed (or ``"server.tool"``) name."""
        return self.group().call_tool(name, arguments, timeout=timeout, raise_on_error=raise_on_error)

    def call_tools(self, calls: Sequence[Tuple[str, Optional[Dict[str, Any]]]], *,
                   timeout: Optional[float] = None) -> List[Union[ToolResult, MCPError]]:
        """``ServerGroup.call_tools``: run the calls in parallel; each result or error, in order."""
        return self.group().call_tools(calls, timeout=timeout)

    def search_tools(self, query: str, k: int = 10, always: Sequence[str] = ()) -> List[Tool]:
        """``ServerGroup.search_tools``: the exposed tools best matching ``query``."""
        return self.group().search_tools(query, k, always)

    def on_demand(self, *, always: Sequence[str] = (), k: int = 10, max_loaded: int = 64) -> OnDemandTools:
        """``ServerGroup.on_demand``: one conversation's tools, loaded as the model searches."""
        return self.group().on_demand(always=always, k=k, max_loaded=max_loaded)

    def accept_tool_changes(self, server: Optional[str] = None) -> None:
        """``ServerGroup.accept_tool_changes`` (with ``pins``)."""
        self.group().accept_tool_changes(server)


def _close_at_exit(ref: "weakref.ReferenceType[PerProcessGroup]") -> None:
    per_process = ref()
    if per_process is not None:
        per_process.close()


def group_options(options: Mapping[str, Any]) -> Dict[str, Any]:
    """``ServerGroup``'s keyword arguments from ``options`` (``pins`` given as a path becomes a
    ``ToolPins``)."""
    made = dict(options)
    if isinstance(made.get("pins"), (str, os.PathLike)):
        made["pins"] = ToolPins(made["pins"])
    return made


class _AnyVariable(Mapping[str, str]):
    """An environment in which every variable is set (to an http URL, which any field takes): the
    structure of a configuration is checked apart from the variables this process lacks."""

    def __getitem__(self, key: str) -> str:
        return "http://variable.invalid"

    def __contains__(self, key: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


class Problem(NamedTuple):
    """One thing wrong with the settings: which ``setting``, ``error`` (else a warning), ``message``."""

    setting: str
    error: bool
    message: str


def settings_problems(servers: Any, options: Any, *, environ: Optional[Mapping[str, str]] = None) -> List[Problem]:
    """What is wrong with the settings (``MCP_SERVERS``, ``MCP_OPTIONS``), nothing started.
    Errors: the servers are no ``mcpServers`` configuration (or an entry is malformed), the
    options are no mapping of ``ServerGroup`` keyword arguments, ``client_options`` names what
    ``Client`` does not take. Warnings: an entry needs an environment variable this process does
    not have (it would fail to start here; build steps often lack the secrets a server needs)."""
    return _server_problems(servers, environ) + [Problem("MCP_OPTIONS", True, message)
                                                 for message in _option_problems(options)]


def _server_problems(servers: Any, environ: Optional[Mapping[str, str]]) -> List[Problem]:
    if servers is None:
        return [Problem("MCP_SERVERS", True, "is not set: give it the servers, as an mcpServers object "
                                             "({name: {\"command\": ...}}) or a path to an mcp.json file")]
    if not isinstance(servers, (Mapping, str, os.PathLike)):
        return [Problem("MCP_SERVERS", True, "must be an mcpServers object or a path to an mcp.json file, "
                                             f"not {type(servers).__name__}")]
    try:
        shaped = load_each(servers, environ=_AnyVariable())
        here = load_each(servers, environ=environ)
    except (OSError, ValueError) as exc:
        return [Problem("MCP_SERVERS", True, f"cannot be read: {exc}")]
    found = [] if shaped else [Problem("MCP_SERVERS", True, "names no server")]
    for name, entry in shaped.items():
        if isinstance(entry, ValueError):
            found.append(Problem("MCP_SERVERS", True, f"has an entry that cannot be used: {entry}"))
        elif isinstance(here.get(name), ValueError):
            found.append(Problem("MCP_SERVERS", False, f"has an entry this environment cannot start: {here[name]}"))
    return found


def _option_problems(options: Any) -> List[str]:
    if options is None:
        return []
    if not isinstance(options, Mapping):
        return [f"must be a dict of ServerGroup options, not {type(options).__name__}"]
    problems = [f"has no option {key!r} (it takes {', '.join(OPTIONS)})" for key in options
                if key not in OPTIONS]
    client_options = options.get("client_options")
    if client_options is not None:
        if not isinstance(client_options, Mapping):
            problems.append("'client_options' must be a dict of Client keyword arguments")
        else:
            taken = set(inspect.signature(Client.__init__).parameters) - {"self", "target"}
            problems.extend(f"'client_options' has {key!r}, which Client does not take" for key in client_options
                            if key not in taken)
    if not problems:
        try:
            ServerGroup({"check": "unused"}, **group_options(options))  # (starts nothing)
        except (TypeError, ValueError) as exc:
            problems.append(f"is refused: {exc}")
    return problems
