"""``ToolRegistry``: the tools seen in the latest listing, for what calls need to know of them.

A ``tools/call`` is validated against the tool's ``outputSchema``, a task-augmented call checks
its ``execution.taskSupport``, and a 2026 call over HTTP mirrors its ``x-mcp-header`` arguments
into headers: all from the tool's last listing. A ``tools/list_changed`` notification forgets
everything; each listing carries the generation it started in and writes only if no change
came meanwhile, so a listing that raced with a change can never put old schemas back.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Dict, List, Optional, Tuple

from .modern import header_params
from .types import Tool

__all__ = ["ToolRegistry"]

log = logging.getLogger("mcpclient")

ToolHeaders = Dict[str, List[Tuple[Tuple[str, ...], str]]]


class ToolRegistry:
    """Thread-safe: listings write from callers' or worker threads, changes come on the
    notification thread."""

    def __init__(self) -> None:
        self._tools: Dict[str, Tool] = {}
        self._generation = 0
        self._lock = threading.Lock()

    def forked(self) -> None:
        """In a forked child (at-fork hook): a new lock, the old one may be held by a parent thread."""
        self._lock = threading.Lock()

    def get(self, name: str) -> Optional[Tool]:
        return self._tools.get(name)

    def generation(self) -> int:
        """Pass to ``parse`` for every tool of the listing that starts now."""
        return self._generation

    def forget(self) -> None:
        """The server's tools changed: what earlier listings said no longer holds."""
        with self._lock:
            self._generation += 1
            self._tools = {}

    def parse(self, raw: Any, generation: int, headers: Optional[ToolHeaders]) -> Optional[Tool]:
        """One listed tool, remembered unless the tools changed since ``generation``. With a
        ``headers`` table (2026 over HTTP) its ``x-mcp-header`` arguments go there, and a tool
        whose annotations break the rules is dropped (None) with a warning."""
        tool = Tool.from_wire(raw)
        if headers is not None:  # a call without them may be refused: the newest listing's are kept
            try:
                headers[tool.name] = header_params(tool.input_schema)  # type: ignore[assignment]
            except (ValueError, RecursionError) as exc:  # (a schema nested too deep to walk)
                log.warning("dropped tool %r: invalid x-mcp-header annotation: %s", tool.name, exc)
                return None
        with self._lock:
            if generation == self._generation:
                self._tools[tool.name] = tool
        return tool
