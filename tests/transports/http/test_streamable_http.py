"""Streamable HTTP: against the official SDK's server (uvicorn on 127.0.0.1), in SSE and JSON
response modes, and against a scripted HTTP server for statuses a real server won't send."""
from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from typing import Any, Dict, List

import pytest

from conftest import LONG, require_official_sdk, wait_until
from http_scripted import DROP, SESSION_ID, Reply, ScriptedHTTPServer, sse
from mcpclient import AuthError, Client, ConnectError, ConnectionClosed, HTTPError, HTTPTransport, Handlers, ImageContent, RequestTimeout, SessionExpired
from mcpclient.policies.retry import Retry, parse_retry_after
from mcpclient.transports.http._reading import parse_sse

require_official_sdk()
from http_servers import official_http_server  # noqa: E402  (needs mcp)


@pytest.fixture(params=["sse", "json"])
def http_url(request):
    flags = ["--http"] + (["--json-response"] if request.param == "json" else [])
    with official_http_server(*flags) as url:
        yield request.param, url


def test_the_whole_api_over_streamable_http(http_url):
    mode, url = http_url
    with Client(url, timeout=LONG, protocol="2025-11-25") as client:
        assert client.server.name == "contract-official"
        assert client.server.protocol_version == "2025-11-25"
        assert client.transport.session_id
        tools = {t.name: t for t in client.list_tools()}
        assert {"echo", "add", "slow", "picture", "fail", "log"} <= set(tools)
        assert client.call_tool("echo", {"text": "héllo"}).text == "héllo"
        assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"sum": 5}
        picture = client.call_tool("picture")
        assert isinstance(picture.content[0], ImageContent) and picture.content[0].data.startswith(b"\x89PNG")
        assert client.call_tool("fail", {"message": "nope"}).is_error
        [blob] = client.read_resource("test://blob")
        assert blob.blob == b"\x00\x01\x02\xff"
        assert client.read_resource("test://greeting/bob")[0].text == "Hello, bob!"
        assert client.get_prompt("greet", {"name": "x"}).messages[0].content.text == "Please greet x in a friendly way."
        assert client.complete("greet", "style", "f").values == ["formal", "friendly", "funny"]
        client.set_logging_level("debug")
        client.ping()


def test_progress_and_logs_arrive_on_the_post_stream():
    seen: List[Any] = []
    logs: List[Any] = []
    got_log = threading.Event()

    def on_log(level: str, logger: Any, data: Any) -> None:
        logs.append((level, logger, data))
        got_log.set()

    with official_http_server("--http") as url:
        with Client(url, timeout=LONG, protocol="2025-11-25", handlers=Handlers(on_log=on_log)) as client:
            result = client.call_tool("slow", {"steps": 3, "delay": 0.01},
                                      on_progress=lambda p, t, m: seen.append((p, t, m)))
            assert result.text == "done after 3 steps"
            assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
            client.call_tool("log", {"level": "warning", "message": "over http"})
            assert got_log.wait(LONG)
    assert logs[0] == ("warning", "contract", "over http")


def test_resource_updates_reach_the_client(http_url):
    mode, url = http_url
    updated = threading.Event()

    def on_notification(method: str, params: Dict[str, Any]) -> None:
        if method == "notifications/resources/updated" and params.get("uri") == "test://text":
            updated.set()

    with Client(url, timeout=LONG, protocol="2025-11-25", handlers=Handlers(on_notification=on_notification)) as client:
        client.subscribe_resource("test://text")
        assert client.call_tool("touch", {"uri": "test://text"}).text == "touched"
        assert updated.wait(LONG), f"no resources/updated notification ({mode} mode)"


def test_32_threads_share_one_http_client():
    barrier = threading.Barrier(32)
    wrong: List[Any] = []
    with official_http_server("--http", "--json-response") as url:
        with Client(url, timeout=LONG) as client:
            def worker(k: int) -> None:
                barrier.wait(LONG)
                for i in range(20):
                    text = f"{k}:{i}"
                    got = client.call_tool("echo", {"text": text}).text
                    if got != text:
                        wrong.append((text, got))

            threads = [threading.Thread(target=worker, args=(k,)) for k in range(32)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            assert not any(t.is_alive() for t in threads)
    assert wrong == []


# ---------------------------------------------------------------- scripted server


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedHTTPServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedHTTPServer(handle, **kwargs))


