"""Fault injection: a misbehaving stdio server must give a typed error or a logged skip, never a hang.

Every scenario runs against ``tests/servers/faulty.py MODE`` (or a tiny inline child) over real
pipes. Synchronisation is by events (the stderr sink, a wire-log handler, future callbacks); polling
(``wait_until``) is used only for process death and counters.
"""
from __future__ import annotations

import concurrent.futures
import gc
import json
import logging
import os
import re
import signal
import sys
import threading
import time
import warnings
from typing import Any, Dict, List, Optional

import pytest

from conftest import LONG, faulty, pid_alive, wait_until
from helpers import ScriptedServer, StderrLines, Twins
from mcpclient import Client, Handlers
from mcpclient.errors import (
    CapabilityError, ClientClosedError, MethodNotFound, ProcessExited, ProtocolError,
    RequestTimeout,
)
from mcpclient.transports.stdio.transport import StdioTransport

pytestmark = pytest.mark.timeout(30)

STDIO_LOG = "mcpclient.transport.stdio"
SESSION_LOG = "mcpclient.session"


# ---------------------------------------------------------------- helpers


class WireWatch(logging.Handler):
    """Records what the client sent (``mcpclient.wire`` DEBUG ``-> `` records), with waits."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.sent: List[Dict[str, Any]] = []
        self._cond = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if not text.startswith("-> "):
            return
        try:
            message = json.loads(text[3:])
        except ValueError:  # a truncated (over 2000 chars) record
            return
        with self._cond:
            self.sent.append(message)
            self._cond.notify_all()

    def methods(self) -> List[str]:
        with self._cond:
            return [m.get("method") for m in self.sent]

    def wait_sent(self, method: str, timeout: float = LONG) -> Optional[Dict[str, Any]]:
        found: List[Dict[str, Any]] = []

        def seen() -> bool:
            found[:] = [m for m in self.sent if m.get("method") == method][:1]
            return bool(found)

        with self._cond:
            self._cond.wait_for(seen, timeout)
        return found[0] if found else None


@pytest.fixture
def wire():
    logger = logging.getLogger("mcpclient.wire")
    watch = WireWatch()
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(watch)
    try:
        yield watch
    finally:
        logger.removeHandler(watch)
        logger.setLevel(old_level)


def messages(caplog, logger: str, level: int = logging.WARNING) -> List[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelno >= level]


# ---------------------------------------------------------------- garbage on stdout


def test_garbage_lines_are_logged_and_skipped(caplog):
    caplog.set_level(logging.WARNING)
    with Client(faulty("garbage"), timeout=LONG) as client:
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        # the reader read the garbage before the answer, so the count is final here
        per_call = client.transport.skipped_lines
        assert per_call == 3  # "this is not json", "[1,2" and "42" (JSON, but no message)
        assert client.call_tool("echo", {"text": "again"}).text == "again"
        assert client.transport.skipped_lines == 2 * per_call
    stdio = messages(caplog, STDIO_LOG)
    assert sum("not valid JSON" in m and "this is not json" in m for m in stdio) == 2
    assert sum("not valid JSON" in m and "[1,2" in m for m in stdio) == 2
    assert sum("not a JSON-RPC message: a number" in m and "42" in m for m in stdio) == 2


def test_repeated_garbage_is_logged_rarely_but_counted_exactly(caplog):
    caplog.set_level(logging.WARNING)
    with Client(faulty("garbage"), timeout=LONG) as client:
        for i in range(60):
            assert client.call_tool("echo", {"text": str(i)}).text == str(i)
        assert client.transport.skipped_lines == 180  # "42" too (the transport skips it)
        assert client._session.reader.skipped_messages == 0
    stdio = [m for m in messages(caplog, STDIO_LOG) if "not a JSON-RPC message" in m]
    assert len(stdio) == 11 and "(100 so far)" in stdio[-1]  # the first ten, then the 100th


def test_banner_lines_before_initialize_are_skipped(caplog):
    caplog.set_level(logging.WARNING)
    with Client(faulty("stdout-before-init"), timeout=LONG) as client:
        assert client.server.name == "faulty"
        assert client.call_tool("echo", {"text": "ok"}).text == "ok"
        assert client.transport.skipped_lines == 2
    stdio = messages(caplog, STDIO_LOG)
    assert any("Starting server..." in m for m in stdio)
    assert any("Listening on stdio" in m for m in stdio)


def test_reply_to_unknown_id_is_dropped_and_counted(caplog):
    caplog.set_level(logging.WARNING)
    with Client(faulty("unknown-id"), timeout=LONG) as client:
        assert client.call_tool("echo", {"text": "real"}).text == "real"
        assert client._session.unknown_replies == 1
        assert client._session.late_replies == 0
        assert client.call_tool("echo", {"text": "real 2"}).text == "real 2"
        assert client._session.unknown_replies == 2
    assert sum("unknown request id 999999" in m for m in messages(caplog, SESSION_LOG)) == 2


# ---------------------------------------------------------------- message size


def test_oversized_line_is_skipped_and_the_call_times_out(caplog):
    caplog.set_level(logging.WARNING)
    transport = StdioTransport(faulty("huge-result"), max_message_size=1024 * 1024)
    with Client(transport, timeout=LONG) as client:
        future = client.call_tool_future("echo", {"text": "big"}, timeout=2.0)
        assert wait_until(lambda: transport.skipped_lines == 1)
        assert isinstance(future.exception(timeout=LONG), RequestTimeout)
        # the connection survived the skip
        client.ping()
    warnings = [m for m in messages(caplog, STDIO_LOG) if "max_message_size=1048576" in m]
    assert len(warnings) == 1
    size = re.search(r"sent a (\d+)-byte message", warnings[0])
    assert size is not None and int(size.group(1)) > 10 * 1024 * 1024  # the whole line was counted


def test_huge_result_arrives_intact_under_the_default_limit():
    with Client(faulty("huge-result"), timeout=LONG) as client:
        result = client.call_tool("echo", {"text": "big"})
        assert len(result.text) == 10 * 1024 * 1024
        assert set(result.text) == {"x"}
        assert client.transport.skipped_lines == 0


# ---------------------------------------------------------------- the child dies


def test_the_stderr_tail_of_a_server_that_died_loud_is_bounded_in_characters():
    """A 50 MB stderr line does not make a 1 MB exception message (it lands in log lines and
    Celery result backends): the tail ends with the last line, within 4,000 characters."""
    with Client(faulty("loud-exit-on-call"), timeout=LONG) as client:
        with pytest.raises(ProcessExited) as info:
            client.call_tool("echo", {"text": "x"})
    assert info.value.stderr_tail.endswith("bye")
    assert len(info.value.stderr_tail) <= 4000
    assert len(str(info.value)) < 4200 and str(info.value).endswith("bye")


@pytest.mark.parametrize("mode, code, said", [("crash-mid-call", 3, "dying now"), ("exit-on-call", 7, "bye")])
def test_child_dying_during_a_call_raises_process_exited(mode, code, said):
    exits: List[Optional[int]] = []
    lines = StderrLines()
    transport = StdioTransport(faulty(mode), stderr=lines, on_exit=exits.append)
    with Client(transport, timeout=LONG) as client:
        with pytest.raises(ProcessExited) as info:
            client.call_tool("echo", {"text": "x"})
        assert info.value.returncode == code
        assert said in info.value.stderr_tail
        assert said in str(info.value)
        assert transport.returncode == code
        # later calls fail at once with the same kind of error
        with pytest.raises(ProcessExited) as later:
            client.call_tool("echo", {"text": "y"})
        assert later.value.returncode == code
        with pytest.raises(ProcessExited):
            client.ping()
        if mode == "crash-mid-call":  # the half line it wrote was skipped, not parsed
            assert transport.skipped_lines == 1
    assert exits == [code]  # on_exit fired exactly once, even after close()
    with pytest.raises(ClientClosedError):
        client.call_tool("echo", {"text": "z"})
    assert exits == [code]


def test_every_pending_call_fails_when_the_child_is_killed():
    with Client(faulty("no-reply"), timeout=LONG) as client:
        futures = [client.call_tool_future("echo", {"text": str(i)}, timeout=LONG) for i in range(5)]
        assert not any(f.done() for f in futures)
        started = time.monotonic()
        os.killpg(client.transport.pid, signal.SIGKILL)
        errors = [f.exception(timeout=LONG) for f in futures]
        elapsed = time.monotonic() - started
        assert all(isinstance(e, ProcessExited) for e in errors), errors
        assert all(e.returncode == -signal.SIGKILL for e in errors)
        assert len({id(e) for e in errors}) == 5  # each future has its own exception instance
        assert elapsed < 3.0
        with pytest.raises(ProcessExited):
            client.call_tool("echo", {"text": "after"})


# ---------------------------------------------------------------- lifecycle misuse


def test_call_before_connect_raises_client_closed():
    client = Client(faulty("normal"), timeout=LONG)
    with pytest.raises(ClientClosedError, match="not connected"):
        client.call_tool("echo", {"text": "x"})
    with pytest.raises(ClientClosedError):
        client.call_tool_future("echo", {"text": "x"})
    assert client.transport.pid is None  # nothing was started
    client.close()
    client.close()


def test_call_after_close_raises_client_closed_and_close_twice_is_fine():
    client = Client(faulty("normal"), timeout=LONG).connect()
    pid = client.transport.pid
    assert client.call_tool("echo", {"text": "x"}).text == "x"
    client.close()
    client.close()
    assert client._is_closed
    with pytest.raises(ClientClosedError):
        client.call_tool("echo", {"text": "x"})
    with pytest.raises(ClientClosedError):
        Twins(client).ping()
    with pytest.raises(ClientClosedError):
        Twins(client).list_tools()
    with pytest.raises(ClientClosedError):
        client.connect()
    assert wait_until(lambda: not pid_alive(pid))


# ---------------------------------------------------------------- capabilities


CAPABILITY_CALLS = [
    ("resources/list", "resources", lambda c: c.list_resources()),
    ("resources/read", "resources", lambda c: c.read_resource("test://text")),
    ("prompts/list", "prompts", lambda c: c.list_prompts()),
    ("completion/complete", "completions", lambda c: c.complete("greet", "style", "f")),
    ("logging/setLevel", "logging", lambda c: c.set_logging_level("info")),
    ("resources/subscribe", "resources.subscribe", lambda c: c.subscribe_resource("test://text")),
    ("resources/read", "resources", lambda c: Twins(c).read_resource("test://text")),
    ("resources/unsubscribe", "resources.subscribe", lambda c: c.unsubscribe_resource("test://text")),
]


@pytest.mark.parametrize("method, capability, call", CAPABILITY_CALLS,
                         ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(CAPABILITY_CALLS)])
def test_missing_capability_raises_and_sends_nothing(wire, method, capability, call):
    with Client(faulty("normal"), timeout=LONG) as client:
        assert client.server.capabilities == {"tools": {}}
        with pytest.raises(CapabilityError) as info:
            call(client)
        assert info.value.capability == capability
        assert info.value.method == method
        client.ping()  # a positive control: the wire log does see what is sent
        assert "ping" in wire.methods()
        assert method not in wire.methods()


def test_list_future_of_missing_capability_fails_with_capability_error(wire):
    with Client(faulty("normal"), timeout=LONG) as client:
        future = Twins(client).list_prompts()
        assert isinstance(future.exception(timeout=LONG), CapabilityError)
        assert "prompts/list" not in wire.methods()


def test_raw_request_skips_the_capability_check(wire):
    """request() (the documented escape hatch) runs no capability check."""
    with Client(faulty("normal"), timeout=LONG) as client:
        with pytest.raises(MethodNotFound):  # the server's own answer (-32601)
            client.request("resources/list")
        assert "resources/list" in wire.methods()


# ---------------------------------------------------------------- handshake


def test_bad_protocol_version_fails_connect_and_cleans_up():
    client = Client(faulty("bad-version"), timeout=LONG)
    with pytest.raises(ProtocolError) as info:
        client.connect()
    assert "2025-11-25" in str(info.value)
    assert "1999-01-01" in str(info.value)
    assert client._is_closed
    pid = client.transport.pid
    assert pid is not None
    assert wait_until(lambda: not pid_alive(pid))
    with pytest.raises(ClientClosedError):
        client.call_tool("echo", {"text": "x"})


# ---------------------------------------------------------------- timeouts and cancellation


def test_timeout_raises_request_timeout_and_cancels_on_the_server(wire):
    lines = StderrLines()
    with Client(StdioTransport(faulty("no-reply"), stderr=lines), timeout=LONG) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            client.call_tool("echo", {"text": "x"}, timeout=0.3)
        elapsed = time.monotonic() - started
        assert isinstance(info.value, TimeoutError)
        assert 0.3 <= elapsed < 3.0
        request = wire.wait_sent("tools/call")
        assert request is not None
        rid = request["id"]
        assert f"(id {rid})" in str(info.value)
        assert lines.wait_for(f"cancelled={rid}") is not None
        cancel = wire.wait_sent("notifications/cancelled")
        assert cancel is not None and cancel["params"]["requestId"] == rid


def test_late_reply_is_counted_and_not_given_to_the_next_call():
    with Client(faulty("late-reply"), timeout=LONG) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("echo", {"text": "late", "delay": 1.0}, timeout=0.2)
        assert client.call_tool("echo", {"text": "fresh", "delay": 0}).text == "fresh"
        assert wait_until(lambda: client._session.late_replies == 1)
        assert client._session.unknown_replies == 0


def test_future_cancel_cancels_on_the_server():
    lines = StderrLines()
    with Client(StdioTransport(faulty("no-reply"), stderr=lines), timeout=LONG) as client:
        future = client.call_tool_future("echo", {"text": "x"})
        assert future.cancel() is True
        assert future.cancelled()
        assert lines.wait_for(f"cancelled={future.request_id}") is not None
        with pytest.raises(concurrent.futures.CancelledError):
            future.result(timeout=LONG)
        assert future.cancel() is True  # cancelling again is harmless
        client.ping()  # the connection is still usable


def test_future_times_out_with_nobody_waiting():
    lines = StderrLines()
    with Client(StdioTransport(faulty("no-reply"), stderr=lines), timeout=LONG) as client:
        future = client.call_tool_future("echo", {"text": "x"}, timeout=0.3)
        error = future.exception(timeout=LONG)
        assert isinstance(error, RequestTimeout)
        assert lines.wait_for(f"cancelled={future.request_id}") is not None


# ---------------------------------------------------------------- server-initiated traffic


def test_server_ping_is_answered():
    lines = StderrLines()
    with Client(StdioTransport(faulty("server-requests"), stderr=lines), timeout=LONG) as client:
        line = lines.wait_for(lambda l: l.startswith("pong="))
        assert line is not None
        pong = json.loads(line[len("pong="):])
        assert pong == {"jsonrpc": "2.0", "id": "s1", "result": {}}
        assert client.call_tool("echo", {"text": "x"}).text == "x"


def test_notification_flood_never_blocks_the_reader(caplog):
    caplog.set_level(logging.WARNING, logger=SESSION_LOG)
    received: List[Any] = []
    release = threading.Event()

    def on_log(level: str, logger: Optional[str], data: Any) -> None:
        received.append(data)
        release.wait(LONG)  # the notify thread is stuck until the call has returned

    with Client(faulty("flood"), timeout=LONG, handlers=Handlers(on_log=on_log)) as client:
        try:
            # the reader must get past all 2000 notifications while the callback is stuck
            assert client.call_tool("echo", {"text": "after the flood"}).text == "after the flood"
        finally:
            release.set()
        # one running + 1000 queued were admitted, the rest dropped and counted
        assert wait_until(lambda: len(received) + client._session.reader.dropped_notifications == 2000)
        assert client._session.reader.dropped_notifications == 999
        assert len(received) == 1001
        client.ping()
    dropped = [m for m in messages(caplog, SESSION_LOG) if "dropped notification 'notifications/message'" in m]
    assert len(dropped) == 11 and "(100 dropped so far)" in dropped[-1]  # rate-limited: 1..10, then 100th


def test_a_progress_flood_takes_one_queue_slot_and_one_count_per_notification():
    """The queue's bound (1,000) is in notifications: a progress notification's ``on_progress``
    and the client's own handling of it share one slot, and a dropped one counts once."""
    reached: List[Any] = []
    release = threading.Event()

    def on_progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
        reached.append(progress)
        release.wait(LONG)  # the notify thread is stuck until the reader has read the flood

    with Client(faulty("progress-flood"), timeout=LONG) as client:
        try:
            # (with the queue full, the answer does not wait behind it: the reader has read all)
            assert client.call_tool("echo", {"text": "after the flood"}, on_progress=on_progress).text \
                == "after the flood"
        finally:
            release.set()
        assert client._session.reader.dropped_notifications == 999
        assert wait_until(lambda: len(reached) == 1001)  # one running, 1,000 queued


