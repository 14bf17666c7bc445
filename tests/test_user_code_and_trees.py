"""Issue 12, items 4, 5 and the stdio part of 10: user code that exits or interrupts must not kill
the client's threads; a server whose descendant keeps its pipes open must not hang calls or
close(); the child's environment allow-list is exact.

Real processes throughout: the bundled test server (``ask_client`` makes the server send
sampling requests, ``slow`` sends progress, ``log`` a log message), ``tests/servers/
grandchild_holder.py`` (a server that leaves a ``setsid`` descendant holding its stdout), and
small ``python -c`` children. The in-memory scripted server only where the exact error message
sent back must be read.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
import time
from typing import Any, Dict, List

import pytest

from mcpclient import Client, CreateMessageResult
from mcpclient.errors import ProcessExited
from mcpclient.testing import server_command
from mcpclient.transports.stdio import transport as stdio
from mcpclient.transports.stdio.transport import StdioTransport

from conftest import LONG, SERVERS, wait_until
from helpers import ScriptedServer

POSIX = os.name == "posix"
HOLDER = [sys.executable, str(SERVERS / "grandchild_holder.py")]


def _sample(text: str) -> Dict[str, Any]:
    return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": 5}


def _threads_of(instance: int) -> List[str]:
    prefix = f"mcpclient-{instance}-"
    return sorted(t.name for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive())


# --- item 4: user code that raises BaseException --------------------------------------------------

def test_sys_exit_or_keyboard_interrupt_in_a_sampling_handler_is_answered_32603_and_lanes_keep_capacity():
    """Issue 12: sys.exit() in a sampling handler left the server's request unanswered (the tool
    waited out its own timeout); here each is answered -32603 at once, more times than there are
    handler threads, and a normal request is still answered after."""
    def handler(request):
        text = request.messages[0].text
        if text == "exit":
            sys.exit(2)
        if text == "interrupt":
            raise KeyboardInterrupt
        return CreateMessageResult(f"ok {text}", "m")

    with Client(server_command(), timeout=LONG, max_workers=2, sampling_handler=handler) as client:
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
        handlers = [n for n in _threads_of(client.session.instance) if "-handler" in n]
        assert 1 <= len(handlers) <= 2


def test_the_32603_answer_does_not_carry_the_exception_text(caplog):
    """Issue 12: what a failing handler raised (it may hold a secret) stays in the local log; the
    server gets a fixed message naming the method only."""
    srv = ScriptedServer(lambda method, params: {})

    def handler(request):
        raise KeyboardInterrupt("token sk-s3cr3t")

    try:
        with caplog.at_level(logging.ERROR, logger="mcpclient"):
            with Client(srv.transport, timeout=LONG, sampling_handler=handler):
                answer = srv.ask("sampling/createMessage", _sample("x"))
        assert answer["error"]["code"] == -32603
        assert "s3cr3t" not in json.dumps(answer) and "Traceback" not in json.dumps(answer)
        assert "sampling/createMessage" in answer["error"]["message"]
        assert any("sampling/createMessage" in r.getMessage() for r in caplog.records)  # logged with its label
    finally:
        srv.stop()


def test_sys_exit_in_on_progress_leaves_the_notification_thread_working():
    """Issue 12: sys.exit() in on_progress; later calls must get their progress and return on
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
    """Issue 12: a SystemExit from one notification callback skipped the rest for that message
    (only Exception was caught); every callback after it still runs, and later ones too."""
    logs: List[str] = []
    every: List[str] = []

    def on_log(level, logger, data):
        logs.append(data)
        if data == "exit":
            sys.exit(1)
        if data == "interrupt":
            raise KeyboardInterrupt

    with Client(server_command(), timeout=LONG, on_log=on_log,
                on_notification=lambda method, params: every.append(params.get("data"))) as client:
        for text in ("exit", "interrupt", "fine"):
            client.call_tool("log", {"level": "info", "message": text})
        assert wait_until(lambda: every == ["exit", "interrupt", "fine"])
        assert logs == ["exit", "interrupt", "fine"]