def echo(seen, msg):
    return {"content": [{"type": "text", "text": msg["params"]["arguments"]["text"]}]}


def test_session_id_and_version_headers_are_sent_and_the_session_deleted_on_close(scripted):
    server = scripted(echo)
    with Client(server.url, timeout=LONG) as client:
        assert client.call_tool("echo", {"text": "a"}).text == "a"
    [call] = server.requests("tools/call")
    assert call.headers["mcp-session-id"] == SESSION_ID
    assert call.headers["mcp-protocol-version"] == "2025-11-25"
    assert call.headers["accept"] == "application/json, text/event-stream"
    [initialize] = server.requests("initialize")
    assert "mcp-session-id" not in initialize.headers
    [delete] = server.requests(http_method="DELETE")
    assert delete.headers["mcp-session-id"] == SESSION_ID


def test_bearer_token_from_a_string_or_a_provider_and_a_custom_header(scripted):
    server = scripted(echo)
    with Client(server.url, timeout=LONG, auth="s3cret") as client:
        client.call_tool("echo", {"text": "a"})
    assert {s.headers["authorization"] for s in server.requests()} == {"Bearer s3cret"}
    calls = []

    def provider() -> str:
        calls.append(1)
        return f"tok{len(calls)}"

    server2 = scripted(echo)
    with Client(HTTPTransport(server2.url, auth=provider, auth_header="X-Api-Key"), timeout=LONG) as client:
        client.call_tool("echo", {"text": "a"})
    keys = [s.headers.get("x-api-key") for s in server2.requests()]
    assert all(k and k.startswith("tok") for k in keys) and len(set(keys)) == len(keys)  # called per request


