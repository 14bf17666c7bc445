"""Review of issue 10 (fork safety, Reconnect, Keepalive): regressions found in review.

Real servers over real pipes; faults are real (SIGKILL, a server that will not start again).
No sleep is used to order events: gates (``threading.Event``) and ``wait_until`` on states.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from conftest import LONG, OFFICIAL_SERVER, TESTING_SERVER, wait_until
from mcpclient import Client, ConnectError, ConnectionClosed, Reconnect, SubscriptionLost

try:
    import mcp  # noqa: F401

    HAVE_OFFICIAL = True
except ImportError:
    HAVE_OFFICIAL = False

needs_official = pytest.mark.skipif(not HAVE_OFFICIAL, reason="the official `mcp` SDK needs Python 3.10+")
MODERN = "2026-07-28"


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


def breakable_official(marker: Path) -> list:
    """The official stdio server, which exits at once (code 5) on a start while ``marker`` exists."""
    script = (f"import os, runpy, sys\nif os.path.exists({str(marker)!r}): sys.exit(5)\n"
              f"sys.argv = [{OFFICIAL_SERVER[1]!r}]\nsys.path.insert(0, os.path.dirname(sys.argv[0]))\nrunpy.run_path({OFFICIAL_SERVER[1]!r}, run_name='__main__')")
    return [sys.executable, "-c", script]


# --- 1. a suspended listen never ends -----------------------------------------------------------


@needs_official
def test_close_ends_a_listen_suspended_by_a_lost_connection(tmp_path: Path):
    """2026 era, Reconnect: the server dies and cannot start again (backing off). ``close()``
    must end the suspended listen, else a thread iterating it blocks forever."""
    broken = tmp_path / "broken"
    client = Client(breakable_official(broken), protocol=MODERN, timeout=LONG,
                    reconnect=Reconnect(max_attempts=None, backoff_factor=30.0))
    with client:
        listen = client.listen(tools=True)
        assert listen.wait_acknowledged(LONG)
        broken.touch()
        kill(client.transport.pid)
        assert wait_until(lambda: client._core.conn._failures >= 1)  # the background reconnect failed
        assert not listen.closed  # suspended, waiting for the next connection
    assert listen.closed, "close() left the suspended listen open: its consumer waits forever"


@needs_official
def test_giving_up_ends_a_suspended_listen(tmp_path: Path):
    """After ``max_attempts`` failed reconnects the client gives up: a listen waiting for the
    next connection must end (``SubscriptionLost``) instead of blocking its consumer forever."""
    broken = tmp_path / "broken"
    with Client(breakable_official(broken), protocol=MODERN, timeout=LONG,
                reconnect=Reconnect(max_attempts=1, backoff_factor=0.0)) as client:
        listen = client.listen(tools=True)
        assert listen.wait_acknowledged(LONG)
        broken.touch()
        kill(client.transport.pid)
        assert wait_until(lambda: client._core.conn.gave_up)
        assert wait_until(lambda: listen.closed), "the client gave up but the listen stays open forever"
        with pytest.raises(SubscriptionLost):
            listen.get(timeout=LONG)


@needs_official
def test_a_user_closed_suspended_listen_does_not_keep_the_router_active(tmp_path: Path):
    broken = tmp_path / "broken"
    with Client(breakable_official(broken), protocol=MODERN, timeout=LONG,
                reconnect=Reconnect(max_attempts=None, backoff_factor=30.0)) as client:
        listen = client.listen(tools=True)
        assert listen.wait_acknowledged(LONG)
        broken.touch()
        kill(client.transport.pid)
        assert wait_until(lambda: client._core.conn._failures >= 1)
        listen.close()
        assert listen.closed
        assert not client._core.subscriptions.active(), "a closed listen still counts as open"


# --- 2. a listen whose end is processed after the reconnect is lost ----------------------------------


@needs_official
def test_a_listen_interrupted_while_the_workers_are_busy_is_restored():
    """The listen's end (the connection lost) is queued on a worker that is busy with a user's
    done-callback; the background reconnect replaces the session meanwhile. The listen must
    still be restored on the new connection, not ended (quietly, or as lost)."""
    gate = threading.Event()
    entered = threading.Event()
    with Client(OFFICIAL_SERVER, protocol=MODERN, timeout=LONG, reconnect=True, max_workers=1) as client:
        busy = client.call_tool_future("slow", {"steps": 1, "delay": 600})  # pending until the kill
        busy.add_done_callback(lambda _: (entered.set(), gate.wait(LONG)))
        listen = client.listen(tools=True)  # pending behind it
        assert listen.wait_acknowledged(LONG)
        first = client.transport.pid
        kill(first)
        try:
            assert entered.wait(LONG)  # the only worker is busy; the listen's end waits behind it
            assert wait_until(lambda: client._core.conn.reconnects == 1 and client._core.conn.state == "ready")
        finally:
            gate.set()
        assert not listen.closed, "the listen was ended instead of restored"
        assert wait_until(lambda: client._core.subscriptions._listens), "the listen was not sent again"
        client.call_tool("add_tool", {"name": "late"})
        event = listen.get(timeout=LONG)
        assert event is not None and event.kind == "tools_changed"


# --- 3. a forked child touches the parent's resource listen ---------------------------------------

FORK_RESTORE = """
    url = sys.argv[1]
    updated = []
    cond = threading.Condition()

    def on_updated(uri):
        with cond:
            updated.append(uri)
            cond.notify_all()

    client = Client(url, protocol="2026-07-28", timeout=20, reconnect=Reconnect(),
                    on_resource_updated=on_updated).connect()
    client.subscribe_resource("test://a")
    carrier = client._core.subscriptions._resource_listen

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
    from test_fork import run

    with official_http_server("--http") as url:
        out = run(FORK_RESTORE, url)
    assert out["child"] == {"got": {"sum": 3}}, out
    assert not out["carrier_closed"] and out["updated"], f"the child broke the parent's subscription: {out}"


