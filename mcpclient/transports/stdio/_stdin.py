"""Writing to a server's stdin where pipes can be non-blocking (POSIX): ``StdinWriter``.

Many threads send at once; one at a time holds the *writer role* and the others leave their
frames to it, so one ``write()`` carries many frames under load and no sender's deadline ever
cuts another's frame (the contract is ``StdinWriter.send``). Where pipes cannot be non-blocking
(Windows) ``_windows.PipeWriter`` does the same job on a thread; both are driven through
``send`` and ``wake`` by the transport. Standard library only.
"""
from __future__ import annotations

import logging
import os
import select
import threading
import time
from typing import Callable, List, Optional

from ..._util.threads import start_thread
from ...errors import ConnectionClosed, SendTimeout

__all__ = ["StdinWriter"]

log = logging.getLogger("mcpclient.transport.stdio")

#: How often a writer stuck on a full pipe looks whether the transport is closing.
POLL = 0.05
#: Bytes senders may leave queued for the writer; past it a sender waits for room (the server is
#: not reading: the queue would grow without bound). One frame larger than this still goes alone.
_OUTBOX_MAX = 4 << 20


class _Stalled(Exception):
    """The pipe is full and the frames being written are not this thread's to wait for: ``rest``
    goes to the stdin thread."""

    def __init__(self, rest: bytes) -> None:
        super().__init__("stdin is full")
        self.rest = rest


