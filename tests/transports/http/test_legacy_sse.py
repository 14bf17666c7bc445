"""HTTP+SSE (2024-11-05, deprecated): against the official SDK's server (``--sse``), directly and
through the fallback of ``Client(url)``, and against a scripted SSE server for what a real server
won't do (a foreign endpoint, a dropped stream, error statuses).
"""
from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Dict, List

import pytest

from conftest import LONG, require_official_sdk
from sse_scripted import DROP, ScriptedSSEServer, Status
from mcpclient import AuthError, Client, ClientClosedError, ConnectError, ConnectionClosed, HTTPError, HTTPTransport, Handlers, ProtocolError, SSETransport, UnsupportedProtocolVersion

require_official_sdk()
from http_servers import official_http_server  # noqa: E402  (needs mcp)


@pytest.fixture(scope="module")
def sse_url():
    with official_http_server("--sse") as url:
        yield url


def _exercise(client: Client, updated: threading.Event, logged: threading.Event) -> None:
    assert client.server.name == "contract-official"
    tools = {t.name for t in client.list_tools()}
    assert {"echo", "add", "slow", "picture", "fail", "log", "touch"} <= tools
    assert client.call_tool("echo", {"text": "héllo"}).text == "héllo"
    assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"sum": 5}
    progress: List[Any] = []
    result = client.call_tool("slow", {"steps": 3, "delay": 0.01}, on_progress=lambda p, t, m: progress.append((p, t, m)))
    assert result.text == "done after 3 steps"
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert client.call_tool("log", {"level": "warning", "message": "over sse"}).text == "logged"
    assert logged.wait(LONG), "no notifications/message"
    [blob] = client.read_resource("test://blob")
    assert blob.blob == b"\x00\x01\x02\xff"
    assert client.get_prompt("greet", {"name": "x"}).messages[0].content.text == "Please greet x in a friendly way."
    assert client.complete("greet", "style", "f").values == ["formal", "friendly", "funny"]
    client.subscribe_resource("test://text")
    assert client.call_tool("touch", {"uri": "test://text"}).text == "touched"
    assert updated.wait(LONG), "no notifications/resources/updated"
    client.ping()


@pytest.mark.parametrize("how", ["transport", "fallback"])
def test_the_whole_api_over_http_sse(sse_url, how):
    logs: List[Any] = []
    updated, logged = threading.Event(), threading.Event()

    def on_notification(method: str, params: Dict[str, Any]) -> None:
        if method == "notifications/resources/updated" and params.get("uri") == "test://text":
            updated.set()

    def on_log(level: str, logger: Any, data: Any) -> None:
        logs.append((level, logger, data))
        logged.set()

    target = SSETransport(sse_url) if how == "transport" else sse_url
    with Client(target, timeout=LONG, handlers=Handlers(on_notification=on_notification, on_log=on_log)) as client:
        # the fallback: Streamable HTTP's initialize POST to /sse got 405, so HTTP+SSE was used
        assert type(client.transport).__name__ == "SSETransport"
        assert client.transport.endpoint.startswith(sse_url.rsplit("/", 1)[0] + "/messages/")
        _exercise(client, updated, logged)
        started = time.monotonic()
    assert time.monotonic() - started < 1.0, "close() with the event stream open took too long"
    assert logs == [("warning", "contract", "over sse")]


