"""``os.fork`` with a connected client: parent and child both call, at the same time.

The parent has a ``slow`` call in flight when it forks, and calls ``add`` while the child calls
``add`` on the client it inherited. The parent must get its own answers every time; the child
gets ``ForkedClientError`` (a default client) or a correct answer of its own (``reconnect=``,
through its own server, which its ``close()`` stops). The default client's loop runs 100
iterations; the ``reconnect=`` loop starts a server per child, so it runs 10 by default and 100
with ``MCPCLIENT_FORK_ITERATIONS=100``. A child that leaves with ``sys.exit(0)`` (the whole
interpreter exit path) runs in a separate interpreter (tests/deploy/fork_exit.py): the parent's
servers must stay alive and its clients keep answering.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from typing import Any, List, Tuple

import pytest

import mcpclient
from mcpclient import Client
from mcpclient.testing import server_command

from ._procs import PY, REPO, SERVER_EXIT_WAIT, all_dead, env_with, pid_alive, still_alive, wait_until

#: The reconnect loop's iterations (each child starts a server): 10 unless asked for more.
RECONNECT_ITERATIONS = int(os.environ.get("MCPCLIENT_FORK_ITERATIONS", "10"))
PLAIN_ITERATIONS = 100
#: Seconds a child may take to report (it calls one tool, maybe after starting a server).
CHILD_DEADLINE = 10.0


def _child(client: Client, i: int, report: int, reconnect: bool) -> None:
    """The forked child: call ``add(i, 1)`` on the inherited client, report, ``os._exit``. Never returns."""
    try:
        try:
            result = client.call_tool("add", {"a": i, "b": 1}, timeout=5)
            server = client.transport.pid
            line = f"answer {result.structured_content['sum']} {server} {_started(server)}"
            if reconnect:
                client.close()  # this process's own connection
        except BaseException as exc:  # reported, never raised into pytest's code in this process
            forked = isinstance(exc, getattr(mcpclient, "ForkedClientError", ()))
            line = "ForkedClientError" if forked else f"error {type(exc).__name__}: {exc}"
        os.write(report, line.encode())
    finally:
        os._exit(0)


def _started(pid: Any) -> str:
    """When process ``pid`` started (clock ticks since boot): with its pid, it names one process,
    even where the machine reuses pids (``pid_max`` 32768 wraps within a CI run)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "?"


def _report(read_end: int, pid: int) -> str:
    """The child's report (up to EOF: it exited), within ``CHILD_DEADLINE``; the child is reaped."""
    deadline = time.monotonic() + CHILD_DEADLINE
    chunks: List[bytes] = []
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([read_end], [], [], remaining)[0]:
                os.kill(pid, signal.SIGKILL)
                chunks.append(b" (no report: killed after the deadline)")
                break
            chunk = os.read(read_end, 4096)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    return b"".join(chunks).decode("utf-8", "replace")


def _fork_loop(client: Client, iterations: int, reconnect: bool) -> List[Tuple[int, str]]:
    reports = []
    for i in range(iterations):
        steps = 1 + i % 3
        slow = client.call_tool_future("slow", {"steps": steps, "delay": 0.002})
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read_end)
            _child(client, i, write_end, reconnect)
        os.close(write_end)
        try:
            mine = client.call_tool("add", {"a": i, "b": 1000})
            assert mine.structured_content == {"sum": i + 1000}, (i, mine.raw)
            assert slow.result(timeout=10).text == f"done after {steps} steps", i
        finally:
            reports.append((i, _report(read_end, pid)))
    return reports


@pytest.mark.timeout(60)
def test_parent_and_forked_child_call_at_once_default_client_refuses_in_the_child():
    with Client(server_command(), timeout=10) as client:
        server = client.transport.pid
        reports = _fork_loop(client, PLAIN_ITERATIONS, reconnect=False)
        wrong = [(i, line) for i, line in reports if line != "ForkedClientError"]
        assert not wrong, f"{len(wrong)} of {len(reports)} children did not get ForkedClientError: {wrong[:5]}"
        assert client.transport.pid == server and pid_alive(server)
        assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"sum": 5}


@pytest.mark.timeout(120)
def test_parent_and_forked_child_call_at_once_reconnect_client_answers_in_the_child():
    from mcpclient import Reconnect

    with Client(server_command(), timeout=10, reconnect=Reconnect()) as client:
        server = client.transport.pid
        reports = _fork_loop(client, RECONNECT_ITERATIONS, reconnect=True)
        child_servers, started = [], []
        for i, line in reports:
            words = line.split()
            assert words[:2] == ["answer", str(i + 1)], (i, line)
            child_servers.append(int(words[2]))
            started.append((int(words[2]), words[3]))
        assert server not in child_servers  # each child's server its own: no process named twice
        assert len(set(started)) == len(started), started
        assert client.transport.pid == server and pid_alive(server)
        assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"sum": 5}
    assert wait_until(all_dead(child_servers), SERVER_EXIT_WAIT), f"left running: {still_alive(child_servers)}"


@pytest.mark.timeout(60)
def test_a_child_leaving_with_sys_exit_leaves_the_parents_servers_alone():
    run = subprocess.run([PY, str(REPO / "tests" / "deploy" / "fork_exit.py")], env=env_with(),
                         capture_output=True, text=True, timeout=40)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr, run.stderr
    lines: List[Any] = [json.loads(line) for line in run.stdout.splitlines()]
    assert [line["case"] for line in lines] == ["idle", "refused", "reconnected"], run.stdout
    for n, line in enumerate(lines):
        assert line["status"] == 0, line
        assert line["servers_alive"] == [True, True], line  # the parent's, after the child's exit
        assert line["same_servers"], line
        assert line["parent_sums"] == [40 + n, 40 + n], line
    assert lines[1]["got"] == "ForkedClientError", lines[1]
    assert lines[2]["sum"] == 3, lines[2]
    assert wait_until(lambda: not pid_alive(lines[2]["server"]), SERVER_EXIT_WAIT), \
        "the child's own server outlived the child"
