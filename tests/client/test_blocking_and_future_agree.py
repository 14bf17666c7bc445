"""A blocking method and its future end the same way at the same time, whatever the server does.

A blocking method is ``result()`` on the future its ``_future`` twin returns: against each fault
(a server that never answers, one that trickles its answer a byte at a time, one that dies
under the call, a ``close()`` from another thread), over stdio and Streamable HTTP, the blocking
call and the future's ``result()`` raise the same error, within the same half second. The
blocking methods without a twin (``ping``, ``list_tools``) end the same way too.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple, Type

import pytest

from conftest import LONG, faulty
from hostile_http import Conn, answer, client_for, hostile  # noqa: F401  (fixtures: hostile)
from mcpclient import Client, ClientClosedError, ConnectionClosed, ProcessExited, RequestTimeout, StdioTransport
from mcpclient.testing import server_command

pytestmark = pytest.mark.timeout(60)

TIMEOUT = 1.0
PACE = 0.2  # seconds between two bytes of a trickled answer
CLOSE_AFTER = 0.3  # seconds into a call at which another thread closes the client

#: The stdio server of the trickle fault: answers the handshake, then writes each request's answer
#: one byte every PACE seconds, never its end (a scripted fake: no real server does this).
TRICKLING_STDIO = f"""
import json, sys, threading, time

