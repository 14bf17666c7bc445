"""Tool search: pick the few tools that matter from hundreds, so a model's context stays small.

``ToolIndex(tools).search("create a github issue", k=5)`` ranks tools with BM25 over their names
(split at ``snake_case``, ``camelCase``, dashes and dots; counted twice), descriptions, and
parameter names and descriptions. Pure Python, no dependency; an index of a thousand tools builds
in milliseconds. ``search_tool_definition()`` is a ready ``search_tools`` tool a model can call.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from ..types._json import JSONObject, JSONValue
from ..types import TextContent, Tool, ToolResult

__all__ = ["SEARCH_TOOL_NAME", "ToolIndex", "found_result", "search", "search_result", "search_tool_definition",
           "tokenize"]

SEARCH_TOOL_NAME = "search_tools"

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP = frozenset("a an and are as at be by for from in is it of on or the this to with".split())


def tokenize(text: str) -> List[str]:
    """Lower-case words of ``text``, ``snake_case`` and ``camelCase`` split, stop words dropped."""
    return [w for w in (m.lower() for m in _WORD.findall(text or "")) if w not in _STOP]


def _document(tool: Tool) -> List[str]:
    words = tokenize(tool.name) * 2 + tokenize(tool.title or "") + tokenize(tool.description or "")
    properties = (tool.input_schema or {}).get("properties")
    if isinstance(properties, dict):
        for name, spec in properties.items():
            words += tokenize(str(name))
            described = spec.get("description") if isinstance(spec, dict) else None
            if isinstance(described, str):
                words += tokenize(described)
    return words


class ToolIndex:
    """A BM25 index over tools (``k1=1.2``, ``b=0.75``). Immutable once built."""

    def __init__(self, tools: Iterable[Tool], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.tools: List[Tool] = list(tools)
        self._k1, self._b = k1, b
        self._docs = [Counter(_document(t)) for t in self.tools]
        self._lengths = [sum(d.values()) for d in self._docs]
        self._average = (sum(self._lengths) / len(self._lengths)) if self._lengths else 0.0
        frequency: Counter = Counter()
        for doc in self._docs:
            frequency.update(doc.keys())
        n = len(self._docs)
        self._idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in frequency.items()}

    def __len__(self) -> int:
        return len(self.tools)

    def scores(self, query: str) -> List[float]:
        """The BM25 score of every tool for ``query``, in index order."""
        words = tokenize(query)
        result = []
        for doc, length in zip(self._docs, self._lengths):
            norm = self._k1 * (1 - self._b + self._b * length / (self._average or 1))
            result.append(sum(self._idf.get(w, 0.0) * doc[w] * (self._k1 + 1) / (doc[w] + norm)
                              for w in words if w in doc))
        return result

    def search(self, query: str, k: int = 10, always: Sequence[str] = ()) -> List[Tool]:
        """The tools named in ``always`` (in that order, those that exist), then up to ``k`` others
        that match ``query``, best first (ties keep index order). Tools matching no word are left out."""
        if not isinstance(query, str):
            raise TypeError("query must be a string")
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError("k must be a non-negative integer")
        by_name = {t.name: t for t in self.tools}
        pinned = [by_name[name] for name in dict.fromkeys(always) if name in by_name]
        chosen = {t.name for t in pinned}
        scores = self.scores(query)
        order = sorted((i for i, s in enumerate(scores) if s > 0 and self.tools[i].name not in chosen),
                       key=lambda i: (-scores[i], i))
        return pinned + [self.tools[i] for i in order[:k]]


def search_tool_definition(name: str = SEARCH_TOOL_NAME) -> Tool:
    """A tool a model can call to find tools (``ServerGroup.call_tool`` answers it locally)."""
    schema: Dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What you want to do, in a few words"},
            "k": {"type": "integer", "description": "How many tools to return (default 10)", "minimum": 1,
                  "maximum": 50},
        },
        "required": ["query"],
    }
    description = ("Search the available tools by what they do. Returns the best matches: each one's name, "
                   "description and parameters (inputSchema). The tools found can be called from the next step.")
    return Tool(name, description=description, input_schema=schema,
                raw={"name": name, "description": description, "inputSchema": schema})


def search_result(index: ToolIndex, arguments: Optional[Mapping[str, object]]) -> ToolResult:
    """The answer to a ``search_tools`` call: what the model needs to call each match (its name,
    description and ``inputSchema``), as ``structured_content`` ``{"tools": [...]}`` and the same
    JSON as text (so the adapters send it once); bad arguments are a tool error."""
    return found_result(search(index, arguments))


def found_result(found: Optional[List[Tool]]) -> ToolResult:
    """``search_result`` of what a search found (None: its arguments were wrong)."""
    if found is None:
        text = 'search_tools needs {"query": string, "k": positive integer}'
        return ToolResult([TextContent(text)], None, True, tool=SEARCH_TOOL_NAME)
    listed: List[JSONValue] = [{"name": t.name, "description": t.description or "", "inputSchema": t.input_schema} for t in found]
    structured: JSONObject = {"tools": listed}
    return ToolResult([TextContent(json.dumps(structured, ensure_ascii=False))], structured, False,
                      tool=SEARCH_TOOL_NAME)


def search(index: ToolIndex, arguments: Optional[Mapping[str, object]]) -> Optional[List[Tool]]:
    """The tools a ``search_tools`` call with ``arguments`` finds (at most 50), or None if its
    arguments are not ``{"query": string, "k": positive integer}``."""
    arguments = arguments if isinstance(arguments, Mapping) else {}
    query, k = arguments.get("query"), arguments.get("k", 10)
    if not isinstance(query, str) or isinstance(k, bool) or not isinstance(k, int) or k < 1:
        return None
    return index.search(query, min(k, 50))