def test_sys_exit_in_a_done_callback_does_not_skip_the_next_one():
    """Issue 12: concurrent.futures catches Exception only: a done-callback's SystemExit skipped
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
    """Issue 12: a stderr sink that exits killed the drain thread: the child then blocks on a full
    stderr pipe. The drain goes on (and the tail still gets every line)."""
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


# --- item 5: a descendant that keeps the server's pipes open ---------------------------------------

@pytest.fixture
def holder():
    """A client of grandchild_holder.py; the grandchild is killed at the end whatever happens."""
    made: List[Client] = []
    grandchildren: List[int] = []

    def make() -> Client:
        client = Client(HOLDER, timeout=LONG).connect()
        made.append(client)
        grandchildren.append(client.call_tool("pids").structured_content["grandchild"])
        return client

    yield make
    for client in made:
        client.close()
    for pid in grandchildren:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.skipif(not POSIX, reason="setsid")
def test_calls_fail_at_once_when_the_server_exits_though_a_grandchild_holds_stdout(holder):
    """Issue 12: after the server died, calls hung (its grandchild kept stdout open, so no EOF)."""
    client = holder()
    pending = client.call_tool_future("hang", timeout=30)
    began = time.monotonic()
    with pytest.raises(ProcessExited) as caught:
        client.call_tool("die", timeout=30)
    assert time.monotonic() - began < 2.0
    assert caught.value.returncode == 3 and "dying on request" in caught.value.stderr_tail
    with pytest.raises(ProcessExited):
        pending.result(2.0)


@pytest.mark.skipif(not POSIX, reason="setsid")
def test_close_is_bounded_and_leaves_no_thread_when_a_grandchild_holds_the_pipes(holder):
    """Issue 12: close() took the whole 5 s budget and left the reader and stderr threads behind."""
    client = holder()
    pending = client.call_tool_future("hang", timeout=30)
    instance = client.session.instance
    began = time.monotonic()
    client.close()
    assert time.monotonic() - began < 2.0
    assert _threads_of(instance) == []
    assert pending.done()


@pytest.mark.skipif(not POSIX, reason="setsid")
def test_a_transport_without_a_session_closes_promptly_too(holder):
    """The same pipes held by a grandchild, with nobody reading stdout (a transport used alone)."""
    transport = StdioTransport(HOLDER)
    transport.start()
    transport.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert transport.receive()["id"] == 1
    transport.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "pids"}})
    grandchild = transport.receive()["result"]["structuredContent"]["grandchild"]
    try:
        began = time.monotonic()
        transport.close()
        assert time.monotonic() - began < 2.0
        assert _threads_of(transport.instance) == []
    finally:
        os.kill(grandchild, signal.SIGKILL)


# --- item 10: the environment allow-list -------------------------------------------------------------

PRINT_ENV = [sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)), flush=True)"]


@pytest.mark.skipif(not POSIX, reason="POSIX names are case-sensitive")
def test_the_env_allow_list_is_case_sensitive_and_drops_function_like_values(monkeypatch):
    """Issue 12: a lowercase ``path`` passed the allow-list, and so did a shellshock-style value."""
    monkeypatch.setenv("path", "/attacker/bin")
    monkeypatch.setenv("home", "/attacker")
    monkeypatch.setenv("TZ", "() { :;}; echo pwned")
    monkeypatch.setenv("LANG", "C.UTF-8")
    transport = StdioTransport(PRINT_ENV, env={"EXPLICIT": "() { given; }"})
    transport.start()
    try:
        env = transport.receive()
    finally:
        transport.close()
    assert "path" not in env and "home" not in env and "TZ" not in env
    assert env["LANG"] == "C.UTF-8" and env["PATH"] == os.environ["PATH"]
    assert env["EXPLICIT"] == "() { given; }"  # what the caller passes in env= is theirs


def test_on_windows_env_names_match_whatever_their_case(monkeypatch):
    """Windows environment names are case-insensitive: ``Path`` is PATH there."""
    monkeypatch.setattr(stdio, "_POSIX", False)
    monkeypatch.setattr(os, "environ", {"Path": r"C:\bin", "SystemRoot": r"C:\Windows", "SECRET": "x",
                                        "TEMP": "() { :;}; echo pwned"})
    env = StdioTransport(["srv"])._child_env()
    assert env == {"Path": r"C:\bin", "SystemRoot": r"C:\Windows"}


def test_where_pipes_cannot_be_polled_the_plain_pipe_files_are_read(monkeypatch):
    """The Windows read path (platform faked: no poll on pipes, blocking writes): stdout and
    stderr are read from the subprocess files as before; calls, server stderr and close() work."""
    monkeypatch.setattr(stdio, "_POLLED_READS", False)
    monkeypatch.setattr(stdio, "_BLOCKING_PIPES", True)
    lines: List[str] = []
    script = ("import sys, runpy; sys.stderr.write('hello\\n'); sys.stderr.flush(); "
              "runpy.run_module('mcpclient.testing', run_name='__main__')")
    with Client(StdioTransport([sys.executable, "-c", script], stderr=lines.append), timeout=LONG) as client:
        assert not isinstance(client.transport._stdout, stdio.PipeLines)  # type: ignore[attr-defined]
        assert client.call_tool("echo", {"text": "plain"}).text == "plain"
        assert wait_until(lambda: "hello" in lines)


def _stream_transport(url: str, legacy: bool, token: Any) -> Any:
    from mcpclient.transports.http.streamable import HTTPTransport
    from mcpclient.transports.http.sse import SSETransport

    return (SSETransport if legacy else HTTPTransport)(url, auth=token, connect_timeout=8)


@pytest.mark.parametrize("legacy", [False, True], ids=["streamable-http", "legacy-sse"])
def test_sys_exit_in_a_token_callable_on_a_stream_thread_is_contained(legacy, caplog):
    """Issue 12 (item 4, found while auditing the client threads): a token callable that exits when
    called on the Streamable HTTP GET listener (or the legacy SSE reader) killed that thread
    silently: connecting waited out connect_timeout, and the server's messages stopped with no
    word in the log. Now: logged, at once; over legacy SSE, where that stream is the connection,
    connecting fails at once with a typed error."""
    pytest.importorskip("mcp", reason="the official `mcp` SDK needs Python 3.10+")
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
    """Issue 12 (item 4, the same audit): a future's POST runs on an ``http`` lane worker; a token
    callable that exits there left the call waiting for its whole timeout. Now it fails at once
    with a typed error, and the next calls go through."""
    pytest.importorskip("mcp", reason="the official `mcp` SDK needs Python 3.10+")
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
            armed.set()
            began = time.monotonic()
            with pytest.raises(MCPError):
                client.call_tool_future("echo", {"text": "x"}).result(LONG)
            assert time.monotonic() - began < 3.0
            assert client.call_tool_future("echo", {"text": "next"}).result(LONG).text == "next"


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