def test_a_users_requests_session_keeps_its_headers_auth_hooks_and_cookies(scripted):
    # A load balancer's sticky cookie set on one answer must come back on every later request,
    # and the Session's own headers, auth and response hooks apply to every POST.
    import requests

    def handle(seen, msg):
        text = msg["params"]["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}]}
        if text == "first":
            return Reply(200, {"jsonrpc": "2.0", "id": msg["id"], "result": result},
                         {"Set-Cookie": "lb=node-2; Path=/"})
        return result

    server = scripted(handle)
    http = requests.Session()
    http.headers["X-Team"] = "payments"
    http.auth = requests.auth.HTTPBasicAuth("svc", "pw")
    statuses: List[int] = []
    http.hooks["response"].append(lambda response, **kwargs: statuses.append(response.status_code))
    with Client(HTTPTransport(server.url, session=http, headers={"X-Trace": "t1"}), timeout=LONG) as client:
        assert client.call_tool("echo", {"text": "first"}).text == "first"
        assert client.call_tool("echo", {"text": "second"}).text == "second"
    first, second = server.requests("tools/call")
    assert "cookie" not in first.headers and second.headers["cookie"] == "lb=node-2"
    for seen in server.requests(http_method="POST"):
        assert seen.headers["x-team"] == "payments" and seen.headers["x-trace"] == "t1"
        assert seen.headers["authorization"].startswith("Basic ")
        assert seen.headers["content-type"] == "application/json"
    assert statuses.count(200) >= 3  # initialize and both calls went through the Session's hooks
    assert http.cookies.get("lb") == "node-2"
    http.close()


def test_401_is_an_auth_error_with_the_challenge_and_no_token(scripted, caplog):
    challenge = 'Bearer realm="mcp", resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'

    def deny(seen, msg):
        return Reply(401, b"", {"WWW-Authenticate": challenge})

    server = scripted(deny)
    caplog.set_level(logging.DEBUG)
    with Client(server.url, timeout=LONG, auth="top-secret-token") as client:
        with pytest.raises(AuthError) as info:
            client.call_tool("echo", {"text": "a"})
    assert info.value.status == 401 and info.value.www_authenticate == challenge
    assert info.value.challenge == {"scheme": "Bearer", "realm": "mcp",
                                    "resource_metadata": "http://127.0.0.1/.well-known/oauth-protected-resource"}
    assert "top-secret-token" not in str(info.value)
    assert all("top-secret-token" not in r.getMessage() for r in caplog.records)


def test_a_token_callable_is_asked_again_when_its_token_expired_between_fetch_and_use(scripted):
    """``auth=lambda: vault.token()``: the vault rotated the token after the request took it.
    The 401 makes the client ask once more and send the request again with the new token."""
    server = scripted(echo, authorization="Bearer fresh")

    def refused():
        return [s for s in server.seen if s.headers.get("authorization") == "Bearer stale"]

    def vault():  # (rotated once the server has refused the old token)
        return "fresh" if refused() else "stale"

    with Client(server.url, timeout=LONG, auth=vault) as client:
        assert client.call_tool("echo", {"text": "through"}).text == "through"
    assert len(refused()) == 1


def test_a_fixed_token_refused_with_401_is_not_sent_again(scripted):
    server = scripted(echo, authorization="Bearer right")
    with pytest.raises(AuthError):
        Client(server.url, timeout=LONG, auth="wrong").connect()
    assert len(server.seen) == 1


@pytest.mark.parametrize("status, advice", [(401, "auth="), (403, "scope")])
def test_an_auth_error_says_what_to_do(scripted, status, advice):
    with Client(scripted(lambda seen, msg: Reply(status, b"")).url, timeout=LONG) as client:
        with pytest.raises(AuthError) as info:
            client.call_tool("echo", {"text": "a"})
    assert f"answered HTTP {status}: " in str(info.value) and advice in str(info.value)


def test_an_error_status_fails_that_call_only(scripted):
    def flaky(seen, msg):
        if msg["params"]["arguments"]["text"] == "bad":
            return Reply(500, b"internal trouble", {"Content-Type": "text/plain"})
        return echo(seen, msg)

    with Client(scripted(flaky).url, timeout=LONG) as client:
        with pytest.raises(HTTPError) as info:
            client.call_tool("echo", {"text": "bad"})
        assert info.value.status == 500 and "internal trouble" in str(info.value)
        assert client.call_tool("echo", {"text": "good"}).text == "good"


def test_redirects_are_refused_by_default(scripted):
    def redirect(seen, msg):
        return Reply(307, b"", {"Location": "http://127.0.0.1:9/elsewhere"})

    server = scripted(redirect)
    with Client(server.url, timeout=LONG, auth="tok") as client:
        with pytest.raises(HTTPError) as info:
            client.call_tool("echo", {"text": "a"})
    assert info.value.status == 307 and "refused" in str(info.value)
    assert len(server.requests("tools/call")) == 1


def test_a_server_that_is_not_there_is_a_connect_error():
    with pytest.raises(ConnectError):
        Client("http://127.0.0.1:9/mcp", timeout=LONG).connect()


def test_a_stream_cut_before_the_answer_is_resumed_once_with_last_event_id(scripted):
    """2025-11-25 polling: priming event with an id, retry: 300, the stream ends; the client waits
    the retry delay, GETs with Last-Event-ID, and the answer arrives exactly once."""
    answered = []

    def cut(seen, msg):
        answered.append(msg["id"])
        return sse({"id": "ev-1", "retry": 300, "data": ""})

    def resume(seen):
        if "last-event-id" not in seen.headers:
            return Reply(405)  # no standalone GET stream on this server
        rid = answered[-1]
        return sse({"id": "ev-2", "data": {"jsonrpc": "2.0", "id": rid,
                                           "result": {"content": [{"type": "text", "text": "resumed"}]}}})

    server = scripted(cut, on_get=resume)
    # validate_output="listed": this server cuts every stream, a first call's tools/list too
    with Client(HTTPTransport(server.url), timeout=LONG, validate_output="listed") as client:
        sent = time.monotonic()
        assert client.call_tool("echo", {"text": "x"}).text == "resumed"
        waited = time.monotonic() - sent
    gets = [g for g in server.requests(http_method="GET") if "last-event-id" in g.headers]
    assert [g.headers["last-event-id"] for g in gets] == ["ev-1"]
    assert 0.3 <= waited < 2.0
    assert client._session.unknown_replies == 0 and client._session.late_replies == 0


def test_a_stream_cut_without_an_event_id_fails_that_call(scripted):
    def cut(seen, msg):
        return sse({"event": "message", "data": {"jsonrpc": "2.0", "method": "notifications/message",
                                                 "params": {"level": "info", "data": "x"}}})

    with Client(scripted(cut).url, timeout=LONG) as client:
        with pytest.raises(ConnectionClosed, match="no event id"):
            client.call_tool("echo", {"text": "x"})


@pytest.mark.parametrize("chunk", [1, 3, 1000])
def test_sse_parser_handles_any_chunking_crlf_comments_and_data_less_events(chunk):
    raw = (b": comment\r\nid: 7\r\nretry: 250\r\n\r\n"
           b"event: message\ndata: {\"a\":\ndata: 1}\n\n"
           b"data: tail-without-blank-line")
    pieces = [raw[i:i + chunk] for i in range(0, len(raw), chunk)]
    events = list(parse_sse(pieces))
    assert [(e.id, e.retry, e.data) for e in events] == [("7", 250, None), (None, None, '{"a":\n1}')]


@pytest.mark.parametrize("ending", [b"\r", b"\r\n", b"\n"], ids=["CR", "CRLF", "LF"])
@pytest.mark.parametrize("chunk", [1, 2, 1000])
def test_sse_parser_ends_lines_at_cr_crlf_and_lf_whatever_the_chunking(ending, chunk):
    raw = ending.join([b"id: 7", b"retry: 250", b"", b"data: {\"a\":", b"data: 1}", b"", b"data: x", b"", b""])
    pieces = [raw[i:i + chunk] for i in range(0, len(raw), chunk)]
    events = list(parse_sse(pieces))
    assert [(e.id, e.retry, e.data) for e in events] == [("7", 250, None), (None, None, '{"a":\n1}'), (None, None, "x")]


def test_a_call_answered_by_an_event_stream_with_cr_line_endings_succeeds(scripted):
    def cr_only(seen, msg):
        if msg["method"] == "tools/list":
            return {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        answer = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": "cr"}]}})
        return Reply(200, f"event: message\rdata: {answer}\r\r".encode(), {"Content-Type": "text/event-stream"})

    with Client(scripted(cr_only).url, protocol="legacy", timeout=LONG) as client:
        assert client.call_tool("echo", {}).text == "cr"


# ---------------------------------------------------------------- retries


def fail_first(status_or_drop, headers=None):
    """A handler failing the first request of each method with ``status_or_drop``, then answering."""
    tries: Dict[str, int] = {}

    def handle(seen, msg):
        tries[msg["method"]] = tries.get(msg["method"], 0) + 1
        if tries[msg["method"]] == 1:
            return status_or_drop if isinstance(status_or_drop, Reply) else Reply(status_or_drop, b"busy", headers)
        if msg["method"] == "tools/list":
            return {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        return echo(seen, msg)
    return handle


def test_503_with_retry_after_is_retried_once_after_the_delay(scripted):
    server = scripted(fail_first(503, {"Retry-After": "1"}))
    with Client(server.url, timeout=LONG) as client:
        started = time.monotonic()
        assert [t.name for t in client.list_tools()] == ["echo"]
        assert time.monotonic() - started >= 1.0
    assert len(server.requests("tools/list")) == 2


def test_a_request_cancelled_while_its_retry_waits_is_never_sent_again(scripted):
    server = scripted(fail_first(503, {"Retry-After": "1"}))
    with Client(server.url, timeout=LONG) as client:
        future = client.request_future("tools/list")
        assert wait_until(lambda: len(server.requests("tools/list")) == 1)  # refused; the retry waits 1 s
        assert future.cancel()
        assert not wait_until(lambda: len(server.requests("tools/list")) > 1, 2.0)
        assert client.request("tools/list")["tools"][0]["name"] == "echo"  # (the next one is sent)


def test_a_tool_call_is_not_retried_after_503_unless_opted_in(scripted):
    server = scripted(fail_first(503, {"Retry-After": "0"}))
    with Client(server.url, timeout=LONG) as client:
        with pytest.raises(HTTPError) as info:
            client.call_tool("echo", {"text": "a"})
    assert info.value.status == 503 and len(server.requests("tools/call")) == 1
    server2 = scripted(fail_first(503, {"Retry-After": "0"}))
    with Client(HTTPTransport(server2.url, retry=Retry(retry_tool_calls=True)), timeout=LONG) as client:
        assert client.call_tool("echo", {"text": "again"}).text == "again"
    assert len(server2.requests("tools/call")) == 2


def test_an_http_error_carries_the_status_headers_body_and_retry_after_and_says_it_is_retryable(scripted):
    """What a Celery task's ``self.retry(countdown=...)``, tenacity or Sentry needs, as attributes."""
    def busy(seen, msg):
        if msg["method"] == "tools/list":
            return {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        return Reply(503 if msg["params"]["arguments"]["text"] == "busy" else 400, b"busy now, come back later",
                     {"Retry-After": "7", "Set-Cookie": "sid=secret-cookie-value", "Content-Type": "text/plain"})

    with Client(scripted(busy).url, timeout=LONG) as client:
        with pytest.raises(HTTPError) as info:
            client.call_tool("echo", {"text": "busy"})
        with pytest.raises(HTTPError) as refused:
            client.call_tool("echo", {"text": "bad"})
    error = info.value
    assert error.status == 503 and error.retryable and error.retry_after == 7.0
    assert error.body == "busy now, come back later" and error.headers["retry-after"] == "7"
    assert "set-cookie" not in error.headers and "secret-cookie-value" not in repr(error.__dict__)
    assert refused.value.status == 400 and not refused.value.retryable


def test_a_connection_reset_after_a_tool_call_was_sent_is_not_retried(scripted):
    server = scripted(fail_first(DROP))
    with Client(server.url, timeout=LONG) as client:
        with pytest.raises(ConnectionClosed):
            client.call_tool("echo", {"text": "a"})
        assert client.call_tool("echo", {"text": "b"}).text == "b"  # the client is still usable
    assert len(server.requests("tools/call")) == 2  # one dropped, one answered: no hidden retry


def test_a_connection_reset_on_a_safe_request_is_retried(scripted):
    server = scripted(fail_first(DROP))
    with Client(server.url, timeout=LONG) as client:
        assert [t.name for t in client.list_tools()] == ["echo"]
    assert len(server.requests("tools/list")) == 2


def test_a_retry_after_beyond_the_limit_is_not_waited_for(scripted):
    server = scripted(fail_first(429, {"Retry-After": "3600"}))
    with Client(server.url, timeout=LONG) as client:
        with pytest.raises(HTTPError) as info:
            client.list_tools()
    assert info.value.status == 429 and len(server.requests("tools/list")) == 1


def test_retry_after_parsing_and_the_value_object():
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("soon") is None
    policy = Retry(total=1)
    assert policy.replace(total=3).total == 3 and policy.total == 1
    # idempotent=None: a request with side effects (tools/call); True: a safe one (resources/read)
    assert policy.may_repeat(None, reached_server=False)
    assert not policy.may_repeat(None, reached_server=True)
    assert policy.may_repeat(True, reached_server=True)
    assert not policy.increment("HTTP 503").may_repeat(True, reached_server=True)  # the second failure
    assert policy.total == 1  # increment() made a new value
    assert policy.delay("2") == 2.0 and policy.delay("99999") is None
    with pytest.raises(Exception):
        policy.total = 5  # frozen


# ---------------------------------------------------------------- session expiry


def test_an_expired_session_is_renewed_and_a_safe_call_repeated_once(scripted):
    changes = []
    server = scripted(lambda seen, msg: {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
    transport = HTTPTransport(server.url, on_session_change=lambda old, new: changes.append((old, new)))
    with Client(transport, timeout=LONG) as client:
        assert [t.name for t in client.list_tools()] == ["echo"]
        server.expire_sessions()
        assert [t.name for t in client.list_tools()] == ["echo"]  # renewed, then repeated
        assert transport.session_id == "scripted-session-2"
    lists = server.requests("tools/list")
    assert [s.headers["mcp-session-id"] for s in lists] == [SESSION_ID, SESSION_ID, "scripted-session-2"]
    assert len(server.requests("initialize")) == 2
    assert changes == [(SESSION_ID, "scripted-session-2")]


def test_an_expired_session_does_not_repeat_a_tool_call(scripted):
    server = scripted(echo)
    # validate_output="listed": a first call's tools/list would renew the session first
    with Client(server.url, timeout=LONG, validate_output="listed") as client:
        server.expire_sessions()
        with pytest.raises(SessionExpired, match="not safe to repeat"):
            client.call_tool("echo", {"text": "once"})
        assert client.call_tool("echo", {"text": "next"}).text == "next"  # the new session works
    calls = server.requests("tools/call")
    assert [c.headers["mcp-session-id"] for c in calls] == [SESSION_ID, "scripted-session-2"]


def test_without_reconnect_an_expired_session_fails_the_call(scripted):
    server = scripted(echo)
    with Client(HTTPTransport(server.url, reconnect=False), timeout=LONG) as client:
        server.expire_sessions()
        with pytest.raises(SessionExpired):
            client.ping()
    assert len(server.requests("initialize")) == 1


def test_a_slow_call_times_out_while_concurrent_calls_go_on(scripted):
    release = threading.Event()

    def slow_or_fast(seen, msg):
        if msg["params"]["arguments"]["text"] == "slow":
            release.wait(LONG)
        return echo(seen, msg)

    with Client(scripted(slow_or_fast).url, timeout=LONG) as client:
        try:
            slow = client.call_tool_future("echo", {"text": "slow"}, timeout=0.5)
            assert [client.call_tool("echo", {"text": str(i)}).text for i in range(5)] == [str(i) for i in range(5)]
            assert isinstance(slow.exception(LONG), RequestTimeout)
        finally:
            release.set()


def test_a_custom_auth_header_may_follow_redirects_since_cross_origin_hops_strip_it():
    """A token in a header other than Authorization is accepted with follow_redirects: the
    redirect policy strips every credential on a cross-origin hop
    (tests/transports/http/test_redirects.py), not only Authorization as ``requests`` does.
    Constructing the transports without an error is the check."""
    from mcpclient.auth import BearerToken

    HTTPTransport("http://127.0.0.1:9/mcp", auth="t", auth_header="X-Api-Key", follow_redirects=True)
    HTTPTransport("http://127.0.0.1:9/mcp", auth=BearerToken("t", header="X-API-Key"), follow_redirects=True)


def test_a_blocking_call_answered_on_another_stream_returns_while_the_resumed_stream_stays_open(scripted):
    """The answer came on the standing GET stream, while
    the GET that resumed the call's stream stays open; the caller must not be kept reading it."""
    posted, release = threading.Event(), threading.Event()
    calls: List[Any] = []

    def cut(seen, msg):
        calls.append(msg["id"])
        posted.set()
        return sse({"id": "ev-1", "retry": 100, "data": ""})

    def on_get(seen):
        if "last-event-id" in seen.headers:  # the resumption: stays open, says nothing
            release.wait(LONG)
            return sse()
        if not posted.wait(LONG):  # the standing GET: carries the answer once the call was made
            return sse()
        return sse({"data": {"jsonrpc": "2.0", "id": calls[-1],
                             "result": {"content": [{"type": "text", "text": "via GET"}]}}})

    server = scripted(cut, on_get=on_get)
    try:
        # This scripted GET sends its headers only with its event: connect() waits connect_timeout
        # for them (so nothing the server sends there is lost), hence the short one here.
        # (validate_output="listed": this server answers every POST with a cut stream, tools/list too)
        with Client(HTTPTransport(server.url, connect_timeout=0.5), timeout=LONG, validate_output="listed") as client:
            started = time.monotonic()
            assert client.call_tool("echo", {"text": "x"}).text == "via GET"
            assert time.monotonic() - started < 3.0
    finally:
        release.set()


def test_a_fresh_discover_result_is_reused_by_the_next_client_and_routing_headers_are_sent(scripted):
    discover = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted-2026", "version": "1"}, "ttlMs": 60000, "cacheScope": "public"}
    server = scripted(echo, discover=discover)
    for _ in range(2):
        with Client(server.url, timeout=LONG) as client:
            assert client.server.protocol_version == "2026-07-28" and client.server.name == "scripted-2026"
            assert client.call_tool("echo", {"text": "a b"}).text == "a b"
    assert len(server.requests("server/discover")) == 1  # the second client reused it (ttlMs)
    call = server.requests("tools/call")[0]
    assert (call.headers["mcp-method"], call.headers["mcp-name"]) == ("tools/call", "echo")
    assert call.headers["mcp-protocol-version"] == "2026-07-28"
    assert call.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert server.requests("initialize") == [] and server.requests(http_method="GET") == []


# ---------------------------------------------------------------- session renewal and close() against a scripted server


def list_tools_handler(seen, msg):
    return {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}


def held_renewal(n_during: int):
    """A ``before`` hook that holds the session's renewal (the second ``initialize``) until
    ``n_during`` other requests arrived meanwhile; returns (hook, renewing, release, during)."""
    renewing, release = threading.Event(), threading.Event()
    during: List[Any] = []
    lock = threading.Lock()
    initializes = []

    def before(seen):
        if seen.rpc_method == "initialize":
            with lock:
                initializes.append(seen)
                renewal = len(initializes) == 2
            if renewal:
                renewing.set()
                release.wait(LONG)
            return
        if renewing.is_set() and not release.is_set():
            with lock:
                during.append(seen)
                if len(during) >= n_during:
                    release.set()
    return before, renewing, release, during


def test_calls_made_while_an_expired_session_is_renewed_wait_for_it_and_succeed(scripted):
    """The old id stays in use until the new session is ready: calls made during the renewal
    meet a 404 too, wait for the one renewal, and are repeated in the new session. (Were the id
    cleared first, those calls would go out with no session id and this server, which requires
    one, would refuse them with 400: each would fail instead of waiting for the renewal.)"""
    n = 12
    before, renewing, release, during = held_renewal(n)
    server = scripted(list_tools_handler, before=before, require_session=True)
    results: Dict[Any, Any] = {}

    with Client(server.url, timeout=LONG) as client:
        def call(key: Any) -> None:
            try:
                results[key] = [t.name for t in client.list_tools()]
            except Exception as exc:  # recorded: the assertion below names it
                results[key] = exc

        assert [t.name for t in client.list_tools()] == ["echo"]
        server.expire_sessions()
        first = threading.Thread(target=call, args=("first",))
        first.start()  # meets the 404 and starts the renewal, which the server holds
        try:
            assert renewing.wait(LONG)
            others = [threading.Thread(target=call, args=(k,)) for k in range(n)]
            for t in others:
                t.start()
            for t in others + [first]:
                t.join(LONG)
        finally:
            release.set()
        assert not any(t.is_alive() for t in others + [first])
        assert results == {k: ["echo"] for k in ["first", *range(n)]}
        assert client.transport.session_id == "scripted-session-2"
    assert len(during) == n and all(s.headers.get("mcp-session-id") == SESSION_ID for s in during)
    assert len(server.requests("initialize")) == 2  # one renewal for all 13 callers
    lists = server.requests("tools/list")
    assert all("mcp-session-id" in s.headers for s in lists)
    assert sum(s.headers["mcp-session-id"] == "scripted-session-2" for s in lists) == n + 1


def test_a_call_waiting_for_a_session_renewal_gives_up_at_its_own_deadline(scripted):
    """The wait for another thread's renewal is bounded by the waiting call's own timeout."""
    before, renewing, release, _ = held_renewal(10 ** 6)  # the renewal is held until released
    server = scripted(list_tools_handler, before=before, require_session=True)
    with Client(server.url, timeout=LONG) as client:
        client.list_tools()
        server.expire_sessions()
        first = threading.Thread(target=client.list_tools)
        first.start()
        try:
            assert renewing.wait(LONG)
            started = time.monotonic()
            with pytest.raises(RequestTimeout):
                client.list_tools(timeout=0.5)
            waited = time.monotonic() - started
        finally:
            release.set()
        first.join(LONG)
    assert 0.4 <= waited < 2.0


def test_close_is_bounded_when_the_servers_delete_cannot_connect(scripted):
    """close() shares one deadline (CLOSE_BUDGET) across every step, the DELETE's connect
    included (the DELETE has no connect timeout of its own)."""
    from mcpclient.transports.base import CLOSE_BUDGET

    server = scripted(echo, keep_alive=False)  # no pooled connection: the DELETE must connect anew
    client = Client(server.url, timeout=LONG, protocol="legacy").connect()
    try:
        assert client.call_tool("echo", {"text": "a"}).text == "a"
    finally:
        server.stop_accepting()  # from now on a connect hangs (the kernel drops the SYN)
        started = time.monotonic()
        client.close()
        took = time.monotonic() - started
    assert took < CLOSE_BUDGET + 0.5, f"close() took {took:.1f} s"
    assert server.requests(http_method="DELETE") == []  # (it never got through)


def test_retry_is_a_value_each_increment_a_new_one():
    policy = Retry(total=2, backoff_factor=0.1)
    first = policy.increment("HTTP 503")
    second = first.increment("ConnectionClosed")
    assert (policy.total, first.total, second.total) == (2, 1, 0)
    assert policy.history == () and second.history == ("HTTP 503", "ConnectionClosed")
    assert not second.may_repeat(None, reached_server=False)  # exhausted: not even a refused connect
    with pytest.raises(ValueError):
        second.increment("again")
    assert 0.05 <= first.delay() <= 0.1 and 0.1 <= second.delay() <= 0.2  # 0.1 * 2**(n-1), jittered
    assert Retry(retry_tool_calls=True).may_repeat(None, reached_server=True)
    assert not Retry(retry_tool_calls=True).may_repeat(False, reached_server=True)  # never: False
    assert Retry() == Retry() and hash(Retry()) == hash(Retry())


# --- a blocking call's own deadline and close() ------------------------------------


def test_a_blocking_call_answered_with_a_stream_keeps_its_own_timeout(scripted):
    """A blocking call answered with an SSE stream keeps its own timeout: each read does not get
    the whole timeout again, so a stream that trickles log events ends ``call_tool(timeout=1)`` at
    its timeout, not at the stream's end."""
    def handle(seen, msg):
        log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "tick"}}
        body = sse(*[{"event": "message", "data": log}] * 8, {"event": "message", "data": {
            "jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": "late"}]}}})
        body.pace = 0.4  # an event every 0.4 s: the answer comes after ~3.2 s
        return body

    server = scripted(handle, keep_alive=False)
    with Client(server.url, timeout=LONG, handlers=Handlers(on_log=lambda *a: None)) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", {}, timeout=1.0)
        assert time.monotonic() - started < 2.0


def test_close_wakes_a_blocking_call_without_a_timeout_still_waiting_for_its_answer(scripted):
    """A blocking call with ``timeout=None`` still waiting for the answer's headers is woken by
    ``close()``: it does not stay blocked until the server answers."""
    release, called = threading.Event(), threading.Event()

    def handle(seen, msg):
        called.set()
        release.wait(LONG)
        return {"content": []}

    server = scripted(handle)
    outcome: Dict[str, Any] = {}
    client = Client(server.url, timeout=None).connect()

    def caller() -> None:
        try:
            client.call_tool("slow", {})
        except Exception as exc:  # noqa: BLE001 - asserted below
            outcome["error"] = exc

    thread = threading.Thread(target=caller)
    thread.start()
    try:
        assert called.wait(LONG)
        client.close()
        thread.join(3.0)
        assert not thread.is_alive(), "the caller is still blocked after close()"
        assert type(outcome.get("error")).__name__ == "ClientClosedError", outcome
    finally:
        release.set()
        thread.join(LONG)


def _socket_fds() -> set:
    fds = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                fds.add(fd)
        except OSError:  # (the listing's own descriptor, gone by now)
            pass
    return fds


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
def test_close_closes_the_pooled_connections_without_waiting_for_the_garbage_collector(http_url):
    """urllib3 2.8's PoolManager.clear() (called by Session.close()) does not close its pools:
    close() closes the keep-alive connection itself, rather than leaving it open until the client
    is collected."""
    _, url = http_url
    before = _socket_fds()
    client = Client(url)
    client.connect()
    client.list_tools()
    client.close()
    assert _socket_fds() - before == set()
    del client
