"""The stdio transport's pipe readers: closed while a thread reads they let it go; released
while one reads they deliver what came first, then EOF, and stop after their budget when a
descendant writes on; where pipes cannot be polled the plain pipe files are read; and a reader
that cannot be made (no file descriptors) is a ``ConnectError`` with the server stopped.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, List

import pytest

from conftest import LONG, wait_until
from mcpclient import Client
from mcpclient.transports.stdio import transport as stdio
from mcpclient.transports.stdio.transport import StdioTransport


POSIX = os.name == "posix"


def test_where_pipes_cannot_be_polled_the_plain_pipe_files_are_read(monkeypatch):
    """The Windows read path (platform faked: no poll on pipes, blocking writes): stdout and
    stderr are read from the subprocess files directly; calls, server stderr and close() work."""
    monkeypatch.setattr(stdio, "_POLLED_READS", False)
    monkeypatch.setattr(stdio, "_BLOCKING_PIPES", True)
    lines: List[str] = []
    script = ("import sys, runpy; sys.stderr.write('hello\\n'); sys.stderr.flush(); "
              "runpy.run_module('mcpclient.testing', run_name='__main__')")
    with Client(StdioTransport([sys.executable, "-c", script], stderr=lines.append), timeout=LONG) as client:
        from mcpclient.transports.stdio._pipes import PipeLines, WokenLines

        assert not isinstance(client.transport._stdout, (PipeLines, WokenLines))  # type: ignore[attr-defined]
        assert client.call_tool("echo", {"text": "plain"}).text == "plain"
        assert wait_until(lambda: "hello" in lines)


@pytest.mark.skipif(not POSIX, reason="poll() on pipes")
def test_pipe_lines_closed_while_a_thread_reads_lets_it_go_and_closes_after_it():
    """``close()`` during a blocked read releases the reader, which closes the descriptors itself
    on its way out (closed under its poll(), their numbers could be reused and read from)."""
    from mcpclient.transports.stdio._pipes import PipeLines

    read_end, write_end = os.pipe()
    lines = PipeLines(os.fdopen(read_end, "rb", buffering=0))
    got: List[bytes] = []
    os.write(write_end, b"first\nsecond")
    reader = threading.Thread(target=lambda: got.extend(iter(lambda: lines.readline(100), b"")))
    reader.start()
    try:
        assert wait_until(lambda: got == [b"first\n"])
        lines.close()  # the reader is in poll(): it takes what is there and stops
        reader.join(LONG)
        assert not reader.is_alive() and got == [b"first\n", b"second"]
        assert lines._stream.closed  # type: ignore[attr-defined]  # by the reader, on its way out
    finally:
        os.close(write_end)


LINUX = sys.platform.startswith("linux")


@pytest.mark.skipif(not LINUX, reason="WokenLines reopens the pipe through /proc (Linux)")
def test_woken_lines_released_while_a_thread_reads_delivers_what_came_first_then_eof():
    """stdout's reader on Linux (the fast path: a blocking readline, no poll per read, which cost
    the benchmark ~10%): release() wakes it through a marker line written into the same pipe,
    though a descendant still holds the write end (here: the test)."""
    from mcpclient.transports.stdio._pipes import WokenLines

    read_end, write_end = os.pipe()
    lines = WokenLines(os.fdopen(read_end, "rb"))
    got: List[bytes] = []
    os.write(write_end, b"first\nsecond\n")
    reader = threading.Thread(target=lambda: got.extend(iter(lambda: lines.readline(100), b"")))
    reader.start()
    try:
        assert wait_until(lambda: len(got) == 2)  # the reader is now blocked in read()
        os.write(write_end, b"partial")  # (an exited server's unfinished line)
        lines.release()
        reader.join(LONG)
        assert not reader.is_alive()
        assert got == [b"first\n", b"second\n", b"partial\n"]  # the marker's own newline ends it
        assert lines.readline(100) == b""
        lines.close()
        lines.release()  # closed: nothing is opened, nothing written
    finally:
        os.close(write_end)


@pytest.mark.skipif(not LINUX, reason="WokenLines reopens the pipe through /proc (Linux)")
def test_woken_lines_stop_after_their_budget_when_a_descendant_writes_on():
    """A full pipe takes the marker only once the reader made room; a descendant writing for
    ever must still not keep the reader going: it stops after the released budget."""
    from mcpclient.transports.stdio import _pipes

    read_end, write_end = os.pipe()
    lines = _pipes.WokenLines(os.fdopen(read_end, "rb"))
    stop = threading.Event()

    def firehose() -> None:
        line = b"x" * 1000 + b"\n"
        while not stop.is_set():
            try:
                os.write(write_end, line)
            except OSError:
                return

    writer = threading.Thread(target=firehose)
    writer.start()
    read = 0
    try:
        assert lines.readline(2000)  # the pipe is flowing
        lines.release(timeout=0.2)
        began = time.monotonic()
        while lines.readline(2000):
            read += 1
        assert time.monotonic() - began < LONG
        assert read <= (max(_pipes._AFTER_RELEASE, 1 << 20) // 1000) + 70  # (plus what the buffer held)
    finally:
        stop.set()
        lines.close()
        writer.join(LONG)
        os.close(write_end)


    # (the autouse leak guard checks that no mcpclient thread was left running)


@pytest.mark.skipif(os.name != "posix", reason="the pipe readers of POSIX")
def test_a_server_whose_pipe_reader_cannot_be_made_is_a_connect_error_and_is_stopped(monkeypatch):
    # When the stdout/stderr readers cannot be made (out of file descriptors: fault injected,
    # EMFILE), start() raises ConnectError, not a raw OSError, and the child does not run on.
    import errno

    from mcpclient.errors import ConnectError
    from mcpclient.testing import server_command
    from mcpclient.transports.stdio import _pipes

    def no_fds(self: Any, stream: Any) -> None:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(_pipes.PipeLines, "__init__", no_fds)
    before = {t.name for t in threading.enumerate()}
    with pytest.raises(ConnectError, match="Too many open files"):
        Client(server_command()).connect()
    assert {t.name for t in threading.enumerate()} - before == set()