# --- 4. the background reconnect's handshake has no bound -------------------------------------------


def test_the_background_reconnect_gives_up_on_a_server_that_never_answers_the_handshake(tmp_path: Path):
    """Open subscriptions make the client reconnect at once on a thread of its own. If the new
    server starts but never answers ``initialize``, that attempt must end within the client's
    timeout (and count as a failure), not hold the connection in CONNECTING forever (every
    call would then fail with 'the reconnect in progress did not finish in time')."""
    mute = tmp_path / "mute"
    script = (f"import os, runpy, sys\nif os.path.exists({str(mute)!r}):\n    sys.stdin.read()\n    sys.exit(0)\n"
              "sys.argv = ['mcpclient.testing']\nrunpy.run_module('mcpclient.testing', run_name='__main__')")
    with Client([sys.executable, "-c", script], timeout=1.0, probe_timeout=0.2,
                reconnect=Reconnect(max_attempts=None, backoff_factor=0.0)) as client:
        client.subscribe_resource("test://static/hello")
        mute.touch()
        kill(client.transport.pid)
        assert wait_until(lambda: client._core.conn._failures >= 1), \
            f"the background reconnect is still waiting for initialize (state {client._core.conn.state})"
        mute.unlink()
        assert wait_until(lambda: client._core.conn.state == "ready")
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"sum": 3}


# --- 5. on_*_changed callbacks after a reconnect ----------------------------------------------------


@needs_official
def test_on_tools_changed_still_runs_after_a_reconnect():
    """The refresh behind ``on_tools_changed`` runs on a lane of the session: a reconnect makes
    a new session and closes the old one with its lane, so the router must not keep using the
    first lane it got (every later change would be dropped, and marked queued forever)."""
    seen = []
    got = threading.Condition()

    def changed(tools):
        with got:
            seen.append(sorted(t.name for t in tools))
            got.notify_all()

    with Client(OFFICIAL_SERVER, protocol="legacy", timeout=LONG, reconnect=True, on_tools_changed=changed) as client:
        client.call_tool("add_tool", {"name": "first"})
        with got:
            assert got.wait_for(lambda: len(seen) >= 1, LONG)
        first = client.transport.pid
        kill(first)
        assert wait_until(lambda: client._core.conn.state == "lost")
        client.call_tool("add_tool", {"name": "second"})  # reconnects, then changes the tools
        assert client._core.conn.reconnects == 1
        with got:
            assert got.wait_for(lambda: any("second" in names for names in seen), LONG), \
                f"on_tools_changed did not run after the reconnect: {seen}"


# --- 6. locks a parent thread held at the fork --------------------------------------------------------

