"""``OnDemandTools``: a model starts with one tool, ``search_tools``, and gets the tools it finds.

Hundreds of tools do not fit a model's context (and providers cap a request's tools). The loop
that large tool sets need: offer ``search_tools`` (and a few tools named in ``always``); when the
model calls it, answer from a BM25 index (``search.ToolIndex``) and load the tools found, so the
next request offers them; the model calls them then. ``OnDemandTools`` is that loop's state, one
per conversation, and a ``ToolHost`` itself: hand it to the adapters in place of the group::

    tools = group.on_demand(always=["files_read"])
    offered = to_openai_tools(tools, strict=True)
    reply = llm.chat.completions.create(
        model=model, messages=messages, tools=offered)
    calls = reply.choices[0].message.tool_calls
    # a search_tools call loads what it finds
    messages += run_openai_tool_calls(tools, calls)
    # the next to_openai_tools(tools) offers those too

Thread-safe. Works over any ``ToolHost`` (a ``ServerGroup``, whose listing is local; or a
``Client``, which lists on each use: a request); the index is rebuilt only when the tools change.
"""
from __future__ import annotations

import threading
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

from .._client.tool_host import Calls, ClientTools, ToolHost
from ..client import Client
from ..errors import MCPError
from ..types import Tool, ToolResult
from .search import SEARCH_TOOL_NAME, ToolIndex, found_result, search, search_tool_definition

__all__ = ["OnDemandTools"]



class OnDemandTools:
    """The tools one conversation has loaded, over ``host``'s (see the module docstring).

    Args:
        host: a ``ServerGroup``, a ``Client``, or anything else with ``list_tools``,
            ``known_tool`` and ``call_tools``.
        always: tool names offered from the start, besides ``search_tools``.
        k: how many tools one search returns when the model does not say (at most 50).
        max_loaded: how many found tools stay loaded; past it the earliest found is dropped
            (``always`` tools stay). Providers cap a request's tools (OpenAI: 128).
    """

    def __init__(self, host: Union[Client, ToolHost], *, always: Sequence[str] = (), k: int = 10, max_loaded: int = 64) -> None:
        if isinstance(always, str) or not all(isinstance(name, str) for name in always):
            raise TypeError("always must be a sequence of tool names")
        for value, what, top in ((k, "k", 50), (max_loaded, "max_loaded", None)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (top and value > top):
                raise ValueError(f"{what} must be a positive integer{f' up to {top}' if top else ''}, not {value!r}")
        self.host = ClientTools(host) if isinstance(host, Client) else host
        self.always = tuple(dict.fromkeys(always))
        self.k = k
        self.max_loaded = max_loaded
        self._search = search_tool_definition()
        self._lock = threading.Lock()
        self._loaded: List[str] = []  # found tools' names, earliest first
        self._index: Optional[ToolIndex] = None
        self._indexed: Tuple[Tool, ...] = ()

    def __repr__(self) -> str:
        return f"<OnDemandTools always={list(self.always)} loaded={self.loaded}>"

    @property
    def loaded(self) -> List[str]:
        """The names of the tools found so far (earliest first), besides ``always``."""
        with self._lock:
            return list(self._loaded)

    def load(self, names: Sequence[str]) -> None:
        """Offer these tools from the next request on (a search does this with what it finds)."""
        with self._lock:
            for name in names:
                if name in self.always or name == SEARCH_TOOL_NAME:
                    continue
                if name in self._loaded:
                    self._loaded.remove(name)
                self._loaded.append(name)
            del self._loaded[:max(0, len(self._loaded) - self.max_loaded)]

    def unload(self) -> None:
        """Forget every found tool (``always`` and ``search_tools`` stay)."""
        with self._lock:
            self._loaded.clear()

    # --- ToolHost ---------------------------------------------------------------------------

    def list_tools(self) -> List[Tool]:
        """``search_tools``, then the ``always`` tools, then those found (that the host still has)."""
        by_name = {tool.name: tool for tool in self.host.list_tools()}
        with self._lock:
            names = list(self.always) + [n for n in self._loaded if n not in self.always]
        return [self._search] + [by_name[name] for name in names if name in by_name]

    def known_tool(self, name: str) -> Optional[Tool]:
        """``search_tools``, or the host's tool ``name`` (no request)."""
        return self._search if name == SEARCH_TOOL_NAME else self.host.known_tool(name)

    def call_tools(self, calls: Calls, *, timeout: Optional[float] = None) -> List[Union[ToolResult, MCPError]]:
        """The calls, in parallel on the host; ``search_tools`` calls are answered here and load
        what they find."""
        calls = list(calls)
        results: List[Any] = [None] * len(calls)
        forwarded = [(i, call) for i, call in enumerate(calls) if call[0] != SEARCH_TOOL_NAME]
        for i, (_, arguments) in ((i, c) for i, c in enumerate(calls) if c[0] == SEARCH_TOOL_NAME):
            results[i] = self._searched(arguments)
        if forwarded:
            for (i, _), result in zip(forwarded, self.host.call_tools([c for _, c in forwarded], timeout=timeout)):
                results[i] = result
        return results

    def call_tool(self, name: str, arguments: Optional[Mapping[str, object]] = None, *,
                  timeout: Optional[float] = None) -> ToolResult:
        """One call (``search_tools`` answered here); a failure raises, as ``Client.call_tool``."""
        [result] = self.call_tools([(name, arguments)], timeout=timeout)
        if isinstance(result, MCPError):
            raise result
        return result

    def _searched(self, arguments: Optional[Mapping[str, object]]) -> ToolResult:
        arguments = dict(arguments) if isinstance(arguments, dict) else {}
        arguments.setdefault("k", self.k)
        index = self._current_index()
        found = search(index, arguments)
        if found:
            self.load([tool.name for tool in found])
        return found_result(found)

    def _current_index(self) -> ToolIndex:
        """The index of the host's model-visible tools, rebuilt when they changed."""
        tools = tuple(tool for tool in self.host.list_tools() if tool.model_visible)
        with self._lock:
            if self._index is None or tools != self._indexed:
                self._index, self._indexed = ToolIndex(tools), tools
            return self._index
