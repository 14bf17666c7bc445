"""One deadline per call: the timeout given to a public method is spent by everything the call
does before and around its request — a reconnect to a relaunched server, the tool listing that
output validation needs first — and never starts again below it."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from conftest import LONG, wait_until
from http_scripted import ScriptedHTTPServer
from mcpclient import Client, Reconnect, RequestTimeout

SLACK = 1.0  # what a call may take past its timeout (a busy 2-core runner)

#: The bundled test server, started ``START`` seconds late (every launch: the relaunch too).
START = 1.5
SLOW_STARTING_SERVER = [sys.executable, "-c", f"import runpy, time; time.sleep({START}); "
                        "runpy.run_module('mcpclient.testing', run_name='__main__', alter_sys=True)"]


def test_a_call_that_meets_a_killed_server_and_a_slow_relaunch_ends_within_its_timeout():
    """The reconnect (1.5 s of the server's start, plus the handshake) spends the call's 2.5 s;
    the call then has what is left, not a new 2.5 s: its ``RequestTimeout`` comes at 2.5 s,
    not at the ~4 s a fresh timeout after the relaunch would give."""
    with Client(SLOW_STARTING_SERVER, timeout=LONG, reconnect=Reconnect(backoff_factor=0.0)) as client:
        first = client.transport.pid
        os.kill(first, signal.SIGKILL)
        assert wait_until(lambda: client.state == "lost")
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", {"steps": 1, "delay": 5.0}, timeout=2.5)
        took = time.monotonic() - started
        assert client.transport.pid != first, "the call did not reconnect"
        assert 2.5 <= took < 2.5 + SLACK, f"the call took {took:.2f} s for a 2.5 s timeout"


def test_a_call_whose_tool_must_be_listed_ends_within_its_timeout(started):
    """``validate_output=True`` lists the tools after the answer of a call to a tool not seen
    listed: the call (1 s here) spends the call's 2 s, and the listing (which the server holds)
    has what is left: ``RequestTimeout`` at 2 s, not at the 3 s a fresh timeout would give."""
    release = threading.Event()
    tool = {"name": "held", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}

    def handle(seen, msg):
        if msg["method"] == "tools/list":
            release.wait(LONG)  # held until the test ends
            return {"tools": [tool]}
        time.sleep(1.0)  # tools/call
        return {"content": [], "structuredContent": {"n": 1}}

    server = started(ScriptedHTTPServer(handle))
    try:
        with Client(server.url, timeout=LONG, protocol="legacy") as client:
            started_at = time.monotonic()
            with pytest.raises(RequestTimeout):
                client.call_tool("held", timeout=2.0)
            took = time.monotonic() - started_at
            requests = [s.rpc_method for s in server.requests(http_method="POST")]
            assert [m for m in requests if m != "notifications/cancelled"][-2:] == ["tools/call", "tools/list"]
            assert 2.0 <= took < 2.0 + SLACK, f"the call took {took:.2f} s for a 2 s timeout"
    finally:
        release.set()
