"""Thread plumbing shared by the session and transports: names, daemon threads, bounded lanes.

Every thread mcpclient starts is named ``mcpclient-<n>-<role>[-<k>]``: ``n`` counts connections
in this process (a relaunched or fallback transport keeps its number), ``role`` says what the
thread does, and ``k`` numbers the workers of a pool. Leaks are easy to spot in
``threading.enumerate()``. Every one of them is a daemon:
a client the user forgets to close must never hold up interpreter exit (``ThreadPoolExecutor``
workers are joined at exit, which is why lanes are not built on it).
"""
from __future__ import annotations

import itertools
import logging
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, TypeVar

from .lazy import load

try:  # the C class itself: the queue module around it costs import time
    from _queue import SimpleQueue
except ImportError:  # (not CPython)
    from queue import SimpleQueue  # type: ignore[assignment]

T = TypeVar("T")

__all__ = ["FlightTimeout", "Once", "SingleFlight", "WorkerPool", "join_all", "next_instance", "contained_callback", "reraise_on_main_thread", "start_thread", "this_thread"]

log = logging.getLogger("mcpclient")

_instances = itertools.count(1)
_STOP = object()
#: The longest single wait on a lock or condition: longer ones overflow the lock APIs.
WAIT_MAX = min(threading.TIMEOUT_MAX, 365 * 86400.0)


def next_instance() -> int:
    """A per-process counter for thread names (``next()`` on a count is atomic under the GIL)."""
    return next(_instances)


class _ThisThread(threading.local):
    """What the library keeps per thread."""

    #: Whether this thread is one of the library's (``start_thread``): a blocking call there may
    #: need care (``Session.waiting_for``).
    is_library = False
    #: While ``_util.waiting.wait_for`` makes its future: the call this thread will wait for.
    announced: Any = None
    #: The call whose step (its transform) runs on this thread (``_engine.futures.stepping_call``).
    stepping: Any = None


this_thread = _ThisThread()


def start_thread(target: Callable[[], Any], name: str) -> threading.Thread:
    """Start a daemon thread: a forgotten connection must never block interpreter exit."""
    thread = threading.Thread(target=_library_thread, args=(target,), name=name, daemon=True)
    thread.start()
    return thread


def _library_thread(target: Callable[[], Any]) -> None:
    this_thread.is_library = True
    target()


def reraise_on_main_thread(exc: BaseException) -> None:
    """Called with what user code raised: raise it again where it must not be contained, else
    return (the caller logs it and goes on).

    On a client thread everything is contained, ``SystemExit`` and ``KeyboardInterrupt`` too: a
    ``sys.exit()`` there would end only that thread, silently (``threading.excepthook`` ignores
    ``SystemExit``), and a real Ctrl-C is never raised there (Python delivers signals to the main
    thread). On the main thread (a done-callback run by ``cancel()``, say) a ``SystemExit`` or
    ``KeyboardInterrupt`` is the user's, and goes on up.
    """
    if not isinstance(exc, Exception) and threading.current_thread() is threading.main_thread():
        raise exc


def contained_callback(fn: Callable[[T], object]) -> Callable[[T], object]:
    """``fn`` as a future's done-callback that cannot take the others down: ``concurrent.futures``
    logs an ``Exception`` and goes on, but a ``SystemExit`` skipped the callbacks after it and
    ended the client thread that ran it (a worker, the timer). Here it is logged and contained,
    except on the main thread (see ``reraise_on_main_thread``)."""
    def run(future: T) -> object:
        try:
            return fn(future)
        except Exception:
            raise  # concurrent.futures logs it
        except BaseException as exc:
            reraise_on_main_thread(exc)
            log.exception("done-callback %s of a call raised", getattr(fn, "__qualname__", type(fn).__name__))
            return None
    return run


class Once:
    """Runs a step once (a transport's ``start``): a later ``run`` waits for the first, then
    returns, or raises again what the first raised."""

    __slots__ = ("_lock", "_done", "_error")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = False
        self._error: Optional[BaseException] = None

    def run(self, step: Callable[[], Any]) -> None:
        with self._lock:
            if not self._done:
                try:
                    step()
                except BaseException as exc:
                    self._error = exc
                    raise
                finally:
                    self._done = True
                return
        if self._error is not None:
            raise self._error


def join_all(threads: List[threading.Thread], deadline: float) -> None:
    """Join ``threads`` (skipping the current one) within one shared monotonic ``deadline``."""
    me = threading.current_thread()
    for t in threads:
        if t is not me:
            t.join(max(0.0, deadline - time.monotonic()))


