"""The Streamable HTTP transport's fast path (``transports/_posters.py``): POSTs that go straight
to ``requests``' urllib3 pool when the transport owns its session, goes direct and follows no
redirects. Its own risks, against the scripted server on 127.0.0.1: which path is taken (a proxy
in the environment keeps ``requests``' path), server cookies kept and sent back, connections
reused only when their answer was read to the end, and failures mapped to the right error."""
from __future__ import annotations

import socket
import threading
import time
from typing import List

import pytest

from conftest import LONG, wait_until
from http_scripted import DROP, Reply, ScriptedHTTPServer
from mcpclient import AuthError, Client, ClientClosedError, ConnectError, ConnectionClosed, HTTPTransport, RequestTimeout
from mcpclient.policies.retry import Retry
from mcpclient.transports.http._posters import FastPoster
from mcpclient.transports.base import DeliveryFailed

MODERN = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
          "serverInfo": {"name": "scripted-2026", "version": "1"}}  # no GET stream: one connection at a time
NOTICE = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedHTTPServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedHTTPServer(handle, **kwargs))


def echo(seen, msg):
    return {"content": [{"type": "text", "text": msg["params"]["arguments"]["text"]}]}


def tools(seen, msg):
    return {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}


def started(url: str, **kwargs) -> HTTPTransport:
    transport = HTTPTransport(url, retry=Retry(total=0), **kwargs)
    transport.start()
    return transport


def test_the_fast_path_is_taken_only_when_the_transport_owns_a_direct_session(scripted):
    import requests

    url = scripted(echo).url
    for kwargs, fast in [({}, True), ({"session": requests.Session()}, False), ({"follow_redirects": True}, False)]:
        transport = started(url, **kwargs)
        try:
            assert isinstance(transport._poster, FastPoster) is fast, kwargs
            assert transport.send(NOTICE) is None  # and it works either way
        finally:
            transport.close()
            if "session" in kwargs:
                kwargs["session"].close()


def test_a_proxy_in_the_environment_takes_the_requests_path(scripted, monkeypatch):
    proxy = scripted(echo)  # answers as the endpoint would, and records the absolute URLs it is sent
    origin = proxy.url.rsplit("/", 1)[0]
    for name in ("no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", origin)
    monkeypatch.setenv("HTTP_PROXY", origin)
    url = "http://mcp.example.invalid/mcp"  # never resolved: only the proxy is connected to
    transport = HTTPTransport(url)
    with Client(transport, timeout=LONG) as client:
        assert not isinstance(transport._poster, FastPoster)
        assert client.call_tool("echo", {"text": "via proxy"}).text == "via proxy"
    posts = proxy.requests(http_method="POST")
    assert posts and all(seen.path == url for seen in posts)


def test_cookies_the_server_sets_are_kept_and_sent_back(scripted):
    def handle(seen, msg):
        text = msg["params"]["arguments"]["text"]
        result = {"jsonrpc": "2.0", "id": msg["id"], "result": echo(seen, msg)}
        return Reply(200, result, {"Set-Cookie": "lb=node-2; Path=/"}) if text == "first" else result["result"]

    server = scripted(handle)
    transport = HTTPTransport(server.url)
    with Client(transport, timeout=LONG, protocol="legacy") as client:
        assert isinstance(transport._poster, FastPoster)
        assert client.call_tool("echo", {"text": "first"}).text == "first"
        assert client.call_tool("echo", {"text": "second"}).text == "second"
        assert transport._connections.http.cookies.get("lb") == "node-2"  # in the session's jar, as requests keeps it
    first, second = server.requests("tools/call")
    assert "cookie" not in first.headers and second.headers["cookie"] == "lb=node-2"
    [delete] = server.requests(http_method="DELETE")  # (sent by requests itself: same jar)
    assert delete.headers["cookie"] == "lb=node-2"
    for seen in server.requests(http_method="POST"):  # the session's headers, each once, as requests sends them
        assert seen.headers["user-agent"].startswith("python-requests/")
        assert seen.headers["accept"] == "application/json, text/event-stream"
        assert seen.headers["content-type"] == "application/json"


def test_a_connection_is_reused_only_after_its_answer_was_read_to_the_end(scripted):
    # The first tools/list gets a 503 whose body is held back until the retry arrives: the client
    # drops that answer unread and retries. Were its connection reused, the retry would be
    # written to a connection whose answer is still to come (and no new connection would come
    # to release it: the test would fail on a garbled answer after 5 s).
    held = threading.Event()
    answered: List[object] = []

    def handle(seen, msg):
        if not answered:
            answered.append(seen)
            return Reply(503, b"busy" * 256, {"Retry-After": "0", "Content-Type": "text/plain"}, hold=held)
        held.set()
        return tools(seen, msg)

    server = scripted(handle, discover=MODERN)
    with Client(HTTPTransport(server.url), timeout=LONG) as client:
        assert [t.name for t in client.list_tools()] == ["echo"]
        assert [t.name for t in client.list_tools()] == ["echo"]
    first, retried, after = server.requests("tools/list")
    assert retried.peer != first.peer  # the connection with the unread answer was not handed on
    assert after.peer == retried.peer  # a connection whose answer was read is reused


