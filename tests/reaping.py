"""Cleaning up after tests that may hang: the ``reaper`` fixture and calls run on worker threads.

The ``reaper`` SIGKILLs every process a test started (by recorded pid, after checking it is
still ours) and closes its clients on helper threads, bounded, even when the test fails.
``in_thread`` runs a call on a worker thread and records its ``Outcome`` (value or exception,
how long it took), so a call that hangs shows as an assertion failure, not a stuck run.
"""
from __future__ import annotations

import fcntl
import os
import signal
import struct
import termios
import threading
import time
from typing import Any, Callable, List, Optional, Tuple

import pytest

from conftest import LONG, child_pids, pid_alive
from mcpclient import Client

# ---------------------------------------------------------------- helpers


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def kill_hard(pid: int) -> None:
    """SIGKILL ``pid``'s process group if it leads one (our servers do), else just ``pid``.

    Never our own group: a child started without a new session shares it."""
    try:
        pgid = os.getpgid(pid)
        if pgid == pid and pgid != os.getpgrp():
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


class Reaper:
    """Cleans up after a test, pass or fail: processes first (that unblocks any stuck I/O), then
    clients (close() on a helper thread, bounded), then the test's own worker threads."""

    def __init__(self) -> None:
        self.children_before = child_pids()
        self.foreign: List[Tuple[int, str]] = []  # (pid, a string its cmdline must contain)
        self.clients: List[Client] = []
        self.workers: List[threading.Thread] = []

    def client(self, client: Client) -> Client:
        self.clients.append(client)
        return client

    def track(self, pid: int, marker: str) -> None:
        """A process that is not our child (a grandchild): killed at the end if still running ``marker``."""
        self.foreign.append((pid, marker))

    def thread(self, target: Callable[[], Any], name: str) -> threading.Thread:
        thread = threading.Thread(target=target, name=name, daemon=True)
        self.workers.append(thread)
        thread.start()
        return thread

    def cleanup(self) -> None:
        for pid in child_pids() - self.children_before:  # started by this test: ours to kill
            kill_hard(pid)
        for pid, marker in self.foreign:
            if pid_alive(pid) and marker in cmdline(pid):
                kill_hard(pid)
        closers = [threading.Thread(target=c.close, name="test-reaper-close", daemon=True) for c in self.clients]
        for t in closers:
            t.start()
        for t in closers + self.workers:
            t.join(LONG)


@pytest.fixture
def reaper():
    r = Reaper()
    try:
        yield r
    finally:
        r.cleanup()


class Outcome:
    """What a call run on a worker thread did: its value or exception, and how long it took."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: Optional[BaseException] = None
        self.elapsed: Optional[float] = None

    def run(self, fn: Callable[[], Any]) -> Callable[[], None]:
        def target() -> None:
            started = time.monotonic()
            try:
                self.value = fn()
            except BaseException as exc:  # noqa: BLE001 - inspected by the test
                self.error = exc
            finally:
                self.elapsed = time.monotonic() - started
                self.done.set()
        return target

    def __repr__(self) -> str:
        return f"<Outcome done={self.done.is_set()} value={self.value!r:.80} error={self.error!r:.200} " \
               f"elapsed={self.elapsed}>"


def in_thread(reaper: Reaper, fn: Callable[[], Any], name: str) -> Outcome:
    outcome = Outcome()
    reaper.thread(outcome.run(fn), name)
    return outcome


def pipe_bytes(pid: int) -> int:
    """Bytes waiting in process ``pid``'s stdin pipe (FIONREAD on a fresh fd for the same pipe)."""
    try:
        fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return -1
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    finally:
        os.close(fd)


#: A pipe holds 64 KiB; small messages leave a little slack in each page.
PIPE_FULL = 60_000
