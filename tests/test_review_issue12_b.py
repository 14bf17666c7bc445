"""Issue 12, second review: bugs found in the authorization, redirect and checks changes.

Each test names the issue-12 item it covers and fails on the code it was written against.
Real servers on 127.0.0.1; nothing is faked.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Tuple
from urllib.parse import parse_qs

import pytest

from mcpclient.auth import MemoryTokenStore, OAuth

from conftest import LONG


class Recorder:
    """A tiny HTTP server on 127.0.0.1: ``answer(method, path, body)`` gives (status, headers, body);
    every request is recorded (method, path, headers, body)."""

    def __init__(self, answer: Callable[[str, str, bytes], Tuple[int, Dict[str, str], bytes]]) -> None:
        self.requests: List[Tuple[str, str, Dict[str, str], bytes]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def handle_any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                recorder.requests.append((self.command, self.path, dict(self.headers), body))
                status, headers, data = answer(self.command, self.path, body)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = handle_any  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="test-recorder", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(LONG)


@pytest.fixture
def servers() -> Iterator[Callable[..., Recorder]]:
    made: List[Recorder] = []

    def make(answer: Callable[[str, str, bytes], Tuple[int, Dict[str, str], bytes]]) -> Recorder:
        made.append(Recorder(answer))
        return made[-1]

    try:
        yield make
    finally:
        for r in made:
            r.stop()


def _json(status: int, body: Any, **headers: str) -> Tuple[int, Dict[str, str], bytes]:
    return status, dict(headers, **{"Content-Type": "application/json"}), json.dumps(body).encode()


# --- item 10 (address guard) / item 6 (credentials): the token endpoint's redirects -----------

def test_review12b_token_endpoint_redirect_is_not_followed(servers):
    """Issue 12 item 10: the token (and registration) POSTs followed redirects (``requests``'
    default), so a token endpoint that passed the address guard could 307 the client, refresh
    token and client secret in the body, to any URL, unchecked by the guard."""
    elsewhere = servers(lambda m, p, b: _json(200, {"access_token": "stolen", "token_type": "Bearer"}))
    token = servers(lambda m, p, b: (307, {"Location": elsewhere.base + "/token"}, b""))
    key = token.base + "/mcp"
    store = MemoryTokenStore()
    store.set(key, {"access_token": "a1", "token_type": "Bearer", "refresh_token": "r1-secret",
                    "expires_at": time.time() - 60, "scope": "", "issuer": token.base,
                    "token_endpoint": token.base + "/token", "client_id": "c", "auth_method": "client_secret_post",
                    "resource": None})
    oauth = OAuth(grant="client_credentials", client_id="c", client_secret="s3cret-value", token_store=store,
                  timeout=LONG)
    oauth.bind(key)
    assert oauth.token() != "stolen"
    assert len(token.requests) == 1
    assert elsewhere.requests == [], "the refresh token went to a URL the address guard never saw"


# --- item 6 (redirect policy) / item 1 (only typed errors): a Location that is no URL ----------

@pytest.mark.parametrize("location", ["http://127.0.0.1:99999/mcp", "http://h:port/x", "http://127.0.0.1:-1/x"])
@pytest.mark.parametrize("cross_origin", [False, True])
def test_review12b_a_redirect_to_a_malformed_url_is_an_http_error(servers, location, cross_origin):
    """Issue 12 items 6 and 1: a 307 whose Location has a port that is no port
    raised a bare ValueError from ``urlsplit().port`` (while building the refusal's
    message), which the transport reported as ConnectionClosed('... failed: ValueError')
    instead of the documented ``HTTPError`` naming the redirect."""
    from mcpclient import Client
    from mcpclient.errors import HTTPError, MCPError
    from mcpclient.policies.redirects import Redirects
    from mcpclient.transports.http.streamable import HTTPTransport

    server = servers(lambda m, p, b: (307, {"Location": location}, b""))
    transport = HTTPTransport(server.base + "/mcp", follow_redirects=Redirects(cross_origin=cross_origin))
    with pytest.raises(MCPError) as err:
        with Client(transport, timeout=LONG):
            pass
    error = err.value if isinstance(err.value, HTTPError) else err.value.__cause__
    assert isinstance(error, HTTPError) and "redirect" in str(error), repr(err.value)


# --- item 8 (Redis store): the refresh lock must not expire under a holder still refreshing ----

from deploy.conftest import redis_url  # noqa: E402,F401  (a throwaway redis-server on loopback)


def test_review12b_a_live_holders_redis_lock_does_not_expire(redis_url):  # noqa: F811
    """Issue 12 item 8: the Redis refresh lock expired after ``lock_ttl`` even while its holder
    was still refreshing (a slow token endpoint: ``requests``' timeout is per read, and a DPoP
    nonce retry makes two requests), so a second worker refreshed the same rotating refresh
    token and the family was revoked. A live holder keeps its lock; a dead one's still expires
    (``test_issue12_a_redis_refresh_lock_whose_holder_died_expires``)."""
    import uuid

    from mcpclient.auth import RedisTokenStore

    prefix = f"test-{uuid.uuid4().hex}:"
    store = RedisTokenStore(redis_url, prefix=prefix, lock_ttl=0.3)
    other = RedisTokenStore(redis_url, prefix=prefix, lock_ttl=0.3)
    holding, release = threading.Event(), threading.Event()
    outcome: List[str] = []

    def holder() -> None:
        with store.lock("k", LONG):
            holding.set()
            release.wait(LONG)

    thread = threading.Thread(target=holder, name="test-lock-holder")
    thread.start()
    try:
        assert holding.wait(LONG)
        try:
            with other.lock("k", 1.5):  # five TTLs: an expiring lock would be taken
                outcome.append("taken")
        except TimeoutError:
            outcome.append("waited")
    finally:
        release.set()
        thread.join(LONG)
    assert outcome == ["waited"], "a second worker took the lock while its holder was still refreshing"
    with other.lock("k", LONG):  # released by its holder: free at once
        pass
    assert [t for t in threading.enumerate() if "redis-lock" in t.name] == []


# --- item 9: one caller's short timeout must not fail the others sharing its listing ----------

def test_review12b_a_short_timeout_callers_listing_does_not_fail_a_patient_caller(started):
    """Issue 12 item 9: threads calling an unlisted tool share one listing (SingleFlight). When the
    thread that started it had a short timeout, its RequestTimeout was handed to every thread
    waiting on the listing, so a caller with a long timeout failed at the other's deadline."""
    from helpers import ScriptedServer
    from mcpclient import Client, RequestTimeout, SchemaValidationError

    shape = {"name": "shape", "inputSchema": {"type": "object"},
             "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    hold = threading.Event()

    def handle(method, params):
        if method == "tools/list":
            hold.wait(LONG)
            return {"tools": [shape]}
        return {"content": [], "structuredContent": {"n": "x"}}

    srv = started(ScriptedServer(handle))
    outcome: List[BaseException] = []
    with Client(srv.transport, timeout=LONG) as client:
        hasty_done = threading.Event()

        def hasty() -> None:
            try:
                client.call_tool("shape", timeout=0.5)
            except RequestTimeout:
                pass
            finally:
                hasty_done.set()

        first = threading.Thread(target=hasty, name="test-hasty-caller")
        first.start()
        assert srv.wait_for(lambda m: m.get("method") == "tools/list") is not None  # its listing runs

        def patient() -> None:
            try:
                client.call_tool("shape", timeout=LONG)
            except BaseException as exc:  # noqa: B902 - collected for the assertion below
                outcome.append(exc)

        second = threading.Thread(target=patient, name="test-patient-caller")
        second.start()
        assert hasty_done.wait(LONG)
        hold.set()
        first.join(LONG)
        second.join(LONG)
    assert len(outcome) == 1 and isinstance(outcome[0], SchemaValidationError), outcome


def test_review12b_a_list_changed_during_the_first_listing_does_not_skip_validation(started):
    """Issue 12 item 9: a ``tools/list_changed`` that arrived while a call's own listing ran made
    the registry drop that listing (rightly: it may be stale) and the call went ahead
    unvalidated; now the call lists again (bounded) and validates."""
    from helpers import ScriptedServer
    from mcpclient import Client, SchemaValidationError

    shape = {"name": "shape", "inputSchema": {"type": "object"},
             "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    changed = threading.Event()
    listings: List[int] = []
    box: List[Any] = []

    def handle(method, params):
        if method == "tools/list":
            listings.append(1)
            if len(listings) == 1:  # the tools change while this listing is on its way
                box[0].notify("notifications/tools/list_changed")
                changed.wait(LONG)
            return {"tools": [shape]}
        return {"content": [], "structuredContent": {"n": "x"}}

    srv = started(ScriptedServer(handle))
    box.append(srv)
    with Client(srv.transport, timeout=LONG, on_notification=lambda method, params: changed.set()) as client:
        with pytest.raises(SchemaValidationError):
            client.call_tool("shape")
    assert len(listings) == 2


# --- item 10: the authorization endpoint is an authorization URL too ---------------------------

def test_review12b_an_authorization_endpoint_inside_is_refused(servers):
    """Issue 12 item 10: the address guard checked metadata, token and registration URLs but not
    the authorization endpoint, which ``headless_authorize`` fetches (and ``loopback_authorize``
    opens in the user's browser): a server could still aim the client at the cloud metadata
    address. A loopback MCP server may use loopback authorization servers, never link-local."""
    from mcpclient import AuthError, Client

    box: List[str] = []

    def answer(method: str, path: str, body: bytes) -> Tuple[int, Dict[str, str], bytes]:
        base = box[0]
        if method == "POST" and path == "/mcp":
            return _json(401, {"error": "invalid_token"}, **{"WWW-Authenticate": (
                f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"')})
        if path.startswith("/.well-known/oauth-protected-resource"):
            return _json(200, {"resource": base + "/mcp", "authorization_servers": [base]})
        if path.startswith("/.well-known/oauth-authorization-server"):
            return _json(200, {"issuer": base, "authorization_endpoint": "https://169.254.169.254/authorize",
                               "token_endpoint": base + "/token", "code_challenge_methods_supported": ["S256"],
                               "response_types_supported": ["code"]})
        return _json(404, {"error": "not found"})

    server = servers(answer)
    box.append(server.base)
    asked: List[str] = []
    oauth = OAuth(client_id="c", authorize=lambda url: asked.append(url) or "http://127.0.0.1/cb?code=x",
                  timeout=LONG)
    with pytest.raises(AuthError) as err:
        with Client(server.base + "/mcp", timeout=LONG, auth=oauth):
            pass
    assert asked == [], "the authorization URL on a link-local address was handed to authorize()"
    assert "169.254.169.254" in str(err.value) and "link-local" in str(err.value)