class StdinWriter:
    """Writes frames to the non-blocking pipe ``fd`` for many sending threads. Holds ``wlock``
    while bytes go out (``close()`` takes it to close stdin); ``closing`` set makes every send
    and write give up; ``kill`` stops the server when half a frame is on the wire and its sender's
    deadline passed. The ``thread_name`` thread starts on first need (``thread``, then)."""

    def __init__(self, fd: int, name: str, thread_name: str, wlock: threading.Lock,
                 closing: threading.Event, kill: Callable[[], None]) -> None:
        self._fd = fd
        self._name = name
        self._thread_name = thread_name
        self._wlock = wlock
        self._closing = closing
        self._kill = kill
        self._lock = threading.Lock()  # guards the writer role and the queue below; never held across I/O
        self._work = threading.Condition(self._lock)  # wakes the stdin thread
        self._room = threading.Condition(self._lock)  # wakes senders waiting for room in the queue
        self._room_waiters = 0  # how many wait there (so the common case notifies nobody)
        self._writing = False  # a thread holds the writer role (a sender, or the stdin thread)
        self._outbox: List[bytes] = []  # frames other senders left to the writer, in order
        self._queued = 0  # bytes in _outbox (at most _OUTBOX_MAX, or one larger frame)
        self._handoff: Optional[bytes] = None  # what the stdin thread must write first
        self.thread: Optional[threading.Thread] = None  # the stdin thread, once started

    def send(self, data: bytes, deadline: Optional[float]) -> Optional[OSError]:
        """Write ``data`` (one frame), within ``deadline``; a broken pipe (the server is gone) is returned.

        Writes are combined: a sender that finds another thread writing (one holds the *writer
        role* at a time) leaves its frame to that thread, in order, and returns; under load one
        ``write()`` then carries many frames and the server wakes once for them. The writer
        writes its own frame under its own deadline (nothing is queued ahead of it), then what
        others queued meanwhile as long as the pipe takes it; when the pipe is full, the rest
        goes to the ``mcpclient-<n>-stdin`` thread, which writes it whenever the server reads.
        So no sender ever cuts another's frame, and none is lost while the connection lives; a
        frame that waits too long in the queue simply times out with its call. A sender waits
        only when the server stopped reading and the queue holds ``_OUTBOX_MAX`` bytes already
        (a larger frame still goes behind an empty queue): for room, until its own ``deadline``
        (then ``SendTimeout``, nothing of its frame sent). Once the transport is closing, every
        send raises ``ConnectionClosed``.
        """
        with self._lock:
            while True:
                if self._closing.is_set():
                    raise ConnectionClosed("the transport is closed")
                if not self._writing:
                    self._writing = True
                    break
                if not self._queued or self._queued + len(data) <= _OUTBOX_MAX:
                    # another thread writes: it (or the stdin thread) takes this too, in order
                    self._outbox.append(data)
                    self._queued += len(data)
                    return None
                # The queue is full (the server stopped reading): wait for room, till our deadline.
                timeout = None if deadline is None else deadline - time.monotonic()
                if timeout is not None and timeout <= 0:
                    raise SendTimeout(f"server {self._name} is not reading its stdin ({self._queued} bytes queued)")
                self._room_waiters += 1
                try:
                    self._room.wait(None if timeout is None else min(timeout, threading.TIMEOUT_MAX))
                finally:
                    self._room_waiters -= 1
        return self._write_as_writer(data, deadline)

    def wake(self) -> None:
        """The transport is closing: an idle stdin thread ends, senders waiting for room raise."""
        with self._lock:
            self._work.notify_all()
            self._room.notify_all()

    def _take_queue(self) -> bytes:
        """(Holding ``_lock``.) The queued frames as one batch; senders waiting for room are woken."""
        batch = b"".join(self._outbox)
        self._outbox, self._queued = [], 0
        if self._room_waiters:
            self._room.notify_all()
        return batch

    def _give_up_role(self, drop: bool = False) -> None:
        """(Holding ``_lock``.) Nobody writes now; ``drop``: what was queued never goes out (the
        server is gone, or the transport is closing). Senders waiting for room are woken."""
        self._writing = False
        if drop:
            self._outbox, self._queued = [], 0
        if self._room_waiters:
            self._room.notify_all()

    def _write_as_writer(self, data: bytes, deadline: Optional[float]) -> Optional[OSError]:
        written = [0]
        failure: Optional[OSError] = None
        try:
            if not self._wlock.acquire(False):  # (free unless close() is closing stdin now)
                timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                if timeout is not None and timeout > threading.TIMEOUT_MAX:
                    timeout = None
                if not self._wlock.acquire(timeout=-1 if timeout is None else timeout):
                    raise SendTimeout(f"server {self._name} is not reading: stdin is being closed")
            try:
                failure = self._write(data, deadline, written, own=True)
                if failure is None:
                    failure = self._drain()
            finally:
                self._wlock.release()
        except BaseException:
            # Nothing of this frame went out (SendTimeout), or the connection is going (closed,
            # killed), or the thread was interrupted: pass the role on with whatever is left.
            partial = 0 < written[0] < len(data)
            self._pass_on(data[written[0]:] if partial else b"")
            raise
        if failure is not None:  # a broken pipe: the server is gone, and what was queued with it
            with self._lock:
                self._give_up_role(drop=True)
        return failure

    def _drain(self) -> Optional[OSError]:
        """Holding the role: write the frames others queued while the pipe takes them; when it is
        full, the stdin thread takes the role and the rest. Returns a broken pipe's error."""
        while True:
            with self._lock:
                if not self._outbox:
                    self._give_up_role()  # handed back only with nothing queued
                    return None
                batch = self._take_queue()
            try:
                failure = self._write(batch, None, [0], own=False)
            except _Stalled as stall:
                self._hand_off(stall.rest)
                return None
            if failure is not None:
                return failure

    def _pass_on(self, first: bytes) -> None:
        """A writer stops early: the stdin thread takes the role, to write ``first`` (the rest of a
        frame already begun) and then the queue; if there is nothing, or the transport is closing,
        the role is just given up."""
        with self._lock:
            if self._closing.is_set():
                self._give_up_role(drop=True)
                return
            if not first and not self._outbox:
                self._give_up_role()
                return
        self._hand_off(first)

    def _hand_off(self, first: bytes) -> None:
        """Give the writer role to the stdin thread (started on first use), ``first`` to write first."""
        with self._lock:  # (the new thread waits for it: it sees the handoff)
            self._handoff = first
            if self.thread is None:
                self.thread = start_thread(self._flush, self._thread_name)
            else:
                self._work.notify()

    def _flush(self) -> None:
        """The stdin thread: holds the writer role while it has frames the pipe would not take at
        once, and writes them whenever the server reads (no deadline: they are not its own; each
        call's own deadline bounds its wait for the answer), until the queue is empty or close."""
        while True:
            with self._lock:
                while self._handoff is None and not self._closing.is_set():
                    self._work.wait()
                if self._closing.is_set():
                    self._give_up_role(drop=True)  # else every later send would queue for nobody
                    return
                data, self._handoff = self._handoff or b"", None  # (never None here: the wait saw it set)
            failure: Optional[OSError] = None
            try:
                with self._wlock:
                    while failure is None:
                        failure = self._write(data, None, [0], own=False, patient=True)
                        with self._lock:
                            if failure is not None or not self._outbox:
                                # a broken pipe: the server is gone, nothing more goes out
                                self._give_up_role(drop=failure is not None)
                                break
                            data = self._take_queue()
            except ConnectionClosed:  # close() or a dead server: nothing more goes out
                with self._lock:
                    self._give_up_role(drop=True)
                return
            if failure is not None:
                log.debug("stdin of %s broke while writing queued messages: %s", self._name, failure)

    def _write(self, data: bytes, deadline: Optional[float], written: List[int], own: bool,
               patient: bool = False) -> Optional[OSError]:
        """Write all of ``data`` (holding the write lock); a broken pipe is returned, not raised,
        and ``written[0]`` follows the progress. When the pipe is full: ``patient`` waits for the
        server (or close); a sender's ``own`` frame waits until its ``deadline`` (then
        ``SendTimeout`` if nothing went out, and if half of it did, the server is killed: nothing
        can follow half a message); other frames are not waited for: ``_Stalled`` with the rest."""
        fd = self._fd
        view: Optional[memoryview] = None  # after a partial write: the rest, without copying it
        while written[0] < len(data):
            if self._closing.is_set():
                raise ConnectionClosed("transport closed")
            try:
                if not written[0]:
                    written[0] = os.write(fd, data)
                else:
                    if view is None:
                        view = memoryview(data)
                    written[0] += os.write(fd, view[written[0]:])
                continue
            except BlockingIOError:  # the pipe is full: the server is slow to read, or not reading
                pass
            except OSError as exc:  # BrokenPipeError and friends: the server is gone
                return exc
            if not own and not patient:
                raise _Stalled(data[written[0]:])
            wait = POLL if deadline is None else min(POLL, deadline - time.monotonic())
            if wait <= 0:
                if written[0]:  # half a message is on the wire: nothing can follow it any more
                    log.warning("server %s stopped reading in the middle of a message; killing it", self._name)
                    self._kill()
                    raise ConnectionClosed(f"server {self._name} stopped reading mid-message")
                raise SendTimeout(f"server {self._name} is not reading its stdin")
            select.select((), (fd,), (), wait)
        return None
