"""Streamable HTTP, handshake era: what lived in a session survives its renewal.

When the server forgets our session (404 to a request carrying its id) the transport starts a new
one by replaying ``initialize``; the GET stream then moves to the new session, and the resource
subscriptions are sent again there. Against the scripted server (``expire_sessions()``: the old
id gets 404 from then on) and against the official SDK's server restarted on the same port.
"""
from __future__ import annotations

import threading
from typing import Any, Dict, List

import pytest

from conftest import LONG, require_official_sdk, wait_until
from http_scripted import SESSION_ID, Reply, ScriptedHTTPServer, Seen, sse
from mcpclient import Client, HTTPTransport, Handlers

pytestmark = pytest.mark.timeout(60)

NEW_SESSION = "scripted-session-2"
SSE_HEADERS = {"Content-Type": "text/event-stream"}
CAPABILITIES = {"tools": {}, "resources": {"subscribe": True}}


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedHTTPServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedHTTPServer(handle, **kwargs))


def answer(seen: Seen, msg: Dict[str, Any]) -> Any:
    if msg["method"] == "tools/list":
        return {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    return {}  # resources/subscribe, ping


def gets(server: ScriptedHTTPServer, session: str) -> List[Seen]:
    return [g for g in server.requests(http_method="GET") if g.headers.get("mcp-session-id") == session]


def subscribed(server: ScriptedHTTPServer, session: str) -> List[str]:
    return [s.body["params"]["uri"] for s in server.requests("resources/subscribe")
            if s.headers.get("mcp-session-id") == session]


def test_the_get_stream_moves_to_the_new_session_when_a_post_renews_it(scripted):
    """When a POST renews the session, the old session's GET stream is closed and the new one
    opened at once, with the new id and without the old stream's ``Last-Event-ID``: what the
    server sends on the new session's stream is not lost while the server keeps the old one open."""
    old_closed = threading.Event()
    notice = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}

    def on_get(seen: Seen) -> Reply:
        session = seen.headers.get("mcp-session-id")
        if session in server.expired:
            return Reply(404, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}})
        if session == SESSION_ID and "last-event-id" not in seen.headers:  # an event id, then the stream ends
            return sse({"id": "old-1", "retry": 50, "data": ""})
        if session == SESSION_ID:  # resumed: held open (this server never ends it itself)
            return Reply(200, b": open\n\n", SSE_HEADERS, until_closed=old_closed)
        if len(gets(server, session)) == 1:  # the new session's stream: one notification
            return sse({"event": "message", "data": notice})
        return Reply(200, b": open\n\n", SSE_HEADERS, until_closed=threading.Event())

    server = scripted(answer, on_get=on_get)
    changed = threading.Event()

    def on_notification(method: str, params: Dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    with Client(server.url, timeout=LONG, protocol="2025-11-25", handlers=Handlers(on_notification=on_notification)) as client:
        assert wait_until(lambda: any("last-event-id" in g.headers for g in gets(server, SESSION_ID)))
        server.expire_sessions()
        assert [t.name for t in client.list_tools()] == ["echo"]  # 404, renewed, repeated
        assert client.transport.session_id == NEW_SESSION
        assert old_closed.wait(LONG), "the old session's GET stream was never closed"
        assert wait_until(lambda: gets(server, NEW_SESSION)), "no GET carried the new session id"
        assert changed.wait(LONG), "the notification on the new session's GET stream never arrived"
    assert all("last-event-id" not in g.headers for g in gets(server, NEW_SESSION))
    assert len(server.requests("initialize")) == 2


def test_resource_subscriptions_are_sent_again_in_the_new_session(scripted):
    """After a renewal ``resources/subscribe`` is sent again, so the new session has the
    subscriptions and the server sends their updates. Both kinds are sent again: those of
    ``subscribe_resource`` and those of a handshake-era ``listen(resource_uris=...)``."""
    resubscribed = threading.Event()
    uris = ["test://a", "test://b"]

    def handle(seen: Seen, msg: Dict[str, Any]) -> Any:
        if msg["method"] == "resources/subscribe" and sorted(subscribed(server, NEW_SESSION)) == uris:
            resubscribed.set()
        return answer(seen, msg)

    def on_get(seen: Seen) -> Reply:
        session = seen.headers.get("mcp-session-id")
        if session in server.expired:
            return Reply(404, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}})
        if session == NEW_SESSION and len(gets(server, session)) == 1 and resubscribed.wait(LONG):
            # An update for each resource this session subscribed to (none before the client did).
            return sse(*({"event": "message", "data": {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                                       "params": {"uri": uri}}} for uri in subscribed(server, session)))
        return Reply(200, b": open\n\n", SSE_HEADERS, until_closed=threading.Event())

    server = scripted(handle, capabilities=CAPABILITIES, on_get=on_get)
    updated: List[str] = []
    got = threading.Event()

    def on_resource_updated(uri: str) -> None:
        updated.append(uri)
        got.set()

    with Client(server.url, timeout=LONG, protocol="2025-11-25",
                handlers=Handlers(on_notification=resource_updates(on_resource_updated))) as client:
        client.subscribe_resource("test://a")
        with client.listen(resource_uris=["test://b"]) as subscription:
            assert subscribed(server, SESSION_ID) == uris
            server.expire_sessions()
            client.ping()  # meets the 404: a new session
            assert resubscribed.wait(LONG), f"subscribed again in the new session: {subscribed(server, NEW_SESSION)}"
            assert got.wait(LONG), "no resources/updated reached the notification handler"
            event = subscription.get(LONG)
            assert event is not None and (event.kind, event.uri) == ("resource_updated", "test://b")
            assert wait_until(lambda: sorted(updated) == uris)
    assert sorted(subscribed(server, NEW_SESSION)) == uris  # once each
    assert len(server.requests("initialize")) == 2


