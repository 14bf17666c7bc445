"""``AbandonedRequests``: the requests a session gave up on (timed out, cancelled, interrupted, ended by the
server), so that their late replies are known for what they are, and handed to the ``on_late``
of the call that wanted them (its answer may name what the request made: a task to cancel).

A bounded memory (the newest ``MEMORY`` ids): a reply to an id older than that counts as unknown.
``wait`` is how a close gives those late replies, and their handlers, a moment first.
"""
from __future__ import annotations

import threading
from time import monotonic as _monotonic
from typing import Any, Callable, Dict, Optional, Set

__all__ = ["AbandonedRequests", "LateHandler", "NOT_ABANDONED"]

#: ``(reply)``: what a call wants done with an answer that comes after it gave up (on a worker).
LateHandler = Callable[[Dict[str, Any]], Any]
#: What ``take`` answers for an id that was not given up.
NOT_ABANDONED = object()
MEMORY = 10_000  # how many given-up ids are remembered to recognise late replies


class AbandonedRequests:
    """Thread-safe. ``add`` and ``take`` may be called under the session's lock (this one's own
    lock is taken after it, never before)."""

    def __init__(self) -> None:
        self._ids: Dict[int, Optional[LateHandler]] = {}  # id -> the call's on_late (None: none)
        self._wanted: Set[int] = set()  # ids whose late reply an on_late waits for
        self._running = 0  # on_late handlers running now
        self._changed = threading.Condition(threading.Lock())

    def add(self, rid: int, on_late: Optional[LateHandler]) -> None:
        """Remember ``rid`` (given up on), with what to do with its late reply."""
        with self._changed:
            self._ids[rid] = on_late
            if on_late is not None:
                self._wanted.add(rid)
            if len(self._ids) > MEMORY:
                oldest = next(iter(self._ids))
                del self._ids[oldest]
                self._wanted.discard(oldest)
                self._changed.notify_all()

    def take(self, rid: Any) -> Any:
        """The late reply to ``rid`` came: its on_late (counted as running until ``ran``), None
        if it has none, or ``NOT_ABANDONED``."""
        if type(rid) is not int:
            return NOT_ABANDONED
        with self._changed:
            on_late = self._ids.pop(rid, NOT_ABANDONED)
            if callable(on_late):
                self._wanted.discard(rid)
                self._running += 1
            return on_late

    def run(self, on_late: LateHandler, reply: Dict[str, Any]) -> None:
        """A worker: the handler ``take`` gave, with the reply."""
        try:
            on_late(reply)
        finally:
            self.ran()

    def ran(self) -> None:
        """A handler ``take`` gave has run (or will not: no worker took it)."""
        with self._changed:
            self._running -= 1
            self._changed.notify_all()

    def wait(self, deadline: float, stop: Callable[[], bool]) -> None:
        """Until ``deadline`` (monotonic) or ``stop()``: until no late reply is wanted and no
        handler runs. Returns at once if none is."""
        with self._changed:
            if self._wanted or self._running:
                self._changed.wait_for(lambda: stop() or not (self._wanted or self._running),
                                       max(0.0, deadline - _monotonic()))
