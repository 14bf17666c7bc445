"""Regressions found by an independent review: hangs, unbounded close(), races and wire-format slips.

Each test states the fixed behaviour. A misbehaving server is one of ``tests/servers/review_*.py``
(stdlib only) or ``faulty.py``. Anything that could hang runs on a worker thread joined with a
bound, so a regression shows as an assertion failure, not a stuck run; the ``reaper`` fixture
SIGKILLs every process a test started (by recorded pid, after checking it is still ours) and
closes its clients, even when the test fails.
"""
from __future__ import annotations

import base64
import fcntl
import math
import os
import random
import signal
import struct
import subprocess
import sys
import termios
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from conftest import LONG, SERVERS, SHORT, child_pids, faulty, pid_alive, wait_until
from helpers import ScriptedServer, StderrLines
from mcpclient import Client, ImageContent, StdioTransport, ToolResult
from mcpclient.errors import (
    ClientClosedError, ConnectError, MCPError, ProcessExited, ReaderThreadError, RequestTimeout, TransportError,
)
from mcpclient.testing import server_command

pytestmark = [
    pytest.mark.timeout(30),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc"),
]

ROOT = Path(__file__).resolve().parent.parent


def review_server(name: str, *args: str) -> List[str]:
    return [sys.executable, str(SERVERS / f"review_{name}.py"), *args]


MUTE = review_server("mute")  # answers initialize and ping only
STUCK = review_server("stuck")  # answers initialize, then never reads stdin
STUBBORN = review_server("stubborn")  # ignores SIGTERM and stdin EOF; logs on tools/call


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


def echo_tool(method: str, params: Dict[str, Any]) -> Dict[str, Any]:
    return {"content": [{"type": "text", "text": str((params.get("arguments") or {}).get("text"))}]}


# ---------------------------------------------------------------- 1. a server that stops reading stdin (r2)


@pytest.mark.timeout(15)
def test_call_to_a_server_not_reading_stdin_times_out(reaper):
    client = reaper.client(Client(STUCK, timeout=LONG).connect())
    outcome = in_thread(reaper, lambda: client.call_tool("echo", {"text": "x" * (1 << 20)}, timeout=1),
                        "test-big-call")
    assert outcome.done.wait(3.5), f"call_tool(timeout=1) still blocked (in the write?) after 3.5 s: {outcome}"
    assert isinstance(outcome.error, (RequestTimeout, TransportError)), outcome
    assert outcome.elapsed < 3.0, outcome


@pytest.mark.timeout(20)
def test_close_returns_while_a_write_is_blocked(reaper):
    # validate_output="listed": this server never answers, so a first call's tools/list (issue 12,
    # item 9) would wait instead of the big write this test is about
    client = reaper.client(Client(STUCK, timeout=LONG, validate_output="listed").connect())
    pid = client.transport.pid
    call = in_thread(reaper, lambda: client.call_tool("echo", {"text": "x" * (1 << 20)}), "test-big-call")
    # the server's stdin pipe is full: the call's write is blocked in the kernel now
    assert wait_until(lambda: pipe_bytes(pid) >= PIPE_FULL, 5.0), f"pipe never filled: {pipe_bytes(pid)} bytes"
    assert not call.done.is_set(), call
    closed = in_thread(reaper, client.close, "test-closer")
    assert closed.done.wait(6.0), "close() still blocked after 6 s behind a write to a full pipe"
    assert closed.error is None, closed
    assert call.done.wait(LONG), call
    assert isinstance(call.error, (ClientClosedError, TransportError, RequestTimeout)), call
    assert wait_until(lambda: not pid_alive(pid))


# ---------------------------------------------------------------- 2. server-request flood, server not reading (r14)

FLOOD_PINGS = 20_000  # ~0.9 MB of requests, ~0.8 MB of answers: both pipes fill many times over


