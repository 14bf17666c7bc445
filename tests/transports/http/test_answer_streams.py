"""Streamable HTTP: how answer streams end (2026 cancellation, a 2026 stream that breaks) and who
reads them, against the scripted server on 127.0.0.1. ``Reply(until_closed=event)`` sends the headers and then nothing:
the event is set only when the client closes the connection, which is all a 2026 server sees of
a cancel."""
from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Optional

import pytest

from conftest import LONG, wait_until
from http_scripted import Reply, ScriptedHTTPServer, sse
from mcpclient import Client, ConnectionClosed, HTTPTransport, Handlers
from mcpclient.auth import AuthProvider, Challenge
from mcpclient.policies.retry import Retry
from helpers import Twins

pytestmark = pytest.mark.timeout(60)

DISCOVER = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "scripted-2026", "version": "1"}}
SSE_HEADERS = {"Content-Type": "text/event-stream"}


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedHTTPServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedHTTPServer(handle, **kwargs))


def never_answered(closed: threading.Event, headers: Dict[str, str]) -> Callable[[Any, Dict[str, Any]], Reply]:
    """A handler whose ``tools/call`` answer never comes: its headers do, its body never."""
    def handle(seen: Any, msg: Dict[str, Any]) -> Reply:
        body = b'{"jsonrpc": "2.0", "id": %d, "result": {"content": []}}' % msg["id"]
        return Reply(200, body, headers, until_closed=closed)
    return handle


def settled(transport: HTTPTransport) -> bool:
    """No request in flight (a cancel is noted on its request: none is left behind)."""
    with transport._inflight._lock:
        return not transport._inflight._by_id and not transport._inflight._others


def reading(transport: HTTPTransport) -> int:
    """How many requests in flight have their answer's headers (their bodies are being read)."""
    with transport._inflight._lock:
        return sum(r.response is not None for r in transport._inflight._by_id.values())


def test_a_cancel_between_the_answers_headers_and_its_reading_still_closes_the_stream(scripted):
    """A cancel that comes after the POST returned but before its answer stream is registered is
    not only noted and forgotten: the stream is closed (not read to its end) and the server learns
    of the cancel."""
    closed = threading.Event()
    server = scripted(never_answered(closed, SSE_HEADERS), discover=DISCOVER)
    transport = HTTPTransport(server.url)
    reached, go = threading.Event(), threading.Event()
    with Client(transport, timeout=LONG) as client:
        assert client.server.protocol_version == "2026-07-28"
        deliver = transport._answers.deliver

        def held_deliver(response: Any, request: Any, *args: Any) -> None:
            if request.id is not None and not go.is_set():  # the worker has the answer's headers, not yet read
                reached.set()
                go.wait(LONG)
            deliver(response, request, *args)

        transport._answers.deliver = held_deliver  # type: ignore[method-assign]
        try:
            future = client.call_tool_future("slow")
            assert reached.wait(LONG)
            assert future.cancel()  # lands in the window
        finally:
            go.set()
        assert closed.wait(LONG), "the server never saw the cancelled request's stream closed"
        assert wait_until(lambda: settled(transport)), transport._inflight._by_id


def test_a_cancel_while_a_json_answer_is_read_closes_it_and_leaves_nothing_behind(scripted):
    """A JSON body is read tracked by its request id: a cancel meanwhile closes it (the body is
    not read on) and leaves no note of the id behind."""
    closed = threading.Event()
    server = scripted(never_answered(closed, {"Content-Type": "application/json"}), discover=DISCOVER)
    transport = HTTPTransport(server.url)
    read = threading.Event()
    with Client(transport, timeout=LONG) as client:
        deliver = transport._answers.deliver

        def noted_deliver(response: Any, request: Any, *args: Any) -> None:
            if request.id is not None:
                read.set()
            deliver(response, request, *args)

        transport._answers.deliver = noted_deliver  # type: ignore[method-assign]
        future = client.call_tool_future("slow")
        assert read.wait(LONG)  # the worker reads the answer's body (which never comes)
        assert future.cancel()
        assert closed.wait(LONG), "the server never saw the cancelled request's connection closed"
        assert wait_until(lambda: settled(transport)), transport._inflight._by_id
        assert transport.cancel_request(future.request_id)  # over: nothing is noted for it
        assert settled(transport)


class Rotating(AuthProvider):
    """A token that the server stops accepting on the GET stream: a refusal gets a new one."""

    def __init__(self) -> None:
        self.current = "old"
        self.challenges: List[int] = []

    def headers(self, method: str, url: str) -> Dict[str, str]:
        return {"Authorization": f"Bearer {self.current}"}

    def token(self) -> Optional[str]:
        return self.current

    def on_challenge(self, challenge: Challenge) -> bool:
        self.challenges.append(challenge.status)
        if challenge.sent_token == "old":
            self.current = "new"
            return True
        return False


