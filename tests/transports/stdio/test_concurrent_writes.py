"""How the stdio transport writes when many threads send at once (write combining).

One thread at a time holds the writer role; others leave their frames to it, in order, and return.
These tests pin what that must never do: lose a frame while the connection lives, let one sender's
deadline cut another's frame (which kills the server: half a message cannot be followed), or put
one thread's frames out of order. The peer is ``tests/servers/slow_reader.py``: it does not read at
first (the pipe fills), then reads slowly.
"""
from __future__ import annotations

import gc
import json
import os
import signal
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import LONG, SERVERS, wait_until
from mcpclient._engine.deadline import Deadline
from mcpclient import StdioTransport
from mcpclient.errors import ConnectionClosed, SendTimeout
from mcpclient.transports.stdio import _stdin
from mcpclient._engine.session import Session
from mcpclient.protocol.rpc_rules import MCPRules

pytestmark = pytest.mark.timeout(60)

PAD = "x" * 900


def reader(out: Path, pause: float, chunk: int = 4096, every: float = 0.01, answer: bool = False,
           stall: float = 0.0) -> List[str]:
    return [sys.executable, str(SERVERS / "slow_reader.py"), str(out), str(pause), str(chunk), str(every),
            "1" if answer else "0", str(stall)]


def methods(out: Path) -> List[str]:
    """The methods of the complete lines the reader has written so far (one it is still writing,
    without its newline yet, is left for the next look: a torn frame followed by another still fails)."""
    complete = out.read_text().split("\n")[:-1]
    return [json.loads(line)["method"] for line in complete if line.strip()]


def fill(transport: StdioTransport) -> int:
    """Send small notifications until the pipe refuses one whole (nothing half-written)."""
    for n in range(100_000):
        try:
            transport.send({"jsonrpc": "2.0", "method": "fill", "params": {"n": n, "p": PAD}},
                           deadline=time.monotonic() + 0.05)
        except SendTimeout:
            return n
    raise AssertionError("the pipe never filled")


def test_a_frame_left_to_a_writer_that_times_out_is_still_delivered(tmp_path):
    out = tmp_path / "got.jsonl"
    transport = StdioTransport(reader(out, pause=1.5), stderr=None)
    transport.start()
    try:
        filled = fill(transport)
        errors: List[BaseException] = []
        writing = threading.Event()

        def writer() -> None:
            writing.set()
            try:
                transport.send({"jsonrpc": "2.0", "method": "W", "params": {"p": PAD}}, deadline=time.monotonic() + 0.5)
            except SendTimeout as exc:
                errors.append(exc)

        w = threading.Thread(target=writer)
        w.start()
        assert writing.wait(LONG) and wait_until(lambda: transport._writer._writing)  # W holds the role, stuck
        transport.send({"jsonrpc": "2.0", "id": 99, "method": "B"})  # left to W, no deadline of its own
        w.join(LONG)
        assert len(errors) == 1  # W's own frame went nowhere in time: its sender is told so
        assert wait_until(lambda: out.exists() and "B" in methods(out), LONG), "B's frame was lost"
        assert methods(out) == ["fill"] * filled + ["B"]
    finally:
        transport.close()


def test_another_callers_short_deadline_never_cuts_a_frame_or_kills_the_server(tmp_path):
    session = Session(StdioTransport(reader(tmp_path / "got.jsonl", pause=0, chunk=4096, answer=True), stderr=None),
                      rules=MCPRules())
    session.start()
    try:
        outcome: Dict[str, Any] = {}

        def call(name: str, size: int, timeout: Any) -> None:
            try:
                outcome[name] = session.call(name, {"p": "z" * size}, deadline=Deadline(timeout)).result()
            except Exception as exc:  # noqa: BLE001 - asserted below
                outcome[name] = exc

        # "short" (~0.4 s to write at this pace) ends its own frame well before its 1 s deadline
        # even on a loaded machine (at 300 kB, 0.75 s, a CI runner ran past it and the server was
        # rightly killed mid-frame); "patient" (~1 s) is written across that deadline.
        short = threading.Thread(target=call, args=("short", 150_000, 1.0))
        short.start()
        assert wait_until(lambda: session.transport._writer._writing)
        patient = threading.Thread(target=call, args=("patient", 400_000, None))  # left to the writer
        patient.start()
        short.join(LONG)
        patient.join(LONG)
        assert outcome["patient"] == {"m": "patient"}, outcome  # not cut at the other call's deadline
        assert not session.is_closed  # and the server was not killed for it
    finally:
        session.close()


