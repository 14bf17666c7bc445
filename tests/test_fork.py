"""Fork safety (issue 10): a client inherited through ``os.fork()`` never gives the child the
parent's answers, never touches the parent's server, and never hangs.

Each scenario runs in a script of its own (a fresh interpreter that forks), so a failure here
can never leave a forked pytest worker behind.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from typing import Any, Dict

import pytest

from conftest import pid_alive, wait_until

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

PRELUDE = """
    import json, os, sys, threading, time
    from mcpclient import Client, ForkedClientError, Reconnect
    from mcpclient.testing import server_command

    def report(**fields):
        print(json.dumps(fields), flush=True)

    def in_child(body):
        '''Fork; run body() in the child, send its result back; return the result.'''
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                out = body()
            except BaseException as exc:
                out = {"error": repr(exc)}
            os.write(w, json.dumps(out).encode())
            os._exit(0)
        os.close(w)
        chunks = []
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(r)
        os.waitpid(pid, 0)
        return json.loads(b"".join(chunks) or b"null")
"""


def run(script: str, *args: str, timeout: float = 60) -> Dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(PRELUDE) + textwrap.dedent(script), *args],
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, proc.stdout + proc.stderr
    return json.loads(lines[-1])  # type: ignore[no-any-return]


RACE = """
    mode, runs = sys.argv[1], int(sys.argv[2])
    extra = {"reconnect": Reconnect()} if mode == "reconnect" else {}
    client = Client(server_command(), timeout=20, **extra).connect()
    parent_server = client.transport.pid
    outcomes = {"forked_error": 0, "right": 0, "wrong": 0, "other": []}
    parent_wrong = 0
    child_servers = []

    def child():
        if client.state != "forked" or client.is_closed != (mode == "default"):
            return {"state": client.state, "is_closed": client.is_closed}
        try:
            got = client.call_tool("add", {"a": 1000, "b": i}).structured_content
        except ForkedClientError as exc:
            return {"forked": str(exc)}
        server = client.transport.pid
        client.close()
        return {"got": got, "want": {"sum": 1000 + i}, "server": server}

    for i in range(runs):
        answers = []
        # the parent calls at the same time as the child, from another thread
        caller = threading.Thread(target=lambda: answers.extend(
            client.call_tool("add", {"a": i, "b": k}).structured_content for k in range(5)))
        caller.start()
        out = in_child(child)
        caller.join()
        parent_wrong += answers != [{"sum": i + k} for k in range(5)]
        if "forked" in out:
            outcomes["forked_error"] += 1
            assert "Reconnect()" in out["forked"], out
        elif out.get("got") == out.get("want"):
            outcomes["right"] += 1
            child_servers.append(out["server"])
        elif "got" in out:
            outcomes["wrong"] += 1
        else:
            outcomes["other"].append(out)
    report(parent_wrong=parent_wrong, parent_server_alive=client.transport.pid == parent_server
           and client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"sum": 2},
           child_servers=child_servers, parent_server=parent_server, **outcomes)
    client.close()
"""


@pytest.mark.parametrize("mode", ["default", "reconnect"])
def test_a_forked_child_never_gets_the_parents_answers(mode):
    """The issue's reproduction: parent and child call at once on an inherited client. The child
    gets ``ForkedClientError`` (default) or a right answer from a server of its own (with
    ``Reconnect``); the parent always gets its own answers."""
    result = run(RACE, mode, "10")
    assert result["parent_wrong"] == 0 and result["parent_server_alive"], result
    assert result["wrong"] == 0 and result["other"] == [], result
    if mode == "default":
        assert result["forked_error"] == 10, result
    else:
        assert result["right"] == 10, result
        assert result["parent_server"] not in result["child_servers"]
        assert not any(pid_alive(pid) for pid in result["child_servers"])  # each child closed its own


CHILD_EXITS = """
    how = sys.argv[1]
    client = Client(server_command(), timeout=20).connect()
    server = client.transport.pid

    pid = os.fork()
    if pid == 0:
        if how == "close":
            client.close()  # the child's side only
        sys.exit(0)  # at-exit handlers and finalizers run, as in a gunicorn worker
    _, status = os.waitpid(pid, 0)
    ok = client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"sum": 5}
    report(status=status, server_alive=os.path.exists(f"/proc/{server}") and client.transport.pid == server, call_ok=ok)
    client.close()
"""


@pytest.mark.parametrize("how", ["exit", "close"])
def test_a_child_that_exits_or_closes_leaves_the_parents_server_alone(how):
    result = run(CHILD_EXITS, how)
    assert result == {"status": 0, "server_alive": True, "call_ok": True}


PARENT_CLOSES = """
    from mcpclient import StdioTransport
    client = Client(StdioTransport(server_command(), terminate_grace=3.0)).connect()
    server = client.transport.pid
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a child that lives on, holding whatever it inherited
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    os.close(r)
    started = time.monotonic()
    client.close()
    took = time.monotonic() - started
    os.close(w)
    os.waitpid(pid, 0)
    report(took=took, server_gone=not os.path.exists(f"/proc/{server}") or open(f"/proc/{server}/stat").read().split()[2] == "Z")
"""


def test_the_parent_closes_promptly_while_a_forked_child_lives():
    """The child's copy of the server's stdin is pointed at /dev/null at the fork, so the
    server sees EOF when the parent closes (not after ``terminate_grace`` and a SIGTERM)."""
    result = run(PARENT_CLOSES)
    assert result["server_gone"], result
    assert result["took"] < 1.5, result


NEW_CLIENT_IN_CHILD = """
    client = Client(server_command(), timeout=20)  # made, never connected, before the fork

    def child():
        with client:
            return {"sum": client.call_tool("add", {"a": 4, "b": 5}).structured_content["sum"]}
    report(**in_child(child))
"""


def test_a_client_made_but_not_connected_before_the_fork_connects_in_the_child():
    assert run(NEW_CLIENT_IN_CHILD) == {"sum": 9}
