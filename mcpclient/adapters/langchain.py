"""MCP tools as LangChain ``StructuredTool``s (needs ``langchain-core``: the ``langchain`` extra).

Each tool keeps the server's JSON schema as its ``args_schema``, runs through the group or
client (``func``; ``coroutine`` runs the same call in a worker thread), and answers with
``response_format="content_and_artifact"``: the text for the model, the ``ToolResult`` as the
artifact. A result with ``is_error`` raises ``ToolException``, which LangChain turns into an
error ``ToolMessage`` (``status="error"``); so does a call that fails (a timeout, a lost server).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from .._util.lazy import load
from ..errors import MCPError
from ..types import Tool, ToolResult
from ._calls import as_text, error_text, offered, on_a_worker_thread
from ._schema import normalize, prune_nulls

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool

__all__ = ["to_langchain_tools"]


def _tool(target: Any, tool: Tool) -> "StructuredTool":
    tools = load("langchain_core.tools")  # the langchain extra: loaded when a tool is made
    StructuredTool, ToolException = tools.StructuredTool, tools.ToolException

    schema = normalize(tool.input_schema)

    def call(**arguments: Any) -> Tuple[str, ToolResult]:
        try:
            result = target.call_tool(tool.name, prune_nulls(tool.input_schema, arguments))
        except MCPError as exc:  # a failed call is an error for the model, as in the other adapters
            raise ToolException(error_text(exc)) from exc
        if result.is_error:
            raise ToolException(as_text(result))
        return as_text(result), result

    async def acall(**arguments: Any) -> Tuple[str, ToolResult]:
        return await on_a_worker_thread(call, **arguments)

    return StructuredTool(name=tool.name, description=tool.description or tool.title or tool.name,
                          args_schema=schema, func=call, coroutine=acall,
                          response_format="content_and_artifact", handle_tool_error=True,
                          metadata={"mcp_tool": tool.name})


def to_langchain_tools(group_or_client: Any, *, tools: Optional[Sequence[Tool]] = None,
                       include_app_only: bool = False) -> List["StructuredTool"]:
    """One ``StructuredTool`` per tool of ``group_or_client`` (``tools``, or its ``list_tools()``),
    each calling it through ``call_tool``. MCP Apps' app-only tools (``ui.visibility`` without
    ``"model"``) are left out unless ``include_app_only=True``."""
    found = offered(group_or_client if tools is None else tools, include_app_only)
    return [_tool(group_or_client, tool) for tool in found]
