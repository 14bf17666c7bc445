"""The stdio transport's server process: started once (a later ``start()``, such as the
session's after the client started the transport early, spawns nothing), and never confused
with an unrelated process that reused its pid after it died.
"""
from __future__ import annotations

import os
import subprocess
import sys
from typing import List, Optional

import pytest

from conftest import LONG, SHORT, child_pids, faulty, wait_until
from reaping import reaper  # noqa: F401  (fixtures: reaper)
from mcpclient import Client, StdioTransport
from mcpclient.errors import MCPError, ProcessExited


pytestmark = [
    pytest.mark.timeout(30),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc"),
]


# ---------------------------------------------------------------- pid reuse


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


@pytest.mark.timeout(20)
def test_starting_a_stdio_transport_twice_spawns_one_server_and_leaks_nothing(reaper):
    before = child_pids()
    transport = StdioTransport(faulty("normal"), stderr=None)
    transport.start()
    try:
        first = transport.pid
        assert child_pids() - before == {first}
        transport.start()  # (once started, a later start() returns)
        assert transport.pid == first
        assert child_pids() - before == {first}, "the second start() spawned another server"
    finally:
        transport.close()
    assert wait_until(lambda: not (child_pids() - before))


@pytest.mark.timeout(20)
def test_a_stdio_transport_started_before_its_client_connects_serves_it_on_the_server_it_spawned(reaper):
    before = child_pids()
    transport = StdioTransport(faulty("normal"), stderr=None)
    transport.start()
    try:
        launched = transport.pid
        assert launched is not None and child_pids() - before == {launched}
        client = reaper.client(Client(transport, timeout=LONG, protocol="legacy").connect())
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        assert transport.pid == launched and child_pids() - before == {launched}
        transport.start()  # (started already: nothing more is spawned)
        assert transport.pid == launched and child_pids() - before == {launched}
        client.close()
    finally:
        transport.close()
    assert wait_until(lambda: not (child_pids() - before))


@pytest.mark.timeout(20)
def test_a_started_stdio_transport_closed_stops_its_server_and_refuses_to_start_again(reaper):
    before = child_pids()
    transport = StdioTransport(faulty("normal"), stderr=None)
    transport.start()
    assert child_pids() - before == {transport.pid}
    transport.close()
    assert wait_until(lambda: not (child_pids() - before))
    with pytest.raises(MCPError):
        transport.start()
    assert not (child_pids() - before)


def test_a_command_that_cannot_start_fails_connect_and_closes_the_client(reaper):
    """``connect()`` starts the server before it builds the client's core: a spawn that fails
    there is raised by the connect, as ever, and leaves the client closed."""
    client = Client([sys.executable + "-no-such-interpreter"], timeout=LONG)
    with pytest.raises(MCPError, match="could not start server"):
        client.connect()
    assert client.state == "closed"
