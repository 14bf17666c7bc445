"""Tools for your LLM: MCP tools as provider tool definitions, and the model's calls run back.

Each provider has its own module, and none imports an SDK when it loads:
``mcpclient.adapters.openai`` and ``.anthropic`` work with plain dicts; ``.langchain`` loads
``langchain-core`` (the ``langchain`` extra) when it makes its first tool. The names are also here.
``model_tools`` drops MCP Apps' app-only tools (the converters do so by default too).
"""
# Imports: ``group``'s and ``client``'s layers and below (a ``ToolHost``: a ``Client`` or a
# ``ServerGroup``); never ``cli`` or ``testing``.
from __future__ import annotations

from ._calls import model_tools
from ._schema import StrictSchemaError, normalize, to_strict_schema
from .anthropic import arun_anthropic_tool_uses, run_anthropic_tool_uses, to_anthropic_tools
from .langchain import to_langchain_tools
from .openai import arun_openai_tool_calls, run_openai_tool_calls, to_openai_tools

__all__ = ["StrictSchemaError", "model_tools", "normalize", "to_strict_schema", "to_openai_tools", "run_openai_tool_calls",
           "arun_openai_tool_calls", "to_anthropic_tools", "run_anthropic_tool_uses", "arun_anthropic_tool_uses",
           "to_langchain_tools"]