def write(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

def trickle(rid):
    line = json.dumps({{"jsonrpc": "2.0", "id": rid, "result": {{"content": []}}}})
    for char in line:
        sys.stdout.write(char)
        sys.stdout.flush()
        time.sleep({PACE})

for line in sys.stdin:
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    if method == "initialize":
        write({{"jsonrpc": "2.0", "id": rid, "result": {{"protocolVersion": message["params"]["protocolVersion"],
              "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "trickling", "version": "1"}}}}}})
    elif rid is not None:
        threading.Thread(target=trickle, args=(rid,), daemon=True).start()
"""

#: (name, how the call is made): each blocking method, and its twin's ``result()``.
PATHS = [
    ("call_tool", lambda c: c.call_tool("echo", {"text": "x"}, timeout=TIMEOUT)),
    ("call_tool_future", lambda c: c.call_tool_future("echo", {"text": "x"}, timeout=TIMEOUT).result()),
    ("request", lambda c: c.request("tools/call", {"name": "echo", "arguments": {"text": "x"}}, timeout=TIMEOUT)),
    ("request_future", lambda c: c.request_future("tools/call", {"name": "echo", "arguments": {"text": "x"}},
                                                  timeout=TIMEOUT).result()),
]


def ended(client: Client, call: Callable[[Client], Any]) -> Tuple[Type[BaseException], float]:
    """How ``call(client)`` ended (the error's type; ``type(None)`` if it returned) and after how long."""
    started = time.monotonic()
    try:
        call(client)
    except Exception as exc:  # noqa: BLE001 - the outcome under test
        return type(exc), time.monotonic() - started
    return type(None), time.monotonic() - started


def agree(outcomes: Dict[str, Tuple[Type[BaseException], float]], error: Type[BaseException],
          low: float, high: float) -> None:
    """Every path raised ``error``, after between ``low`` and ``high`` seconds, within 0.5 s of each other."""
    assert {name: kind for name, (kind, _) in outcomes.items()} == {name: error for name in outcomes}, outcomes
    times = [took for _, took in outcomes.values()]
    assert all(low <= took <= high for took in times), outcomes
    assert max(times) - min(times) <= 0.5, outcomes


# --- the servers of each fault, per transport ------------------------------------------------------


def never_answers(conn: Conn, message: Dict[str, Any]) -> bool:
    conn.stop.wait(LONG * 3)  # held until the client hangs up or the test ends
    return False


def trickled_head(conn: Conn, message: Dict[str, Any]) -> bool:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nX-Padding: " + b"x" * 200
    for i in range(len(head)):
        if not conn.send(head[i:i + 1]) or conn.stop.wait(PACE):
            return False
    return False


def hangs_up(conn: Conn, message: Dict[str, Any]) -> bool:
    return False  # the connection closes with no answer: what a server that dies mid-call leaves


@pytest.fixture
def stalled(request: Any, hostile: Any) -> Iterator[Callable[[], Client]]:
    if request.param == "stdio":
        yield lambda: Client(faulty("no-reply"), timeout=LONG, protocol="legacy", validate_output="listed")
    else:
        server = hostile(never_answers)
        yield lambda: client_for(server.url)


@pytest.fixture
def trickling(request: Any, hostile: Any, tmp_path: Path) -> Iterator[Callable[[], Client]]:
    if request.param == "stdio":
        script = tmp_path / "trickling.py"
        script.write_text(TRICKLING_STDIO)
        yield lambda: Client([sys.executable, str(script)], timeout=LONG, protocol="legacy", validate_output="listed")
    else:
        server = hostile(trickled_head)
        yield lambda: client_for(server.url)


TRANSPORTS = ["stdio", "http"]


# --- the faults ---------------------------------------------------------------------------------


@pytest.mark.parametrize("stalled", TRANSPORTS, indirect=True)
def test_a_server_that_never_answers_times_every_path_out_at_its_timeout(stalled: Callable[[], Client]) -> None:
    with stalled() as client:
        outcomes = {name: ended(client, call) for name, call in PATHS}
    agree(outcomes, RequestTimeout, TIMEOUT - 0.5, TIMEOUT + 0.5)


def test_blocking_methods_without_a_twin_time_out_as_the_twinned_ones_do(hostile: Any) -> None:
    server = hostile(never_answers)
    with client_for(server.url) as client:
        outcomes = {name: ended(client, call) for name, call in PATHS[:2]}
        outcomes["ping"] = ended(client, lambda c: c.ping(timeout=TIMEOUT))
        outcomes["list_tools"] = ended(client, lambda c: c.list_tools(timeout=TIMEOUT))
    agree(outcomes, RequestTimeout, TIMEOUT - 0.5, TIMEOUT + 0.5)


@pytest.mark.parametrize("trickling", TRANSPORTS, indirect=True)
def test_a_server_that_trickles_its_answer_times_every_path_out_at_its_timeout(trickling: Callable[[], Client]) -> None:
    """No read ever times out (a byte comes every 0.2 s), yet each call ends at its deadline."""
    with trickling() as client:
        outcomes = {name: ended(client, call) for name, call in PATHS}
    agree(outcomes, RequestTimeout, TIMEOUT - 0.5, TIMEOUT + 0.5)


@pytest.mark.parametrize("path", [name for name, _ in PATHS])
def test_a_stdio_server_killed_under_the_call_fails_every_path_at_once(path: str) -> None:
    call = dict(PATHS)[path]
    client = Client(StdioTransport(server_command(), stderr=None), timeout=LONG)
    with client:
        client.call_tool("echo", {"text": "up"})  # (listed and answered: the call below goes straight out)
        pid = client.transport.pid
        assert pid is not None
        killer = threading.Timer(0.3, os.kill, (pid, signal.SIGKILL))
        killer.start()
        try:
            kind, took = ended(client, lambda c: call_slow(c, path))
        finally:
            killer.cancel()
    assert kind is ProcessExited and 0.25 <= took <= 0.3 + 1.0, (kind, took)  # (its clock starts just after the killer's)


def call_slow(client: Client, path: str) -> Any:
    """The ``path`` way, a call the server answers only after 30 s (it is killed first)."""
    arguments = {"steps": 1, "delay": 30}
    params = {"name": "slow", "arguments": arguments}
    return {
        "call_tool": lambda: client.call_tool("slow", arguments, timeout=LONG),
        "call_tool_future": lambda: client.call_tool_future("slow", arguments, timeout=LONG).result(),
        "request": lambda: client.request("tools/call", params, timeout=LONG),
        "request_future": lambda: client.request_future("tools/call", params, timeout=LONG).result(),
    }[path]()


@pytest.mark.parametrize("path", [name for name, _ in PATHS])
def test_an_http_server_that_hangs_up_under_the_call_fails_every_path_at_once(hostile: Any, path: str) -> None:
    server = hostile(hangs_up)
    with client_for(server.url) as client:
        kind, took = ended(client, lambda c: call_slow(c, path))
    assert issubclass(kind, ConnectionClosed) and took < 1.0, (kind, took)


@pytest.mark.parametrize("stalled", TRANSPORTS, indirect=True)
@pytest.mark.parametrize("path", [name for name, _ in PATHS])
def test_close_from_another_thread_ends_every_path_within_a_second(stalled: Callable[[], Client], path: str) -> None:
    client = stalled()
    client.connect()
    closed_at: List[float] = []

    def close() -> None:
        closed_at.append(time.monotonic())
        client.close()

    closer = threading.Timer(CLOSE_AFTER, close)
    closer.start()
    try:
        kind, took = ended(client, lambda c: call_slow(c, path))
        ended_at = time.monotonic()
    finally:
        closer.cancel()
        client.close()
    assert kind is ClientClosedError and closed_at and ended_at - closed_at[0] <= 1.0, (kind, took)


def batched_answer(conn: Conn, message: Dict[str, Any]) -> bool:
    """The answer as a JSON batch, with a notification before it (what the 2025-03-26 revision allowed)."""
    import json

    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    return conn.reply(json.dumps([note, json.loads(answer(message, {"content": []}))]).encode())


@pytest.mark.parametrize("path", [name for name, _ in PATHS])
def test_an_answer_in_a_json_batch_reaches_every_path(hostile: Any, path: str) -> None:
    """A blocking call runs its own POST: a JSON batch holding its answer is taken apart by the
    reader, as for a future, instead of being dispatched whole on the caller's thread."""
    server = hostile(batched_answer)
    with client_for(server.url) as client:
        kind, took = ended(client, dict(PATHS)[path])
    assert kind is type(None) and took < LONG, (kind, took)
