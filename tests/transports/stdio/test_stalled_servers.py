"""A stdio server that stops reading its stdin, or never answers: calls end at their deadline
(a write blocked on a full pipe included), ``close()`` returns while a write is blocked, and a
flood of server requests while the server does not read never deadlocks the connection.
"""
from __future__ import annotations

import sys
import time

import pytest

from conftest import LONG, pid_alive, server_script, wait_until
from helpers import StderrLines
from hostile_http import SLACK, TIMEOUT
from reaping import PIPE_FULL, in_thread, pipe_bytes, reaper  # noqa: F401  (fixtures: reaper)
from mcpclient import Client, StdioTransport
from mcpclient.errors import ClientClosedError, MCPError, ReaderThreadError, RequestTimeout, TransportError


STUCK = server_script("stops_reading")  # answers initialize, then never reads stdin


# ---------------------------------------------------------------- a server that stops reading stdin


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(15)
def test_call_to_a_server_not_reading_stdin_times_out(reaper):
    client = reaper.client(Client(STUCK, timeout=LONG).connect())
    outcome = in_thread(reaper, lambda: client.call_tool("echo", {"text": "x" * (1 << 20)}, timeout=1),
                        "test-big-call")
    assert outcome.done.wait(3.5), f"call_tool(timeout=1) still blocked (in the write?) after 3.5 s: {outcome}"
    assert isinstance(outcome.error, (RequestTimeout, TransportError)), outcome
    assert outcome.elapsed < 3.0, outcome


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(20)
def test_close_returns_while_a_write_is_blocked(reaper):
    # validate_output="listed": this server never answers, so a first call's tools/list (to learn the
    # outputSchema) would wait instead of the big write this test is about
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


# ---------------------------------------------------------------- server-request flood, server not reading

FLOOD_PINGS = 20_000  # ~0.9 MB of requests, ~0.8 MB of answers: both pipes fill many times over


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(25)
def test_server_request_flood_while_the_server_does_not_read_never_deadlocks(reaper):
    lines = StderrLines()
    transport = StdioTransport(server_script("floods_ping_requests", str(FLOOD_PINGS)), stderr=lines)
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


def test_stdio_ends_a_slow_call_at_its_deadline():
    # A tool that runs past the call's timeout, over stdio.
    from mcpclient.testing import server_command

    with Client(server_command()) as client:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", {"steps": 1000, "delay": 0.05}, timeout=TIMEOUT)
        assert time.monotonic() - t0 < TIMEOUT + SLACK
        assert client.call_tool("echo", {"text": "after"}).content[0].text == "after"
