"""Independent review of issue 12 (items 1-5): regressions found after the fixes were merged.

Each test names the issue-12 failure it covers. Hostile servers are real sockets on 127.0.0.1
(``Hostile`` from test_deadlines_bounds) or real child processes."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any, Dict, List

import pytest

from conftest import LONG, wait_until
from test_deadlines_bounds import SLACK, TIMEOUT, Conn, Hostile, answer, client_for, hostile  # noqa: F401
from mcpclient import Client
from mcpclient.errors import MCPError


def error_trickle(conn: Conn, message: Dict[str, Any]) -> None:
    """A 500 answer whose JSON body comes one byte at a time, each in time for the read timeout."""
    data = b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"%s"}}' % (message["id"], b"e" * 100)
    conn.head(length=len(data), status="500 Internal Server Error")
    for i in range(len(data)):
        if not conn.send(data[i:i + 1]) or conn.stop.wait(0.1):
            return


def test_a_blocking_call_ends_at_its_deadline_when_the_error_body_trickles(hostile):
    # Issue 12 item 2 ("a blocking HTTP call ignores its timeout", trickling): the error body of a
    # 4xx/5xx answer was read without the call's deadline (error_body: one read of up to 1 MiB).
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
    # Issue 12 item 2 ("deadlines hold ... whatever the server does with the stream"): a POSTed
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
        server.stop()  # (unblocks the reader without the fix)
        thread.join(LONG)
        client.close()


def test_the_legacy_sse_get_refused_with_a_trickled_page_fails_start_in_time_and_leaves_no_thread(hostile):
    # Issue 12 item 2 (trickling) and item 5's "close() ... leaves no thread": the HTTP+SSE GET
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
    reader = f"mcpclient-{transport.instance}-sse"
    assert not [t for t in threading.enumerate() if t.name == reader], "the SSE reader thread was left running"


def test_ctrl_c_while_a_blocking_http_call_takes_its_answer_reaches_the_caller(hostile, monkeypatch):
    # Issue 12 item 4 (BaseException containment must not swallow a main-thread Ctrl-C): a JSON
    # answer read on the caller's own thread is dispatched there. A real SIGINT landing while it
    # was dispatched was logged as "failed to dispatch a message" and swallowed: the caller then
    # waited out its whole timeout instead of seeing KeyboardInterrupt.
    import signal

    from mcpclient._engine.session import Session

    assert threading.current_thread() is threading.main_thread()  # (signals go to the main thread)
    server = hostile(lambda conn, message: conn.reply(answer(message, {"content": []})))
    original = Session._complete
    interrupt = [True]

    def complete(self: Session, msg: Dict[str, Any]) -> None:
        if interrupt[0] and threading.current_thread() is threading.main_thread():
            interrupt[0] = False
            signal.raise_signal(signal.SIGINT)  # the user's Ctrl-C, at this very point
        original(self, msg)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with client_for(server.url) as client:
            monkeypatch.setattr(Session, "_complete", complete)
            started_at = time.monotonic()
            with pytest.raises(KeyboardInterrupt):
                client.call_tool("any", {}, timeout=TIMEOUT * 2)
            assert time.monotonic() - started_at < TIMEOUT
            assert not interrupt[0]
            assert not client.session._pending  # (answered: nothing left waiting)
            assert client.call_tool("any", {}, timeout=LONG).content == []  # still usable
    finally:
        signal.signal(signal.SIGINT, previous)


# A stdio server whose setsid grandchild holds its stdout and, once the server is gone (the
# grandchild is re-parented), writes to it without pause (a chatty helper daemon's log).
CHATTY_SERVER = r'''
import json, os, signal, subprocess, sys, time
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])  # (inherited: the grandchild waits for it)
NOISE = "import fcntl, os, signal\nsignal.sigwait([signal.SIGUSR1])\n" \
        "fcntl.fcntl(1, 1031, 1 << 20)\n" \
        "line = b'noise ' * 30 + b'\\n'\nwhile True: os.write(1, line * 100)\n"
child = subprocess.Popen([sys.executable, "-c", NOISE], stdin=subprocess.DEVNULL, start_new_session=True)
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, params = msg["method"], msg.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "chatty", "version": "1"}}
    elif params.get("name") == "die":  # the grandchild starts writing, and goes on once we are gone
        os.kill(child.pid, signal.SIGUSR1)
        time.sleep(0.3)
        os._exit(3)
    else:
        result = {"content": [{"type": "text", "text": str(child.pid)}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
'''


@pytest.mark.skipif(os.name != "posix", reason="setsid")
def test_calls_fail_at_once_when_the_server_exits_though_a_grandchild_keeps_writing_its_stdout():
    # Issue 12 item 5 ("when the server exits, pending calls fail at once even if a descendant
    # holds its stdout"; "close() ... leaves no thread"): once released, the stdout reader read on
    # for as long as the pipe had data, so a descendant that kept writing kept it (and every
    # pending call) going for ever.
    from mcpclient.errors import ConnectionClosed

    client = Client([sys.executable, "-c", CHATTY_SERVER], timeout=LONG, validate_output="listed").connect()
    grandchild = int(client.call_tool("pid").content[0].text)
    try:
        instance = client.session.instance
        started_at = time.monotonic()
        with pytest.raises(ConnectionClosed):  # (ProcessExited)
            client.call_tool("die", timeout=LONG)
        assert time.monotonic() - started_at < 3.0
        started_at = time.monotonic()
        client.close()
        assert time.monotonic() - started_at < 3.0
        assert wait_until(lambda: not [t for t in threading.enumerate() if t.name.startswith(f"mcpclient-{instance}-")],
                          timeout=2.0), [t.name for t in threading.enumerate()]
    finally:
        client.close()
        try:
            os.kill(grandchild, signal.SIGKILL)
        except OSError:
            pass


def test_on_session_change_that_exits_is_contained_and_the_call_goes_on(started):
    # Issue 12 item 4 ("SystemExit from user code ... is contained and logged"): the user's
    # on_session_change callback ran with only Exception caught; its sys.exit() went up through
    # the request that met the 404 (on a worker), which failed (ConnectionClosed "SystemExit")
    # though the new session was in place (and on the GET listener it ended server-initiated messages for good).
    from http_scripted import ScriptedHTTPServer
    from mcpclient import HTTPTransport

    def echo(seen: Any, msg: Dict[str, Any]) -> Dict[str, Any]:
        if msg["method"] != "tools/call":
            return {"tools": []} if msg["method"] == "tools/list" else {}
        return {"content": [{"type": "text", "text": msg["params"]["arguments"]["text"]}]}

    server = started(ScriptedHTTPServer(echo))
    changes: List[Any] = []

    def on_change(old: Any, new: Any) -> None:
        changes.append((old, new))
        sys.exit(1)

    transport = HTTPTransport(server.url, on_session_change=on_change)
    with Client(transport, protocol="legacy", validate_output="listed", timeout=LONG) as client:
        assert client.call_tool("echo", {"text": "before"}).content[0].text == "before"
        server.expire_sessions()
        assert client.list_tools_future().result(LONG) == []  # (a request safe to repeat in the new session)
        assert len(changes) == 1
        assert client.call_tool("echo", {"text": "after"}).content[0].text == "after"


def test_a_resumption_get_refused_with_a_trickled_page_ends_by_the_connect_timeout(hostile):
    # Issue 12 item 2 (trickling), found by the review: when an answer stream broke, the
    # resumption GET's error page was quoted without a deadline; a trickled one held the worker
    # (and close(), which then left it running) long after the call had timed out.
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
    # (the autouse leak guard checks that no mcpclient thread was left running)


@pytest.mark.skipif(os.name != "posix", reason="the pipe readers of POSIX")
def test_a_server_whose_pipe_reader_cannot_be_made_is_a_connect_error_and_is_stopped(monkeypatch):
    # Found by the review: when the stdout/stderr readers could not be made (out of file
    # descriptors: fault injected, EMFILE), a raw OSError escaped start() and the child ran on.
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
    # (the autouse leak guard checks that no child process was left running)
