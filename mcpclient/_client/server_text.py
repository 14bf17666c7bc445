"""How much of a server's free text a client keeps.

A server's ``instructions`` and its tools' descriptions are written by whoever runs the server
and read by models: they may carry prompt injection, and some run to tens of kilobytes. The
client keeps at most ``Limits(server_text=)`` characters of each, cut with a marker that
says how much was left out, and logs the first cut of each kind once per client. Nothing here
puts them into a prompt: that is for the application to decide.
"""
from __future__ import annotations

import logging
import threading
from typing import Optional, Set

__all__ = ["TextLimit"]

log = logging.getLogger("mcpclient")

class TextLimit:
    """Cuts a server's text at ``limit`` characters (None: keeps it whole)."""

    def __init__(self, limit: Optional[int], server: str) -> None:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValueError(f"Limits(server_text=) must be a positive number of characters or None, not {limit!r}")
        self.limit = limit
        self._server = server
        self._logged: Set[str] = set()
        self._lock = threading.Lock()

    def cut(self, text: Optional[str], what: str) -> Optional[str]:
        """``text`` (``what`` it is, for the log: ``"instructions"``, ``"tool description"``),
        cut to the limit with a marker."""
        limit = self.limit
        if text is None or limit is None or len(text) <= limit:
            return text
        with self._lock:
            first = what not in self._logged
            self._logged.add(what)
        if first:
            log.warning("server %s: a %s of %d characters was cut to %d (Limits(server_text=)); "
                        "further cuts are not logged", self._server, what, len(text), limit)
        return f"{text[:limit]} [... {len(text) - limit} more characters cut by the client]"
