"""Long life: a lost connection, ``Reconnect``, ``Keepalive``, and clients that are
garbage-collected without ``close()``; listens and callbacks carried across a reconnect, or
ended when the client gives up or closes. Real servers over real pipes; the faults are real too
(SIGKILL, SIGSTOP, a server that will not start or never answers the handshake).
"""
from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import HAVE_OFFICIAL_SDK, LONG, OFFICIAL_SERVER, PACE, SERVERS, TESTING_SERVER, faulty, pid_alive, wait_until
from mcpclient import Client, ClientClosedError, ConnectError, ConnectionClosed, Handlers, Keepalive, Limits, ProcessExited, Reconnect, StdioTransport, SubscriptionLost, Timeout
from mcpclient.testing import server_command
from helpers import Twins, resource_updates


HAVE_OFFICIAL = HAVE_OFFICIAL_SDK


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


def lost(client: Client) -> bool:
    return client.state == "lost"


def test_a_call_on_a_lost_connection_says_so_and_connect_opens_a_new_one():
    with Client(server_command(), timeout=LONG) as client:
        first = client.transport.pid
        kill(first)
        assert wait_until(lambda: lost(client))
        assert client._is_closed
        with pytest.raises(ProcessExited, match=r"connect\(\)") as info:
            client.call_tool("add", {"a": 1, "b": 2})
        assert info.value.returncode == -signal.SIGKILL
        client.connect()  # was: "connect() on a client that is ready; make a new Client"
        assert not client._is_closed and client.transport.pid != first
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"sum": 3}
        with pytest.raises(ClientClosedError, match="connected already"):
            client.connect()
    with pytest.raises(ClientClosedError, match="closed"):
        client.connect()


def test_with_a_policy_the_next_call_reconnects():
    reconnected = threading.Event()
    with Client(server_command(), timeout=LONG, reconnect=True, handlers=Handlers(on_reconnect=lambda: reconnected.set())) as client:
        first = client.transport.pid
        kill(first)
        assert wait_until(lambda: lost(client))
        assert not client._is_closed  # the next call reconnects
        assert client.call_tool("add", {"a": 2, "b": 2}).structured_content == {"sum": 4}
        assert client.transport.pid != first and client._channel.conn.reconnects == 1
        assert reconnected.wait(LONG)
        assert client.server.protocol_version is not None


def test_failed_reconnects_back_off_give_up_and_connect_starts_again(tmp_path: Path):
    """A server that cannot start again: each failure counts; a call during the backoff fails at
    once (its timeout is shorter than the wait); after ``max_attempts`` the client gives up until
    ``connect()``."""
    broken = tmp_path / "broken"
    script = (f"import os, runpy, sys\nif os.path.exists({str(broken)!r}): sys.exit(5)\n"
              "sys.argv = ['mcpclient.testing']\nrunpy.run_module('mcpclient.testing', run_name='__main__')")
    policy = Reconnect(max_attempts=2, backoff_factor=30.0)
    with Client([sys.executable, "-c", script], timeout=LONG, reconnect=policy) as client:
        broken.touch()
        kill(client.transport.pid)
        assert wait_until(lambda: lost(client))
        with pytest.raises(ConnectError, match="reconnecting to .* failed"):
            client.ping()
        started = time.monotonic()
        with pytest.raises(ConnectError, match=r"next attempt is in"):
            client.ping(timeout=1.0)  # the backoff (15-30 s) is longer than this call's timeout
        assert time.monotonic() - started < 0.5
        client._channel.conn._next_try = 0.0  # (the backoff has passed)
        with pytest.raises(ConnectError):
            client.ping()
        with pytest.raises(ConnectError, match="gave up reconnecting .* after 2 failed attempts"):
            client.ping()
        broken.unlink()
        client.connect()
        assert client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"sum": 2}


