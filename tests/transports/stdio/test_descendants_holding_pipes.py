"""A stdio server whose descendant (a ``setsid`` grandchild) keeps its pipes open, or keeps
writing to its stdout: when the server exits, pending calls fail at once, and ``close()`` is
bounded and leaves no thread, with or without a session on the transport.

Real processes: ``tests/servers/grandchild_holder.py`` and an inline chatty server.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import List

import pytest

from conftest import LONG, SERVERS, wait_until
from mcpclient import Client
from mcpclient.errors import ProcessExited
from mcpclient.transports.stdio.transport import StdioTransport


POSIX = os.name == "posix"
HOLDER = [sys.executable, str(SERVERS / "grandchild_holder.py")]


def _threads_of(instance: int) -> List[str]:
    prefix = f"mcpclient-{instance}-"
    return sorted(t.name for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive())


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
    """After the server dies, calls fail at once though its grandchild keeps stdout open (so no EOF)."""
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
    """close() takes less than its whole 5 s budget and leaves no reader or stderr thread behind."""
    client = holder()
    pending = client.call_tool_future("hang", timeout=30)
    instance = client._session.instance
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
        assert _threads_of(transport.info.instance) == []
    finally:
        os.kill(grandchild, signal.SIGKILL)


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
    # When the server exits, pending calls fail at once even if a descendant holds its stdout,
    # and close() leaves no thread. Once released, the stdout reader does not read on for as
    # long as the pipe has data: a descendant that keeps writing would keep it (and every pending
    # call) going for ever.
    from mcpclient.errors import ConnectionClosed

    client = Client([sys.executable, "-c", CHATTY_SERVER], timeout=LONG, validate_output="listed").connect()
    grandchild = int(client.call_tool("pid").content[0].text)
    try:
        instance = client._session.instance
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