def test_close_is_fast_with_a_call_pending(sse_url):
    with Client(SSETransport(sse_url), timeout=LONG) as client:
        future = client.call_tool_future("slow", {"steps": 2, "delay": 5.0})
        started = time.monotonic()
    assert time.monotonic() - started < 1.0
    with pytest.raises(ClientClosedError):
        future.result(LONG)


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedSSEServer``, stopped after the test."""
    return lambda *args, **kwargs: started(ScriptedSSEServer(*args, **kwargs))


def echo(msg: Dict[str, Any]) -> Any:
    return {"content": [{"type": "text", "text": msg["params"]["arguments"]["text"]}]}


def test_an_endpoint_on_another_origin_is_refused(scripted):
    server = scripted(echo, endpoint="http://127.0.0.1:9/messages?session_id=s1")
    with pytest.raises(ProtocolError, match="endpoint origin does not match"):
        Client(SSETransport(server.url, auth="tok"), timeout=LONG).connect()
    assert server.requests("POST") == []  # nothing (and no token) went anywhere


@pytest.mark.parametrize("endpoint", ["https://127.0.0.1:{port}/messages", "http://localhost:{port}/messages"])
def test_scheme_and_host_count_in_the_origin(scripted, endpoint):
    server = scripted(echo)
    server.endpoint = endpoint.format(port=server.url.split(":")[2].split("/")[0])
    with pytest.raises(ProtocolError):
        Client(SSETransport(server.url), timeout=LONG).connect()


def test_a_relative_or_absolute_same_origin_endpoint_is_used(scripted):
    server = scripted(echo)
    server.endpoint = server.origin + "/messages?session_id=abs"
    with Client(SSETransport(server.url), timeout=LONG) as client:
        assert client.call_tool("echo", {"text": "a"}).text == "a"
        assert client.transport.endpoint == server.endpoint
    assert {path for _, path, _, _ in server.requests("POST")} == {"/messages?session_id=abs"}


def test_a_dropped_stream_fails_the_pending_call_promptly(scripted):
    server = scripted(lambda msg: DROP)
    with Client(SSETransport(server.url), timeout=LONG) as client:
        started = time.monotonic()
        with pytest.raises(ConnectionClosed):
            client.call_tool("echo", {"text": "a"})
        assert time.monotonic() - started < 2.0
        assert client._is_closed
        with pytest.raises(ConnectionClosed):
            client.ping()


def test_an_error_status_fails_that_call_only(scripted):
    def flaky(msg: Dict[str, Any]) -> Any:
        text = msg["params"]["arguments"]["text"]
        return {"bad": Status(500, b"internal trouble"), "denied": Status(403)}.get(text) or echo(msg)

    with Client(SSETransport(scripted(flaky).url), timeout=LONG) as client:
        with pytest.raises(HTTPError) as info:
            client.call_tool("echo", {"text": "bad"})
        assert info.value.status == 500 and "internal trouble" in str(info.value)
        with pytest.raises(AuthError):
            client.call_tool("echo", {"text": "denied"})
        assert client.call_tool("echo", {"text": "good"}).text == "good"


def test_headers_and_token_go_on_the_get_and_every_post_and_never_into_logs(scripted, caplog):
    caplog.set_level(logging.DEBUG)
    server = scripted(echo)
    with Client(server.url, timeout=LONG, auth="s3cret-token", headers={"X-Team": "a"}) as client:
        assert type(client.transport).__name__ == "SSETransport"
        client.call_tool("echo", {"text": "a"})
    # the 2026 probe and Streamable HTTP's initialize first, then the fallback
    assert [s[0] for s in server.seen][:3] == ["POST", "POST", "GET"]
    assert all(s[2]["authorization"] == "Bearer s3cret-token" and s[2]["x-team"] == "a" for s in server.seen)
    assert server.requests("GET")[0][2]["accept"] == "text/event-stream"
    assert all("s3cret-token" not in r.getMessage() for r in caplog.records)


def test_close_is_fast_on_a_connection_close_stream(scripted):
    server = scripted(echo)  # HTTP/1.0: no chunking, the stream ends with the connection
    with Client(SSETransport(server.url), timeout=LONG) as client:
        assert client.call_tool("echo", {"text": "a"}).text == "a"
        started = time.monotonic()
    assert time.monotonic() - started < 1.0


def test_a_silent_stream_outlives_the_connect_timeout(scripted):
    server = scripted(echo, silence=0.6)  # nothing on the stream for 0.6 s after the handshake
    with Client(SSETransport(server.url, connect_timeout=0.3), timeout=LONG) as client:
        time.sleep(0.6)
        assert client.call_tool("echo", {"text": "still here"}).text == "still here"


def test_no_fallback_for_a_user_supplied_transport(scripted):
    server = scripted(echo)
    with pytest.raises(ConnectError) as info:
        Client(HTTPTransport(server.url), timeout=LONG).connect()
    assert isinstance(info.value.__cause__, HTTPError) and info.value.__cause__.status == 405
    assert server.requests("GET") == []


def test_no_fallback_when_the_refusal_is_a_json_rpc_error(scripted):
    # a 400 with a JSON-RPC body comes from a Streamable HTTP server that refused us, not an old one
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32022, "message": "unsupported version"}}
    server = scripted(echo, mcp_status=400, mcp_body=json.dumps(error).encode())
    with pytest.raises(UnsupportedProtocolVersion):  # the server's own error, for the call that got it
        Client(server.url, timeout=LONG).connect()
    assert server.requests("GET") == []


def test_when_the_fallback_fails_too_the_first_error_is_raised_with_the_second_chained(scripted):
    server = scripted(echo, mcp_status=404, sse_status=404)
    with pytest.raises(ConnectError) as info:
        Client(server.url, timeout=LONG).connect()
    first = info.value.__cause__
    assert isinstance(first, HTTPError) and first.status == 404
    assert isinstance(first.__cause__, HTTPError) and "no stream here" in str(first.__cause__)
    assert [s[0] for s in server.seen] == ["POST", "POST", "GET"]  # the 2026 probe, initialize, the fallback


def test_the_fallback_transport_keeps_the_connection_number_in_its_thread_names(scripted):
    server = scripted(echo)
    client = Client(server.url, timeout=LONG)
    number = client.transport.info.instance
    with client:
        assert type(client.transport).__name__ == "SSETransport" and client.transport.info.instance == number
        client.call_tool("echo", {"text": "a"})
        names = {t.name for t in threading.enumerate()}
        assert f"mcpclient-{number}-sse" in names
        assert any(name.startswith(f"mcpclient-{number}-sse-post") for name in names)


def test_the_fallback_transport_keeps_the_users_session_and_retry_policy(scripted):
    """The fallback (``info.remake("fallback")``) builds the SSE transport with the user's ``session=`` (its headers,
    proxies, certificates and cookies survive the fallback) and ``retry=``."""
    import requests

    from mcpclient.policies.retry import Retry

    server = scripted(echo)
    session = requests.Session()
    session.headers["X-Through-Session"] = "yes"
    retry = Retry(total=5)
    try:
        transport = HTTPTransport(server.url, session=session, retry=retry, sse_fallback=True)
        with Client(transport, timeout=LONG) as client:
            assert type(client.transport).__name__ == "SSETransport"
            assert client.call_tool("echo", {"text": "a"}).text == "a"
            assert client.transport._connections.http is session and client.transport.retry is retry
        sent_to_sse = [s for s in server.seen if s[0] == "GET" or s[1].startswith("/messages")]
        assert sent_to_sse and all(s[2].get("x-through-session") == "yes" for s in sent_to_sse)
    finally:
        session.close()


def test_a_message_event_with_null_data_is_skipped_not_taken_for_the_end_of_the_stream(scripted):
    """``data: null`` does not reach the reader as ``None``, its end-of-stream value: the
    connection lives and the next call succeeds."""
    server = scripted(echo)
    with Client(SSETransport(server.url), timeout=LONG) as client:
        server.events.put(None)  # sent as "event: message / data: null", before the next answer
        assert client.call_tool("echo", {"text": "after null"}).text == "after null"