# ---------------------------------------------------------------- shutdown ladder


def test_slow_exit_needs_no_sigterm(caplog):
    caplog.set_level(logging.INFO, logger=STDIO_LOG)
    exits: List[Optional[int]] = []
    transport = StdioTransport(faulty("slow-exit"), on_exit=exits.append)
    client = Client(transport, timeout=LONG).connect()
    started = time.monotonic()
    client.close()
    elapsed = time.monotonic() - started
    assert elapsed < 2.0
    assert exits == [0]
    assert transport.returncode == 0
    assert not any("SIGTERM" in m for m in messages(caplog, STDIO_LOG, logging.INFO))


@pytest.mark.parametrize("grace, limit", [(None, 6.0), (0.2, 1.5)])
def test_sigterm_ignoring_child_and_grandchild_are_killed(caplog, grace, limit):
    caplog.set_level(logging.INFO, logger=STDIO_LOG)
    exits: List[Optional[int]] = []
    lines = StderrLines()
    options: Dict[str, Any] = {} if grace is None else {"terminate_grace": grace}
    transport = StdioTransport(faulty("ignore-sigterm"), stderr=lines, on_exit=exits.append, **options)
    client = Client(transport, timeout=LONG).connect()
    grandchild: Optional[int] = None
    try:
        line = lines.wait_for(lambda l: l.startswith("grandchild="))
        assert line is not None
        grandchild = int(line.split("=", 1)[1])
        assert pid_alive(grandchild)
        started = time.monotonic()
        client.close()
        elapsed = time.monotonic() - started
        assert elapsed < limit
        assert wait_until(lambda: not pid_alive(grandchild))
        assert exits == [-signal.SIGKILL]
        logged = messages(caplog, STDIO_LOG, logging.INFO)
        assert any("sending SIGTERM" in m for m in logged)
        assert any("ignored SIGTERM" in m for m in logged)
    finally:
        client.close()
        if grandchild is not None and pid_alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)


