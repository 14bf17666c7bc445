"""Deadlines that hold for every blocking HTTP call whatever the server does with the stream:
keep-alive comments for ever, a body trickled byte by byte (an answer's, an error page's, a
refused GET's), an answer and then silence, an endless stream answering a notification; and
Ctrl-C during a call reaches the caller and cancels on the server. A raw-socket server on
127.0.0.1 (``Hostile``) does what a real server can do on the wire; the stdio transport keeps
the same deadline.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, List

import pytest

from conftest import LONG, wait_until
from hostile_http import Conn, Hostile, SLACK, TIMEOUT, answer, client_for, hostile, tool_result  # noqa: F401  (fixtures: hostile)
from mcpclient import Client
from mcpclient.errors import MCPError, RequestTimeout

# --- what the hostile server does -----------------------------------------------------------------


def sse_comments(conn: Conn, message: Dict[str, Any]) -> None:
    """An answer stream kept alive with comments for ever (never the answer)."""
    conn.head("text/event-stream")
    conn.every(0.2, b": keep-alive\n\n")


def json_trickle(conn: Conn, message: Dict[str, Any]) -> None:
    """A JSON answer one byte at a time, each in time for the read timeout."""
    data = answer(message, tool_result())
    conn.head(length=len(data))
    for i in range(len(data)):
        if not conn.send(data[i:i + 1]) or conn.stop.wait(0.3):
            return


def sse_trickle(conn: Conn, message: Dict[str, Any]) -> None:
    """An SSE answer one byte at a time."""
    data = b"data: " + answer(message, tool_result()) + b"\n\n"
    conn.head("text/event-stream")
    for i in range(len(data)):
        if not conn.send(data[i:i + 1]) or conn.stop.wait(0.3):
            return


def sse_answer_then_silence(conn: Conn, message: Dict[str, Any]) -> None:
    """The answer event, then the stream held open, silent."""
    conn.head("text/event-stream")
    conn.send(b"data: " + answer(message, tool_result("prompt")) + b"\n\n")
    conn.hold()


def json_chunk_then_silence(conn: Conn, message: Dict[str, Any]) -> None:
    """A chunked JSON body whose last chunk never comes."""
    data = answer(message, tool_result())
    conn.head(chunked=True)
    conn.send(b"%x\r\n%s\r\n" % (len(data), data))
    conn.hold()


# --- deadlines of blocking calls ------------------------------------------------------------------

@pytest.mark.parametrize("script", [sse_comments, json_trickle, sse_trickle, json_chunk_then_silence],
                         ids=lambda s: s.__name__)
def test_a_blocking_http_call_ends_at_its_deadline_and_cancels_on_the_server(hostile, script):
    # Keep-alive comments or a 1 byte/s trickle do not hold a blocking call_tool past its deadline.
    server = hostile(script)
    with client_for(server.url) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", {}, timeout=TIMEOUT)
        took = time.monotonic() - started
        assert took < TIMEOUT + SLACK, f"{script.__name__}: the call took {took:.2f} s"
        assert server.wait_cancel(), "the server never saw notifications/cancelled"
        if script is sse_comments:  # and nothing reads on for an answer nobody waits for
            assert server.hung_up.wait(SLACK), "the answer stream was still being read"


@pytest.mark.parametrize("script", [sse_comments, json_trickle], ids=lambda s: s.__name__)
def test_the_future_twin_ends_at_its_deadline_too(hostile, script):
    server = hostile(script)
    with client_for(server.url) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool_future("slow", {}, timeout=TIMEOUT).result()
        assert time.monotonic() - started < TIMEOUT + SLACK
        assert server.wait_cancel()
        assert server.hung_up.wait(SLACK), "the answer stream was still being read"


def test_an_answer_followed_by_silence_is_returned_at_once(hostile):
    # "sends the answer and keeps the stream open" must not wait for the stream's end.
    server = hostile(sse_answer_then_silence)
    with client_for(server.url) as client:
        started = time.monotonic()
        result = client.call_tool("slow", {}, timeout=TIMEOUT * 5)
        assert result.content[0].text == "prompt"
        assert time.monotonic() - started < TIMEOUT


def test_the_legacy_sse_transport_ends_a_silent_call_at_its_deadline(started):
    # The answer never comes on the HTTP+SSE stream.
    from sse_scripted import ScriptedSSEServer, Status
    from mcpclient.transports.http.sse import SSETransport

    server = started(ScriptedSSEServer(lambda msg: Status(202) if msg["method"] == "tools/call" else {}))
    with Client(SSETransport(server.url), validate_output="listed") as client:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", {}, timeout=TIMEOUT)
        assert time.monotonic() - t0 < TIMEOUT + SLACK
        assert wait_until(lambda: any((s[3] or {}).get("method") == "notifications/cancelled"
                                      for s in server.requests("POST")))


# --- Ctrl-C in a blocking HTTP call tells the server ----------------------------------------------

def test_an_interrupted_blocking_http_call_cancels_on_the_server(hostile):
    # The caller's thread is interrupted (a real SIGINT to it) while a poster thread reads the
    # answer: KeyboardInterrupt reaches the caller and notifications/cancelled reaches the server.
    import signal

    in_call = threading.Event()

    def first_byte_then_silence(conn: Conn, message: Dict[str, Any]) -> None:
        data = answer(message, tool_result())
        conn.head(length=len(data))
        conn.send(data[:1])
        in_call.set()  # the client is inside call_tool now: it waits for the rest of the body
        conn.hold()

    server = hostile(first_byte_then_silence)
    main = threading.main_thread().ident
    assert threading.get_ident() == main  # (signals go to the main thread)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupter = threading.Thread(target=lambda: in_call.wait(LONG) and signal.pthread_kill(main, signal.SIGINT),
                                   name="test-interrupter")
    try:
        with client_for(server.url) as client:
            interrupter.start()
            t0 = time.monotonic()
            with pytest.raises(KeyboardInterrupt):
                client.call_tool("slow", {}, timeout=LONG * 3)
            assert time.monotonic() - t0 < LONG
            assert server.wait_cancel(), "the server never saw notifications/cancelled"
            assert client.call_tool_future("slow", {}, timeout=0.5).exception(LONG) is not None  # still usable
    finally:
        interrupter.join(LONG)
        signal.signal(signal.SIGINT, previous)


def error_trickle(conn: Conn, message: Dict[str, Any]) -> None:
    """A 500 answer whose JSON body comes one byte at a time, each in time for the read timeout."""
    data = b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"%s"}}' % (message["id"], b"e" * 100)
    conn.head(length=len(data), status="500 Internal Server Error")
    for i in range(len(data)):
        if not conn.send(data[i:i + 1]) or conn.stop.wait(0.1):
            return


def test_a_blocking_call_ends_at_its_deadline_when_the_error_body_trickles(hostile):
    # The error body of a 4xx/5xx answer is read within the call's deadline (error_body: one read
    # of up to 1 MiB).
    server = hostile(error_trickle)
    with client_for(server.url) as client:
        started = time.monotonic()
        with pytest.raises(MCPError):
            client.call_tool("slow", {}, timeout=TIMEOUT)
        took = time.monotonic() - started
        assert took < TIMEOUT + SLACK, f"the call took {took:.2f} s"


def trickled_500(conn: Conn) -> None:
    """A GET refused with a 500 page that comes one byte every 0.1 s."""
    page = b"x" * 1000
    conn.head("text/plain", length=len(page), status="500 Internal Server Error")
    for i in range(len(page)):
        if not conn.send(page[i:i + 1]) or conn.stop.wait(0.1):
            return


class EndlessForNotifications(Hostile):
    """``Hostile`` whose answer to every POSTed notification is an SSE stream kept alive by
    comments, never ended (``on_notification`` is set when one is being answered so)."""

    def __init__(self) -> None:
        self.on_notification = threading.Event()
        super().__init__(lambda conn, message: conn.reply(answer(message, {"content": []})))

    def notified(self, conn: Conn, message: Dict[str, Any]) -> bool:
        self.on_notification.set()
        conn.head("text/event-stream")
        conn.every(0.2, b": keep-alive\n\n")
        return False


def test_a_notification_answered_with_an_endless_stream_ends_within_its_budget(started, monkeypatch):
    # A POSTed
    # notification (here notifications/initialized, sent by connect()) answered with an SSE stream
    # kept alive by comments held its sender for ever: the stream of an answer to no request was
    # read to its end, without the send's deadline (SEND_BUDGET).
    from mcpclient._engine import session as session_module

    monkeypatch.setattr(session_module, "SEND_BUDGET", TIMEOUT)
    server = started(EndlessForNotifications())
    client = client_for(server.url)
    done = threading.Event()
    failure: List[BaseException] = []

    def connect() -> None:
        try:
            client.connect()
        except BaseException as exc:  # reported below
            failure.append(exc)
        done.set()

    thread = threading.Thread(target=connect, name="test-connect")
    started_at = time.monotonic()
    thread.start()
    try:
        assert server.on_notification.wait(LONG)
        assert done.wait(TIMEOUT + SLACK + 1), "connect() still blocked on the notification's answer stream"
        assert time.monotonic() - started_at < TIMEOUT + SLACK + 1
        assert not failure, failure
        assert client.call_tool("any", {}, timeout=LONG).content == []
        assert server.hung_up.wait(SLACK), "the notification's answer stream was still being read"
    finally:
        server.stop()  # (unblocks a reader still reading the notification's answer stream)
        thread.join(LONG)
        client.close()


def test_the_legacy_sse_get_refused_with_a_trickled_page_fails_start_in_time_and_leaves_no_thread(hostile):
    # The HTTP+SSE GET
    # answered 500 with an error page trickled byte by byte. The reader quoted the page without a
    # deadline: start() gave up at connect_timeout, close() waited its whole budget (5 s) for the
    # reader and left it running.
    from mcpclient.transports.http.sse import SSETransport

    server = hostile(lambda conn, message: None, on_get=trickled_500)
    transport = SSETransport(server.url, connect_timeout=1.0)
    started_at = time.monotonic()
    with pytest.raises(MCPError):
        transport.start()
    took = time.monotonic() - started_at
    assert took < 1.0 + SLACK + 1, f"start() took {took:.2f} s"
    reader = f"mcpclient-{transport.info.instance}-sse"
    assert not [t for t in threading.enumerate() if t.name == reader], "the SSE reader thread was left running"


def test_ctrl_c_while_a_blocking_http_calls_answer_arrives_reaches_the_caller(hostile, monkeypatch):
    # A blocking call runs its own POST when no poster took it first, and its JSON answer is
    # dispatched on its own thread: a real SIGINT sent to the caller as that answer is dispatched
    # reaches it as KeyboardInterrupt (no dispatch there swallows it); nothing is left pending
    # and the client goes on.
    import signal

    from mcpclient._engine.session import Session

    main = threading.main_thread()
    assert threading.current_thread() is main  # (signals go to the main thread)
    server = hostile(lambda conn, message: conn.reply(answer(message, {"content": []})))
    original = Session.complete
    interrupt = [True]
    dispatched_on: List[threading.Thread] = []

    def complete(self: Session, msg: Dict[str, Any]) -> None:
        dispatched_on.append(threading.current_thread())
        if interrupt[0]:
            interrupt[0] = False
            signal.pthread_kill(main.ident, signal.SIGINT)  # the user's Ctrl-C, at this very point
        original(self, msg)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with client_for(server.url) as client:
            monkeypatch.setattr(Session, "complete", complete)
            started_at = time.monotonic()
            with pytest.raises(KeyboardInterrupt):
                client.call_tool("any", {}, timeout=TIMEOUT * 2)
            assert time.monotonic() - started_at < TIMEOUT
            assert not interrupt[0]
            assert main in dispatched_on  # (read and dispatched on the caller's own thread)
            assert not client._session._pending  # (answered or given up: nothing left waiting)
            assert client.call_tool("any", {}, timeout=LONG).content == []  # still usable
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_resumption_get_refused_with_a_trickled_page_ends_by_the_connect_timeout(hostile):
    # When an answer stream breaks, the resumption GET's error page is quoted within a deadline:
    # a trickled one does not hold the worker (nor close(), which would then leave it running)
    # long after the call has timed out.
    def broken_stream(conn: Conn, message: Dict[str, Any]) -> bool:
        conn.head("text/event-stream")
        conn.send(b"id: e1\nretry: 10\ndata: \n\n")  # a primed stream, then the connection drops
        return False

    server = hostile(broken_stream, on_get=trickled_500)
    client = client_for(server.url, connect_timeout=1.0)
    with client:
        with pytest.raises(MCPError):
            client.call_tool("slow", {}, timeout=TIMEOUT)
        started = time.monotonic()
    took = time.monotonic() - started
    assert took < 1.0 + SLACK + 1, f"close() took {took:.2f} s"
