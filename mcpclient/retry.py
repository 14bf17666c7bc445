"""``Retry``: when a request may be sent again, and how long to wait first — an immutable value.

Modelled on urllib3's ``Retry``: one frozen object states the whole policy, ``replace()`` makes a
changed copy. A request is repeated only when repeating it is harmless: the connection was never
made (nothing reached the server), or the method is safe to repeat (lists, reads, ``ping``…) and
the server said "not now" (429/503, honouring ``Retry-After``) or the connection broke. A
``tools/call`` is never repeated unless ``retry_tool_calls=True``: a tool may have acted already.
"""
from __future__ import annotations

from ._records import Record, field, record, replace
from typing import Any, FrozenSet, Optional

__all__ = ["SAFE_METHODS", "Retry", "parse_retry_after"]

#: Methods whose repetition cannot change anything on the server.
SAFE_METHODS: FrozenSet[str] = frozenset({
    "initialize", "ping", "tools/list", "resources/list", "resources/templates/list", "resources/read",
    "resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get", "completion/complete",
    "logging/setLevel", "server/discover",
})


@record
class Retry(Record):
    """How an HTTP transport retries. ``Retry(total=0)`` turns retrying off.

    Args:
        total: the most repetitions of one request.
        backoff_factor: the n-th retry waits ``backoff_factor * 2**(n-1)`` s (plus jitter), at most
            ``backoff_max``, unless the server's ``Retry-After`` says otherwise.
        statuses: HTTP statuses meaning "not processed, try later".
        respect_retry_after: wait what ``Retry-After`` (seconds or an HTTP date) asks, up to
            ``retry_after_max`` seconds (longer: give up instead of waiting).
        retry_tool_calls: also repeat ``tools/call`` after a "try later" status or a broken
            connection (only for tools you know are idempotent).
    """

    total: int = 2
    backoff_factor: float = 0.2
    backoff_max: float = 10.0
    statuses: FrozenSet[int] = field(default_factory=lambda: frozenset({429, 503}))
    respect_retry_after: bool = True
    retry_after_max: float = 60.0
    retry_tool_calls: bool = False

    def replace(self, **changes: Any) -> "Retry":
        """A copy with ``changes`` applied."""
        return replace(self, **changes)

    def may_repeat(self, method: Optional[str], attempt: int, *, reached_server: bool) -> bool:
        """May a request that failed on try number ``attempt`` (0-based) be sent again?"""
        if attempt >= self.total:
            return False
        if not reached_server:
            return True  # nothing was delivered: repeating cannot do anything twice
        return method in SAFE_METHODS or (self.retry_tool_calls and method == "tools/call")

    def wait(self, attempt: int, retry_after: Optional[str] = None) -> Optional[float]:
        """Seconds to wait before retry number ``attempt + 1``; ``None`` = do not retry (the
        server asked for a longer wait than ``retry_after_max``)."""
        if retry_after is not None and self.respect_retry_after:
            seconds = parse_retry_after(retry_after)
            if seconds is not None:
                return seconds if seconds <= self.retry_after_max else None
        import random

        backoff = min(self.backoff_max, self.backoff_factor * (2 ** attempt))
        return backoff * (0.5 + random.random() / 2)  # jitter: spread clients that failed together


def parse_retry_after(value: str) -> Optional[float]:
    """``Retry-After`` as seconds from now: a number of seconds or an HTTP date (RFC 9110)."""
    value = value.strip()
    if value.isdigit():
        return float(value)
    import time
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())
