"""OAuth against an authorization server and an MCP server the test runs on 127.0.0.1 (the full
flow — PRM, AS metadata, registration, PKCE code flow, token, bearer — is also exercised by the
conformance suite's 42 auth/* runs in CI): one flow for many threads, nothing secret in logs,
refusal of metadata for another resource."""
from __future__ import annotations

import base64
import hashlib
import json
import logging
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List
from urllib.parse import parse_qs, urlsplit

import pytest

from mcpclient import AuthError, Client
from mcpclient.auth import (AuthorizationCode, ClientCredentials, FileTokenStore, OAuth, headless_authorize,
                            loopback_authorize)

from conftest import LONG

SECRET_TOKEN = "tok-very-secret-123"


class AuthWorld:
    """An authorization server and an MCP server requiring its tokens, on one loopback port."""

    def __init__(self, resource_path: str = "/mcp", expires_in: int = 3600, as_dpop: bool = False,
                 resource_dpop: Dict[str, Any] = {}, scheme: str = "Bearer") -> None:  # noqa: B006
        """``as_dpop``: the authorization server offers ES256 DPoP proofs (node's oidc-provider does
        by default); ``resource_dpop``: what the protected resource's metadata says of DPoP;
        ``scheme``: the MCP endpoint's challenge scheme. It takes ``Authorization: Bearer`` only,
        as the official SDK's check does."""
        self.token_requests: List[Dict[str, str]] = []
        self.token_proofs: List[bool] = []  # whether each token request carried a DPoP proof
        self.authorizations: List[Dict[str, str]] = []
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.release.set()
        self.events: "queue.SimpleQueue[Any]" = queue.SimpleQueue()  # what the SSE stream sends next
        self.refuse_messages = 0  # how many more /messages POSTs get a 401 (the token was revoked)
        world = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def reply(self, status: int, body: Any = None, headers: Dict[str, str] = {}) -> None:  # noqa: B006
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                base = world.base
                path = urlsplit(self.path).path
                if path == "/.well-known/oauth-protected-resource/mcp":
                    self.reply(200, {"resource": base + resource_path, "authorization_servers": [base],
                                     **resource_dpop})
                elif path == "/.well-known/oauth-protected-resource/sse":
                    self.reply(200, {"resource": base + "/sse", "authorization_servers": [base]})
                elif path == "/sse":  # the legacy HTTP+SSE transport, behind the same tokens
                    if self.headers.get("Authorization") != f"Bearer {SECRET_TOKEN}":
                        self.reply(401, {"error": "invalid_token"}, {"WWW-Authenticate": (
                            f'Bearer resource_metadata="{world.base}/.well-known/oauth-protected-resource/sse"')})
                        return
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    self.wfile.write(b"event: endpoint\ndata: /messages\n\n")
                    self.wfile.flush()
                    while True:
                        event = world.events.get()
                        if event is None:
                            return
                        self.wfile.write(b"event: message\ndata: " + json.dumps(event).encode() + b"\n\n")
                        self.wfile.flush()
                elif path == "/.well-known/oauth-authorization-server":
                    self.reply(200, {"issuer": base, "authorization_endpoint": base + "/authorize",
                                     "token_endpoint": base + "/token", "registration_endpoint": base + "/register",
                                     "code_challenge_methods_supported": ["S256"],
                                     "token_endpoint_auth_methods_supported": ["none"],
                                     "authorization_response_iss_parameter_supported": True,
                                     **({"dpop_signing_alg_values_supported": ["ES256"]} if as_dpop else {})})
                elif path == "/authorize":
                    query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                    world.authorizations.append(query)
                    self.reply(302, None, {"Location": f"{query['redirect_uri']}?code=c1&state={query['state']}"
                                                       f"&iss={base}"})
                else:
                    self.reply(404, {"error": "not found"})

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = urlsplit(self.path).path
                if path == "/register":
                    self.reply(201, {"client_id": "registered-1"})
                elif path == "/token":
                    fields = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                    with world.lock:
                        world.token_requests.append(fields)
                        world.token_proofs.append("DPoP" in self.headers)
                    world.release.wait(LONG)
                    lifetime = 3600 if fields.get("grant_type") == "refresh_token" else expires_in
                    self.reply(200, {"access_token": SECRET_TOKEN, "token_type": "Bearer", "expires_in": lifetime,
                                     "refresh_token": "refresh-secret-456"})
                elif path == "/messages":
                    with world.lock:
                        refuse = world.refuse_messages > 0
                        world.refuse_messages -= refuse
                    if refuse or self.headers.get("Authorization") != f"Bearer {SECRET_TOKEN}":
                        self.reply(401, {"error": "invalid_token"}, {"WWW-Authenticate": (
                            f'Bearer error="invalid_token", resource_metadata="{world.base}'
                            '/.well-known/oauth-protected-resource/sse"')})
                        return
                    msg = json.loads(raw)
                    self.reply(202)
                    if "id" in msg and msg.get("method") == "initialize":
                        world.events.put({"jsonrpc": "2.0", "id": msg["id"], "result": {
                            "protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                            "serverInfo": {"name": "guarded-sse", "version": "1"}}})
                    elif "id" in msg and msg.get("method") == "tools/call":
                        world.events.put({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [
                            {"type": "text", "text": msg["params"]["arguments"]["text"]}]}})
                    elif "id" in msg and msg.get("method") == "tools/list":  # (a first call lists the tools to learn their outputSchema)
                        world.events.put({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [
                            {"name": "echo", "inputSchema": {"type": "object"}}]}})
                elif path == "/mcp":
                    if self.headers.get("Authorization") != f"Bearer {SECRET_TOKEN}":
                        self.reply(401, {"error": "invalid_token"}, {"WWW-Authenticate": (
                            f'{scheme} error="invalid_token", resource_metadata="{world.base}'
                            '/.well-known/oauth-protected-resource/mcp"')})
                        return
                    msg = json.loads(raw)
                    if "id" not in msg:
                        self.reply(202)
                    elif msg["method"] == "initialize":
                        self.reply(200, {"jsonrpc": "2.0", "id": msg["id"], "result": {
                            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                            "serverInfo": {"name": "guarded", "version": "1"}}})
                    elif msg["method"] == "tools/call":
                        text = msg["params"]["arguments"]["text"]
                        self.reply(200, {"jsonrpc": "2.0", "id": msg["id"],
                                         "result": {"content": [{"type": "text", "text": text}]}})
                    else:
                        self.reply(200, {"jsonrpc": "2.0", "id": msg["id"],
                                         "error": {"code": -32601, "message": "no such method"}})
                else:
                    self.reply(404, {"error": "not found"})

        class Server(ThreadingHTTPServer):
            request_queue_size = 64  # 16 threads connect at once (the default backlog of 5 resets some)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="test-auth-world", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.release.set()
        self.events.put(None)
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(LONG)


@pytest.fixture
def world():
    worlds: List[AuthWorld] = []

    def make(**kwargs: Any) -> AuthWorld:
        worlds.append(AuthWorld(**kwargs))
        return worlds[-1]

    yield make
    for w in worlds:
        w.stop()


def test_the_code_flow_with_pkce_and_no_secret_in_any_log(world, caplog):
    w = world()
    caplog.set_level(logging.DEBUG)
    oauth = OAuth(AuthorizationCode(headless_authorize()))
    with Client(w.base + "/mcp", timeout=LONG, protocol="legacy", auth=oauth) as client:
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    [token_request] = w.token_requests
    [authorization] = w.authorizations
    assert authorization["code_challenge_method"] == "S256" and authorization["resource"] == w.base + "/mcp"
    verifier = token_request["code_verifier"]
    assert base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode() == \
        authorization["code_challenge"]
    assert token_request["grant_type"] == "authorization_code" and token_request["client_id"] == "registered-1"
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "authorized with" in logged
    for secret in (SECRET_TOKEN, verifier, "code=c1"):  # (state and code_challenge are not secrets)
        assert secret not in logged


def sixteen_calls(client: Client, w: "AuthWorld") -> List[str]:
    """16 threads released together each call echo; the token endpoint (held by the test) answers
    a little later, so they all meet the missing or expired token at once. Their answers."""
    results: List[str] = []
    barrier = threading.Barrier(16)

    def call(n: int) -> None:
        barrier.wait(LONG)
        results.append(client.call_tool("echo", {"text": str(n)}).text)

    threads = [threading.Thread(target=call, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    threading.Timer(0.3, w.release.set).start()
    for t in threads:
        t.join(LONG)
    assert not any(t.is_alive() for t in threads)
    return results


def test_sixteen_threads_meeting_a_401_cause_one_token_request(world):
    w = world()
    oauth = OAuth(AuthorizationCode(headless_authorize()))
    with Client(w.base + "/mcp", timeout=LONG, protocol="legacy", auth=oauth) as client:
        client.call_tool("echo", {"text": "warm"})  # (the handshake itself went through one flow)
        oauth._token = None  # the token is gone: every thread's next call meets a 401
        # (from the store too: a valid stored token other than the refused one would be adopted
        # without any token request, as one another process stored is)
        oauth.store.delete(w.base + "/mcp")
        w.release.clear()  # hold the token answer until every thread has met its 401
        assert w.release.wait(0) is False
        results = sixteen_calls(client, w)
    assert sorted(results, key=int) == [str(n) for n in range(16)]
    assert len(w.token_requests) == 2  # the handshake's flow, then exactly one for all 16 threads


def test_metadata_for_another_resource_is_refused_before_authorizing(world):
    w = world(resource_path="/other")
    with pytest.raises(AuthError, match="refusing to send credentials for another resource"):
        Client(w.base + "/mcp", timeout=LONG, protocol="legacy",
               auth=OAuth(AuthorizationCode(headless_authorize()))).connect()
    assert w.authorizations == [] and w.token_requests == []


def test_sixteen_threads_meeting_an_expired_token_cause_one_refresh(world):
    w = world()
    oauth = OAuth(AuthorizationCode(headless_authorize()), refresh_margin=0)
    key = w.base + "/mcp"
    with Client(key, timeout=LONG, protocol="legacy", auth=oauth) as client:
        oauth.store.set(key, dict(oauth.store.get(key), expires_at=0))  # the token expired
        oauth._expires_at = 0
        before = len(w.token_requests)
        w.release.clear()  # hold the refresh answer until every thread has met the expired token
        results = sixteen_calls(client, w)
    refreshes = [r for r in w.token_requests[before:] if r["grant_type"] == "refresh_token"]
    assert sorted(results, key=int) == [str(n) for n in range(16)]
    [refresh] = refreshes  # exactly one, for all 16 threads
    assert refresh["refresh_token"] == "refresh-secret-456" and refresh["resource"] == w.base + "/mcp"


def test_the_file_store_is_private_and_keeps_the_token_across_clients(world, tmp_path, caplog):
    import os
    import stat

    caplog.set_level(logging.DEBUG)
    w = world()
    path = str(tmp_path / "tokens" / "mcp.json")
    with Client(w.base + "/mcp", timeout=LONG, protocol="legacy",
                auth=OAuth(AuthorizationCode(headless_authorize()), store=FileTokenStore(path))) as client:
        client.call_tool("echo", {"text": "one"})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path) as f:
        stored = json.load(f)[w.base + "/mcp"]
    assert stored["access_token"] == SECRET_TOKEN and "client_secret" not in json.dumps(stored)
    with Client(w.base + "/mcp", timeout=LONG, protocol="legacy",
                auth=OAuth(AuthorizationCode(headless_authorize()), store=FileTokenStore(path))) as client:
        client.call_tool("echo", {"text": "two"})
    assert len(w.token_requests) == 1 and len(w.authorizations) == 1  # the second client reused it
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert SECRET_TOKEN not in logged and "refresh-secret-456" not in logged


def test_a_desktop_login_through_the_browser_and_a_loopback_redirect(world):
    import socket

    import requests

    w = world()
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    opened: List[str] = []

    def browser(url: str) -> None:  # stands in for the user's browser: follows the redirect home
        opened.append(url)
        assert requests.get(url, timeout=LONG).status_code == 200

    oauth = OAuth(AuthorizationCode(loopback_authorize(open_browser=browser, timeout=LONG),
                                    redirect_uri=f"http://127.0.0.1:{port}/callback"))
    with Client(w.base + "/mcp", timeout=LONG, protocol="legacy", auth=oauth) as client:
        assert client.call_tool("echo", {"text": "desktop"}).text == "desktop"
    assert opened and opened[0].startswith(w.base + "/authorize?")
    assert w.token_requests[0]["redirect_uri"] == f"http://127.0.0.1:{port}/callback"


def test_oauth_works_over_the_legacy_sse_transport_too(world):
    from mcpclient import SSETransport

    w = world()
    transport = SSETransport(w.base + "/sse", auth=OAuth(AuthorizationCode(headless_authorize())))
    with Client(transport, timeout=LONG) as client:
        assert client.server.name == "guarded-sse"
        assert client.call_tool("echo", {"text": "old but guarded"}).text == "old but guarded"
    assert len(w.token_requests) == 1 and w.authorizations[0]["resource"] == w.base + "/sse"


def test_a_refused_sse_post_refreshes_the_token_of_the_server_not_of_its_message_endpoint(world):
    """The challenge of a POST to the SSE message endpoint names the server URL (``/sse``): the
    token stored for it is refreshed and the call repeated. Naming ``/messages`` would find no
    stored token there, and the new login would refuse a resource that is not ``/messages``."""
    from mcpclient import SSETransport

    w = world()
    transport = SSETransport(w.base + "/sse", auth=OAuth(AuthorizationCode(headless_authorize())))
    with Client(transport, timeout=LONG) as client:
        w.refuse_messages = 1  # the server revoked the token
        assert client.call_tool("echo", {"text": "again"}).text == "again"
    assert [r["grant_type"] for r in w.token_requests] == ["authorization_code", "refresh_token"]
    assert len(w.authorizations) == 1


def test_tokens_and_credentials_stay_with_their_server():
    from mcpclient.auth.discovery import AuthServer, discover_resource, discover_server

    oauth = OAuth(ClientCredentials("svc", client_secret="s3cret"), issuer="https://as.example")
    oauth.bind("https://a.example/mcp")
    oauth._token = "token-for-a"
    oauth.bind("https://b.example/mcp")  # the same OAuth on another server: A's token is not sent
    assert oauth.token() is None and oauth.headers("POST", "https://b.example/mcp") == {}
    with pytest.raises(AuthError, match="refusing to send them"):  # another AS never sees the secret
        oauth._flow.check_issuer(AuthServer("https://evil.example", None, "https://evil.example/token", None, {}))
    never = lambda url: pytest.fail(f"fetched {url}")  # noqa: E731
    with pytest.raises(AuthError, match="not an https URL"):
        discover_server("http://as.example", never)
    with pytest.raises(AuthError, match="not an https URL"):
        discover_resource("https://a.example/mcp", "http://a.example/.well-known/oauth-protected-resource", never)


def test_a_call_waiting_for_another_threads_login_fails_at_its_own_timeout(world):
    """Thread A's call starts a code-flow login whose user takes their time; thread B's call,
    refused meanwhile, waits for that login only until its own deadline, then fails with a
    typed error; A's login then completes and A's call succeeds: one login for both. (B must not
    wait on a lock A holds across the whole flow: that wait would outlast B's timeout.)"""
    from mcpclient import RequestTimeout

    w = world()
    gate, entered = threading.Event(), threading.Event()
    gate.set()
    headless = headless_authorize()

    def authorize(url: str) -> str:  # the user: logs in when the test opens the gate
        entered.set()
        if not gate.wait(LONG):
            raise AuthError("the test never let the user log in")
        return headless(url)

    oauth = OAuth(AuthorizationCode(authorize))
    key = w.base + "/mcp"
    with Client(key, timeout=LONG, protocol="legacy", auth=oauth) as client:
        oauth.store.delete(key)  # no token and no refresh token: the next 401 needs a login
        oauth._token = None
        gate.clear()
        entered.clear()
        got: Dict[str, Any] = {}
        a = threading.Thread(target=lambda: got.update(a=client.call_tool("echo", {"text": "a"}).text))
        a.start()
        try:
            assert entered.wait(LONG)  # A's login waits for its user
            started = time.monotonic()
            with pytest.raises((RequestTimeout, AuthError)):
                client.call_tool("echo", {"text": "b"}, timeout=0.5)
            waited = time.monotonic() - started
        finally:
            gate.set()
        a.join(LONG)
        assert got == {"a": "a"}
    assert 0.4 <= waited < 2.0, f"B waited {waited:.1f} s"
    assert len(w.authorizations) == 2  # the handshake's login, then A's: B started none


def test_a_call_waiting_for_another_threads_token_refresh_fails_at_its_own_timeout(world):
    """Thread A's call meets an expiring token and refreshes it (the token endpoint answers when
    the test lets it); thread B's call, meeting it too, waits for that refresh only until its own
    deadline (``token()`` knows the deadline: B does not wait up to ``OAuth(timeout=)``, 30 s)."""
    from mcpclient import RequestTimeout

    from conftest import wait_until

    w = world()
    oauth = OAuth(AuthorizationCode(headless_authorize()), refresh_margin=0)
    key = w.base + "/mcp"
    with Client(key, timeout=LONG, protocol="legacy", auth=oauth) as client:
        oauth.store.set(key, dict(oauth.store.get(key), expires_at=0))  # the token expired
        oauth._expires_at = 0
        before = len(w.token_requests)
        w.release.clear()  # hold the refresh's answer
        got: Dict[str, Any] = {}
        a = threading.Thread(target=lambda: got.update(a=client.call_tool("echo", {"text": "a"}).text))
        a.start()
        try:
            assert wait_until(lambda: len(w.token_requests) > before)  # A's refresh is under way
            started = time.monotonic()
            with pytest.raises((RequestTimeout, AuthError)):
                client.call_tool("echo", {"text": "b"}, timeout=0.5)
            waited = time.monotonic() - started
        finally:
            w.release.set()
        a.join(LONG)
        assert got == {"a": "a"}
    assert 0.4 <= waited < 2.0, f"B waited {waited:.1f} s"
    assert [r["grant_type"] for r in w.token_requests[before:]] == ["refresh_token"]  # A's only


@pytest.mark.parametrize("resource_dpop, scheme, proved", [
    ({}, "Bearer", False),  # a resource that says nothing of DPoP takes bearer tokens: none is bound
    ({"dpop_signing_alg_values_supported": ["ES256"]}, "Bearer", True),
    ({}, "DPoP", True),  # its challenge's scheme says it (RFC 9449, 7.1)
], ids=["resource-silent", "resource-metadata-takes-dpop", "resource-challenge-dpop"])
def test_dpop_auto_binds_only_where_the_resource_takes_it_too(world, resource_dpop, scheme, proved):
    """An authorization server that offers DPoP (oidc-provider does by default) and an MCP
    server whose bearer check takes ``Authorization: Bearer`` only: "auto" binds no token unless
    the protected resource's metadata says it takes DPoP-bound ones."""
    pytest.importorskip("cryptography")
    w = world(as_dpop=True, resource_dpop=resource_dpop, scheme=scheme)
    oauth = OAuth(ClientCredentials("c", client_secret="s"), timeout=LONG)
    with Client(w.base + "/mcp", timeout=LONG, auth=oauth) as client:  # (its token endpoint answers "Bearer")
        assert client.call_tool("echo", {"text": "through"}).text == "through"
    assert w.token_proofs and all(p is proved for p in w.token_proofs)
