"""Fork safety: a client inherited through ``os.fork()`` never gives the child the
parent's answers, never touches the parent's server, and never hangs.

Each scenario runs in a script of its own (a fresh interpreter that forks), so a failure here
can never leave a forked pytest worker behind.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HAVE_OFFICIAL_SDK, PACE, pid_alive
from forking import run


pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


RACE = """
    mode, runs = sys.argv[1], int(sys.argv[2])
    extra = {"reconnect": Reconnect()} if mode == "reconnect" else {}
    client = Client(server_command(), timeout=20, **extra).connect()
    parent_server = client.transport.pid
    outcomes = {"forked_error": 0, "right": 0, "wrong": 0, "other": []}
    parent_wrong = 0
    child_servers = []

    def child():
        if client.state != "forked" or client._is_closed != (mode == "default"):
            return {"state": client.state, "is_closed": client._is_closed}
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


@pytest.mark.timeout(60 + 60 * PACE)  # (ten forks, each child starting a server of its own: slow on a slow machine)
@pytest.mark.parametrize("mode", ["default", "reconnect"])
def test_a_forked_child_never_gets_the_parents_answers(mode):
    """The reproduction that started the fork-safety work: parent and child call at once on an inherited client. The child
    gets ``ForkedClientError`` (default) or a right answer from a server of its own (with
    ``Reconnect``); the parent always gets its own answers."""
    result = run(RACE, mode, "10", timeout=50 + 60 * PACE)
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


HAVE_OFFICIAL = HAVE_OFFICIAL_SDK


needs_official = pytest.mark.skipif(not HAVE_OFFICIAL, reason="the official `mcp` SDK needs Python 3.10+")


# --- a forked child leaves the parent's resource listen alone -------------------------------------

FORK_RESTORE = """
    url = sys.argv[1]
    updated = []
    cond = threading.Condition()

    def on_updated(uri):
        with cond:
            updated.append(uri)
            cond.notify_all()

    def on_notification(method, params):
        if method == "notifications/resources/updated":
            on_updated(params["uri"])

    client = Client(url, protocol="2026-07-28", timeout=20, reconnect=Reconnect(),
                    handlers=Handlers(on_notification=on_notification)).connect()
    client.subscribe_resource("test://a")
    carrier = client._channel.subscriptions._resource_listen

    def child():
        got = client.call_tool("add", {"a": 1, "b": 2}).structured_content  # a connection of its own
        client.close()
        return {"got": got}

    out = in_child(child)
    client.call_tool("touch", {"uri": "test://a"})
    with cond:
        got = cond.wait_for(lambda: "test://a" in updated, 10)
    report(child=out, updated=got, carrier_closed=carrier.closed)
    client.close()
"""


@needs_official
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_restoring_subscriptions_leaves_the_parents_listen_alone():
    """HTTP, 2026 era: the parent keeps one listen for ``subscribe_resource``. A child with
    ``Reconnect(after_fork=True)`` connects on first use and restores the subscription on its
    own connection; replacing the inherited listen must not cancel the parent's request (on
    HTTP that shuts down the parent's socket: its updates stop)."""
    from http_servers import official_http_server
    from forking import run

    with official_http_server("--http") as url:
        out = run(FORK_RESTORE, url)
    assert out["child"] == {"got": {"sum": 3}}, out
    assert not out["carrier_closed"] and out["updated"], f"the child broke the parent's subscription: {out}"


# --- locks a parent thread held at the fork --------------------------------------------------------

