"""``ClientTools``: a ``Client`` as a ``ToolHost``, the shape the adapters and ``OnDemandTools``
take whoever holds the tools in (a ``ServerGroup`` is one already).

A ``ToolHost`` lists its tools, names the latest-listed tool without a request (``known_tool``:
MCP Apps' app-only tools are refused to a model by it) and runs a batch of calls at once
(``call_tools``). A client offers the first on its surface, the second privately (its tool
registry) and the third through ``call_tool_future``; this wraps it, so that its own surface
stays what a program calls.
"""
from __future__ import annotations

from concurrent.futures import Future
from typing import List, Mapping, Optional, Protocol, Sequence, Tuple, Union

from .._util.sentinel import DEFAULT
from ..errors import MCPError
from ..policies.timeout import CallTimeout
from ..types import Tool, ToolResult

__all__ = ["ClientTools", "ToolHost"]

#: ``(name, arguments)`` pairs, as ``call_tools`` takes them.
Calls = Sequence[Tuple[str, Optional[Mapping[str, object]]]]


class ToolHost(Protocol):
    """Whoever holds the tools, as the adapters and ``OnDemandTools`` use it: a ``ServerGroup``,
    a ``Client`` through ``ClientTools``, or any object that lists and calls tools."""

    def list_tools(self) -> List[Tool]: ...

    def known_tool(self, name: str) -> Optional[Tool]: ...

    def call_tools(self, calls: Calls, *, timeout: Optional[float] = None) -> List[Union[ToolResult, MCPError]]: ...


class _Client(Protocol):
    """What ``ClientTools`` uses of a ``Client``."""

    def list_tools(self) -> List[Tool]: ...

    def call_tool_future(self, name: str, arguments: Optional[Mapping[str, object]] = None, *,
                         timeout: CallTimeout = DEFAULT) -> "Future[ToolResult]": ...

    def _known_tool(self, name: str) -> Optional[Tool]: ...


class ClientTools:
    """``client`` as a ``ToolHost``."""

    def __init__(self, client: _Client) -> None:
        self.client = client

    def list_tools(self) -> List[Tool]:
        """Every tool the server offers (a request)."""
        return self.client.list_tools()

    def known_tool(self, name: str) -> Optional[Tool]:
        """The tool ``name`` from the client's latest listing, without a request (None: not seen)."""
        return self.client._known_tool(name)

    def call_tools(self, calls: Calls, *, timeout: Optional[float] = None) -> List[Union[ToolResult, MCPError]]:
        """Run the ``(name, arguments)`` calls at once (``timeout``: each's; ``None``: the
        client's). Returns each ``ToolResult``, or its error (never raised), in order."""
        futures: List[Union["Future[ToolResult]", MCPError]] = []
        for name, arguments in calls:
            try:
                futures.append(self.client.call_tool_future(name, arguments,
                                                            timeout=DEFAULT if timeout is None else timeout))
            except MCPError as exc:
                futures.append(exc)
        results: List[Union[ToolResult, MCPError]] = []
        for future in futures:
            try:
                results.append(future if isinstance(future, MCPError) else future.result())
            except MCPError as exc:
                results.append(exc)
        return results
