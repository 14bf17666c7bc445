"""User code that calls ``sys.exit()`` or raises ``KeyboardInterrupt`` (a handler, a callback,
the stderr sink, a token callable, ``on_session_change``) must not kill the client's threads:
it is contained and logged, the server gets an internal error without the exception's text, and
the connection, its lanes and its later callbacks go on working.
"""
from __future__ import annotations

import json
import logging
import sys
import threading
import time
from typing import Any, Dict, List

import pytest

from conftest import LONG, require_official_sdk, wait_until
from helpers import ScriptedServer, Twins
from mcpclient import Client, CreateMessageResult, Handlers, Limits
from mcpclient.testing import server_command
from mcpclient.transports.stdio.transport import StdioTransport


def _sample(text: str) -> Dict[str, Any]:
    return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": 5}


def _threads_of(instance: int) -> List[str]:
    prefix = f"mcpclient-{instance}-"
    return sorted(t.name for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive())


def test_sys_exit_or_keyboard_interrupt_in_a_sampling_handler_is_answered_32603_and_lanes_keep_capacity():
    """sys.exit() in a sampling handler does not leave the server's request unanswered (the tool
    would wait out its own timeout): each is answered -32603 at once, more times than there are
    handler threads, and a normal request is still answered after."""
    def handler(request):
        text = request.messages[0].text
        if text == "exit":
            sys.exit(2)
        if text == "interrupt":
            raise KeyboardInterrupt
        return CreateMessageResult(f"ok {text}", "m")

    with Client(server_command(), timeout=LONG, limits=Limits(workers=2), handlers=Handlers(sampling=handler)) as client:
        for text in ["exit"] * 3 + ["interrupt"] * 3:  # 6 > max_workers
            began = time.monotonic()
            asked = client.call_tool("ask_client", {"method": "sampling/createMessage", "params": _sample(text),
                                                    "timeout": 5}).structured_content
            assert asked == {"answered": 1, "results": [], "errors": [-32603]}, text
            assert time.monotonic() - began < 4, "the request was not answered at once"
        burst = client.call_tool("ask_client", {"method": "sampling/createMessage", "params": _sample("exit"),
                                                "count": 8, "timeout": 5}).structured_content
        assert burst["errors"] == [-32603] * 8
        fine = client.call_tool("ask_client", {"method": "sampling/createMessage", "params": _sample("fine"),
                                               "count": 4, "timeout": 5}).structured_content
        assert fine["errors"] == [] and [r["content"]["text"] for r in fine["results"]] == ["ok fine"] * 4
        handlers = [n for n in _threads_of(client._session.instance) if "-handler" in n]
        assert 1 <= len(handlers) <= 2


def test_the_32603_answer_does_not_carry_the_exception_text(caplog):
    """What a failing handler raised (it may hold a secret) stays in the local log; the
    server gets a fixed message naming the method only."""
    srv = ScriptedServer(lambda method, params: {})

    def handler(request):
        raise KeyboardInterrupt("token sk-s3cr3t")

    try:
        with caplog.at_level(logging.ERROR, logger="mcpclient"):
            with Client(srv.transport, timeout=LONG, handlers=Handlers(sampling=handler)):
                answer = srv.ask("sampling/createMessage", _sample("x"))
        assert answer["error"]["code"] == -32603
        assert "s3cr3t" not in json.dumps(answer) and "Traceback" not in json.dumps(answer)
        assert "sampling/createMessage" in answer["error"]["message"]
        assert any("sampling/createMessage" in r.getMessage() for r in caplog.records)  # logged with its label
    finally:
        srv.stop()


def test_sys_exit_in_on_progress_leaves_the_notification_thread_working():
    """``sys.exit()`` in on_progress; later calls must get their progress and return on
    time (the notification thread lives on)."""
    seen: List[Any] = []
    with Client(server_command(), timeout=LONG) as client:
        first = client.call_tool("slow", {"steps": 2}, on_progress=lambda p, t, m: sys.exit(1))
        assert first.text == "done after 2 steps"
        began = time.monotonic()
        second = client.call_tool("slow", {"steps": 3}, on_progress=lambda p, t, m: seen.append(p))
        assert second.text == "done after 3 steps" and seen == [1, 2, 3]
        assert time.monotonic() - began < LONG / 2


def test_sys_exit_in_on_log_still_reaches_on_notification_and_later_callbacks():
    """A SystemExit from one notification callback skips none of the rest for that message
    (catching only Exception would): every callback after it still runs, and later ones too."""
    logs: List[str] = []
    every: List[str] = []

    def on_log(level, logger, data):
        logs.append(data)
        if data == "exit":
            sys.exit(1)
        if data == "interrupt":
            raise KeyboardInterrupt

    with Client(server_command(), timeout=LONG, handlers=Handlers(on_log=on_log, on_notification=lambda method, params: every.append(params.get("data")))) as client:
        for text in ("exit", "interrupt", "fine"):
            client.call_tool("log", {"level": "info", "message": text})
        assert wait_until(lambda: every == ["exit", "interrupt", "fine"])
        assert logs == ["exit", "interrupt", "fine"]