def test_nothing_is_subscribed_again_when_nothing_was_subscribed(scripted):
    """A renewal with no subscriptions sends no ``resources/subscribe``."""
    server = scripted(answer, capabilities=CAPABILITIES)
    renewed: List[str] = []
    transport = HTTPTransport(server.url, on_session_change=lambda old, new: renewed.append(new))
    with Client(transport, timeout=LONG, protocol="2025-11-25") as client:
        server.expire_sessions()
        client.ping()
        assert renewed == [NEW_SESSION]
    assert server.requests("resources/subscribe") == []


require_official_sdk()
from http_servers import official_http_server  # noqa: E402  (needs mcp)
from helpers import resource_updates


def test_a_restarted_official_server_gets_a_new_session_with_a_get_stream(caplog):
    """The official SDK's server, restarted on the same port, has forgotten every session: the
    next request meets its 404, a new session starts, and the GET stream reopens there (the SDK
    drops what it would send on a session without one). (The restart breaks the old stream's
    connection, so the old stream ends on its own here; the scripted tests above keep it open.)"""
    updated = threading.Event()
    with official_http_server("--http") as url:
        port = url.rsplit(":", 1)[1].split("/")[0]
        client = Client(url, timeout=LONG, protocol="2025-11-25",
                        handlers=Handlers(on_notification=resource_updates(
                            lambda uri: updated.set() if uri == "test://text" else None)))
        try:
            client.connect()
            client.subscribe_resource("test://text")
            old = client.transport.session_id
            restarted = official_http_server("--http", "--port", port)
        except BaseException:
            client.close()
            raise
    try:
        with restarted:
            assert [t.name for t in client.list_tools()]  # 404: renewed, then repeated
            assert client.transport.session_id not in (None, old)

            def touched() -> bool:  # (until the new session's GET stream is open, the SDK drops the update)
                assert client.call_tool("touch", {"uri": "test://text"}).text == "touched"
                return updated.wait(0.1)

            assert wait_until(touched), "no update sent on the new session's GET stream arrived"
    finally:
        client.close()
    assert "could not subscribe" not in caplog.text  # the subscription was sent again, and taken


def test_a_silent_get_stream_is_reopened_after_the_idle_bound(scripted):
    """A GET stream whose connection died without a FIN looks exactly like a silent one: after
    ``stream_idle_timeout`` without a byte it is dropped and opened again."""
    first_closed = threading.Event()

    def on_get(seen: Seen) -> Reply:
        if len(gets(server, SESSION_ID)) == 1:  # headers, then silence (until the client leaves)
            return Reply(200, b": open\n\n", SSE_HEADERS, until_closed=first_closed)
        return Reply(200, b": open\n\n", SSE_HEADERS, until_closed=threading.Event())

    server = scripted(answer, on_get=on_get)
    with Client(HTTPTransport(server.url, stream_idle_timeout=0.3), protocol="2025-11-25", timeout=LONG):
        assert first_closed.wait(LONG), "the silent GET stream was never dropped"
        assert wait_until(lambda: len(gets(server, SESSION_ID)) >= 2)
