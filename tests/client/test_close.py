"""``close()`` is prompt and bounded whatever is going on: a connect or a relaunch in
progress, a stuck callback, a server that ignores SIGTERM and leaves a grandchild, a close() from
a done-callback that close() itself fired, an input round landing meanwhile. It leaves no server,
no thread and no handler running after it, and the answers to calls it abandoned are not
counted as unknown replies.
"""
from __future__ import annotations

import math
import random
import sys
import threading
import time
from typing import Any, Dict, List, Optional

import pytest

from conftest import LONG, SHORT, faulty, pid_alive, server_script, wait_until
from helpers import ScriptedServer, StderrLines
from reaping import Reaper, in_thread, reaper  # noqa: F401  (fixtures: reaper)
from mcpclient import Client, Handlers, StdioTransport, Timeout
from mcpclient.errors import ClientClosedError, ConnectError
from mcpclient.testing import server_command


MUTE = server_script("answers_only_ping")  # answers initialize and ping only
STUBBORN = server_script("ignores_sigterm")  # ignores SIGTERM and stdin EOF; logs on tools/call


# ---------------------------------------------------------------- close() racing connect()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(30)
def test_close_racing_connect_leaves_no_server(reaper):
    rng = random.Random(4)
    pids: List[int] = []
    bad: List[str] = []
    for i in range(60):
        client = reaper.client(Client(faulty("normal"), timeout=LONG))
        connecting = in_thread(reaper, client.connect, f"test-connect-{i}")
        # mostly while the server is being spawned (the narrow window), else during the handshake
        time.sleep(rng.uniform(0, 0.003) if i % 3 else rng.uniform(0, 0.08))
        client.close()
        assert connecting.done.wait(LONG), f"connect() still running after close(): {connecting}"
        if connecting.error is not None and not isinstance(connecting.error, (ClientClosedError, ConnectError)):
            bad.append(repr(connecting.error))
        if client.transport.pid is not None:
            pids.append(client.transport.pid)
    assert not bad, f"connect() raised untyped errors: {bad}"
    assert wait_until(lambda: not any(pid_alive(pid) for pid in pids), 3.0), \
        f"servers still running after close(): {[pid for pid in pids if pid_alive(pid)]}"