def test_one_threads_frames_keep_their_order_when_a_writer_gives_up(tmp_path):
    out = tmp_path / "got.jsonl"
    # full at first; after 1 s one 4 KiB read (room for W's frame, not B1's), then 3 s of nothing
    transport = StdioTransport(reader(out, pause=1.0, chunk=4096, stall=3.0), stderr=None)
    transport.start()
    try:
        fill(transport)

        def writer() -> None:
            transport.send({"jsonrpc": "2.0", "method": "W", "params": {"p": PAD}}, deadline=time.monotonic() + 2)

        w = threading.Thread(target=writer)
        w.start()
        assert wait_until(lambda: transport._writer._writing)
        transport.send({"jsonrpc": "2.0", "id": 1, "method": "B1", "params": {"p": "y" * 3950}})
        w.join(LONG)
        transport.send({"jsonrpc": "2.0", "id": 2, "method": "B2"})
        assert wait_until(lambda: out.exists() and "B2" in methods(out), LONG)
        assert [m for m in methods(out) if m.startswith("B")] == ["B1", "B2"]
    finally:
        transport.close()


def test_many_threads_small_frames_short_timeouts_never_kill_the_server(tmp_path):
    """A soak of the combining under load: short timeouts may time calls out, never cut a frame
    (a 20 s version of this killed the server with the first combining code)."""
    session = Session(StdioTransport(reader(tmp_path / "got.jsonl", pause=0, every=0.05, answer=True), stderr=None),
                      rules=MCPRules())
    session.start()
    stop = threading.Event()
    seen: Dict[str, int] = {}

    def worker() -> None:
        while not stop.is_set():
            try:
                session.call("m", {"p": "x" * 150}, deadline=Deadline(0.05)).result()
                name = "ok"
            except Exception as exc:  # noqa: BLE001 - counted below
                name = type(exc).__name__
            seen[name] = seen.get(name, 0) + 1

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    try:
        assert not stop.wait(2.0)  # two seconds of load: long enough to cut frames if writes interleaved
    finally:
        stop.set()
        for t in threads:
            t.join(LONG)
    try:
        assert set(seen) <= {"ok", "RequestTimeout"}, seen
        assert not session.is_closed
    finally:
        session.close()


def test_a_large_frame_is_never_copied_again_after_a_partial_write(tmp_path, monkeypatch):
    """A partial write does not copy what is left of the frame (``data[written:]`` would be
    quadratic in the frame's size: a 64 MiB frame through a 64 KiB pipe would copy about 32 GiB).
    The rest goes out through a memoryview: only the first write passes the frame's own bytes."""
    out = tmp_path / "got.jsonl"
    transport = StdioTransport(reader(out, pause=0, chunk=65536, every=0), stderr=None)
    transport.start()
    try:
        passed: List[type] = []
        real_write = os.write

        def write(fd: int, data: Any) -> int:
            if fd == transport._stdin_fd:
                passed.append(type(data))
            return real_write(fd, data)

        monkeypatch.setattr(os, "write", write)
        transport.send({"jsonrpc": "2.0", "method": "big", "params": {"p": "x" * (4 << 20)}},
                       deadline=time.monotonic() + LONG)
        monkeypatch.undo()
        assert len(passed) > 1, "the frame went out in one write: nothing was tested"
        assert passed[0] is bytes and set(passed[1:]) == {memoryview}, passed[:3]
        assert wait_until(lambda: out.exists() and out.stat().st_size > 4 << 20 and out.read_bytes().endswith(b"\n"))
        assert methods(out) == ["big"]
    finally:
        transport.close()


def test_a_send_while_the_transport_closes_is_refused_not_queued_for_nobody(tmp_path):
    """A sender that finds another thread writing while the transport closes is refused: it does
    not queue its frame and return success (the frame could never go out)."""
    transport = StdioTransport(reader(tmp_path / "got.jsonl", pause=0), stderr=None, terminate_grace=0.2)
    transport.start()
    entered, go = threading.Event(), threading.Event()
    real_write = transport._writer._write

    def held_write(*args: Any, **kwargs: Any) -> Any:  # W's write waits until the test lets it go
        if not go.is_set():
            entered.set()
            go.wait(LONG)
        return real_write(*args, **kwargs)

    transport._writer._write = held_write  # type: ignore[method-assign]
    outcome: Dict[str, BaseException] = {}

    def writer() -> None:
        try:
            transport.send({"jsonrpc": "2.0", "method": "W"}, deadline=time.monotonic() + LONG)
        except BaseException as exc:  # noqa: BLE001 - asserted below
            outcome["W"] = exc

    w = threading.Thread(target=writer)
    w.start()
    closer = threading.Thread(target=transport.close)
    try:
        assert entered.wait(LONG)  # W holds the writer role
        closer.start()
        assert transport._closing.wait(LONG)
        with pytest.raises(ConnectionClosed):
            transport.send({"jsonrpc": "2.0", "method": "late"})
    finally:
        go.set()
        w.join(LONG)
        if closer.ident is not None:
            closer.join(LONG)
        transport.close()
    assert isinstance(outcome.get("W"), ConnectionClosed), outcome