def test_sys_exit_in_a_done_callback_does_not_skip_the_next_one():
    """``concurrent.futures`` catches Exception only: a done-callback's SystemExit skipped
    the callbacks after it (on a worker thread)."""
    ran: List[str] = []
    with Client(server_command(), timeout=LONG) as client:
        future = client.call_tool_future("slow", {"steps": 1, "delay": 0.3})
        future.add_done_callback(lambda f: sys.exit(1))
        future.add_done_callback(lambda f: ran.append("second"))
        assert future.result(LONG).text == "done after 1 steps"
        assert wait_until(lambda: ran == ["second"])
        assert client.call_tool("echo", {"text": "still"}).text == "still"


def test_sys_exit_in_the_stderr_sink_does_not_stop_the_drain():
    """A stderr sink that exits does not kill the drain thread (the child would then block on a
    full stderr pipe): the drain goes on, and the tail still gets every line."""
    script = "import sys\nfor i in range(3): sys.stderr.write(f'line {i}\\n'); sys.stderr.flush()\nsys.stdin.read()"

    def sink(line: str) -> None:
        sys.exit(1)

    transport = StdioTransport([sys.executable, "-c", script], stderr=sink,
                               on_exit=lambda code: sys.exit(1))
    transport.start()
    try:
        assert wait_until(lambda: "line 2" in transport.stderr_tail)
    finally:
        transport.close()
    assert transport.returncode is not None


def _stream_transport(url: str, legacy: bool, token: Any) -> Any:
    from mcpclient.transports.http.streamable import HTTPTransport
    from mcpclient.transports.http.sse import SSETransport

    return (SSETransport if legacy else HTTPTransport)(url, auth=token, connect_timeout=8)


@pytest.mark.parametrize("legacy", [False, True], ids=["streamable-http", "legacy-sse"])
def test_sys_exit_in_a_token_callable_on_a_stream_thread_is_contained(legacy, caplog):
    """A token callable that exits when called on the Streamable HTTP GET listener (or the
    legacy SSE reader) does not kill that thread silently (connecting would wait out
    connect_timeout, and the server's messages would stop with no word in the log): it is logged,
    at once; over legacy SSE, where that stream is the connection, connecting fails at once with a
    typed error."""
    require_official_sdk()
    from http_servers import official_http_server

    from mcpclient.errors import MCPError

    def token() -> str:
        name = threading.current_thread().name
        if name.endswith("-http-get") or name.endswith("-sse"):
            sys.exit(1)
        return "t"

    with official_http_server("--sse" if legacy else "--http") as url:
        with caplog.at_level(logging.WARNING, logger="mcpclient"):
            began = time.monotonic()
            if legacy:
                with pytest.raises(MCPError):
                    Client(_stream_transport(url, legacy, token), timeout=LONG).connect()
                assert time.monotonic() - began < 4.0  # not connect_timeout (8 s)
                return
            with Client(_stream_transport(url, legacy, token), timeout=LONG, protocol="legacy") as client:
                assert time.monotonic() - began < 4.0  # not connect_timeout (8 s)
                assert client.call_tool("echo", {"text": "on"}).text == "on"
        assert any("GET stream" in r.getMessage() for r in caplog.records)


def test_sys_exit_in_a_token_callable_on_an_http_worker_fails_only_that_call_at_once():
    """A future's POST runs on an ``http`` lane worker; a token callable that exits there does
    not leave the call waiting for its whole timeout: it fails at once with a typed error, and the
    next calls go through."""
    require_official_sdk()
    from http_servers import official_http_server

    from mcpclient.errors import MCPError

    armed = threading.Event()

    def token() -> str:
        name = threading.current_thread().name
        if armed.is_set() and "-http" in name and not name.endswith("-http-get"):
            armed.clear()
            sys.exit(1)
        return "t"

    with official_http_server("--http") as url:
        with Client(_stream_transport(url, False, token), timeout=LONG, protocol="legacy") as client:
            client.list_tools()  # the call below is the next POST (no listing first)
            armed.set()
            began = time.monotonic()
            with pytest.raises(MCPError):
                client.call_tool_future("echo", {"text": "x"}).result(LONG)
            assert time.monotonic() - began < 3.0
            assert client.call_tool_future("echo", {"text": "next"}).result(LONG).text == "next"


def test_on_session_change_that_exits_is_contained_and_the_call_goes_on(started):
    # The user's on_session_change callback runs with SystemExit caught too: its sys.exit() does
    # not go up through the request that met the 404 (on a worker) and fail it (ConnectionClosed
    # "SystemExit") though the new session is in place, nor end server-initiated messages on the
    # GET listener for good.
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
        assert Twins(client).list_tools().result(LONG) == []  # (a request safe to repeat in the new session)
        assert len(changes) == 1
        assert client.call_tool("echo", {"text": "after"}).content[0].text == "after"