class GatedStart(StdioTransport):
    """A stdio transport whose ``start()`` waits for the test before spawning the server."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.entered = threading.Event()
        self.proceed = threading.Event()

    def start(self) -> None:
        self.entered.set()
        self.proceed.wait(LONG)
        super().start()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(30)
def test_close_while_connect_is_about_to_spawn_the_server_leaves_no_server(reaper):
    """The deterministic form of the race above: close() runs after connect() began, before the spawn."""
    transport = GatedStart(faulty("normal"))
    client = reaper.client(Client(transport, timeout=LONG))
    connecting = in_thread(reaper, client.connect, "test-connect")
    try:
        assert transport.entered.wait(LONG)
        closing = in_thread(reaper, client.close, "test-closer")
        closing.done.wait(SHORT)  # a close() that waits for the start in progress is fine too
    finally:
        transport.proceed.set()
    assert connecting.done.wait(LONG), connecting
    assert closing.done.wait(LONG), closing
    assert closing.error is None, closing
    assert connecting.error is None or isinstance(connecting.error, (ClientClosedError, ConnectError)), connecting
    assert client._is_closed
    pid = transport.pid
    assert pid is None or wait_until(lambda: not pid_alive(pid), 3.0), f"server {pid} still running after close()"


# ---------------------------------------------------------------- close() is bounded in total

CLOSE_BOUND = 5.5


def close_with_a_stuck_log_callback(reaper: Reaper, target: List[str]) -> float:
    """Connect, get ``on_log`` stuck on the notification thread, and time ``close()``."""
    entered, release = threading.Event(), threading.Event()

    def on_log(level: str, logger: Optional[str], data: Any) -> None:
        entered.set()
        release.wait(30)

    try:
        # validate_output="listed": STUBBORN answers no tools/list (a first call would list the tools to learn their outputSchema)
        client = reaper.client(Client(target, timeout=LONG, validate_output="listed", handlers=Handlers(on_log=on_log)).connect())
        if target is STUBBORN:
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        else:
            client.call_tool("log", {"level": "info", "message": "hi"})
        assert entered.wait(LONG)
        closed = in_thread(reaper, client.close, "test-closer")
        assert closed.done.wait(CLOSE_BOUND + LONG), "close() never returned"
        assert closed.error is None, closed
        return closed.elapsed
    finally:
        release.set()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(30)
def test_close_is_bounded_with_a_stuck_log_callback(reaper):
    elapsed = close_with_a_stuck_log_callback(reaper, server_command())
    assert elapsed <= CLOSE_BOUND, f"close() took {elapsed:.2f} s"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(40)
def test_close_budget_is_shared_by_a_sigterm_ignoring_server_and_a_stuck_callback(reaper):
    elapsed = close_with_a_stuck_log_callback(reaper, STUBBORN)
    assert elapsed <= CLOSE_BOUND, f"close() took {elapsed:.2f} s (SIGTERM ladder + callback join, not shared)"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(30)
def test_sigterm_ignoring_server_and_grandchild_close_within_the_bound(reaper):
    lines = StderrLines()
    client = reaper.client(Client(StdioTransport(faulty("ignore-sigterm"), stderr=lines), timeout=LONG).connect())
    grandchild: List[int] = []

    def found() -> bool:
        grandchild[:] = [int(l.split("=", 1)[1]) for l in list(lines.lines) if l.startswith("grandchild=")]
        return bool(grandchild)

    assert wait_until(found, LONG)
    reaper.track(grandchild[0], "SIG_IGN")
    closed = in_thread(reaper, client.close, "test-closer")
    assert closed.done.wait(CLOSE_BOUND + LONG), "close() never returned"
    assert closed.elapsed <= CLOSE_BOUND, f"close() took {closed.elapsed:.2f} s"
    assert wait_until(lambda: not pid_alive(grandchild[0]))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(20)
def test_close_from_a_done_callback_fired_by_close_itself_is_prompt(reaper):
    client = reaper.client(Client(MUTE, timeout=LONG).connect())
    future = client.request_future("tools/call", {"name": "x"})
    inner: Dict[str, float] = {}

    def close_again(_: Any) -> None:  # "close the client when this call ends, however it ends"
        started = time.monotonic()
        client.close()
        inner["elapsed"] = time.monotonic() - started

    future.add_done_callback(close_again)
    closed = in_thread(reaper, client.close, "test-closer")
    assert closed.done.wait(LONG), "close() never returned"
    assert closed.elapsed < 1.0, f"close() took {closed.elapsed:.2f} s (the re-entrant close() waited for itself)"
    assert isinstance(future.exception(), ClientClosedError)
    assert inner.get("elapsed", math.inf) < 1.0, inner


# ---------------------------------------------------------------- replies to calls close() abandoned


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(20)
def test_replies_to_calls_abandoned_by_close_are_not_unknown(reaper):
    client = reaper.client(Client(server_command(), timeout=LONG).connect())
    futures = [client.call_tool_future("slow", {"steps": 1, "delay": 0.4}) for _ in range(3)]
    client.ping()  # answered after the server has read (and started) the three calls
    client.close()  # the server finishes them on stdin EOF and answers before it exits
    assert all(isinstance(f.exception(), ClientClosedError) for f in futures)
    assert client._session.unknown_replies == 0


# --- close() racing an input round or a relaunch --------------------------------------------------


def test_an_input_round_racing_close_leaves_no_worker_and_runs_no_handler_after_close():
    """An ``input_required`` reply landing while ``close()`` runs makes no new inputs lane: no
    worker runs the user's handler after close, and none is left running (a leaked thread). The
    window between clearing the lane and closing the session is a few bytecodes wide: a sweep of
    start offsets over 300 tries aims at it. (A 1 us GIL switch interval would hit it more often,
    but CPython 3.11 itself segfaults at 1 us and at 10 us intervals, in ``Client(...)``
    construction, about once in 50 runs on a loaded machine: the test keeps the interpreter's own
    interval.)"""
    reply = {"resultType": "input_required", "inputRequests": {"q": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "?", "requestedSchema": {"type": "object", "properties": {}}}}}}
    late: List[int] = []
    prefixes: List[str] = []
    for attempt in range(300):
        server = ScriptedServer(lambda method, params: None, capabilities={"tools": {}}, modern=True)
        closed = threading.Event()
        try:
            client = Client(server.transport, timeout=LONG, validate_output=False, handlers=Handlers(elicitation=lambda request, n=attempt, done=closed: (
                                late.append(n) if done.is_set() else None) or {"action": "cancel"}))
            client.connect()
            prefixes.append(f"mcpclient-{client._session.instance}-")
            client.call_tool_future("ask")
            call = server.wait_for(lambda m: m.get("method") == "tools/call")
            server.peer.send({"jsonrpc": "2.0", "id": call["id"], "result": reply})
            spin_until = time.perf_counter() + (attempt % 40) * 10e-6  # 0-400 µs: sweep the window
            while time.perf_counter() < spin_until:
                pass
            client.close()
            closed.set()
        finally:
            server.stop()
    threading.Event().wait(SHORT)  # what must not happen: a handler or a new thread after close()
    leaked = [t.name for t in threading.enumerate() if t.name.startswith(tuple(prefixes))]
    assert leaked == [] and late == [], f"threads left after close(): {leaked}; handlers run after close(): {late}"


def test_close_during_a_relaunch_neither_waits_for_it_nor_lets_it_start_a_server():
    """The relaunch after a failed probe closes the old session (a whole SIGTERM ladder here: the
    old server ignores SIGTERM) and spawns the new server without holding the client's state
    lock: a concurrent ``close()`` waits for none of it, and no new server starts after it."""
    grace = 1.0
    lines = StderrLines()
    client = Client(StdioTransport(faulty("stubborn-discover"), stderr=lines, terminate_grace=grace), timeout=Timeout(LONG, probe=LONG))
    outcome: Dict[str, Any] = {}

    def connect() -> None:
        try:
            client.connect()
        except BaseException as exc:  # noqa: BLE001 - asserted below
            outcome["error"] = exc

    connecting = threading.Thread(target=connect)
    connecting.start()
    assert lines.wait_for("sigterm", timeout=LONG)  # the old server's shutdown ladder is under way
    started = time.monotonic()
    client.close()
    elapsed = time.monotonic() - started
    connecting.join(LONG)
    assert not connecting.is_alive()
    assert isinstance(outcome.get("error"), ClientClosedError), outcome
    assert elapsed < grace / 2, f"close() took {elapsed:.2f} s: it waited for the relaunch"
    assert len([line for line in lines.lines if line.startswith("started=")]) == 1, lines.lines
