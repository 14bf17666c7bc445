"""What the stdio transport does differently on Windows: blocking pipes, no process groups.

On Windows ``select()`` takes sockets only (and ``os.set_blocking`` works on pipes only from
Python 3.12, gh-101881), so the non-blocking write loop cannot wait there and a write blocks
until the server reads. ``PipeWriter`` writes on its own thread instead, and a sender waits for
it only until its own deadline (tests run it on POSIX: ``stdio._BLOCKING_PIPES``). ``kill_tree``
stands in for signalling a process group, which Windows does not have.
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque
import subprocess
from typing import Deque, List, Optional

from ..._util.threads import start_thread
from ...errors import ConnectionClosed, SendTimeout

__all__ = ["PipeWriter", "kill_tree"]

_QUEUED, _WRITING, _DONE = 0, 1, 2


def kill_tree(proc: "subprocess.Popen[bytes]", timeout: float) -> None:
    """Kill the child and every process it started (``taskkill /T /F``, waiting at most
    ``timeout`` for it), so no grandchild keeps our pipes open; if taskkill is missing, fails
    or is too slow, the child alone is killed."""
    system = os.environ.get("SYSTEMROOT", r"C:\Windows")
    try:
        done = subprocess.run(
            [os.path.join(system, "System32", "taskkill.exe"), "/T", "/F", "/PID", str(proc.pid)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            timeout=max(0.1, timeout), creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
        if done.returncode == 0:
            return
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        proc.kill()
    except OSError:  # gone already
        pass


class _Frame:
    __slots__ = ("data", "state", "error")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.state = _QUEUED
        self.error: Optional[OSError] = None


class PipeWriter:
    """Writes frames to a blocking pipe on the ``mcpclient-<n>-stdin`` thread, in order, many at
    a time when they queue up. A sender waits until its frame is written or its deadline passes:
    ``SendTimeout`` then, and the frame is dropped if the writer had not begun it (nothing of it
    sent); a frame it had begun is never cut, it goes out if the server reads again. Holds
    ``wlock`` while writing (``close()`` takes it to close stdin)."""

    def __init__(self, fd: int, name: str, thread_name: str, wlock: threading.Lock,
                 closing: threading.Event) -> None:
        self._fd = fd
        self._name = name
        self._wlock = wlock
        self._closing = closing
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)  # wakes the writer
        self._done = threading.Condition(self._lock)  # wakes senders
        self._queue: Deque[_Frame] = deque()
        self._broken: Optional[OSError] = None
        self.thread = start_thread(self._run, thread_name)

    def send(self, data: bytes, deadline: Optional[float]) -> Optional[OSError]:
        """Write ``data`` by ``deadline``; a broken pipe (the server is gone) is returned."""
        frame = _Frame(data)
        with self._lock:
            if self._closing.is_set():
                raise ConnectionClosed("the transport is closed")
            if self._broken is not None:
                return self._broken
            self._queue.append(frame)
            self._work.notify()
            while frame.state != _DONE:
                if self._closing.is_set():
                    raise ConnectionClosed("the transport is closed")
                timeout = None if deadline is None else deadline - time.monotonic()
                if timeout is not None and timeout <= 0:
                    begun = frame.state == _WRITING
                    if not begun:
                        self._queue.remove(frame)
                    raise SendTimeout(f"server {self._name} is not reading its stdin"
                                      + (" (the message goes out if it reads again)" if begun else ""))
                self._done.wait(None if timeout is None else min(timeout, threading.TIMEOUT_MAX))
            return frame.error

    def wake(self) -> None:
        """The transport is closing: the writer and waiting senders see it now."""
        with self._lock:
            self._work.notify_all()
            self._done.notify_all()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closing.is_set():
                    self._work.wait()
                if self._closing.is_set():
                    return
                batch: List[_Frame] = list(self._queue)
                self._queue.clear()
                for frame in batch:
                    frame.state = _WRITING
            error: Optional[OSError] = None
            try:
                with self._wlock:
                    if self._closing.is_set():  # stdin may be closed (its fd reused): write nothing
                        return
                    self._write_all(b"".join(frame.data for frame in batch) if len(batch) > 1 else batch[0].data)
            except OSError as exc:  # BrokenPipeError and friends: the server is gone
                error = exc
            with self._lock:
                for frame in batch:
                    frame.state, frame.error = _DONE, error
                if error is not None:
                    self._broken = error
                    for frame in self._queue:
                        frame.state, frame.error = _DONE, error
                    self._queue.clear()
                self._done.notify_all()
            if error is not None:
                return

    def _write_all(self, data: bytes) -> None:
        written = os.write(self._fd, data)
        if written < len(data):  # the rest without copying it
            view = memoryview(data)
            while written < len(data):
                written += os.write(self._fd, view[written:])