# ---------------------------------------------------------------- close() from other threads


def watch_sends(monkeypatch, transport: StdioTransport, method: str) -> threading.Event:
    """An event set once ``transport.send`` has finished writing a ``method`` request."""
    written = threading.Event()
    send = transport.send

    def send_and_tell(message: Any, *args: Any, **kwargs: Any) -> None:
        send(message, *args, **kwargs)
        if isinstance(message, dict) and message.get("method") == method:
            written.set()

    monkeypatch.setattr(transport, "send", send_and_tell)
    return written


def test_close_from_another_thread_fails_the_pending_call(monkeypatch):
    transport = StdioTransport(faulty("no-reply"))
    written = watch_sends(monkeypatch, transport, "tools/call")
    with Client(transport, timeout=LONG) as client:
        def close_when_sent() -> None:
            if written.wait(LONG):
                client.close()

        closer = threading.Thread(target=close_when_sent, name="test-closer")
        closer.start()
        try:
            started = time.monotonic()
            with pytest.raises(ClientClosedError):
                client.call_tool("echo", {"text": "x"})
            assert time.monotonic() - started < 3.0
        finally:
            closer.join(LONG)
        assert not closer.is_alive()
        assert client._is_closed


def test_close_while_a_call_is_being_sent_raises_client_closed(wire):
    """close() between registering a call and writing it surfaces as ClientClosedError, not as
    the transport's ConnectionClosed('transport closed')."""
    with Client(faulty("no-reply"), timeout=LONG) as client:
        def close_now(record: logging.LogRecord) -> bool:
            # runs in the caller's thread after the call is registered, just before the write
            if "tools/call" in record.getMessage():
                closer = threading.Thread(target=client.close, name="test-closer")
                closer.start()
                closer.join(LONG)
            return True

        wire.addFilter(close_now)
        with pytest.raises(ClientClosedError):
            client.call_tool("echo", {"text": "x"})


