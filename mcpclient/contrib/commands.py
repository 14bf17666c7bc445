"""What ``manage.py mcp`` and ``flask mcp`` do, written once: ``status``, ``tools`` and ``call`` on
the process's group, printed as the ``mcpclient`` command line prints (``--json``: one JSON
document). Each returns the exit code (0, or 1 when a server is not ready or a tool reported an
error); ``CommandFailed`` carries what the framework should report instead (a usage error: 2).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence

from ..cli.args import UsageError, parse_pairs
from ..cli.render import render_tool_result, show_tools
from ..cli.terminal import Output
from .._util.sentinel import DEFAULT
from ..errors import MCPError

if TYPE_CHECKING:
    from .process import PerProcessGroup

__all__ = ["CommandFailed", "call", "status", "tools"]


class CommandFailed(Exception):
    """The command cannot run as asked: ``message`` for the user, ``code`` to exit with."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def status(mcp: PerProcessGroup, out: Output, as_json: bool = False) -> int:
    """Each server: state, protocol, tools, error. Exit 1 unless every enabled server is ready."""
    health = mcp.health()
    if as_json:
        out.json(health)
    elif "error" in health:
        out.line(f"no server could connect: {health['error']}")
    else:
        rows = [[name, s["state"], s["protocol"] or "-", str(s["tools"]), s["error"] or ""]
                for name, s in health["servers"].items()]
        out.table(rows, ["server", "state", "protocol", "tools", "error"])
    return 0 if health["ok"] else 1


def tools(mcp: PerProcessGroup, out: Output, server: Optional[str] = None, as_json: bool = False) -> int:
    """The group's tools (namespaced), or one server's own (``server``)."""
    try:
        if server is None:
            found = mcp.list_tools()
        else:
            if server not in mcp.names:
                raise CommandFailed(f"no server {server!r} in MCP_SERVERS (its servers: {', '.join(mcp.names)})", 2)
            found = mcp[server].list_tools()
    except MCPError as exc:
        raise CommandFailed(f"{type(exc).__name__}: {exc}") from exc
    if as_json:
        out.json([tool.raw for tool in found])
    else:
        show_tools(out, found)
    return 0


def call(mcp: PerProcessGroup, out: Output, tool: str, pairs: Sequence[str] = (), *, args_json: Optional[str] = None,
         as_json: bool = False, timeout: Any = DEFAULT) -> int:
    """Call ``tool`` (its namespaced name, or ``server.tool``) with ``key=value`` arguments (values
    parsed as JSON when they are JSON) and/or ``args_json``; exit 1 if the result ``is_error``."""
    arguments: Dict[str, Any] = {}
    try:
        if args_json is not None:
            given = json.loads(args_json)
            if not isinstance(given, dict):
                raise UsageError("--args-json must be a JSON object")
            arguments.update(given)
        arguments.update(parse_pairs(list(pairs), typed=True))
    except ValueError as exc:  # (a JSONDecodeError)
        raise CommandFailed(f"--args-json is not valid JSON: {exc}", 2) from None
    except UsageError as exc:
        raise CommandFailed(str(exc), 2) from None
    try:
        result = mcp.call_tool(tool, arguments, timeout=timeout)
    except MCPError as exc:
        raise CommandFailed(f"{type(exc).__name__}: {exc}") from exc
    if as_json:
        out.json(result.raw)
    else:
        text = render_tool_result(result)
        if text:
            out.line(text)
    return 1 if result.is_error else 0