@pytest.mark.skipif(not HAVE_OFFICIAL, reason="the official `mcp` SDK needs Python 3.10+")
@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_subscriptions_and_listens_come_back_after_a_reconnect(protocol):
    """Killed under an open subscription, the client reconnects at once (no call needed) and
    subscribes again: updates reach the notification handler and the same ``listen()`` object."""
    updated: List[str] = []
    got = threading.Condition()

    def on_updated(uri: str) -> None:
        with got:
            updated.append(uri)
            got.notify_all()

    with Client(OFFICIAL_SERVER, protocol=protocol, timeout=LONG, reconnect=True,
                handlers=Handlers(on_notification=resource_updates(on_updated))) as client:
        client.subscribe_resource("test://a")
        listen = client.listen(resource_uris=["test://b"])
        assert listen.wait_acknowledged(LONG)
        first = client.transport.pid
        kill(first)
        assert wait_until(lambda: client._channel.conn.reconnects == 1 and client.state == "ready")
        assert client.transport.pid != first
        # the subscriptions are re-sent asynchronously: touch until an update arrives
        assert wait_until(lambda: bool(client.call_tool("touch", {"uri": "test://a"})) and
                          got.acquire() and (got.wait_for(lambda: "test://a" in updated, 0.2), got.release())[0])
        assert wait_until(lambda: bool(client.call_tool("touch", {"uri": "test://b"})) and
                          listen.get(timeout=0.2) is not None)
        assert not listen.closed


def test_a_wedged_server_fails_the_keepalive_and_the_call_in_flight():
    """SIGSTOP: the pipe stays open but nothing answers. Two unanswered pings mark the
    connection lost; the call in flight fails with ``ConnectionClosed`` (not a 60 s timeout)
    and, with ``Reconnect``, the next call runs on a new server."""
    transport = StdioTransport(server_command(), terminate_grace=0.2)
    with Client(transport, timeout=60, reconnect=True,
                keepalive=Keepalive(0.1, failures=2, timeout=0.2)) as client:
        client.list_tools()  # (else the call's first request would be a tools/list, to learn the outputSchema)
        stopped = client.transport.pid
        os.kill(stopped, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(ConnectionClosed, match="keepalive"):
                client.call_tool("slow", {"steps": 1, "delay": 0})
            assert time.monotonic() - started < 3.0
            assert client.call_tool("add", {"a": 3, "b": 4}).structured_content == {"sum": 7}
            assert client.transport.pid != stopped
        finally:
            if pid_alive(stopped):
                os.kill(stopped, signal.SIGCONT)
        assert wait_until(lambda: not pid_alive(stopped))


def test_an_idle_connection_is_pinged_and_stays_up():
    with Client(server_command(), timeout=LONG, keepalive=0.05) as client:
        watch = client._channel.conn._watch
        assert watch is not None
        assert wait_until(lambda: watch.pings >= 3)
        assert client.state == "ready"
        assert client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"sum": 2}
        # no thread of its own: the session's timer thread does it
        names = [t.name for t in client._session.threads()]
        assert not any("keepalive" in n for n in names), names


def test_a_client_nobody_closed_is_collected_with_its_server_and_threads():
    """A notebook re-running a cell: the client is dropped unclosed. Collecting it stops the
    server and every thread, with a ``ResourceWarning`` like an unclosed file's."""
    client = Client(server_command(), timeout=LONG).connect()
    client.call_tool("add", {"a": 1, "b": 1})
    Twins(client).list_tools().result(LONG)  # a worker thread too
    pid, threads = client.transport.pid, client._session.threads()
    assert threads
    holder = [client]
    del client
    _assert_collected_with_its_server_and_threads(holder, pid, threads)