FORK_HELD_LOCK = """
    from mcpclient._client.connection import ERAS
    which = sys.argv[1]
    client = Client(server_command(), timeout=5, reconnect=Reconnect()).connect()
    client.subscribe_resource("test://static/hello")
    client.list_tools()
    lock = {"subscriptions": lambda: client._channel.subscriptions._lock, "tools": lambda: client._channel.tools._lock,
            "eras": lambda: ERAS._lock}[which]()
    held, release = threading.Event(), threading.Event()

    def holder():  # a thread of the parent inside the lock at the moment of the fork (it routes a
        with lock:  # notification, forgets the tools on a change, or connects another client)
            held.set()
            release.wait()

    threading.Thread(target=holder, daemon=True).start()
    held.wait()

    def child():
        out = {}
        for name, step in (("call", lambda: client.call_tool("add", {"a": 1, "b": 2})),
                           ("list", lambda: client.list_tools()), ("close", client.close)):
            worker = threading.Thread(target=step, daemon=True)
            worker.start()
            worker.join(5)
            out[name] = "hung" if worker.is_alive() else "ok"
            if worker.is_alive():
                break
        return out

    out = in_child(child)
    release.set()
    client.close()
    report(**out)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("which", ["subscriptions", "tools", "eras"])
def test_a_forked_child_does_not_hang_on_a_lock_a_parent_thread_held_at_the_fork(which):
    """Like ``Connection._lock`` (replaced in ``_forked``), every lock the child's first call,
    its reconnect and its ``close()`` take must be usable in the child, though a thread of the
    parent (which does not exist in the child) held it at the fork."""
    from forking import run

    out = run(FORK_HELD_LOCK, which)
    assert out == {"call": "ok", "list": "ok", "close": "ok"}, out


FORK_HELD_BUILD_LOCK = """
    import signal
    client = Client(server_command(), timeout=5)  # made, never used: its connection is made by connect()
    held, release = threading.Event(), threading.Event()

    def holder():  # a thread of the parent making the client's connection at the moment of the fork
        with client._channel._lock:
            held.set()
            release.wait()

    threading.Thread(target=holder, daemon=True).start()
    held.wait()

    def child():  # on the child's main thread (a new thread may reuse the holder's ident, and own its lock)
        def hung(*_):
            raise TimeoutError("hung")
        signal.signal(signal.SIGALRM, hung)
        signal.alarm(5)
        try:
            got = client.connect().call_tool("add", {"a": 1, "b": 2}).structured_content
            client.close()
            return {"got": got, "state": client.state}
        finally:
            signal.alarm(0)

    out = in_child(child)
    release.set()
    client.close()
    report(**out)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_connects_a_client_whose_first_connect_a_parent_thread_was_in_at_the_fork():
    """The lock a client's connection is made under by its first connect is replaced in the child, as the
    others are: a parent thread that held it at the fork does not hang the child's connect."""
    from forking import run

    out = run(FORK_HELD_BUILD_LOCK)
    assert out == {"got": {"sum": 3}, "state": "closed"}, out


# --- a forked child does not inherit the parent's failed attempts ---------------------------------

FORK_AFTER_GIVING_UP = """
    import runpy
    broken = sys.argv[1]
    script = (f"import os, runpy, sys\\nif os.path.exists({broken!r}): sys.exit(5)\\n"
              "sys.argv = ['mcpclient.testing']\\nrunpy.run_module('mcpclient.testing', run_name='__main__')")
    client = Client([sys.executable, "-c", script], timeout=20,
                    reconnect=Reconnect(max_attempts=1, backoff_factor=30.0)).connect()
    open(broken, "w").close()
    os.kill(client.transport.pid, 9)
    while client._channel.conn.state != "lost":
        time.sleep(0.01)
    try:
        client.ping()
    except Exception as exc:
        first = type(exc).__name__
    assert client._channel.conn.gave_up
    os.unlink(broken)  # the server can start again: a process forked now connects on first use

    def child():
        try:
            got = client.call_tool("add", {"a": 1, "b": 2}).structured_content
        except Exception as exc:
            got = repr(exc)
        client.close()
        return {"got": got}

    out = in_child(child)
    client.close()
    report(first=first, **out)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_connects_on_first_use_though_the_parent_gave_up(tmp_path: Path):
    """``Reconnect(after_fork=True)``: a process forked from a client that gave up (or is
    backing off) has never tried: its first call opens its own connection, not 'gave up
    reconnecting after 1 failed attempts' (a count and a backoff that are the parent's)."""
    from forking import run

    out = run(FORK_AFTER_GIVING_UP, str(tmp_path / "broken"))
    assert out["first"] == "ConnectError"
    assert out["got"] == {"sum": 3}, out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_fork_while_a_thread_imports_the_validator_does_not_hang_the_child():
    """A worker thread validates a result for the first time (importing jsonschema, tens of ms)
    just as the main thread forks: the child's own first validation must not wait for ever on
    the import lock of a thread it does not have. (The import is held open here, deterministically.)"""
    code = '''
import importlib.abc, os, sys, threading, time
started = threading.Event()

class HoldTheImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "referencing" and threading.current_thread().name == "validating":  # inside jsonschema's import
            started.set()
            time.sleep(0.5)
        return None

sys.meta_path.insert(0, HoldTheImport())
from mcpclient.protocol.validation import validate_structured
worker = threading.Thread(target=validate_structured, args=({}, {"type": "object"}), name="validating")
worker.start()
assert started.wait(10)
pid = os.fork()
if pid == 0:
    validate_structured({"a": 1}, {"type": "object", "required": ["a"]})
    os._exit(0)
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print("child exited", os.waitstatus_to_exitcode(status))
        break
    time.sleep(0.02)
else:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    print("child hung")
worker.join()
'''
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "child exited 0", out.stdout + out.stderr
