"""Tools for your LLM: MCP tools as provider tool definitions, and the model's calls run back.

Each provider has its own module, imported on its own so nothing pulls in an SDK it does not
need: ``mcpclient.adapters.openai`` and ``.anthropic`` work with plain dicts (no SDK import);
``.langchain`` needs ``langchain-core`` (the ``langchain`` extra). The names are also here.
``model_tools`` drops MCP Apps' app-only tools (the converters do so by default too).
"""
# Each provider module loads on first use of one of its names here.
#
# Imports: ``group``'s and ``client``'s layers and below (a ``ToolHost``: a ``Client`` or a
# ``ServerGroup``); never ``cli`` or ``testing``.
from __future__ import annotations

from typing import Any

from ._calls import model_tools
from ._schema import StrictSchemaError, normalize, to_strict_schema

__all__ = ["StrictSchemaError", "model_tools", "normalize", "to_strict_schema", "to_openai_tools", "run_openai_tool_calls",
           "arun_openai_tool_calls", "to_anthropic_tools", "run_anthropic_tool_uses", "arun_anthropic_tool_uses",
           "to_langchain_tools"]

_HOMES = {"to_openai_tools": "openai", "run_openai_tool_calls": "openai", "arun_openai_tool_calls": "openai",
          "to_anthropic_tools": "anthropic", "run_anthropic_tool_uses": "anthropic",
          "arun_anthropic_tool_uses": "anthropic", "to_langchain_tools": "langchain"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # lazy: each provider module loads on first use

    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
