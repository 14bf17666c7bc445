"""The stdio server's process group: killing it (``killpg``; ``taskkill`` of the tree on
Windows), reaping a forgotten transport's child at exit, and what a forked child does with the
servers it inherited (they are the parent's: marked so, their stdin pointed at /dev/null).
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import weakref
from typing import Any, Callable

from ..._util import fork as _fork
from ._windows import kill_tree

__all__ = ["kill_group", "open_transports", "reap_at_exit"]

_POSIX = os.name == "posix"
_TASKKILL_WAIT = 2.0  # Windows: how long taskkill may take at most


def kill_group(proc: "subprocess.Popen[bytes]", hard: bool, timeout: float = _TASKKILL_WAIT) -> None:
    """SIGTERM (or with ``hard`` SIGKILL) the child's process group; ignore 'already gone'.

    Windows has neither process groups nor a SIGTERM for a console child: either way its whole
    process tree is killed (``taskkill``, for at most ``timeout`` s), before its pipes are closed.
    """
    if not _POSIX:
        kill_tree(proc, timeout)
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL if hard else signal.SIGTERM)
    except OSError:  # ProcessLookupError, PermissionError: the group is gone already
        pass


def reap_at_exit(transport_ref: "weakref.ref[Any]", proc: "subprocess.Popen[bytes]", owner: int,
                 stop_writing: Callable[[], None]) -> None:
    """Finalizer for forgotten transports: never leave the child (or its group) running, nor the
    thread writing to it (``stop_writing``). Only in the process that started it: a forked child
    that exits must not kill its parent's server."""
    if _fork.pid != owner:
        return
    stop_writing()
    transport = transport_ref()
    lock = transport._reap_lock if transport is not None else threading.Lock()
    with lock:
        if proc.returncode is None:
            kill_group(proc, hard=True)


#: Started transports whose stdin is open, for the at-fork hook below.
open_transports: "weakref.WeakSet[Any]" = weakref.WeakSet()


def _forked() -> None:
    """In a forked child: the servers are the parent's. Each transport is marked inherited (its
    close() and finalizer do nothing here), and the child's copy of each server's stdin is
    pointed at /dev/null, so that the server still sees EOF when the parent closes its end."""
    null = -1
    for transport in list(open_transports):
        transport._inherited = True
        try:
            if null < 0:
                null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, transport._stdin_fd)
        except OSError:
            pass
    if null >= 0:
        os.close(null)


_fork.in_child(_forked)