@pytest.mark.timeout(25)
def test_server_request_flood_while_the_server_does_not_read_never_deadlocks(reaper):
    lines = StderrLines()
    transport = StdioTransport(review_server("flood", str(FLOOD_PINGS)), stderr=lines)
    client = reaper.client(Client(transport, timeout=LONG).connect())
    pid = transport.pid
    # the client's answers have filled the server's stdin pipe (or the flood is already over)
    assert wait_until(lambda: lines.seen("flood done") or pipe_bytes(pid) >= PIPE_FULL, 5.0), \
        f"the flood never filled the pipe: {pipe_bytes(pid)} bytes"
    ping = in_thread(reaper, lambda: client.ping(timeout=2), "test-ping")
    assert ping.done.wait(4.0), f"ping(timeout=2) still blocked after 4 s (deadlock): {ping}"
    assert ping.error is None or (isinstance(ping.error, MCPError)
                                  and not isinstance(ping.error, ReaderThreadError)), ping
    closed = in_thread(reaper, client.close, "test-closer")
    assert closed.done.wait(6.0), "close() still blocked after 6 s"
    assert closed.error is None, closed


# ---------------------------------------------------------------- 3. nested call with progress from a callback (r1)


@pytest.mark.timeout(20)
def test_nested_progress_call_from_a_progress_callback_does_not_hang(reaper):
    client = reaper.client(Client(server_command(), timeout=LONG).connect())
    inner = Outcome()
    inner_timeout, outer_timeout = 1.0, 2.0

    def outer_progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
        if progress == 1:  # on the notification thread: a blocking call that reports progress itself
            inner.run(lambda: client.call_tool("slow", {"steps": 2, "delay": 0.01},
                                               on_progress=lambda *a: None, timeout=inner_timeout).text)()

    outer = in_thread(reaper, lambda: client.call_tool("slow", {"steps": 2, "delay": 0.01},
                                                       on_progress=outer_progress, timeout=outer_timeout).text,
                      "test-outer")
    assert outer.done.wait(outer_timeout + 1.0), f"outer call blocked past its timeout: {outer}; inner: {inner}"
    assert inner.done.is_set(), inner
    assert inner.value == "done after 2 steps" or isinstance(inner.error, RequestTimeout), inner
    assert inner.elapsed <= inner_timeout + 1.0, inner
    assert outer.value == "done after 2 steps" or isinstance(outer.error, RequestTimeout), outer
    client.ping(timeout=LONG)


# ---------------------------------------------------------------- 4. a forgotten client with a pending future (r3)

FORGOTTEN_PENDING_FUTURE = """
    import sys
    from mcpclient import Client, StdioTransport

    client = Client(StdioTransport([sys.executable, sys.argv[1]])).connect()
    future = client.list_tools_future(timeout=None)  # the server never answers
    print("PID", client.transport.pid, flush=True)
    # no close(): the main thread returns with the call pending
"""