class WorkerPool:
    """A small pool of daemon worker threads with bounded admission that never blocks the submitter.

    ``try_submit`` returns ``False`` instead of queueing when ``workers + queue`` items are
    already admitted, so the reader thread can answer "busy" or drop and count, never wait.
    Exceptions from that work are logged (with its label). Workers start on demand.
    """

    def __init__(self, name: str, workers: int, queue: int,
                 on_drop: Optional[Callable[..., None]] = None) -> None:
        self.name = name
        self._on_drop = on_drop  # called with the args of queued work dropped by shutdown()
        self.idents: Set[int] = set()  # worker thread idents, registered before their first task
        self.rejected = 0
        self._max_workers = workers
        self._slots = threading.BoundedSemaphore(workers + queue) if queue >= 0 else None
        self._queue: "SimpleQueue[Any]" = SimpleQueue()
        self._threads: List[threading.Thread] = []
        self._idle = 0  # workers waiting for work that no queued item has claimed
        self._unclaimed = 0  # queued items no worker was free or started for: the next one done takes them
        self._waiting = 0  # workers waiting for other work of this lane (see waiting())
        self._lock = threading.Lock()
        self._stopped = False

    def try_submit(self, label: str, fn: Callable[..., Any], *args: Any) -> bool:
        """Queue ``fn(*args)`` unless the lane is full or stopped; never blocks."""
        slots = self._slots
        if slots is not None and not slots.acquire(blocking=False):
            self.rejected += 1
            return False
        if not self._put((label, fn, args)):
            if slots is not None:
                slots.release()
            return False
        return True

    def _put(self, item: Any) -> bool:
        with self._lock:
            if self._stopped:
                return False
            self._queue.put(item)
            if self._idle:
                self._idle -= 1
            elif not self._grow():
                self._unclaimed += 1
        return True

    def _grow(self) -> bool:
        """Start a worker if the lane may have one more (under ``_lock``); True if it did."""
        if len(self._threads) < self._max_workers + self._waiting:
            name = self.name if self._max_workers == 1 else f"{self.name}-{len(self._threads)}"
            self._threads.append(start_thread(self._work, name))
            return True
        return False

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Around a worker's wait for work queued on this same lane, or a long wait that must
        not take a worker's place (an HTTP answer stream read for a blocking call): one more
        worker may run meanwhile, so a lane whose every worker waits can still make progress
        (workers that were added stay, idle, for later work)."""
        with self._lock:
            self._waiting += 1
            if self._unclaimed and self._grow():
                self._unclaimed -= 1
        try:
            yield
        finally:
            with self._lock:
                self._waiting -= 1

    def _work(self) -> None:
        self.idents.add(threading.get_ident())
        try:
            while True:
                item = self._queue.get()
                if item is _STOP:
                    return
                self._run(*item)
                with self._lock:
                    if self._unclaimed:  # this worker takes the next queued item: it stays busy
                        self._unclaimed -= 1
                    else:
                        self._idle += 1
        finally:
            self.idents.discard(threading.get_ident())

    def _run(self, label: str, fn: Callable[..., Any], args: Any) -> None:
        try:
            fn(*args)
        except BaseException:  # SystemExit from a callback included: the worker must live on
            log.exception("%s failed", label)
        finally:
            if self._slots is not None:
                self._slots.release()

    def threads(self) -> List[threading.Thread]:
        with self._lock:
            return list(self._threads)

    def flush(self, deadline: float) -> bool:
        """A one-worker lane: wait (until ``deadline``, monotonic) for the work queued so far to
        have run; True if it has. Returns at once when the lane is idle (no thread is started)."""
        with self._lock:
            if self._stopped or (self._idle == len(self._threads) and self._queue.empty()):
                return True
        ran = threading.Event()
        if not self.try_submit("flush", ran.set):
            return False
        return ran.wait(max(0.0, deadline - time.monotonic()))

    def shutdown(self, deadline: float) -> None:
        """Drop queued work, stop the workers, and join them until ``deadline`` (monotonic).

        A worker still inside a slow callback at the deadline is left to finish on its own (it is
        a daemon). Queued work is handed to ``on_drop``.
        """
        with self._lock:
            self._stopped = True
            threads = list(self._threads)
        while True:  # queued work is dropped
            try:
                item = self._queue.get_nowait()
            except Exception:
                break
            if item is _STOP:
                continue
            if self._on_drop is not None:
                try:
                    self._on_drop(*item[2])  # (may run user code: done-callbacks of the dropped call)
                except BaseException as exc:
                    reraise_on_main_thread(exc)
                    log.exception("%s: cleanup of dropped work failed", self.name)
        for _ in threads:
            self._queue.put(_STOP)
        join_all(threads, deadline)


class FlightTimeout(TimeoutError):
    """A thread gave up waiting for another thread's job (``SingleFlight.run``'s ``timeout``).

    A subclass, so that callers can tell it from a ``TimeoutError`` the job itself raised (a
    socket timeout, say), which waiters get a copy of.
    """


class _Flight:
    __slots__ = ("done", "value", "error")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: Optional[BaseException] = None


class SingleFlight:
    """One job for many threads that need it at once, with no lock held while it runs.

    The first thread to ask for ``key`` runs ``job()``; threads asking meanwhile wait for its
    outcome (at most ``timeout`` seconds; then ``FlightTimeout``) and get the same value, or a
    copy of its exception chained to the original. A thread asking after the job finished runs
    a new one: callers check first whether what they need is already there.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: Dict[Any, _Flight] = {}

    def run(self, key: Any, job: Callable[[], T], timeout: Optional[float] = None) -> T:
        with self._lock:
            found = self._flights.get(key)
            leader = found is None
            flight = self._flights[key] = _Flight() if found is None else found
        if leader:
            try:
                flight.value = job()
                return flight.value
            except BaseException as exc:
                flight.error = exc
                raise
            finally:
                with self._lock:
                    del self._flights[key]
                flight.done.set()
        if not flight.done.wait(timeout):
            raise FlightTimeout(f"gave up waiting after {timeout:g} s for another thread's {key!r}")
        error = flight.error
        if error is not None:
            try:
                fresh = load("copy").copy(error)  # (only a failed job needs it: it loads then)
            except Exception:
                raise error from None
            raise fresh from error
        return flight.value  # type: ignore[no-any-return]
