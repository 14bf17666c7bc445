"""Result caching by the server's hints (2026-07-28 ``ttlMs`` / ``cacheScope``).

A cacheable result (the four list methods, ``resources/read``) says how long it stays fresh
(``ttlMs``; absent or 0: not at all) and whether it may be shared (``public``) or belongs to the
credentials it was fetched with (``private``). Entries are keyed by method and the params that
shape the result (the cursor of a page, the URI of a read), and private ones also by a
fingerprint of the credentials, so a token change never serves another identity's data. TTLs are
capped at a day. List-changed and resource-updated notifications invalidate
(``Client(cache=False)`` turns caching off). Results of multi-round requests are never stored
(the client only stores first-round answers).
"""
from __future__ import annotations

import json
import threading
import time
from typing import Any, Dict, Hashable, Optional, Tuple

__all__ = ["CACHEABLE", "ResultCache"]

CACHEABLE = {
    "tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
    "resources/templates/list": "resources", "resources/read": "resources/read",
}
_MAX_TTL = 24 * 3600.0
_MAX_ENTRIES = 1024

Key = Tuple[str, Hashable, Hashable]


class ResultCache:
    """Thread-safe store of fresh results; ``credentials()`` fingerprints the current identity."""

    def __init__(self, credentials: Any) -> None:
        self._credentials = credentials
        self._entries: Dict[Key, Tuple[float, Any]] = {}
        self._lock = threading.Lock()
        self.hits = 0

    def forked(self) -> None:
        """In a forked child (at-fork hook): a new lock, the old one may be held by a parent thread."""
        self._lock = threading.Lock()

    @staticmethod
    def _shape(method: str, params: Optional[Dict[str, Any]]) -> Hashable:
        params = params or {}
        return params.get("uri") if method == "resources/read" else params.get("cursor")

    def get(self, method: str, params: Optional[Dict[str, Any]]) -> Optional[Any]:
        shape = self._shape(method, params)
        now = time.monotonic()
        with self._lock:
            for key in ((method, shape, None), (method, shape, self._credentials())):
                entry = self._entries.get(key)
                if entry is not None:
                    if entry[0] > now:
                        self.hits += 1
                        return _copy(entry[1])  # every caller gets its own: results are mutable dicts
                    del self._entries[key]
        return None

    def put(self, method: str, params: Optional[Dict[str, Any]], result: Any) -> None:
        if not isinstance(result, dict):
            return
        ttl = result.get("ttlMs")
        if not isinstance(ttl, (int, float)) or isinstance(ttl, bool) or ttl <= 0:
            return  # absent, zero or negative: stale at once
        owner = None if result.get("cacheScope") == "public" else self._credentials()
        expires = time.monotonic() + min(ttl / 1000.0, _MAX_TTL)
        with self._lock:
            if len(self._entries) >= _MAX_ENTRIES:
                self._entries.pop(next(iter(self._entries)))
            self._entries[(method, self._shape(method, params), owner)] = (expires, _copy(result))

    def forget(self, kind: str, uri: Optional[str] = None) -> None:
        """The server said ``kind`` (``tools``, ``prompts``, ``resources``, ``resources/read``)
        changed: drop the results of the methods that list it (one ``uri`` for a read)."""
        for method, listed in CACHEABLE.items():
            if listed == kind:
                self.invalidate(method, uri)

    def invalidate(self, method: Optional[str] = None, uri: Optional[str] = None) -> None:
        """Drop everything, every page of ``method``, or (``resources/read``) one ``uri``."""
        with self._lock:
            if method is None:
                self._entries.clear()
                return
            for key in [k for k in self._entries if k[0] == method and (uri is None or k[1] == uri)]:
                del self._entries[key]


def _copy(result: Any) -> Any:
    """A deep copy of a JSON result (the cheapest exact one for JSON data)."""
    return json.loads(json.dumps(result))