def test_close_inside_a_notification_callback_does_not_deadlock():
    closed = threading.Event()
    info: Dict[str, Any] = {}
    holder: List[Client] = []

    def on_notification(method: str, params: Dict[str, Any]) -> None:
        if method != "notifications/message" or "thread" in info:
            return
        info["thread"] = threading.current_thread().name
        started = time.monotonic()
        holder[0].close()
        info["elapsed"] = time.monotonic() - started
        closed.set()

    client = Client(faulty("flood"), timeout=LONG, handlers=Handlers(on_notification=on_notification, on_log=lambda *a: None))
    holder.append(client)
    with client:
        future = client.call_tool_future("echo", {"text": "x"})
        assert closed.wait(LONG)
        assert info["thread"].endswith("-notify")
        assert info["elapsed"] < 3.0
        assert client._is_closed
        # answered before the close, or failed by it: never left hanging
        assert future.exception(timeout=LONG) is None or isinstance(future.exception(), ClientClosedError)
        with pytest.raises(ClientClosedError):
            client.call_tool("echo", {"text": "y"})


def test_close_inside_a_done_callback_does_not_deadlock():
    closed = threading.Event()
    info: Dict[str, Any] = {}
    with Client(faulty("late-reply"), timeout=LONG) as client:
        def on_done(future: concurrent.futures.Future) -> None:
            info["thread"] = threading.current_thread().name
            started = time.monotonic()
            client.close()
            info["elapsed"] = time.monotonic() - started
            closed.set()

        future = client.call_tool_future("echo", {"text": "a", "delay": 0.3})
        future.add_done_callback(on_done)
        assert closed.wait(LONG)
        assert "-worker-" in info["thread"], info  # done-callbacks never run on the reader
        assert info["elapsed"] < 3.0
        assert future.result().text == "a"
        assert client._is_closed