def test_the_get_stream_goes_on_after_its_token_is_refused_and_renewed(scripted):
    """The GET stream goes through ``_exchange``: a 401 (an expired token) gets an auth round and
    the stream goes on, rather than ending for good with server-initiated messages stopped
    without a word."""
    notice = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}

    def on_get(seen: Any) -> Reply:
        if seen.headers.get("authorization") != "Bearer new":
            return Reply(401, b"", {"WWW-Authenticate": 'Bearer error="invalid_token"'})
        return sse({"event": "message", "data": notice})

    server = scripted(lambda seen, msg: {"content": []}, on_get=on_get)
    auth = Rotating()
    got = threading.Event()

    def on_notification(method: str, params: Dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            got.set()

    with Client(HTTPTransport(server.url, auth=auth), timeout=LONG, protocol="2025-11-25", handlers=Handlers(on_notification=on_notification)):
        assert got.wait(LONG), "the server's notification on the GET stream never arrived"
    assert auth.challenges == [401]
    first, second = server.requests(http_method="GET")[:2]
    assert (first.headers["authorization"], second.headers["authorization"]) == ("Bearer old", "Bearer new")


def test_a_get_stream_closed_at_once_after_retry_0_is_reopened_with_backoff_not_in_a_loop(scripted):
    """A server that sends ``retry: 0`` and closes each GET stream at once: the client reopens
    it no sooner than 0.25 s later, and backs off further while the streams keep ending at
    once (it reopened it 425-484 times a second, at ~75 % of a core)."""
    server = scripted(lambda seen, msg: {"content": []}, on_get=lambda seen: sse({"retry": 0, "data": "{}"}))
    with Client(HTTPTransport(server.url), timeout=LONG, protocol="2025-11-25"):
        assert wait_until(lambda: len(server.requests(http_method="GET")) >= 1)
        assert not wait_until(lambda: len(server.requests(http_method="GET")) > 6, 2.0)
    opened = [seen.at for seen in server.requests(http_method="GET")]
    assert len(opened) >= 2 and opened[1] - opened[0] >= 0.25


def test_pool_size_blocking_calls_reading_long_answer_streams_never_hold_up_another_call(scripted):
    """Every call's SSE answer is read on the poster lane's workers (so its deadline and close()
    end it), and ``pool_size`` such streams never hold every worker: a future's POST does not
    wait in the lane's queue until one of them ended."""
    def handle(seen: Any, msg: Dict[str, Any]) -> Any:
        if msg["params"]["name"] == "hold":  # an answer stream that says nothing until the client leaves
            return Reply(200, b"data: {}\n\n", SSE_HEADERS, until_closed=threading.Event())
        return {"content": [{"type": "text", "text": "quick"}]}

    server = scripted(handle)
    transport = HTTPTransport(server.url, pool_size=2)
    outcome: List[Any] = []

    def held_call(client: Client) -> None:
        try:
            client.call_tool("hold", {})
        except Exception as exc:  # noqa: BLE001 - asserted below
            outcome.append(exc)

    with Client(transport, timeout=LONG, protocol="2025-11-25") as client:
        callers = [threading.Thread(target=held_call, args=(client,)) for _ in range(2)]
        for caller in callers:
            caller.start()
        try:
            assert wait_until(lambda: len(server.requests("tools/call")) == 2 and reading(transport) == 2)
            assert client.call_tool_future("quick", {}).result(LONG).text == "quick"
        finally:
            client.close()  # aborts the held streams: their calls end
            for caller in callers:
                caller.join(LONG)
    assert [type(exc).__name__ for exc in outcome] == ["ClientClosedError"] * 2


# ---------------------------------------------------------------- 2026: a broken answer stream

TOOLS = {"resultType": "complete", "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}


def cutting(times: int) -> Callable[[Any, Dict[str, Any]], Any]:
    """A 2026 handler that ends the answer stream of its first ``times`` requests after the 200,
    before the answer (with an event id and a retry delay, which a 2026 client must not use),
    then answers."""
    cuts: List[Any] = []

    def handle(seen: Any, msg: Dict[str, Any]) -> Any:
        if len(cuts) < times:
            cuts.append(msg["id"])
            return sse({"id": f"ev-{len(cuts)}", "retry": 50, "data": ""})
        if msg["method"] == "tools/call":
            return {"resultType": "complete", "content": [{"type": "text", "text": "ran"}]}
        return TOOLS
    return handle


def test_2026_a_safe_request_whose_answer_stream_broke_is_sent_again_under_a_new_id(scripted):
    """The 2026 rule: a safe request whose answer stream broke is sent again with a new id, not
    GET-resumed with Last-Event-ID, which a 2026 server does not have (405: the call would fail)."""
    server = scripted(cutting(1), discover=DISCOVER)
    with Client(server.url, timeout=LONG) as client:
        assert client.server.protocol_version == "2026-07-28"
        assert [t.name for t in client.list_tools()] == ["echo"]
        assert client._session.unknown_replies == 0
    first, again = server.requests("tools/list")
    assert first.body["id"] != again.body["id"]
    assert {k: v for k, v in first.body.items() if k != "id"} == {k: v for k, v in again.body.items() if k != "id"}
    assert server.requests(http_method="GET") == []


def test_2026_a_future_whose_answer_stream_broke_is_sent_again_too(scripted):
    server = scripted(cutting(1), discover=DISCOVER)
    with Client(server.url, timeout=LONG) as client:
        assert [t.name for t in Twins(client).list_tools().result(LONG)] == ["echo"]
    assert len({s.body["id"] for s in server.requests("tools/list")}) == 2
    assert server.requests(http_method="GET") == []


def test_2026_a_tool_call_whose_answer_stream_broke_fails_at_once_and_is_not_sent_again(scripted):
    server = scripted(cutting(1), discover=DISCOVER)
    # validate_output="listed": a first call's tools/list would take the cut instead
    with Client(server.url, timeout=LONG, validate_output="listed") as client:
        with pytest.raises(ConnectionClosed, match="not sent again"):
            client.call_tool("echo", {})
    assert len(server.requests("tools/call")) == 1
    assert server.requests(http_method="GET") == []


def test_2026_a_tool_call_whose_answer_stream_broke_is_sent_again_if_the_retry_policy_allows_it(scripted):
    server = scripted(cutting(1), discover=DISCOVER)
    with Client(HTTPTransport(server.url, retry=Retry(retry_tool_calls=True)), timeout=LONG,
                validate_output="listed") as client:  # (see the test above)
        assert client.call_tool("echo", {}).text == "ran"
    assert len({s.body["id"] for s in server.requests("tools/call")}) == 2


def test_2026_a_stream_that_keeps_breaking_is_sent_again_as_often_as_the_retry_policy_allows(scripted):
    server = scripted(cutting(10), discover=DISCOVER)
    with Client(HTTPTransport(server.url, retry=Retry(total=2, backoff_factor=0.01)), timeout=LONG) as client:
        with pytest.raises(ConnectionClosed, match="gave up after sending the request 3 time"):
            client.list_tools()
    assert len({s.body["id"] for s in server.requests("tools/list")}) == 3
    assert server.requests(http_method="GET") == []


# ---------------------------------------------------------------- 2026: an idle listen stream

def test_2026_a_listen_whose_stream_goes_silent_is_sent_again_with_reconnect(scripted):
    """A listen stream that brings nothing (not even a keep-alive comment) for
    ``stream_idle_timeout`` counts as broken; with ``reconnect=`` the listen is sent again and
    the same ``Subscription`` gets the events of the new one."""
    from mcpclient.protocol.stateless import META_SUBSCRIPTION
    from mcpclient._client.subscriptions import ACKNOWLEDGED

    listens: List[Any] = []

    def note(method: str, rid: Any, **params: Any) -> Dict[str, Any]:
        params["_meta"] = {META_SUBSCRIPTION: rid}
        return {"event": "message", "data": {"jsonrpc": "2.0", "method": method, "params": params}}

    def handle(seen: Any, msg: Dict[str, Any]) -> Any:
        if msg["method"] != "subscriptions/listen":
            return TOOLS
        listens.append(msg["id"])
        ack = note(ACKNOWLEDGED, msg["id"], notifications=msg["params"]["notifications"])
        if len(listens) == 1:  # acknowledged, then silence (the next event would come after 5 s)
            reply = sse(ack, {": keep-alive": ""})
            reply.pace = 5.0
            return reply
        if len(listens) == 2:
            reply = sse(ack, note("notifications/tools/list_changed", msg["id"]))
            reply.pace = 0.05
            return reply
        return Reply(200, b": open\n\n", SSE_HEADERS, until_closed=threading.Event())

    server = scripted(handle, discover=DISCOVER)
    transport = HTTPTransport(server.url, stream_idle_timeout=0.3)
    with Client(transport, timeout=LONG, reconnect=True) as client:
        assert client.server.protocol_version == "2026-07-28"
        with client.listen(tools=True) as subscription:
            event = subscription.get(timeout=LONG)
            assert event is not None and event.kind == "tools_changed", event
            assert len(listens) >= 2 and listens[0] != listens[1]


def test_a_notification_the_server_never_answers_is_bounded(scripted, monkeypatch):
    """A notification goes out with a deadline (``SEND_BUDGET``): an HTTP server that takes a
    notification's POST and never answers does not hold the sending thread (the caller's, or the
    sender lane that carries cancellations) for ever."""
    import time

    from mcpclient import MCPError
    from mcpclient._engine import session as session_module

    monkeypatch.setattr(session_module, "SEND_BUDGET", 0.5)
    release = threading.Event()

    def before(seen: Any) -> None:
        if isinstance(seen.body, dict) and seen.body.get("method") == "notifications/roots/list_changed":
            release.wait(LONG)  # taken, never answered (until the test ends)

    server = scripted(lambda seen, msg: TOOLS, before=before)
    try:
        with Client(server.url, protocol="2025-11-25", timeout=LONG, handlers=Handlers(roots=[])) as client:
            started = time.monotonic()
            with pytest.raises(MCPError):
                client.set_roots(["file:///tmp"])
            assert time.monotonic() - started < 3.0
    finally:
        release.set()