@pytest.mark.timeout(20)
def test_forgotten_client_with_a_pending_future_does_not_block_exit(reaper):
    started = time.monotonic()
    script = subprocess.Popen([sys.executable, "-c", textwrap.dedent(FORGOTTEN_PENDING_FUTURE), MUTE[1]],
                              cwd=str(ROOT), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = script.communicate(timeout=5.0)
        exited = True
    except subprocess.TimeoutExpired:
        kill_hard(script.pid)
        out, err = script.communicate()
        exited = False
    elapsed = time.monotonic() - started
    server = [int(line.split()[1]) for line in out.splitlines() if line.startswith("PID ")]
    assert server, f"the script printed no PID line:\nstdout:\n{out}\nstderr:\n{err}"
    reaper.track(server[0], MUTE[1])
    assert exited, "the interpreter did not exit within 5 s with a list_tools_future(timeout=None) pending"
    assert script.returncode == 0, err
    assert elapsed < 5.0
    assert wait_until(lambda: not pid_alive(server[0]), 5.0), f"server {server[0]} outlived the script"


# ---------------------------------------------------------------- 5. close() racing connect() (r4)


@pytest.mark.timeout(30)
def test_close_racing_connect_leaves_no_server(reaper):
    rng = random.Random(4)
    pids: List[int] = []
    bad: List[str] = []
    for i in range(60):
        client = reaper.client(Client(faulty("normal"), timeout=LONG))
        connecting = in_thread(reaper, client.connect, f"test-connect-{i}")
        # mostly while the server is being spawned (the narrow window), else during the handshake
        time.sleep(rng.uniform(0, 0.003) if i % 3 else rng.uniform(0, 0.08))
        client.close()
        assert connecting.done.wait(LONG), f"connect() still running after close(): {connecting}"
        if connecting.error is not None and not isinstance(connecting.error, (ClientClosedError, ConnectError)):
            bad.append(repr(connecting.error))
        if client.transport.pid is not None:
            pids.append(client.transport.pid)
    assert not bad, f"connect() raised untyped errors: {bad}"
    assert wait_until(lambda: not any(pid_alive(pid) for pid in pids), 3.0), \
        f"servers still running after close(): {[pid for pid in pids if pid_alive(pid)]}"


class GatedStart(StdioTransport):
    """A stdio transport whose ``start()`` waits for the test before spawning the server."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.entered = threading.Event()
        self.proceed = threading.Event()

    def start(self) -> None:
        self.entered.set()
        self.proceed.wait(LONG)
        super().start()


@pytest.mark.timeout(30)
def test_close_while_connect_is_about_to_spawn_the_server_leaves_no_server(reaper):
    """The deterministic form of the race above: close() runs after connect() began, before the spawn."""
    transport = GatedStart(faulty("normal"))
    client = reaper.client(Client(transport, timeout=LONG))
    connecting = in_thread(reaper, client.connect, "test-connect")
    try:
        assert transport.entered.wait(LONG)
        closing = in_thread(reaper, client.close, "test-closer")
        closing.done.wait(SHORT)  # a close() that waits for the start in progress is fine too
    finally:
        transport.proceed.set()
    assert connecting.done.wait(LONG), connecting
    assert closing.done.wait(LONG), closing
    assert closing.error is None, closing
    assert connecting.error is None or isinstance(connecting.error, (ClientClosedError, ConnectError)), connecting
    assert client.is_closed
    pid = transport.pid
    assert pid is None or wait_until(lambda: not pid_alive(pid), 3.0), f"server {pid} still running after close()"


# ---------------------------------------------------------------- 6. pid reuse (r9)


def _ns_last_pid_writable() -> bool:
    try:
        with open("/proc/sys/kernel/ns_last_pid", "r+") as f:
            f.write(f.read().strip())
        return True
    except OSError:
        return False


@pytest.mark.timeout(20)
@pytest.mark.skipif(not _ns_last_pid_writable(), reason="needs a writable /proc/sys/kernel/ns_last_pid (root)")
def test_close_does_not_kill_an_unrelated_process_that_reused_the_server_pid(reaper):
    exits: List[Optional[int]] = []
    transport = StdioTransport(faulty("exit-on-call"), stderr=None, on_exit=exits.append)
    client = reaper.client(Client(transport, timeout=LONG).connect())
    with pytest.raises(ProcessExited):
        client.call_tool("echo", {"text": "x"})
    pid = transport.pid
    assert wait_until(lambda: exits == [7])  # reaped by the waiter thread
    assert wait_until(lambda: not os.path.exists(f"/proc/{pid}")), "the dead server was never reaped"
    victim: Optional[subprocess.Popen] = None
    try:
        for _ in range(50):  # what pid wrap-around does: an unrelated new session gets the same pid
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(pid - 1))
            candidate = subprocess.Popen(["sleep", "30"], start_new_session=True)
            if candidate.pid == pid:
                victim = candidate
                break
            candidate.kill()
            candidate.wait()
        if victim is None:
            pytest.skip(f"could not get pid {pid} reused (other processes are forking)")
        client.close()
        assert not wait_until(lambda: victim.poll() is not None, SHORT), \
            f"client.close() killed an unrelated process that reused the server's pid {pid} " \
            f"(signal {-victim.returncode})"
    finally:
        if victim is not None and victim.poll() is None:
            victim.kill()
        if victim is not None:
            victim.wait()


# ---------------------------------------------------------------- 7. Future.result() in a done-callback (r6)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("wait", ["result", "exception"])
def test_waiting_on_another_future_in_a_done_callback_does_not_stall_the_connection(reaper, wait):
    """A done-callback that waits for another future runs on a worker thread, never the reader:
    the connection keeps answering other calls meanwhile, and the wait ends with the answer."""
    client = reaper.client(Client(faulty("late-reply"), timeout=LONG).connect())
    caught: Dict[str, Any] = {}
    called = threading.Event()
    slow = client.call_tool_future("echo", {"text": "slow", "delay": 1.5})  # answered after the ping below

    def on_done(_: Any) -> None:
        caught["thread"] = threading.current_thread().name
        try:
            caught["value"] = getattr(slow, wait)()  # not done yet: waits, on a worker thread
        except BaseException as exc:  # noqa: BLE001 - asserted below
            caught["error"] = exc
        called.set()

    trigger = client.call_tool_future("echo", {"text": "trigger", "delay": 0.3})
    trigger.add_done_callback(on_done)
    assert trigger.result(timeout=LONG).text == "trigger"
    try:
        client.ping(timeout=2)  # while the callback is still waiting for `slow`
    except MCPError as exc:
        pytest.fail(f"an unrelated ping failed while a done-callback waited: {exc!r}")
    assert not called.is_set() and not slow.done()
    assert called.wait(LONG), caught
    assert "-worker-" in caught["thread"] and "error" not in caught, caught
    assert (caught["value"].text == "slow") if wait == "result" else (caught["value"] is None)


# ---------------------------------------------------------------- 8. huge and invalid timeouts (r5)


@pytest.mark.timeout(20)
def test_a_huge_future_timeout_does_not_stop_later_timeouts(reaper):
    client = reaper.client(Client(MUTE, timeout=LONG).connect())
    try:
        forever = client.request_future("tools/call", {"name": "x"}, timeout=1e10)
    except Exception as exc:  # noqa: BLE001 - e.g. OverflowError from a lock or select timeout
        pytest.fail(f"request_future(timeout=1e10) raised {exc!r}")
    # give the timer thread (if there is one) time to reach its wait on the far deadline
    timers = [t for t in client.session.threads() if t.name.endswith("-timer")]
    assert not wait_until(lambda: any(not t.is_alive() for t in timers), SHORT), \
        "the timer thread died waiting for a timeout=1e10 deadline"
    started = time.monotonic()
    later = client.request_future("tools/call", {"name": "x"}, timeout=0.3)
    finished = threading.Event()
    later.add_done_callback(lambda f: finished.set())
    assert finished.wait(2.0), "a 0.3 s timeout never fired after a future with timeout=1e10 (timer thread dead?)"
    assert time.monotonic() - started < 2.0
    assert isinstance(later.exception(), RequestTimeout), later.exception()
    assert not forever.done()


@pytest.mark.timeout(20)
def test_a_huge_blocking_timeout_is_accepted(reaper):
    client = reaper.client(Client(MUTE, timeout=LONG).connect())
    answered = in_thread(reaper, lambda: client.ping(timeout=1e10), "test-ping")
    assert answered.done.wait(LONG), answered
    assert answered.error is None, f"ping(timeout=1e10) against a working server raised {answered.error!r}"


@pytest.mark.timeout(20)
@pytest.mark.parametrize("timeout", [-1, -0.5, "5", [1]], ids=["minus-1", "minus-half", "str", "list"])
@pytest.mark.parametrize("blocking", [True, False], ids=["ping", "ping_future"])
def test_a_negative_or_non_numeric_timeout_is_an_argument_error(reaper, timeout, blocking):
    client = reaper.client(Client(MUTE, timeout=LONG).connect())
    try:
        client.ping(timeout=timeout) if blocking else client.ping_future(timeout=timeout)
    except (ValueError, TypeError):
        pass
    except MCPError as exc:
        pytest.fail(f"timeout={timeout!r} raised {exc!r}, not ValueError/TypeError")
    else:
        pytest.fail(f"timeout={timeout!r} was accepted")
    client.ping(timeout=LONG)  # the connection is fine


# ---------------------------------------------------------------- 9. close() is bounded in total (r8, r8b, r11)

CLOSE_BOUND = 5.5


def close_with_a_stuck_log_callback(reaper: Reaper, target: List[str]) -> float:
    """Connect, get ``on_log`` stuck on the notification thread, and time ``close()``."""
    entered, release = threading.Event(), threading.Event()

    def on_log(level: str, logger: Optional[str], data: Any) -> None:
        entered.set()
        release.wait(30)

    try:
        # validate_output="listed": STUBBORN answers no tools/list (a first call would list: issue 12)
        client = reaper.client(Client(target, timeout=LONG, on_log=on_log, validate_output="listed").connect())
        if target is STUBBORN:
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        else:
            client.call_tool("log", {"level": "info", "message": "hi"})
        assert entered.wait(LONG)
        closed = in_thread(reaper, client.close, "test-closer")
        assert closed.done.wait(CLOSE_BOUND + LONG), "close() never returned"
        assert closed.error is None, closed
        return closed.elapsed
    finally:
        release.set()


@pytest.mark.timeout(30)
def test_close_is_bounded_with_a_stuck_log_callback(reaper):
    elapsed = close_with_a_stuck_log_callback(reaper, server_command())
    assert elapsed <= CLOSE_BOUND, f"close() took {elapsed:.2f} s"


@pytest.mark.timeout(40)
def test_close_budget_is_shared_by_a_sigterm_ignoring_server_and_a_stuck_callback(reaper):
    elapsed = close_with_a_stuck_log_callback(reaper, STUBBORN)
    assert elapsed <= CLOSE_BOUND, f"close() took {elapsed:.2f} s (SIGTERM ladder + callback join, not shared)"


@pytest.mark.timeout(30)
def test_sigterm_ignoring_server_and_grandchild_close_within_the_bound(reaper):
    lines = StderrLines()
    client = reaper.client(Client(StdioTransport(faulty("ignore-sigterm"), stderr=lines), timeout=LONG).connect())
    grandchild: List[int] = []

    def found() -> bool:
        grandchild[:] = [int(l.split("=", 1)[1]) for l in list(lines.lines) if l.startswith("grandchild=")]
        return bool(grandchild)

    assert wait_until(found, LONG)
    reaper.track(grandchild[0], "SIG_IGN")
    closed = in_thread(reaper, client.close, "test-closer")
    assert closed.done.wait(CLOSE_BOUND + LONG), "close() never returned"
    assert closed.elapsed <= CLOSE_BOUND, f"close() took {closed.elapsed:.2f} s"
    assert wait_until(lambda: not pid_alive(grandchild[0]))


@pytest.mark.timeout(20)
def test_close_from_a_done_callback_fired_by_close_itself_is_prompt(reaper):
    client = reaper.client(Client(MUTE, timeout=LONG).connect())
    future = client.request_future("tools/call", {"name": "x"})
    inner: Dict[str, float] = {}

    def close_again(_: Any) -> None:  # "close the client when this call ends, however it ends"
        started = time.monotonic()
        client.close()
        inner["elapsed"] = time.monotonic() - started

    future.add_done_callback(close_again)
    closed = in_thread(reaper, client.close, "test-closer")
    assert closed.done.wait(LONG), "close() never returned"
    assert closed.elapsed < 1.0, f"close() took {closed.elapsed:.2f} s (the re-entrant close() waited for itself)"
    assert isinstance(future.exception(), ClientClosedError)
    assert inner.get("elapsed", math.inf) < 1.0, inner


# ---------------------------------------------------------------- 10. thread-id reuse after the reader died (r10c)


@pytest.mark.timeout(20)
def test_calls_on_a_dead_connection_from_fresh_threads_raise_process_exited(reaper):
    client = reaper.client(Client(StdioTransport(faulty("exit-on-call"), stderr=None), timeout=LONG).connect())
    readers = [t for t in client.session.threads() if t.name.endswith("-reader")]
    assert readers
    with pytest.raises(ProcessExited):
        client.call_tool("echo", {"text": "x"})
    for t in readers:
        t.join(LONG)
        assert not t.is_alive()
    kinds: List[BaseException] = []
    for i in range(50):  # new threads often get the dead reader's thread id
        outcome = in_thread(reaper, lambda: client.ping(timeout=LONG), f"test-probe-{i}")
        assert outcome.done.wait(LONG), outcome
        kinds.append(outcome.error)
    wrong = {repr(e) for e in kinds if not isinstance(e, (ProcessExited, ClientClosedError))}
    assert not wrong, f"ping() on a dead client raised {wrong}"


# ---------------------------------------------------------------- 11. NaN is not JSON (r10b)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_a_non_finite_float_argument_is_refused_before_sending(value):
    server = ScriptedServer(echo_tool)
    try:
        with Client(server.transport, timeout=LONG) as client:
            with pytest.raises(ValueError):
                client.call_tool("echo", {"text": value})
            client.ping()  # a round trip: the peer has seen everything sent before it
            assert [m.get("method") for m in server.received if "id" in m] == ["server/discover", "initialize", "ping"]
            assert client.call_tool("echo", {"text": "still fine"}).text == "still fine"
    finally:
        server.stop()


# ---------------------------------------------------------------- 12. base64 with line breaks


@pytest.mark.timeout(20)
def test_base64_image_data_with_line_breaks_decodes():
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 2
    wrapped = base64.encodebytes(png).decode()
    assert "\n" in wrapped.rstrip("\n")  # a MIME-style base64 encoder's line breaks
    server = ScriptedServer(lambda method, params: {
        "content": [{"type": "image", "data": wrapped, "mimeType": "image/png"}]})
    try:
        with Client(server.transport, timeout=LONG) as client:
            try:
                result = client.call_tool("picture")
            except MCPError as exc:
                pytest.fail(f"base64 with line breaks was refused: {exc!r}")
        assert len(result.content) == 1
        image = result.content[0]
        assert isinstance(image, ImageContent)
        assert image.data == png
        assert image.mime_type == "image/png"
    finally:
        server.stop()


# ---------------------------------------------------------------- 13. replies to calls close() abandoned (r12)


@pytest.mark.timeout(20)
def test_replies_to_calls_abandoned_by_close_are_not_unknown(reaper):
    client = reaper.client(Client(server_command(), timeout=LONG).connect())
    futures = [client.call_tool_future("slow", {"steps": 1, "delay": 0.4}) for _ in range(3)]
    client.ping()  # answered after the server has read (and started) the three calls
    client.close()  # the server finishes them on stdin EOF and answers before it exits
    assert all(isinstance(f.exception(), ClientClosedError) for f in futures)
    assert client.session.unknown_replies == 0


# ---------------------------------------------------------------- 14-16. small API slips


def test_is_error_given_as_the_string_false_is_not_an_error():
    assert ToolResult.from_wire({"content": [], "isError": "false"}).is_error is False
    assert ToolResult.from_wire({"content": [], "isError": False}).is_error is False
    assert ToolResult.from_wire({"content": [], "isError": True}).is_error is True


@pytest.mark.timeout(20)
def test_call_tool_future_accepts_reset_timeout_on_progress(reaper):
    client = reaper.client(Client(server_command(), timeout=LONG).connect())
    try:
        # 4 steps 0.25 s apart: 1 s in all, longer than the 0.6 s timeout each progress restarts
        future = client.call_tool_future("slow", {"steps": 4, "delay": 0.25}, timeout=0.6,
                                         reset_timeout_on_progress=True)
    except TypeError as exc:
        pytest.fail(f"call_tool_future rejects reset_timeout_on_progress: {exc}")
    assert future.result(timeout=LONG).text == "done after 4 steps"


@pytest.mark.timeout(20)
def test_starting_a_stdio_transport_twice_raises_and_leaks_nothing(reaper):
    before = child_pids()
    transport = StdioTransport(faulty("normal"), stderr=None)
    transport.start()
    try:
        first = transport.pid
        assert child_pids() - before == {first}
        with pytest.raises((RuntimeError, MCPError)):
            transport.start()
        assert transport.pid == first
        assert child_pids() - before == {first}, "the second start() spawned another server"
    finally:
        transport.close()
    assert wait_until(lambda: not (child_pids() - before))


def test_a_required_2026_era_waits_for_a_stdio_server_slow_to_answer_discover(started):
    """With ``protocol="2026-07-28"`` the stdio probe's short wait (``probe_timeout``: silence
    means a handshake-era server) does not apply: a server slow to start (the official SDK under
    a loaded CI runner took over 2 s) is waited for. Before, the call failed with "the server
    does not speak the 2026-07-28 protocol" after ``probe_timeout``."""
    server = started(ScriptedServer(lambda method, params: None, modern=True, discover_delay=0.5))
    with Client(server.transport, protocol="2026-07-28", probe_timeout=0.05, timeout=LONG) as client:
        assert client.protocol_version == "2026-07-28"