def close_from_main_and_from_a_callback() -> float:
    """Main closes while a notification callback is running; once the main close() has begun (it
    fails the pending call first), the callback closes too. Returns how long the main close() took."""
    pending_ready = threading.Event()
    in_callback = threading.Event()
    callback_closed = threading.Event()
    state: Dict[str, Any] = {}

    def notify_on_call(method: str, params: Dict[str, Any]) -> None:  # never answers the call
        server.peer.send({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "go"}})

    def on_notification(method: str, params: Dict[str, Any]) -> None:
        in_callback.set()
        if pending_ready.wait(LONG):
            state["pending"].exception(timeout=LONG)  # the main close() has begun ...
        state["client"].close()  # ... close from here too, as a "shutdown" handler would
        callback_closed.set()

    server = ScriptedServer(notify_on_call)
    client = Client(server.transport, timeout=LONG, handlers=Handlers(on_notification=on_notification, on_log=lambda *a: None))
    state["client"] = client
    try:
        client.connect()
        state["pending"] = client.call_tool_future("echo", {"text": "x"})
        pending_ready.set()
        assert in_callback.wait(LONG)
        started = time.monotonic()
        client.close()
        elapsed = time.monotonic() - started
        assert callback_closed.wait(LONG)
        assert isinstance(state["pending"].exception(), ClientClosedError)
        return elapsed
    finally:
        pending_ready.set()
        client.close()
        server.stop()