def _assert_collected_with_its_server_and_threads(holder: List[Any], pid: int, threads: List[threading.Thread]) -> None:
    """Empty ``holder`` (the last reference to what holds the client) and collect: a
    ``ResourceWarning`` says the client was unclosed, its server exits, its threads end."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        holder.clear()
        gc.collect()
    assert any(issubclass(w.category, ResourceWarning) and "unclosed mcpclient.Client" in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    assert wait_until(lambda: not pid_alive(pid))
    for thread in threads:
        thread.join(LONG)
        assert not thread.is_alive(), thread.name


class _Assistant:
    """An object that holds its client and gives it its own methods as callbacks: a cycle
    through the user's code, which the library's threads must not keep alive."""

    def __init__(self, kind: str) -> None:
        handlers = {"sampling": Handlers(sampling=self.answer), "on_log": Handlers(on_log=self.noted),
                    "on_notification": Handlers(on_notification=self.noted), "listen": None,
                    "roots": Handlers(roots=self.roots)}[kind]
        self.client = Client(server_command(), timeout=LONG, handlers=handlers).connect()
        if kind == "listen":
            self.client.listen(tools=True, on_event=self.noted)

    def answer(self, *args: Any) -> None: ...

    def noted(self, *args: Any) -> None: ...

    def roots(self) -> List[Any]:
        return []


@pytest.mark.parametrize("kind", ["sampling", "on_log", "on_notification", "listen", "roots"])
def test_a_client_whose_callbacks_refer_back_to_it_is_collected_with_its_server_and_threads(kind):
    holder = [_Assistant(kind)]
    pid, threads = holder[0].client.transport.pid, holder[0].client._session.threads()
    _assert_collected_with_its_server_and_threads(holder, pid, threads)


def test_a_server_that_dies_on_every_call_is_respawned_with_backoff_then_given_up_on():
    """Each reconnect succeeds and the next call kills the server: a reconnect whose connection
    dies at once counts as a failed one, so the respawns back off (0.1, 0.2, 0.4 s... here)
    and stop after ``max_attempts``, instead of ~20 new processes a second for ever."""
    with Client(faulty("exit-on-call"), timeout=LONG,
                reconnect=Reconnect(max_attempts=4, backoff_factor=0.1)) as client:
        started = time.monotonic()
        failures: List[str] = []
        while time.monotonic() - started < 3.0:
            try:
                client.call_tool("echo", {"text": "x"})
            except ConnectError as exc:
                failures.append(str(exc))
                if "gave up" in str(exc):
                    break
            except (ProcessExited, ConnectionClosed):
                pass
        assert client._channel.conn.reconnects <= 4
        assert failures and "gave up" in failures[-1]


def test_a_closed_client_is_collected_without_a_warning():
    client = Client(server_command(), timeout=LONG).connect()
    client.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del client
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


def test_killed_under_load_calls_fail_fast_and_later_ones_succeed():
    """SIGKILL while 8 threads call: the calls in flight fail with a typed error within 100 ms
    of the kill; after that every call succeeds (one reconnect); no answer is lost, duplicated
    or given to the wrong call."""
    threads_n, per_thread = 8, 100
    outcomes: Dict[int, List[Any]] = {n: [] for n in range(threads_n)}
    killed_at: List[float] = []
    failed_at: List[float] = []
    started = threading.Barrier(threads_n + 1)
    with Client(server_command(), timeout=LONG, reconnect=Reconnect(backoff_factor=0.01)) as client:
        def work(n: int) -> None:
            started.wait()
            for i in range(per_thread):
                if n == 0 and i == 10:  # from a calling thread: the others are mid-run, calls in flight
                    killed_at.append(time.monotonic())
                    kill(client.transport.pid)
                try:
                    got = client.call_tool("add", {"a": n * 1000, "b": i}).structured_content
                    outcomes[n].append(("ok", i, got))
                except ConnectionClosed as exc:
                    failed_at.append(time.monotonic())
                    outcomes[n].append(("failed", i, type(exc).__name__))

        workers = [threading.Thread(target=work, args=(n,)) for n in range(threads_n)]
        for w in workers:
            w.start()
        started.wait()
        for w in workers:
            w.join(LONG * 3)
        assert not any(w.is_alive() for w in workers)
    wrong = [(n, o) for n, rows in outcomes.items() for o in rows if o[0] == "ok" and o[2] != {"sum": n * 1000 + o[1]}]
    counted = {n: [o[1] for o in rows] for n, rows in outcomes.items()}
    failed = [o for rows in outcomes.values() for o in rows if o[0] == "failed"]
    print(f"\nkill under load: {sum(len(r) for r in outcomes.values())} calls, {len(failed)} failed "
          f"(latest {1000 * (max(failed_at) - killed_at[0]):.1f} ms after the kill), misrouted {len(wrong)}")
    assert wrong == []  # misrouted: 0
    assert all(c == list(range(per_thread)) for c in counted.values())  # lost or duplicated: 0
    assert 1 <= len(failed) <= threads_n, failed  # at most the calls in flight at the kill
    assert max(failed_at) - killed_at[0] < 0.1, max(failed_at) - killed_at[0]
    assert client._channel.conn.reconnects == 1


@pytest.mark.skipif(not HAVE_OFFICIAL, reason="the official `mcp` SDK needs Python 3.10+")
@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_http_keepalive_finds_a_frozen_server_and_the_next_call_reconnects(protocol):
    from conftest import child_pids
    from http_servers import official_http_server

    before = child_pids()
    with official_http_server("--http", preload=False) as url:  # (frozen below: the server itself)
        (server,) = child_pids() - before
        with Client(url, protocol=protocol, timeout=LONG, reconnect=True,
                    keepalive=Keepalive(0.1, failures=2, timeout=0.3)) as client:
            first = client.transport
            assert client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"sum": 2}
            os.kill(server, signal.SIGSTOP)
            try:
                assert wait_until(lambda: client.state == "lost")
            finally:
                os.kill(server, signal.SIGCONT)
            assert client.call_tool("add", {"a": 2, "b": 5}).structured_content == {"sum": 7}
            assert client.transport is not first and client._channel.conn.reconnects == 1
            assert client.server.protocol_version == (protocol if protocol != "legacy" else client.server.protocol_version)


def test_connect_during_a_reconnect_by_another_thread_waits_for_it(tmp_path: Path):
    """``connect()`` while another thread reconnects returns once that reconnect succeeded (it
    said "connect() on a client that is connecting", a ClientClosedError)."""
    gate = tmp_path / "gate"
    script = (f"import os, runpy, sys, time\n"
              f"while os.path.exists({str(gate)!r}): time.sleep(0.01)\n"  # the test holds the server here
              "sys.argv = ['mcpclient.testing']\nrunpy.run_module('mcpclient.testing', run_name='__main__')")
    with Client([sys.executable, "-c", script], timeout=LONG, reconnect=True) as client:
        gate.touch()
        kill(client.transport.pid)
        assert wait_until(lambda: lost(client))
        pinger = threading.Thread(target=client.ping)  # reconnects, held at the gate
        pinger.start()
        assert wait_until(lambda: client.state == "connecting")
        errors: List[BaseException] = []

        def connect() -> None:
            try:
                client.connect(timeout=LONG)
            except BaseException as exc:  # noqa: BLE001 - asserted below
                errors.append(exc)

        connecting = threading.Thread(target=connect)
        connecting.start()
        assert wait_until(lambda: len(client._channel.conn._changed._waiters) == 1)  # connect() waits for it
        gate.unlink()
        connecting.join(LONG)
        pinger.join(LONG)
        assert errors == [] and client.state == "ready"


def test_after_a_reconnect_output_is_validated_against_the_new_servers_schema(tmp_path):
    """The tools learned for output validation do not outlive the connection: a restarted
    server's changed outputSchema is learned at once (its valid results are not refused against
    the old one), with no tools/list_changed needed."""
    import json as _json
    import sys as _sys

    from mcpclient import StdioTransport

    spec = tmp_path / "output.json"
    spec.write_text(_json.dumps({"outputSchema": {"type": "object", "properties": {"value": {"type": "string"}},
                                                  "required": ["value"]}, "structured": {"value": "a"}}))
    server = str(SERVERS / "mutable_tools.py")
    transport = StdioTransport([_sys.executable, server], env={"TOOL_OUTPUT_FILE": str(spec)})
    with Client(transport, timeout=LONG, reconnect=Reconnect(backoff_factor=0.01)) as client:
        assert client.call_tool("lookup", {"key": "k"}).structured_content == {"value": "a"}
        spec.write_text(_json.dumps({"outputSchema": {"type": "object", "properties": {"value": {"type": "integer"}},
                                                      "required": ["value"]}, "structured": {"value": 5}}))
        kill(client.transport.pid)
        # (the loss hook, which forgets the tools, runs on the reader thread just after the state changes)
        assert wait_until(lambda: lost(client) and client._channel.tools.get("lookup") is None)
        assert client.call_tool("lookup", {"key": "k"}).structured_content == {"value": 5}


needs_official = pytest.mark.skipif(not HAVE_OFFICIAL, reason="the official `mcp` SDK needs Python 3.10+")


MODERN = "2026-07-28"


def breakable_official(marker: Path) -> list:
    """The official stdio server, which exits at once (code 5) on a start while ``marker`` exists."""
    script = (f"import os, runpy, sys\nif os.path.exists({str(marker)!r}): sys.exit(5)\n"
              f"sys.argv = [{OFFICIAL_SERVER[1]!r}]\nsys.path.insert(0, os.path.dirname(sys.argv[0]))\nrunpy.run_path({OFFICIAL_SERVER[1]!r}, run_name='__main__')")
    return [sys.executable, "-c", script]


# --- a listen suspended by a lost connection ends with the client ---------------------------------


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
        assert wait_until(lambda: client._channel.conn._failures >= 1)  # the background reconnect failed
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
        assert wait_until(lambda: client._channel.conn.gave_up)
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
        assert wait_until(lambda: client._channel.conn._failures >= 1)
        listen.close()
        assert listen.closed
        assert not client._channel.subscriptions.active(), "a closed listen still counts as open"


# --- a listen whose end is processed after the reconnect is restored ------------------------------


@needs_official
def test_a_listen_interrupted_while_the_workers_are_busy_is_restored():
    """The listen's end (the connection lost) is queued on a worker that is busy with a user's
    done-callback; the background reconnect replaces the session meanwhile. The listen must
    still be restored on the new connection, not ended (quietly, or as lost)."""
    gate = threading.Event()
    entered = threading.Event()
    with Client(OFFICIAL_SERVER, protocol=MODERN, timeout=LONG, reconnect=True, limits=Limits(workers=1)) as client:
        busy = client.call_tool_future("slow", {"steps": 1, "delay": 600})  # pending until the kill
        busy.add_done_callback(lambda _: (entered.set(), gate.wait(LONG)))
        listen = client.listen(tools=True)  # pending behind it
        assert listen.wait_acknowledged(LONG)
        first = client.transport.pid
        kill(first)
        try:
            assert entered.wait(LONG)  # the only worker is busy; the listen's end waits behind it
            assert wait_until(lambda: client._channel.conn.reconnects == 1 and client._channel.conn.state == "ready")
        finally:
            gate.set()
        assert not listen.closed, "the listen was ended instead of restored"
        assert wait_until(lambda: client._channel.subscriptions._listens), "the listen was not sent again"
        client.call_tool("add_tool", {"name": "late"})
        event = listen.get(timeout=LONG)
        assert event is not None and event.kind == "tools_changed"


# --- the background reconnect's handshake is bounded ----------------------------------------------


def test_the_background_reconnect_gives_up_on_a_server_that_never_answers_the_handshake(tmp_path: Path):
    """Open subscriptions make the client reconnect at once on a thread of its own. If the new
    server starts but never answers ``initialize``, that attempt must end within the client's
    timeout (and count as a failure), not hold the connection in CONNECTING forever (every
    call would then fail with 'the reconnect in progress did not finish in time')."""
    mute = tmp_path / "mute"
    script = (f"import os, runpy, sys\nif os.path.exists({str(mute)!r}):\n    sys.stdin.read()\n    sys.exit(0)\n"
              "sys.argv = ['mcpclient.testing']\nrunpy.run_module('mcpclient.testing', run_name='__main__')")
    with Client([sys.executable, "-c", script], reconnect=Reconnect(max_attempts=None, backoff_factor=0.0), timeout=Timeout(1.0 * PACE, probe=0.2)) as client:
        client.subscribe_resource("test://static/hello")
        mute.touch()
        kill(client.transport.pid)
        assert wait_until(lambda: client._channel.conn._failures >= 1), \
            f"the background reconnect is still waiting for initialize (state {client._channel.conn.state})"
        mute.unlink()
        assert wait_until(lambda: client._channel.conn.state == "ready")
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"sum": 3}


# --- on_*_changed callbacks after a reconnect ----------------------------------------------------


@needs_official
def test_a_listen_for_tool_changes_still_delivers_after_a_reconnect():
    """A ``listen(tools=True)`` outlives a reconnect: the change the server announces on the new
    connection reaches the same subscription, and its tools listed then have the new one."""
    seen = []
    got = threading.Condition()

    with Client(OFFICIAL_SERVER, protocol="legacy", timeout=LONG, reconnect=True) as client:
        def changed(event):  # (the notification thread: a blocking call works there)
            names = sorted(t.name for t in client.list_tools())
            with got:
                seen.append(names)
                got.notify_all()

        client.listen(tools=True, on_event=changed)
        client.call_tool("add_tool", {"name": "first"})
        with got:
            assert got.wait_for(lambda: len(seen) >= 1, LONG)
        first = client.transport.pid
        kill(first)  # with a listen open, the client reconnects at once (no call needed)
        assert wait_until(lambda: client._channel.conn.reconnects == 1 and client.state == "ready")
        client.call_tool("add_tool", {"name": "second"})  # changes the new server's tools
        with got:
            assert got.wait_for(lambda: any("second" in names for names in seen), LONG), \
                f"the listen delivered no change after the reconnect: {seen}"


# --- the keepalive ping never blocks the timer thread ---------------------------------------------


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
        client.list_tools()  # the calls below are sent at once (no listing first)
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
            assert wait_until(lambda: transport._writer._queued >= (4 << 20))  # before the first tick (1 s)
            with pytest.raises(RequestTimeout):
                call.result(timeout=LONG)
            took = time.monotonic() - started
            assert took < 4.0, f"a 1.5 s timeout fired after {took:.1f} s: the timer was blocked in a ping"
        finally:
            os.kill(pid, signal.SIGCONT)


# --- a dropped client is collected while it reconnects --------------------------------------------


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
    conn = client._channel.conn
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


# --- a connection lost between the handshake and READY --------------------------------------------


def test_a_connection_lost_just_before_it_is_ready_is_not_left_ready(monkeypatch):
    """The new server dies after answering the handshake but before the connection is marked
    READY: ``Session.on_lost`` fires while the state is CONNECTING and is ignored, so the
    connection must not then be declared READY on a dead session (every later call would fail
    with ``ProcessExited`` and, READY, never reconnect)."""
    from mcpclient import ProcessExited

    with Client(TESTING_SERVER, timeout=LONG, reconnect=Reconnect(backoff_factor=0.0)) as client:
        channel = client._channel
        real_era_for = channel._era_for
        kill(client.transport.pid)
        assert wait_until(lambda: client._channel.conn.state == "lost")

        died: List[bool] = []

        def dies_first(*args, **kwargs):  # the handshake is done: the new server dies now
            session = client._channel.conn.session
            kill(session.transport.pid)
            died.append(wait_until(lambda: session.is_closed))
            return real_era_for(*args, **kwargs)

        monkeypatch.setattr(channel, "_era_for", dies_first)
        with pytest.raises((ProcessExited, ConnectionClosed, ConnectError)):
            client.call_tool("add", {"a": 1, "b": 1})
        assert died and all(died)  # the new server died between its handshake and READY
        monkeypatch.setattr(channel, "_era_for", real_era_for)
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"sum": 3}, \
            "stuck READY on a dead session"


def test_keepalive_takes_a_ping_answered_with_an_error_as_an_answer():
    """A server that implements no ``ping`` answers it with -32601: that is an answer, so the
    connection stays up however many pings it refuses."""
    minimal = [sys.executable, "-S", str(SERVERS / "minimal.py"), "--no-ping"]
    with Client(minimal, timeout=LONG, keepalive=Keepalive(0.05, failures=2, timeout=1.0)) as client:
        watch = client._channel.conn._watch
        assert watch is not None
        assert wait_until(lambda: watch.pings >= 4)
        assert client.state == "ready"
        assert client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"sum": 2}
