"""Reading a child's stdout and stderr so that the reading thread can be let go (POSIX).

A thread blocked in ``read()`` on a pipe wakes only when data comes or every write end is
closed. When the server exits but a descendant it started in a session of its own (out of reach
of our process-group signals) still holds its stdout, that EOF never comes: calls would hang
and ``close()`` would leave the reader behind. Closing our end from another thread does not wake
a blocked ``read()`` on Linux either (and frees the fd number for reuse under it). So
``PipeLines`` waits in ``poll()`` on the pipe and on a wake-up pipe of its own; ``release()``
(from the exit watcher, or ``close()``) closes the wake-up's write end, and the reader then
takes what the pipe still holds, without waiting for more (and no more than the pipe can hold:
a descendant may go on writing), and reports EOF.

``PipeLines`` costs a ``poll()`` and a lock per read. On Linux, stdout (every answer goes through
it) is read by ``WokenLines`` instead: a plain blocking ``readline`` as before, and ``release()``
opens a write end of the same pipe through ``/proc/self/fd`` (a pipe opens there like a FIFO)
and writes a marker line only this reader knows. That wakes the blocked read, and the reader
reports EOF at the marker (or once it has read what an exited server can have left).

Windows pipes cannot be polled: there the transport reads the ``subprocess`` file objects as
before (``_windows`` kills the process tree at close, which ends the pipe).
"""
from __future__ import annotations

import os
import select
import sys
import threading
import time
from typing import IO, Any, Optional

__all__ = ["PipeLines", "WokenLines", "stdout_lines"]

_CHUNK = 1 << 16  # a pipe's default capacity on Linux: one read takes what is there
_HAS_POLL = hasattr(select, "poll")
#: Once released, at most this many more bytes are read (or the pipe's capacity, if larger): all
#: an exited server can have left in the pipe. A descendant that goes on writing must not keep
#: the reader (and every pending call) going for ever.
_AFTER_RELEASE = 1 << 20


def _pipe_size(fd: int) -> int:
    """The pipe's capacity in bytes (Linux, Python 3.10+), else 0."""
    try:
        import fcntl  # deferred: POSIX only, and only a released reader needs it

        return int(fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)) if hasattr(fcntl, "F_GETPIPE_SZ") else 0
    except OSError:
        return 0


