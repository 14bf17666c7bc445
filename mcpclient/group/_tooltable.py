"""A ``ServerGroup``'s table of tools: which exposed name is which server's tool, and the
include/exclude globs that decide which tools are exposed at all."""
from __future__ import annotations

import dataclasses
import difflib
import fnmatch
from typing import Dict, List, Optional, Sequence, Tuple

from ._naming import namespaced_names
from ..types import Tool

__all__ = ["ToolTable", "excluded"]

Rules = Sequence[Tuple[Sequence[str], Sequence[str]]]


def _matches(names: Sequence[str], patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for name in names for p in patterns)


def excluded(names: Sequence[str], rules: Rules) -> bool:
    """True unless every ``(include, exclude)`` rule lets one of ``names`` through: an empty
    ``include`` admits everything; ``exclude`` wins over ``include``."""
    return any((include and not _matches(names, include)) or _matches(names, exclude) for include, exclude in rules)


class ToolTable:
    """Exposed names (``namespaced_names``) to ``(server, tool)`` and back, and the exposed ``Tool``s
    (renamed copies: ``name`` and ``raw["name"]`` are the exposed name). Never changed once built."""

    def __init__(self, entries: Sequence[Tuple[str, Tool]] = (), separator: str = "_") -> None:
        names = namespaced_names([(server, tool.name) for server, tool in entries], separator)
        self.routes: Dict[str, Tuple[str, str]] = {n: (s, t.name) for n, (s, t) in zip(names, entries)}
        self._pairs = {pair: name for name, pair in self.routes.items()}
        self.tools: List[Tool] = [dataclasses.replace(t, name=n, raw=dict(t.raw, name=n))
                                  for n, (_, t) in zip(names, entries)]

    def counts(self) -> Dict[str, int]:
        """How many tools each server has in the table."""
        found: Dict[str, int] = {}
        for server, _ in self.routes.values():
            found[server] = found.get(server, 0) + 1
        return found

    def lookup(self, name: str) -> Optional[Tuple[str, str]]:
        """``(server, tool)`` of an exposed name or a ``"server.tool"`` (the server's name may hold dots)."""
        route = self.routes.get(name)
        if route is not None:
            return route
        server, dot, tool = name.partition(".")
        while dot:
            if (server, tool) in self._pairs:
                return server, tool
            head, dot, tool = tool.partition(".")
            server = f"{server}.{head}"
        return None

    def suggestions(self, name: str) -> List[str]:
        """Up to three tools of the table close to ``name`` (``difflib``), each once, by its exposed
        name (however it was close: as exposed, or as ``"server.tool"``)."""
        known = {**{exposed: exposed for exposed in self.routes},
                 **{f"{s}.{t}": self._pairs[(s, t)] for s, t in self.routes.values()}}
        close = difflib.get_close_matches(name, list(known), n=max(1, len(known)), cutoff=0.6)
        return list(dict.fromkeys(known[found] for found in close))[:3]
