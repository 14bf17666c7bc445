"""``Retry``: when a request may be sent again, and how long to wait first — an immutable value.

Modelled on urllib3's ``Retry``: one frozen object states the whole policy, ``replace()`` makes a
changed copy, and ``increment()`` returns the policy left for the next try (one retry fewer, the
reason added to ``history``) without changing the one it was called on, so a single instance can
be every request's starting budget with no lock. A request is repeated only when repeating it is
harmless: the connection was never made (nothing reached the server), or the request is safe to
repeat (the client says so: ``idempotent=True`` for lists, reads, ``ping``…) and the server said
"not now" (429/503, honouring ``Retry-After``) or the connection broke. A request with side effects
(``idempotent=None``: ``tools/call``) is never repeated unless ``retry_tool_calls=True``: a tool
may have acted already. The transport, not this module, knows which request is which.
"""
from __future__ import annotations

import dataclasses
import random
import sys
import time
from email.utils import parsedate_to_datetime
from typing import Any, Dict, FrozenSet, Optional, Tuple, Union

from .._util.sentinel import KEEP, Keep, replaced

__all__ = ["Retry", "parse_retry_after"]

# Slots save memory and attribute-lookup time, but dataclass(slots=True) needs Python 3.10; a
# keyword dict keeps one class body for every version and mypy still sees a plain dataclass.
_SLOTS: Dict[str, Any] = {"slots": True} if sys.version_info >= (3, 10) else {}


@dataclasses.dataclass(frozen=True, **_SLOTS)
class Retry:
    """How an HTTP transport retries. ``Retry(total=0)`` turns retrying off.

    Example::

        policy = Retry(total=5, backoff_factor=0.5, retry_tool_calls=True)
        client = Client(HTTPTransport(url, retry=policy))

    Args:
        total: the most repetitions of one request.
        backoff_factor: the n-th retry waits ``backoff_factor * 2**(n-1)`` s (plus jitter), at most
            ``backoff_max``, unless the server's ``Retry-After`` says otherwise.
        statuses: HTTP statuses meaning "not processed, try later".
        respect_retry_after: wait what ``Retry-After`` (seconds or an HTTP date) asks, up to
            ``retry_after_max`` seconds (longer: give up instead of waiting).
        retry_tool_calls: also repeat ``tools/call`` after a "try later" status or a broken
            connection (only for tools you know are idempotent).
        history: why each retry so far was made (filled in by ``increment``; empty for a policy
            as configured).
    """

    total: int = 2
    backoff_factor: float = 0.2
    backoff_max: float = 10.0
    statuses: FrozenSet[int] = frozenset({429, 503})
    respect_retry_after: bool = True
    retry_after_max: float = 60.0
    retry_tool_calls: bool = False
    history: Tuple[str, ...] = ()

    def replace(
        self, *,
        total: Union[int, Keep] = KEEP,
        backoff_factor: Union[float, Keep] = KEEP,
        backoff_max: Union[float, Keep] = KEEP,
        statuses: Union[FrozenSet[int], Keep] = KEEP,
        respect_retry_after: Union[bool, Keep] = KEEP,
        retry_after_max: Union[float, Keep] = KEEP,
        retry_tool_calls: Union[bool, Keep] = KEEP,
        history: Union[Tuple[str, ...], Keep] = KEEP,
    ) -> "Retry":
        """A copy with the given fields changed (the others keep their values)."""
        return replaced(self, {
            "total": total, "backoff_factor": backoff_factor, "backoff_max": backoff_max,
            "statuses": statuses, "respect_retry_after": respect_retry_after,
            "retry_after_max": retry_after_max, "retry_tool_calls": retry_tool_calls, "history": history,
        })

    def repeatable(self, idempotent: Optional[bool]) -> bool:
        """May a request that reached the server be sent again, retries left or not?

        Args:
            idempotent: ``True`` (repeating it changes nothing), ``False`` (never repeat it) or
                ``None`` (it has side effects: only with ``retry_tool_calls=True``).
        """
        return idempotent is True or (idempotent is None and self.retry_tool_calls)

    def may_repeat(self, idempotent: Optional[bool], *, reached_server: bool) -> bool:
        """May a request that just failed be sent again under this policy?

        Args:
            idempotent: as for ``repeatable``.
            reached_server: the request may have arrived (a broken connection, an error status);
                ``False`` when no connection was made, which makes any request safe to repeat.
        """
        if self.total <= 0:
            return False
        return not reached_server or self.repeatable(idempotent)

    def increment(self, reason: str = "") -> "Retry":
        """The policy for the next try: one retry fewer, ``reason`` appended to ``history``.

        Never changes ``self``. Check ``may_repeat`` first: incrementing an exhausted policy
        raises ``ValueError``.
        """
        if self.total <= 0:
            raise ValueError(f"no retries left (after {', '.join(self.history) or 'none'})")
        return dataclasses.replace(self, total=self.total - 1, history=self.history + (reason,))

    def delay(self, retry_after: Optional[str] = None) -> Optional[float]:
        """Seconds to wait before the retry ``increment`` just counted; ``None`` = do not retry
        (the server asked for a longer wait than ``retry_after_max``).

        Args:
            retry_after: the server's ``Retry-After`` header, if it sent one.
        """
        if retry_after is not None and self.respect_retry_after:
            seconds = parse_retry_after(retry_after)
            if seconds is not None:
                return seconds if seconds <= self.retry_after_max else None
        retries = max(1, len(self.history))
        backoff = min(self.backoff_max, self.backoff_factor * (2.0 ** (retries - 1)))
        return backoff * (0.5 + random.random() / 2)  # jitter: spread clients that failed together


def parse_retry_after(value: str) -> Optional[float]:
    """``Retry-After`` as seconds from now: a number of seconds or an HTTP date (RFC 9110)."""
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())
