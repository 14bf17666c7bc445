"""Wire logging with secrets redacted.

``mcpclient.wire`` logs every message at DEBUG (``mcpclient -v`` turns it on). Values under keys
that look secret (tokens, passwords, API keys, authorization) are replaced before formatting, so a
secret never reaches a log record.
"""
from __future__ import annotations

import json
import logging
import math
import re
from typing import Any

__all__ = ["format_message", "rarely", "redact", "wire_log"]

wire_log = logging.getLogger("mcpclient.wire")

_SECRET_KEY = r"(token|secret|passw|authoriz|api[-_]?key|credential|cookie|session[-_]?id)"
_MAX_LOGGED = 2000


def _is_secret(key: str) -> bool:
    return key != "progressToken" and re.search(_SECRET_KEY, key, re.I) is not None  # re caches the pattern


def redact(value: Any) -> Any:
    """A copy of ``value`` with every secret-looking key's value replaced by ``"***"``."""
    if isinstance(value, dict):
        return {k: ("***" if isinstance(k, str) and _is_secret(k) else redact(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def format_message(message: Any) -> str:
    text = json.dumps(redact(message), ensure_ascii=False, default=repr)
    return text if len(text) <= _MAX_LOGGED else text[:_MAX_LOGGED] + f"... ({len(text)} chars)"


def rarely(count: int) -> bool:
    """True for the first ten occurrences, then the 100th, 1000th…: how often a repeated warning
    is logged, so a misbehaving server cannot flood the logs (the counts stay exact)."""
    return 0 < count <= 10 or 10 ** int(math.log10(count)) == count