def test_concurrent_close_from_main_and_a_notification_callback_is_prompt():
    """A second close() on a callback thread does not wait for the first close(), which is
    joining that very thread: neither stalls for the whole 5 s join timeout."""
    elapsed = close_from_main_and_from_a_callback()
    assert elapsed < 2.0, f"close() took {elapsed:.1f} s"


def test_blocking_calls_from_a_done_callback_work_off_the_reader_thread():
    """Done-callbacks run on a worker thread, never the reader: blocking calls made there are
    answered (the reader stays free to deliver them) instead of deadlocking or being refused."""
    done = threading.Event()
    results: Dict[str, Any] = {}
    info: Dict[str, Any] = {}
    with Client(faulty("late-reply"), timeout=LONG) as client:
        def on_done(future: concurrent.futures.Future) -> None:
            info["thread"] = threading.current_thread().name
            info["result"] = future.result().text  # the finished future itself is fine
            for name, call in [("call_tool", lambda: client.call_tool("echo", {"text": "b"}).text),
                               ("list_tools", lambda: [t.name for t in client.list_tools()]),
                               ("ping", lambda: client.ping())]:
                try:
                    results[name] = call()
                except BaseException as exc:  # noqa: BLE001 - asserted below
                    results[name] = exc
            done.set()

        future = client.call_tool_future("echo", {"text": "a", "delay": 0.3})
        future.add_done_callback(on_done)
        assert done.wait(LONG)
        assert "-worker-" in info["thread"], info
        assert info["result"] == "a"
        assert results == {"call_tool": "b", "list_tools": ["echo"], "ping": None}, results
        # the reader survived and the connection still works
        assert client.call_tool("echo", {"text": "c", "delay": 0}).text == "c"


