"""Fork awareness: which process this is, and work to redo in a forked child.

A client made before ``os.fork()`` (gunicorn ``--preload``, Celery prefork, ``multiprocessing``)
is copied into the child with its pipes, sockets and locks, but without its threads. The child
must never use that connection: it shares the pipe and the id counter with the parent, so the
answers would cross. ``pid`` is the current process id, updated in the child by an at-fork hook
(one module attribute read per call, no system call); ``Connection`` compares it with the pid it
was made in. Modules with process-wide locks register a reset here (a lock held by another
thread at the fork would be held forever in the child).
"""
from __future__ import annotations

import os
import threading
from typing import Callable, List

__all__ = ["importing", "in_child", "pid"]

#: The id of this process (kept current across forks).
pid = os.getpid()
_resets: List[Callable[[], None]] = []
#: Held around a lazy import of a third-party package that a worker thread may run (``with
#: importing: import jsonschema``), and by ``os.fork()`` while it forks: a fork never copies a
#: half-done import into the child, where the module's import lock would stay held by a thread
#: that does not exist there and the child's first use of the module would wait for ever
#: (CPython's per-module import locks are not reset at a fork). A fork meanwhile waits for the
#: import. Only around imports that cannot come back into mcpclient: one that imports mcpclient
#: modules under it could deadlock with another thread importing those (two locks, two orders).
importing = threading.RLock()


def in_child(reset: Callable[[], None]) -> None:
    """Run ``reset`` in every child forked from now on (it must not block or do I/O)."""
    _resets.append(reset)


def _after_fork_in_child() -> None:
    global pid
    pid = os.getpid()
    importing.release()  # (taken by the forking thread, which is this process's only one)
    for reset in _resets:
        try:
            reset()
        except Exception:  # an at-fork hook must never stop the child
            pass


if hasattr(os, "register_at_fork"):  # POSIX; Windows has no fork
    os.register_at_fork(before=importing.acquire, after_in_parent=importing.release,
                        after_in_child=_after_fork_in_child)
