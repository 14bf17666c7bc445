"""Thread plumbing shared by the session and transports: names, daemon threads, bounded lanes.

Every thread mcpclient starts is named ``mcpclient-<n>-<role>`` (``n`` counts connections in this
process), so leaks are easy to spot in ``threading.enumerate()``.
"""
from __future__ import annotations

import itertools
import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, List, Set, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

T = TypeVar("T")

__all__ = ["Lane", "next_instance", "start_thread"]

log = logging.getLogger("mcpclient")

_instances = itertools.count(1)


def next_instance() -> int:
    """A per-process counter for thread names (``next()`` on a count is atomic under the GIL)."""
    return next(_instances)


def start_thread(target: Callable[[], Any], name: str) -> threading.Thread:
    """Start a daemon thread: a forgotten connection must never block interpreter exit."""
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return thread


class Lane:
    """A ``ThreadPoolExecutor`` with bounded admission that never blocks the submitter.

    ``try_submit`` returns ``False`` instead of queueing when ``workers + queue`` items are
    already admitted, so the reader thread can answer "busy" or drop and count, never wait.
    Exceptions from the work are logged (with ``label``), never lost silently.
    """

    def __init__(self, name: str, workers: int, queue: int) -> None:
        from concurrent.futures import ThreadPoolExecutor  # deferred: import time

        self.idents: Set[int] = set()  # this lane's worker threads, registered before their first task
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name,
                                            initializer=self._register)
        self._slots = threading.BoundedSemaphore(workers + queue)
        self.rejected = 0

    def _register(self) -> None:
        self.idents.add(threading.get_ident())

    def try_submit(self, label: str, fn: Callable[..., Any], *args: Any) -> bool:
        if not self._slots.acquire(blocking=False):
            self.rejected += 1
            return False
        try:
            self._executor.submit(self._run, label, fn, args)
        except RuntimeError:  # shut down meanwhile
            self._slots.release()
            return False
        return True

    def submit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> "Future[T]":
        """Run ``fn`` and return its future; no admission bound (for the client's own work)."""
        return self._executor.submit(fn, *args, **kwargs)

    def _run(self, label: str, fn: Callable[..., Any], args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("%s failed", label)
        finally:
            self._slots.release()

    def threads(self) -> List[threading.Thread]:
        return list(getattr(self._executor, "_threads", ()))

    def shutdown(self, timeout: float) -> None:
        """Cancel queued work and join idle workers; a worker stuck in a handler is left after ``timeout``."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        me = threading.current_thread()
        for t in self.threads():
            if t is not me:
                t.join(timeout)
