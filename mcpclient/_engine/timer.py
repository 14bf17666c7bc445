"""``DeadlineTimer``: one thread that ends every call at its deadline.

Whether a thread waits in the call's ``result()`` or nobody does, its deadline ends it here, so
a blocking call and a future end the same way at the same time (a blocking caller's wait hands
its call over only when it is due or the caller leaves: ``CallFuture.unwatched``). Entries are weak references
in a heap: a finished call nobody keeps is freed at once, and finished entries are swept when
they outnumber the live ones. A deadline moved by progress is re-queued instead of fired.

Most calls are watched, so ``watch`` takes no lock: it appends to a queue the timer thread moves
into its heap, and wakes that thread only when the new deadline comes before the one it sleeps
until (with one timeout for every call, almost never; a blocking call handed over when due, every
time) or when the queue is long.
"""
from __future__ import annotations

import heapq
import logging
import threading
import weakref
from collections import deque
from time import monotonic as _monotonic
from typing import Any, Callable, List, Optional, Protocol, Set, Tuple

from .._util.threads import WAIT_MAX, start_thread

__all__ = ["DeadlineTimer", "Timed"]

log = logging.getLogger("mcpclient.session")

_NEVER = float("inf")
_ref = weakref.ref
#: Every this many calls queued, ``watch`` wakes the thread to take them (and sweep the heap).
_QUEUE_MAX = 1024



class Timed(Protocol):
    """What the timer watches: a call, or the keepalive watch."""

    def due(self) -> float:
        """Monotonic time at which it expires (it may move later: then it is watched again)."""

    def done(self) -> bool:
        """Whether it ended (then it is forgotten)."""


def _live(ref: "weakref.ref[Timed]") -> "Optional[Timed]":
    call = ref()
    return None if call is None or call.done() else call


class DeadlineTimer:
    """Calls ``expire(call)`` for each watched call whose deadline passed (on its own thread,
    ``<name>``, started on first use). ``idents`` holds that thread's ident while it runs."""

    def __init__(self, name: str, expire: Callable[[Any], None], idents: Set[int]) -> None:
        self._name = name
        self._expire = expire
        self._idents = idents
        self._cond = threading.Condition()
        self._heap: List[Tuple[float, int, "weakref.ref[Timed]"]] = []
        #: Watched, not yet in the heap (appended without a lock; only the timer thread pops).
        self._incoming: "deque[Tuple[float, weakref.ref[Timed]]]" = deque()
        #: The deadline the thread sleeps until: a watch of an earlier one wakes it (every watch
        #: does while the thread moves the queue into the heap, before it runs, and when idle).
        self._sleeps_until = _NEVER
        self._count = 0
        self._sweep_at = 1024
        self._thread: Optional[threading.Thread] = None
        self._stopped = False

    @property
    def thread(self) -> Optional[threading.Thread]:
        return self._thread

    def watch(self, call: "Timed", due: Optional[float] = None) -> None:
        """Expire ``call`` once ``due`` (default: ``call.due()``) passed, unless it is done."""
        if self._stopped:
            return
        if due is None:
            due = call.due()
        incoming = self._incoming
        incoming.append((due, _ref(call)))
        # (Read after the append: a thread that moved the queue before it published what it
        # sleeps until, so either this entry was moved or the comparison is with that value.)
        if due < self._sleeps_until or not len(incoming) % _QUEUE_MAX:
            with self._cond:
                if self._thread is None and not self._stopped:
                    self._thread = start_thread(self._loop, self._name)
                self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def _loop(self) -> None:
        self._idents.add(threading.get_ident())  # done-callbacks of expired futures run here
        try:
            while True:
                due = self._due()
                if due is None:
                    return
                for call in due:
                    try:
                        self._expire(call)
                    except BaseException:  # the timer must outlive any surprise (a done-callback's
                        # sys.exit() included), or every timeout stops
                        log.exception("timer thread error")
        finally:
            self._idents.discard(threading.get_ident())

    def _due(self) -> "Optional[List[Timed]]":
        """The calls due now (waiting until there are some); None once stopped."""
        heap = self._heap
        with self._cond:
            while True:
                if self._stopped:
                    return None
                self._sleeps_until = _NEVER
                self._take_incoming()
                now = _monotonic()
                if heap and heap[0][0] <= now:
                    break
                self._sleeps_until = heap[0][0] if heap else _NEVER
                self._cond.wait(min(heap[0][0] - now, WAIT_MAX) if heap else None)
            due = []
            while heap and heap[0][0] <= now:
                entry = heapq.heappop(heap)
                call = _live(entry[2])
                if call is None:
                    continue
                due_at = call.due()
                if due_at > now:  # progress moved it
                    heapq.heappush(heap, (due_at, entry[1], entry[2]))
                else:
                    due.append(call)
            return due

    def _take_incoming(self) -> None:
        """(Timer thread, under ``_cond``.) Move the watched calls still running into the heap;
        sweep the finished ones when the heap at least doubled since the last sweep."""
        heap, incoming, push = self._heap, self._incoming, heapq.heappush
        count = self._count
        while incoming:
            deadline, ref = incoming.popleft()
            call = ref()
            if call is None or call.done():  # (most calls end long before their deadline)
                continue
            count += 1
            push(heap, (deadline, count, ref))
        self._count = count
        if len(heap) > self._sweep_at:
            heap[:] = [e for e in heap if _live(e[2]) is not None]
            heapq.heapify(heap)
            self._sweep_at = max(1024, 2 * len(heap))