FORK_HELD_LOCK = """
    import mcpclient.protocol.negotiation as negotiation
    which = sys.argv[1]
    client = Client(server_command(), timeout=5, reconnect=Reconnect()).connect()
    client.subscribe_resource("test://static/hello")
    client.list_tools()
    lock = {"subscriptions": lambda: client._core.subscriptions._lock, "tools": lambda: client._core.tools._lock,
            "eras": lambda: negotiation._eras_lock}[which]()
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
    from test_fork import run

    out = run(FORK_HELD_LOCK, which)
    assert out == {"call": "ok", "list": "ok", "close": "ok"}, out


# --- 7. the keepalive ping is sent on the timer thread --------------------------------------------------


def test_a_keepalive_ping_that_cannot_be_sent_does_not_stall_the_timer():
    """The server stops reading (SIGSTOP) with more than the outbox bound queued for it. The
    keepalive's ping then waits for room until its deadline (5 s here); if it does that on the
    session's timer thread, no other call's timeout fires meanwhile: a 1.5 s timeout fires at
    ~6 s. (Timer threads must never block: ``Session._post``.)"""
    import time

    from mcpclient import Keepalive, RequestTimeout, StdioTransport
    from mcpclient.testing import server_command

    transport = StdioTransport(server_command(), terminate_grace=0.2)
    with Client(transport, timeout=60, keepalive=Keepalive(1.0, failures=2, timeout=5.0)) as client:
        pid = client.transport.pid
        os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            call = client.call_tool_future("add", {"a": 1, "b": 2}, timeout=1.5)  # the timer enforces this

            def big() -> None:  # two 5 MiB frames: one is being written, one waits in the outbox
                try:
                    client.call_tool_future("echo", {"text": "x" * (5 << 20)})
                except Exception:
                    pass

            senders = [threading.Thread(target=big, daemon=True) for _ in range(2)]
            for sender in senders:
                sender.start()
            assert wait_until(lambda: transport._queued >= (4 << 20))  # before the first tick (1 s)
            with pytest.raises(RequestTimeout):
                call.result(timeout=LONG)
            took = time.monotonic() - started
            assert took < 4.0, f"a 1.5 s timeout fired after {took:.1f} s: the timer was blocked in a ping"
        finally:
            os.kill(pid, signal.SIGCONT)


# --- 8. the background reconnect keeps a dropped client alive -------------------------------------------


def test_a_client_dropped_while_it_reconnects_in_the_background_is_collected(tmp_path: Path):
    """``Reconnect(max_attempts=None)`` with an open subscription and a server that cannot start:
    the background reconnect retries forever. A client dropped without ``close()`` must still be
    collected (closed, with its ``ResourceWarning``) and that thread end; holding the client
    between attempts keeps both alive for the life of the process."""
    import gc
    import warnings

    broken = tmp_path / "broken"
    script = (f"import os, runpy, sys\nif os.path.exists({str(broken)!r}): sys.exit(5)\n"
              "sys.argv = ['mcpclient.testing']\nrunpy.run_module('mcpclient.testing', run_name='__main__')")
    client = Client([sys.executable, "-c", script], timeout=LONG,
                    reconnect=Reconnect(max_attempts=None, backoff_factor=30.0)).connect()
    client.subscribe_resource("test://static/hello")
    broken.touch()
    kill(client.transport.pid)
    conn = client._core.conn
    assert wait_until(lambda: conn._failures >= 1)  # backing off (15-30 s) on its own thread

    def reconnecting() -> list:
        return [t for t in threading.enumerate() if t.name.endswith("-reconnect") and t.is_alive()]

    assert reconnecting()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del client
        gc.collect()
    assert conn.state == "closed", "the dropped client was not collected: the reconnect thread holds it"
    assert any(issubclass(w.category, ResourceWarning) for w in caught)
    assert wait_until(lambda: not reconnecting())


# --- 9. a forked child inherits the parent's failed attempts ---------------------------------------------

FORK_AFTER_GIVING_UP = """
    import runpy
    broken = sys.argv[1]
    script = (f"import os, runpy, sys\\nif os.path.exists({broken!r}): sys.exit(5)\\n"
              "sys.argv = ['mcpclient.testing']\\nrunpy.run_module('mcpclient.testing', run_name='__main__')")
    client = Client([sys.executable, "-c", script], timeout=20,
                    reconnect=Reconnect(max_attempts=1, backoff_factor=30.0)).connect()
    open(broken, "w").close()
    os.kill(client.transport.pid, 9)
    while client._core.conn.state != "lost":
        time.sleep(0.01)
    try:
        client.ping()
    except Exception as exc:
        first = type(exc).__name__
    assert client._core.conn.gave_up
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
    from test_fork import run

    out = run(FORK_AFTER_GIVING_UP, str(tmp_path / "broken"))
    assert out["first"] == "ConnectError"
    assert out["got"] == {"sum": 3}, out


# --- 10. a connection lost between the handshake and READY ------------------------------------------------


def test_a_connection_lost_just_before_it_is_ready_is_not_left_ready(monkeypatch):
    """The new server dies after answering the handshake but before the connection is marked
    READY: ``Session.on_lost`` fires while the state is CONNECTING and is ignored, so the
    connection must not then be declared READY on a dead session (every later call would fail
    with ``ProcessExited`` and, READY, never reconnect)."""
    import mcpclient._client.core as client_module
    from mcpclient import ProcessExited

    real_era_for = client_module.era_for
    with Client(TESTING_SERVER, timeout=LONG, reconnect=Reconnect(backoff_factor=0.0)) as client:
        kill(client.transport.pid)
        assert wait_until(lambda: client._core.conn.state == "lost")

        def dies_first(*args, **kwargs):  # the handshake is done: the new server dies now
            session = client._core.conn.session
            kill(session.transport.pid)
            assert wait_until(lambda: session.is_closed)
            return real_era_for(*args, **kwargs)

        monkeypatch.setattr(client_module, "era_for", dies_first)
        with pytest.raises((ProcessExited, ConnectionClosed, ConnectError)):
            client.call_tool("add", {"a": 1, "b": 1})
        monkeypatch.setattr(client_module, "era_for", real_era_for)
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"sum": 3}, \
            "stuck READY on a dead session"