def test_queued_frames_are_capped_a_sender_past_the_cap_waits_until_its_deadline_or_close(tmp_path, monkeypatch):
    """With the server not reading, the queue left to the writer does not grow without bound: a
    sender past ``_OUTBOX_MAX`` queued bytes waits for room: ``SendTimeout`` at its deadline,
    ``ConnectionClosed`` when the transport closes."""
    monkeypatch.setattr(_stdin, "_OUTBOX_MAX", 64 * 1024)
    transport = StdioTransport(reader(tmp_path / "got.jsonl", pause=60), stderr=None, terminate_grace=0.2)
    transport.start()
    outcome: Dict[str, BaseException] = {}

    def send(name: str, deadline: Any) -> None:
        try:
            transport.send({"jsonrpc": "2.0", "method": name, "params": {"p": PAD}}, deadline=deadline)
        except BaseException as exc:  # noqa: BLE001 - asserted below
            outcome[name] = exc

    w = threading.Thread(target=send, args=("W", time.monotonic() + LONG))
    blocked = threading.Thread(target=send, args=("blocked", None))
    try:
        fill(transport)
        w.start()
        assert wait_until(lambda: transport._writer._writing)  # W holds the role, stuck on the full pipe
        queued = 0
        with pytest.raises(SendTimeout):
            for _ in range(1000):  # ~900 KiB: far past the cap
                transport.send({"jsonrpc": "2.0", "method": "q", "params": {"p": PAD}},
                               deadline=time.monotonic() + 0.2)
                queued += 1
        assert 0 < queued <= 64 * 1024 // len(PAD)
        assert transport._writer._queued <= 64 * 1024
        blocked.start()  # no deadline: waits for room until the close
    finally:
        transport.close()
        w.join(LONG)
        if blocked.ident is not None:
            blocked.join(LONG)
    assert isinstance(outcome.get("blocked"), ConnectionClosed), outcome
    assert isinstance(outcome.get("W"), ConnectionClosed), outcome


def test_a_sender_waiting_for_room_goes_on_when_the_server_reads_and_order_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(_stdin, "_OUTBOX_MAX", 64 * 1024)
    out = tmp_path / "got.jsonl"
    transport = StdioTransport(reader(out, pause=1.0, chunk=65536, every=0.001), stderr=None)
    transport.start()
    try:
        filled = fill(transport)
        w = threading.Thread(target=lambda: transport.send({"jsonrpc": "2.0", "method": "W", "params": {"p": PAD}},
                                                           deadline=time.monotonic() + LONG))
        w.start()
        try:
            assert wait_until(lambda: transport._writer._writing)
            for i in range(200):  # ~180 KiB queued behind W: past the cap, so this thread waits
                transport.send({"jsonrpc": "2.0", "method": f"q{i}", "params": {"p": PAD}},
                               deadline=time.monotonic() + LONG)
        finally:
            w.join(LONG)
        assert wait_until(lambda: out.exists() and "q199" in methods(out), LONG)
        assert methods(out) == ["fill"] * filled + ["W"] + [f"q{i}" for i in range(200)]
    finally:
        transport.close()


def test_the_stdin_thread_of_a_transport_never_closed_ends_when_the_transport_is_collected(tmp_path):
    """The stdin thread holds only the writer, not the transport: once the server is gone, a
    transport forgotten without ``close()`` is collected, and its finalizer ends that thread
    (it would otherwise wait for frames for ever)."""
    transport = StdioTransport(reader(tmp_path / "got.jsonl", pause=60), stderr=None)
    transport.start()
    fill(transport)
    timed_out: List[type] = []  # (not the error: its traceback would hold the transport)

    def send_w(to: StdioTransport) -> None:
        try:
            to.send({"jsonrpc": "2.0", "method": "W", "params": {"p": PAD}}, deadline=time.monotonic() + 0.5)
        except SendTimeout as exc:
            timed_out.append(type(exc))

    writer = transport._writer  # (the writer holds no reference to the transport)
    w = threading.Thread(target=send_w, args=(transport,))
    w.start()
    assert wait_until(lambda: writer._writing)  # W holds the role, stuck on the full pipe
    transport.send({"jsonrpc": "2.0", "method": "B"})  # left to W: when W gives up, the stdin thread takes it
    w.join(LONG)
    assert timed_out and wait_until(lambda: writer.thread is not None)
    stdin_thread = writer.thread
    os.kill(transport.pid, signal.SIGKILL)  # the server goes; nobody ever calls close()
    for thread in transport._threads:  # the stderr drain and the exit waiter end with it
        thread.join(LONG)
    assert transport.returncode is not None
    collected = weakref.ref(transport)
    del transport, w
    gc.collect()
    assert collected() is None, "the transport was not collected: something still holds it"
    stdin_thread.join(LONG)
    assert not stdin_thread.is_alive(), "the stdin thread of a collected transport lives on"