def test_a_refused_or_hung_connect_is_a_connect_error(scripted):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now: connecting is refused
    transport = started(f"http://127.0.0.1:{port}/mcp")
    try:
        with pytest.raises(ConnectError):
            transport.send(NOTICE)
    finally:
        transport.close()

    server = scripted(echo, keep_alive=False)
    server.stop_accepting()  # a new connection hangs in connect
    transport = started(server.url, connect_timeout=0.3)
    try:
        began = time.monotonic()
        with pytest.raises(ConnectError, match="in 0.3 s"):
            transport.send(NOTICE)
        assert time.monotonic() - began < 0.3 + 2.0
    finally:
        transport.close(time.monotonic() + 0.5)


def test_a_failure_after_the_request_was_sent_is_connection_closed(scripted):
    release = threading.Event()

    def before(seen):
        if seen.rpc_method == "notifications/hold":
            release.wait(LONG)

    server = scripted(lambda seen, msg: DROP, before=before)
    transport = started(server.url)
    try:
        # the server hangs up without answering
        transport.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                        "params": {"name": "echo", "arguments": {}}}).post()  # (a poster thread exchanges it)
        failed = transport.receive()
        assert isinstance(failed, DeliveryFailed) and failed.request_id == 7
        assert type(failed.error) is ConnectionClosed
        # no answer within the read timeout
        with pytest.raises(ConnectionClosed, match="did not answer in time"):
            transport.send({"jsonrpc": "2.0", "method": "notifications/hold"}, deadline=time.monotonic() + 0.3)
        release.set()
        assert transport.send(NOTICE) is None  # the transport is still usable
    finally:
        release.set()
        transport.close()
    assert len(server.requests("tools/call")) == 1  # (Retry(total=0): sent once)


def test_a_bad_header_value_fails_without_being_quoted(scripted):
    import requests

    server = scripted(echo)
    for session in (None, requests.Session()):  # the fast path, and requests' (a user's session)
        transport = started(server.url, auth="s3cret\r\nX-Injected: 1", session=session)
        try:
            with pytest.raises(AuthError, match="'Authorization' header cannot be sent") as info:
                transport.send(NOTICE)
            assert "s3cret" not in str(info.value) and "Injected" not in str(info.value)
        finally:
            transport.close()
            if session is not None:
                session.close()
    assert server.requests(http_method="POST") == []



def test_https_keeps_requests_certificate_verification(scripted, certificate, monkeypatch):
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    server = scripted(echo, tls=certificate)
    transport = HTTPTransport(server.url, retry=Retry(total=0))
    with pytest.raises(ConnectError, match="SSLError"):  # self-signed: not in requests' CA bundle
        Client(transport, timeout=LONG, protocol="legacy").connect()
    assert isinstance(transport._poster, FastPoster)
    assert server.requests() == []

    monkeypatch.setenv("REQUESTS_CA_BUNDLE", certificate[0])  # read at start, as requests reads it
    transport = HTTPTransport(server.url)
    with Client(transport, timeout=LONG, protocol="legacy") as client:
        assert isinstance(transport._poster, FastPoster)
        assert client.call_tool("echo", {"text": "over TLS"}).text == "over TLS"


def test_a_blocking_call_posts_on_its_own_thread_and_a_future_hands_its_post_to_a_poster(scripted, monkeypatch):
    """A blocking method's caller runs its request's exchange itself (no poster thread is woken
    for it); a future's exchange is handed to a poster at once (nobody may wait for it)."""
    from mcpclient.transports.http.streamable import _Exchange

    posted: List[str] = []
    post = _Exchange.post
    monkeypatch.setattr(_Exchange, "post", lambda self: (posted.append(threading.current_thread().name), post(self)))
    server = scripted(lambda seen, msg: echo(seen, msg) if msg["method"] == "tools/call" else tools(seen, msg))
    with Client(HTTPTransport(server.url, retry=Retry(total=0)), protocol="2025-11-25", timeout=LONG) as client:
        client.list_tools()
        before = len(posted)
        for _ in range(3):
            assert client.call_tool("echo", {"text": "x"}).text == "x"
        assert len(posted) == before
        assert client.call_tool_future("echo", {"text": "y"}).result(LONG).text == "y"
        assert len(posted) == before + 1


def test_an_announced_call_waited_for_with_a_timeout_of_its_own_is_still_sent(scripted):
    """A wait with a timeout of its own never runs an exchange; one kept for the caller is then
    handed to a poster thread rather than left unsent."""
    from mcpclient._engine.deadline import Deadline
    from mcpclient._util.waiting import wait_for

    server = scripted(echo)
    with Client(HTTPTransport(server.url, retry=Retry(total=0)), protocol="2025-11-25", timeout=LONG) as client:
        got: List[object] = []

        def submit():
            future = client._session.call("tools/call", {"name": "echo", "arguments": {"text": "x"}},
                                          deadline=Deadline(LONG))
            got.append(future.result(timeout=LONG))
            return future

        wait_for(submit)
        assert got == [{"content": [{"type": "text", "text": "x"}]}]


