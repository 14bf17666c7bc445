"""A server that sends its answer's status line and headers one byte every 0.2 s: no read timeout
ever fires (each byte comes in time), yet a call ends at its deadline and the poster thread
waiting for that answer is freed then, every blocking method alike, and ``close()`` from another
thread ends what is still in flight within a second, leaving no mcpclient thread behind. Over
Streamable HTTP (the answer to the POST) and the legacy HTTP+SSE transport (the POST's
acknowledgement, which its poster thread waits for; the answer itself would come on the event
stream).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Set

import pytest

from conftest import LONG, wait_until
from hostile_http import Conn, SLACK, answer, client_for, hostile  # noqa: F401  (fixtures: hostile)
from mcpclient import Client, ClientClosedError, HTTPTransport, RequestTimeout
from mcpclient.policies.retry import Retry

pytestmark = pytest.mark.timeout(60)

PACE = 0.2  # seconds between two bytes of the answer's head
TIMEOUT = 1.0
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n" \
       b"X-Padding: " + b"x" * 200 + b"\r\n\r\n"


def trickled_head(conn: Conn, message: Dict[str, Any]) -> bool:
    """The answer's status line and headers, one byte every ``PACE`` s; never their end."""
    for i in range(len(HEAD)):
        if not conn.send(HEAD[i:i + 1]) or conn.stop.wait(PACE):
            return False
    return False


def ours() -> Set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("mcpclient-") and t.is_alive()}


def streamable(hostile: Any) -> Any:
    server = hostile(trickled_head)
    return server, client_for(server.url), lambda: server.calls >= 1


def legacy_sse(started: Any) -> Any:
    from sse_scripted import ScriptedSSEServer, Trickle
    from mcpclient.transports.http.sse import SSETransport

    server = started(ScriptedSSEServer(lambda msg: Trickle(PACE) if msg["method"] == "tools/call" else {}))
    client = Client(SSETransport(server.url), validate_output="listed")
    return server, client, lambda: any((s[3] or {}).get("method") == "tools/call" for s in server.requests("POST"))


@pytest.fixture(params=["streamable", "legacy_sse"])
def trickling(request: Any, hostile: Any, started: Any) -> Any:
    """``(server, client, the call reached the server)``; ``server.hung_up``: the client hung up."""
    return streamable(hostile) if request.param == "streamable" else legacy_sse(started)


@pytest.mark.parametrize("blocking", [False, True], ids=["future", "blocking"])
def test_a_call_ends_at_its_deadline_and_frees_the_thread_waiting_for_the_trickled_answer(trickling, blocking):
    server, client, _ = trickling
    with client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            if blocking:
                client.call_tool("slow", {}, timeout=TIMEOUT)
            else:
                client.call_tool_future("slow", {}, timeout=TIMEOUT).result()
        took = time.monotonic() - started
        assert TIMEOUT - 0.5 <= took <= TIMEOUT + 0.5, f"the call ended after {took:.2f} s"
        # The exchange was cut at the deadline, not at close(): the server meets the hang-up
        # at its next byte.
        assert server.hung_up.wait(SLACK), "the trickled answer was still being waited for"


SHORT_TIMEOUT = 0.6  # (seconds: what is asserted is that the deadline holds, not how long it is)
BLOCKING = {
    "ping": lambda c: c.ping(timeout=SHORT_TIMEOUT),
    "list_tools": lambda c: c.list_tools(timeout=SHORT_TIMEOUT),
    "read_resource": lambda c: c.read_resource("test://a", timeout=SHORT_TIMEOUT),
    "get_prompt": lambda c: c.get_prompt("p", timeout=SHORT_TIMEOUT),
    "request": lambda c: c.request("tools/call", {"name": "slow", "arguments": {}}, timeout=SHORT_TIMEOUT),
}


@pytest.fixture(params=["streamable", "legacy_sse"])
def trickling_everything(request: Any, hostile: Any, started: Any) -> Any:
    """A client whose server trickles the answer to every request after the handshake."""
    if request.param == "streamable":
        return client_for(hostile(trickled_head).url)
    from sse_scripted import ScriptedSSEServer, Trickle
    from mcpclient.transports.http.sse import SSETransport

    server = started(ScriptedSSEServer(lambda msg: Trickle(PACE), capabilities={"tools": {}, "resources": {}, "prompts": {}}))
    return Client(SSETransport(server.url), validate_output="listed")


@pytest.mark.parametrize("method", sorted(BLOCKING))
def test_every_blocking_method_ends_at_its_timeout_when_the_answer_trickles(trickling_everything, method):
    """Whatever the method, over Streamable HTTP and legacy SSE: the answer's head (or the
    POST's acknowledgement) a byte every 0.2 s never makes a blocking call outlive its timeout."""
    with trickling_everything as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            BLOCKING[method](client)
        took = time.monotonic() - started
        assert SHORT_TIMEOUT <= took <= SHORT_TIMEOUT + 0.5, f"{method} ended after {took:.2f} s"


def test_close_from_another_thread_ends_a_call_whose_answer_trickles_within_a_second(trickling):
    server, client, reached = trickling
    before = ours()
    client.connect()
    future = client.call_tool_future("slow", {}, timeout=LONG * 3)
    assert wait_until(reached)  # the server got it: the head of its answer is trickling now
    closed: List[float] = []
    closer = threading.Thread(target=lambda: (client.close(), closed.append(time.monotonic())), name="test-closer")
    started = time.monotonic()
    closer.start()
    closer.join(LONG)
    assert closed, "close() did not return"
    assert closed[0] - started < 1.0, f"close() took {closed[0] - started:.2f} s"
    with pytest.raises(ClientClosedError):
        future.result(1.0)
    assert ours() - before == set(), sorted(t.name for t in ours() - before)


DISCOVER = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "holding-2026", "version": "1"}}


def test_2026_a_cancel_while_the_answers_status_line_is_awaited_closes_the_connection(hostile):
    """In the 2026 era closing the request's connection is the cancel: it must reach the server
    even before the answer's status line came (nothing of the answer to close yet)."""
    hung_up: List[float] = []

    def script(conn: Conn, message: Dict[str, Any]) -> bool:
        if message["method"] == "server/discover":
            return conn.reply(answer(message, DISCOVER))
        held = time.monotonic()
        conn.hold(LONG * 3)  # no status line; returns when the client hangs up
        hung_up.append(time.monotonic() - held)
        return False

    server = hostile(script)
    transport = HTTPTransport(server.url, retry=Retry(total=0))
    with Client(transport, protocol="2026-07-28", validate_output="listed", timeout=LONG) as client:
        future = client.call_tool_future("slow", {})
        assert wait_until(lambda: server.calls == 2)  # discover, then the call: held
        assert future.cancel()
        assert wait_until(lambda: hung_up, SLACK), "the server never saw the connection closed"
