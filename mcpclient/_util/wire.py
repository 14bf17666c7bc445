"""Wire logging with secrets redacted.

``mcpclient.wire`` logs every message at DEBUG (``mcpclient -v`` turns it on). Values under keys
that look secret (tokens, passwords, API keys, authorization) are replaced before formatting, so a
secret never reaches a log record.
"""
from __future__ import annotations

import json
import logging
import re
import sys
from typing import Any, Dict, List, Optional

__all__ = ["format_message", "redact", "should_log", "wire_log"]

wire_log = logging.getLogger("mcpclient.wire")

_SECRET_KEY = r"(token|secret|passw|authoriz|api[-_]?key|credential|cookie|session[-_]?id)"
_MAX_LOGGED = 2000


def _is_secret(key: str) -> bool:
    return key != "progressToken" and re.search(_SECRET_KEY, key, re.I) is not None  # re caches the pattern


#: How deep a logged message is shown; deeper values become "[...]" / "{...}".
_MAX_DEPTH = 32


def redact(value: Any, max_items: Optional[int] = None, max_depth: int = _MAX_DEPTH,
           max_string: Optional[int] = None) -> Any:
    """A copy of ``value`` with every secret-looking key's value replaced by ``"***"``, for a log.

    Bounded whatever a server sent: containers deeper than ``max_depth`` are shown as
    ``"[...]"``/``"{...}"`` (no recursion past it), at most ``max_items`` entries are copied in all
    (the rest become ``"..."``), strings are cut to ``max_string`` characters. Never raises."""
    budget = [sys.maxsize if max_items is None else max_items]
    return _redact(value, max_depth, budget, sys.maxsize if max_string is None else max_string)


def _redact(value: Any, depth: int, budget: List[int], max_string: int) -> Any:
    if isinstance(value, dict):
        if depth <= 0:
            return "{...}"
        out: Dict[Any, Any] = {}
        for key, item in value.items():
            if budget[0] <= 0:
                out["..."] = "..."
                break
            budget[0] -= 1
            out[key] = "***" if isinstance(key, str) and _is_secret(key) else \
                _redact(item, depth - 1, budget, max_string)
        return out
    if isinstance(value, (list, tuple)):
        if depth <= 0:
            return "[...]"
        copy: List[Any] = []
        for item in value:
            if budget[0] <= 0:
                copy.append("...")
                break
            budget[0] -= 1
            copy.append(_redact(item, depth - 1, budget, max_string))
        return copy
    if isinstance(value, str) and len(value) > max_string:
        return value[:max_string] + "..."
    return value


def format_message(message: Any, limit: int = _MAX_LOGGED) -> str:
    """``message`` as JSON for a log line, secrets redacted, at most about ``limit`` characters;
    the cost is bounded by ``limit`` too (not by the message's size or depth). Never raises."""
    try:
        text = json.dumps(redact(message, max_items=limit, max_string=limit), ensure_ascii=False, default=repr)
    except Exception as exc:  # a value json cannot show (an odd object from a custom transport)
        return f"<unprintable {type(message).__name__}: {type(exc).__name__}>"
    return text if len(text) <= limit else text[:limit] + "... (truncated)"


def should_log(count: int) -> bool:
    """True for the first ten occurrences, then the 100th, 1000th…: how often a repeated warning
    is logged, so a misbehaving server cannot flood the logs (the counts stay exact)."""
    return 0 < count <= 10 or 10 ** (len(str(count)) - 1) == count  # (no math.log10: import cost)