def test_a_blocking_call_interrupted_before_its_post_ran_is_never_sent(scripted, monkeypatch):
    """Ctrl-C as the caller reaches ``result()``: the call is cancelled, and its POST, handed to
    a poster thread, is not sent after the cancel."""
    from mcpclient._engine.futures import CallFuture
    from mcpclient.transports.http.streamable import HTTPTransport as Streamable

    server = scripted(lambda seen, msg: echo(seen, msg) if msg["method"] == "tools/call" else tools(seen, msg))
    ran = threading.Event()
    request = Streamable._request

    def request_and_tell(self, *args, **kwargs):
        try:
            return request(self, *args, **kwargs)
        finally:
            ran.set()

    with Client(HTTPTransport(server.url, retry=Retry(total=0)), protocol="2025-11-25", timeout=LONG) as client:
        client.list_tools()  # (the tool is known: tools/call is the only request call_tool makes)
        monkeypatch.setattr(Streamable, "_request", request_and_tell)

        def interrupted(self, timeout):
            raise KeyboardInterrupt  # as the caller reaches result()

        wait = CallFuture._wait_here
        monkeypatch.setattr(CallFuture, "_wait_here", interrupted)
        with pytest.raises(KeyboardInterrupt):
            client.call_tool("echo", {"text": "x"})
        monkeypatch.setattr(CallFuture, "_wait_here", wait)
        assert ran.wait(LONG)  # a poster thread took the exchange
        assert server.requests("tools/call") == []


def test_a_blocking_client_posts_on_the_calling_thread_from_the_handshake_on(scripted):
    """The handshake, a call, and the listing that call makes to learn its tool's
    ``outputSchema``: all POSTed on the calling thread, so no transport thread is started."""
    server = scripted(lambda seen, msg: echo(seen, msg) if msg["method"] == "tools/call" else tools(seen, msg))
    with Client(HTTPTransport(server.url, retry=Retry(total=0)), protocol="2025-11-25", timeout=LONG) as client:
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        assert server.requests("tools/list")  # (it learned the tool)
        prefix = f"{client._channel.session._prefix}-http-"
        assert [t.name for t in threading.enumerate() if t.name.startswith(prefix) and t.name[-1].isdigit()] == []


def test_blocking_calls_that_time_out_before_their_wait_leave_no_request_in_flight(scripted):
    """A blocking call's exchange is left for its caller to run; a deadline that passed before
    the caller began to wait ends the call, and the exchange with it (nothing is sent, nothing
    is kept)."""
    server = scripted(echo)
    transport = HTTPTransport(server.url, retry=Retry(total=0))
    with Client(transport, protocol="2025-11-25", timeout=LONG) as client:
        for _ in range(20):
            with pytest.raises(RequestTimeout):
                client.request("tools/call", {"name": "echo", "arguments": {"text": "x"}}, timeout=0)
        assert transport._inflight._by_id == {}  # (what a deadline thread would walk on every wake)
        assert client.call_tool("echo", {"text": "y"}).text == "y"


def test_a_blocking_call_that_close_fails_before_its_wait_is_never_sent(scripted, monkeypatch):
    """``close()`` from another thread fails a blocking call whose exchange its caller has yet
    to run: the caller gets ``ClientClosedError`` and the server never sees the request."""
    from mcpclient._engine.futures import CallFuture

    server = scripted(lambda seen, msg: echo(seen, msg) if msg["method"] == "tools/call" else tools(seen, msg))
    transport = HTTPTransport(server.url, retry=Retry(total=0))
    client = Client(transport, protocol="2025-11-25", timeout=LONG).connect()
    client.list_tools()  # (the tool is known: tools/call is the only request call_tool makes)
    caller_done = threading.Event()
    close = transport.close

    def close_after_the_caller(deadline=None):  # the calls are failed; the transport closes later
        caller_done.wait(LONG)
        close(deadline)
    monkeypatch.setattr(transport, "close", close_after_the_caller)
    keep = CallFuture.keep_exchange
    closer: List[threading.Thread] = []

    def keep_then_close(self, exchange):
        keep(self, exchange)
        if self.method == "tools/call":
            closer.append(threading.Thread(target=client.close, name="test-closer"))
            closer[0].start()
            assert wait_until(lambda: not client._session.is_pending(self.request_id))
    monkeypatch.setattr(CallFuture, "keep_exchange", keep_then_close)
    try:
        with pytest.raises(ClientClosedError):
            client.call_tool("echo", {"text": "x"})
    finally:
        caller_done.set()
        for thread in closer:
            thread.join(LONG)
    assert server.requests("tools/call") == []