def test_blocking_call_from_a_timeout_callback_does_not_stall_other_timeouts():
    caught: Dict[str, BaseException] = {}
    with Client(faulty("no-reply"), timeout=LONG) as client:
        def on_timeout(future: concurrent.futures.Future) -> None:
            try:
                client.call_tool("echo", {"text": "from the callback"}, timeout=3.0)
            except BaseException as exc:  # noqa: BLE001 - asserted below
                caught["error"] = exc

        first = client.call_tool_future("echo", {"text": "a"}, timeout=0.2)
        first.add_done_callback(on_timeout)
        started = time.monotonic()
        second = client.call_tool_future("echo", {"text": "b"}, timeout=0.5)
        assert isinstance(second.exception(timeout=LONG), RequestTimeout)
        elapsed = time.monotonic() - started
        assert wait_until(lambda: "error" in caught)
        assert elapsed < 1.5, f"a 0.5 s timeout fired after {elapsed:.1f} s"


# ---------------------------------------------------------------- environment and stderr


ENV_CHILD = ("import os, sys; sys.stderr.write(repr(os.environ.get('MCPCLIENT_TEST_SECRET')) + '\\n'); "
             "sys.stderr.flush(); sys.stdin.read()")


@pytest.mark.parametrize("options, expected", [
    ({}, "None"),
    ({"env": {"MCPCLIENT_TEST_SECRET": "y"}}, "'y'"),
    ({"inherit_env": True}, "'x'"),
])
def test_child_environment_is_an_allow_list(monkeypatch, options, expected):
    monkeypatch.setenv("MCPCLIENT_TEST_SECRET", "x")
    lines = StderrLines()
    transport = StdioTransport([sys.executable, "-c", ENV_CHILD], stderr=lines, **options)
    transport.start()
    try:
        assert lines.wait_for(lambda l: True) == expected
    finally:
        transport.close()
    assert transport.returncode == 0


STDERR_CHILD = ("import sys; sys.stderr.write('first line\\nsecond line\\n'); sys.stderr.flush(); "
                "sys.stdin.read()")


def run_stderr_child(**options: Any) -> StdioTransport:
    """Start the child, then close: close() joins the stderr drain, so every line has been routed."""
    transport = StdioTransport([sys.executable, "-c", STDERR_CHILD], **options)
    transport.start()
    transport.close()
    assert transport.returncode == 0
    return transport


def test_stderr_goes_to_the_server_logger_by_default(caplog):
    expected_name = re.sub(r"[^A-Za-z0-9_-]+", "_", os.path.basename(sys.executable))  # python -c: the program
    caplog.set_level(logging.INFO, logger=f"mcpclient.server.{expected_name}")
    transport = run_stderr_child()
    assert transport.name == expected_name
    records = [r for r in caplog.records if r.name == f"mcpclient.server.{expected_name}"]
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (logging.INFO, "first line"), (logging.INFO, "second line")]


def test_stderr_logger_uses_the_transport_name(caplog):
    caplog.set_level(logging.INFO, logger="mcpclient.server.mychild")
    run_stderr_child(name="mychild")
    assert [r.getMessage() for r in caplog.records if r.name == "mcpclient.server.mychild"] == [
        "first line", "second line"]


def test_stderr_to_a_callable():
    got: List[str] = []
    run_stderr_child(stderr=got.append)
    assert got == ["first line", "second line"]


def test_stderr_to_a_text_file(tmp_path):
    path = tmp_path / "server.err"
    with open(path, "w", encoding="utf-8") as stream:
        run_stderr_child(stderr=stream)
    assert path.read_text(encoding="utf-8") == "first line\nsecond line\n"


def test_stderr_none_drops_lines_but_keeps_the_tail():
    transport = run_stderr_child(stderr=None)
    assert transport.stderr_tail == "first line\nsecond line"


def test_a_failing_stderr_sink_does_not_stop_the_drain(caplog):
    caplog.set_level(logging.ERROR, logger=STDIO_LOG)
    got: List[str] = []

    def sink(line: str) -> None:
        got.append(line)
        if line == "first line":
            raise RuntimeError("sink broke")

    transport = run_stderr_child(stderr=sink)
    assert got == ["first line", "second line"]
    assert transport.stderr_tail == "first line\nsecond line"
    assert any("stderr sink" in m for m in messages(caplog, STDIO_LOG, logging.ERROR))


def test_transport_close_releases_every_pipe():
    """close() closes the child's stdout pipe even when nothing has received from it."""
    transport = run_stderr_child(stderr=None)  # started and closed, never received from
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        del transport
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