class PipeLines:
    """Lines from the read end of a pipe (``stream``, a ``subprocess`` pipe whose fd we read
    directly), ``readline`` as ``io.BufferedReader.readline`` has it, until EOF or ``release()``.

    One thread reads; ``release()`` and ``close()`` may be called from any thread. ``close()``
    closes the pipe and the wake-up pipe; while the reader is in a system call on them, it only
    releases the reader, which closes them on its way out (a descriptor closed under a ``poll()``
    or ``read()`` could be reused for another file meanwhile and read from).
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._fd = stream.fileno()
        self._wake_r, self._wake_w = os.pipe()
        self._lock = threading.Lock()  # release()/close() against each other
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already searched for a newline
        self._eof = False
        self._released = False  # seen by the reader: take what is there, then EOF
        self._closed = False
        self._busy = False  # the reader is in poll()/read() on our descriptors
        self._close_pending = False  # close() came meanwhile: the reader closes on its way out
        self._budget = -1  # bytes the reader may still read once released (set then)
        if _HAS_POLL:
            self._poll: Optional["select.poll"] = select.poll()
            self._poll.register(self._fd, select.POLLIN)
            self._poll.register(self._wake_r, select.POLLIN)
        else:
            self._poll = None

    def release(self) -> None:
        """Let the reader go: it reads what the pipe holds now, then sees EOF (idempotent)."""
        with self._lock:
            if self._wake_w >= 0:
                os.close(self._wake_w)  # the wake-up pipe's read end becomes readable (EOF)
                self._wake_w = -1

    def close(self) -> None:
        """Close the pipe and the wake-up pipe (idempotent); if the reader is in a system call on
        them, it is released and closes them itself when it returns."""
        self.release()
        with self._lock:
            if self._closed:
                return
            if self._busy:
                self._close_pending = True
                return
            self._closed = True
        self._close_fds()

    def _close_fds(self) -> None:
        os.close(self._wake_r)
        try:
            self._stream.close()
        except OSError:
            pass

    def readline(self, limit: int) -> bytes:
        """Up to ``limit`` bytes, ending at the first newline if there is one within them; ``b""``
        at EOF (or once released and the pipe holds nothing more)."""
        buf = self._buf
        while True:
            end = buf.find(b"\n", self._scanned, limit)
            if end >= 0:
                if end + 1 == len(buf):  # (the common case: the buffer holds one line)
                    line = bytes(buf)
                    buf.clear()
                    self._scanned = 0
                    return line
                return self._take(end + 1)
            if len(buf) >= limit:
                return self._take(limit)
            self._scanned = len(buf)
            if self._eof or not self._fill():
                return self._take(len(buf))

    def _take(self, n: int) -> bytes:
        buf = self._buf
        line = bytes(buf[:n])
        del buf[:n]
        self._scanned = 0
        return line

    def _fill(self) -> bool:
        """Read more into the buffer; False at EOF (or released with nothing left to read, or
        closed)."""
        with self._lock:
            if self._closed or self._close_pending:
                return False
            self._busy = True
        try:
            return self._fill_busy()
        finally:
            with self._lock:
                self._busy = False
                close_now = self._close_pending and not self._closed
                if close_now:
                    self._closed = True
            if close_now:
                self._close_fds()

    def _fill_busy(self) -> bool:
        while True:
            if self._readable():
                try:
                    data = os.read(self._fd, _CHUNK)
                except InterruptedError:
                    continue
                except OSError:  # closed under us, or the pipe broke: as good as EOF
                    data = b""
                if not data:
                    self._eof = True
                    return False
                self._buf += data
                if self._released:  # what is left of an exited server, not a descendant's endless output
                    self._budget -= len(data)
                    if self._budget <= 0:
                        self._eof = True
                return True
            if self._released:
                self._eof = True
                return False

    def _readable(self) -> bool:
        """Wait until the pipe has data (True) or the reader is released (False, and from then on
        only what is there at once is read)."""
        wait = 0 if self._released else None
        while True:
            try:
                if self._poll is not None:
                    events = self._poll.poll(wait)
                    if len(events) == 1 and events[0][0] == self._fd:  # (the common case, cheaply)
                        return True
                    ready = {fd for fd, _ in events}
                else:
                    ready = set(select.select([self._fd, self._wake_r], [], [], wait)[0])
                break
            except InterruptedError:
                continue
            except (OSError, ValueError):  # our fds were closed under us: nothing more to read
                ready = {self._fd}
                break
        if self._wake_r in ready and not self._released:
            self._released = True
            self._budget = max(_AFTER_RELEASE, _pipe_size(self._fd))
        return self._fd in ready



class WokenLines:
    """Lines from a pipe's read end (``stream``, a buffered ``subprocess`` pipe) by a blocking
    ``readline``, the fast path, until EOF or ``release()`` (Linux: see the module docstring).

    One thread reads; ``release()`` may be called from any thread. ``close()`` closes the pipe:
    the transport calls it only when nobody reads, or from the reader itself after EOF.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._readline = stream.readline  # type: ignore[attr-defined]
        fd = stream.fileno()
        self._path = f"/proc/self/fd/{fd}"
        self._pipe = os.fstat(fd).st_ino  # what the path must still open (not a file that reused the fd)
        self._marker = b"\n" + os.urandom(16).hex().encode("ascii") + b"\n"  # one atomic pipe write
        self._marker_line = self._marker[1:]  # (its first newline ends whatever line came before)
        self._lock = threading.Lock()  # release() against close(): never open a reused fd number
        self._closed = False
        self._released = False
        self._budget = 0  # bytes the reader may still read once released
        self._eof = False

    @staticmethod
    def usable(stream: IO[bytes]) -> bool:
        """Whether the pipe can be opened again through /proc (not where /proc is missing)."""
        return os.path.exists(f"/proc/self/fd/{stream.fileno()}")

    def release(self, timeout: float = 1.0) -> None:
        """Let the reader go: it reads what the pipe holds now and then sees EOF (idempotent).
        A full pipe (a descendant writing on) takes the marker once the reader made room, within
        ``timeout``; the reader stops after ``_AFTER_RELEASE`` more bytes anyway."""
        with self._lock:
            if self._released or self._closed:  # (closed: nobody reads any more)
                self._released = True
                return
            try:
                self._budget = max(_AFTER_RELEASE, _pipe_size(self._stream.fileno()))
                self._released = True
                fd = os.open(self._path, os.O_WRONLY | os.O_NONBLOCK)  # (its own open file: nonblocking)
            except (OSError, ValueError):  # (ValueError: the file object was closed)
                self._released = True
                return
        try:
            if os.fstat(fd).st_ino != self._pipe:
                return
            waiter = select.poll()
            waiter.register(fd, select.POLLOUT)
            deadline = time.monotonic() + timeout
            while True:
                try:
                    os.write(fd, self._marker)
                    return
                except BlockingIOError:  # full: the reader is not blocked, it is reading
                    left = deadline - time.monotonic()
                    if left <= 0 or self._eof:
                        return
                    waiter.poll(min(left, 0.05) * 1000)
                except OSError:  # no reader any more
                    return
        finally:
            os.close(fd)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            try:
                self._stream.close()
            except OSError:
                pass

    def readline(self, limit: int) -> bytes:
        """Up to ``limit`` bytes, ending at the first newline within them; ``b""`` at EOF, at the
        marker, or once released and past the budget."""
        if self._eof:
            return b""
        line: bytes = self._readline(limit)
        if not self._released or not line:
            return line
        self._budget -= len(line)
        if line == self._marker_line or self._budget < 0:
            self._eof = True
            return b""
        return line


def stdout_lines(stream: IO[bytes]) -> Any:
    """The reader for a server's stdout: ``WokenLines`` where it works (Linux), else ``PipeLines``."""
    if sys.platform.startswith("linux") and WokenLines.usable(stream):
        return WokenLines(stream)
    return PipeLines(stream)
