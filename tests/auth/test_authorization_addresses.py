"""No authorization traffic to internal addresses: a remote server's authorization URLs
(metadata, token and authorization endpoints) may not point inside; a loopback server may use
loopback but never link-local; the token endpoint's redirects are not followed.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Tuple
from urllib.parse import urlsplit

import pytest

from conftest import LONG
from recording_http import Recorder, servers  # noqa: F401  (servers: a fixture)
from mcpclient import AuthError, Client
from mcpclient.auth import AuthorizationCode, ClientCredentials, MemoryTokenStore, OAuth

# --- discovery and metadata URLs ------------------------------------------------------------------


GLOBAL_SERVER = "https://93.184.216.34/mcp"  # an IP literal: no DNS in the test


@pytest.mark.parametrize("url", [
    "https://127.0.0.1/.well-known/oauth-authorization-server", "https://localhost:8443/token",
    "https://10.1.2.3/token", "https://192.168.0.1/", "https://169.254.169.254/latest/meta-data/",
    "https://[::1]/token", "https://[fe80::1]/token", "https://[::ffff:127.0.0.1]/token",
    "https://[::ffff:169.254.169.254]/x", "https://0.0.0.0/x", "https://[fd00::1]/x", "https://100.64.0.1/x",
])
def test_a_remote_servers_authorization_urls_may_not_point_inside(url):
    """A remote server's authorization URLs may not point at private, link-local or loopback
    addresses: discovery refuses them with an ``AuthError`` naming the host (``allow_all`` lets them
    through)."""
    from mcpclient.auth.discovery import AddressGuard

    with pytest.raises(AuthError) as err:
        AddressGuard(GLOBAL_SERVER).check(url, "the token endpoint")
    assert urlsplit(url).hostname in str(err.value)
    assert AddressGuard(GLOBAL_SERVER, allow_all=True).check(url, "x") == url
    AddressGuard(GLOBAL_SERVER).check("https://8.8.8.8/token", "the token endpoint")  # global: fine


def test_a_loopback_server_may_use_loopback_but_never_link_local():
    from mcpclient.auth.discovery import AddressGuard

    guard = AddressGuard("http://127.0.0.1:8000/mcp")
    for url in ("http://127.0.0.1:9000/token", "http://localhost:9000/token", "https://[::1]/x", "https://8.8.8.8/"):
        assert guard.check(url, "the token endpoint") == url
    for url in ("https://169.254.169.254/", "https://10.0.0.1/", "https://[fe80::1]/"):
        with pytest.raises(AuthError):
            guard.check(url, "the token endpoint")
    private = AddressGuard("https://10.0.0.5/mcp")  # an intranet server: intranet authorization servers
    assert private.check("https://10.0.0.6/token", "x") == "https://10.0.0.6/token"
    with pytest.raises(AuthError):
        private.check("https://127.0.0.1/token", "x")


def _guarded_mcp_server(metadata: str, authorization_servers: List[str]) -> ThreadingHTTPServer:
    """A real MCP endpoint on 127.0.0.1 that answers every POST 401, its challenge naming
    ``metadata`` ("{base}": its own address) as the resource metadata, which it serves naming
    ``authorization_servers``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, status: int, body: Any, headers: Dict[str, str]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            if self.path.startswith("/.well-known/oauth-protected-resource"):
                self.reply(200, {"resource": base + "/mcp", "authorization_servers": authorization_servers}, {})
            else:
                self.reply(404, {"error": "not found"}, {})

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            self.reply(401, {"error": "invalid_token"}, {"WWW-Authenticate": (
                f'Bearer resource_metadata="{metadata.format(base=base)}"')})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="test-guarded-mcp", daemon=True).start()
    return server


def _refusal(server: ThreadingHTTPServer) -> AuthError:
    try:
        oauth = OAuth(ClientCredentials("c", client_secret="s3cret"), timeout=LONG)
        with pytest.raises(AuthError) as err:
            with Client(f"http://127.0.0.1:{server.server_address[1]}/mcp", timeout=LONG, auth=oauth):
                pass
        assert "s3cret" not in str(err.value)
        return err.value
    finally:
        server.shutdown()
        server.server_close()


def test_a_loopback_server_pointing_at_a_link_local_authorization_server_is_refused():
    """End to end: a real MCP server on 127.0.0.1 whose resource metadata names an authorization
    server on the cloud metadata address; the client refuses before any request goes there."""
    error = _refusal(_guarded_mcp_server("{base}/.well-known/oauth-protected-resource/mcp", ["https://169.254.169.254"]))
    assert "169.254.169.254" in str(error) and "link-local" in str(error)


@pytest.mark.parametrize("metadata, authorization_servers", [
    ("https://169.254.169.254\\\\@mcp.example.com/.well-known/oauth-protected-resource", []),  # (in the challenge's quoted string, two backslashes are one)
    ("{base}/.well-known/oauth-protected-resource/mcp", ["https://169.254.169.254\\@auth.example.com"]),
    ("{base}/.well-known/oauth-protected-resource/mcp", ["https://10.0.0.1\\@auth.example.com"]),
], ids=["resource-metadata", "authorization-server", "private-address"])
def test_a_url_the_http_stack_reads_another_way_than_the_guard_is_refused(metadata, authorization_servers):
    """requests and urllib3 end a URL's host at a backslash: ``https://169.254.169.254\\@a.example``
    connects to 169.254.169.254, where ``urlsplit`` reads ``a.example``. Such a URL is refused
    before anything is fetched, wherever the server puts it."""
    error = _refusal(_guarded_mcp_server(metadata, authorization_servers))
    assert "parses two ways" in str(error)


def _json(status: int, body: Any, **headers: str) -> Tuple[int, Dict[str, str], bytes]:
    return status, dict(headers, **{"Content-Type": "application/json"}), json.dumps(body).encode()


# --- the token endpoint's redirects ---------------------------------------------------------------

def test_a_token_endpoint_redirect_is_not_followed(servers):
    """The token (and registration) POSTs follow no redirect (``requests`` would by default): a
    token endpoint that passed the address guard could otherwise 307 the client, refresh token and
    client secret in the body, to any URL, unchecked by the guard."""
    elsewhere = servers(lambda m, p, b: _json(200, {"access_token": "stolen", "token_type": "Bearer"}))
    token = servers(lambda m, p, b: (307, {"Location": elsewhere.base + "/token"}, b""))
    key = token.base + "/mcp"
    store = MemoryTokenStore()
    store.set(key, {"access_token": "a1", "token_type": "Bearer", "refresh_token": "r1-secret",
                    "expires_at": time.time() - 60, "scope": "", "issuer": token.base,
                    "token_endpoint": token.base + "/token", "client_id": "c", "auth_method": "client_secret_post",
                    "resource": None})
    oauth = OAuth(ClientCredentials("c", client_secret="s3cret-value"), store=store, timeout=LONG)
    oauth.bind(key)
    assert oauth.token() != "stolen"
    assert len(token.requests) == 1
    assert elsewhere.requests == [], "the refresh token went to a URL the address guard never saw"


# --- the authorization endpoint is an authorization URL too ---------------------------

def test_an_authorization_endpoint_inside_is_refused(servers):
    """The address guard checks the authorization endpoint too, as it does metadata, token and
    registration URLs: ``headless_authorize`` fetches it (and ``loopback_authorize`` opens it in the
    user's browser), so a server must not aim the client at the cloud metadata address through it.
    A loopback MCP server may use loopback authorization servers, never link-local."""
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
    oauth = OAuth(AuthorizationCode(lambda url: asked.append(url) or "http://127.0.0.1/cb?code=x", client_id="c"),
                  timeout=LONG)
    with pytest.raises(AuthError) as err:
        with Client(server.base + "/mcp", timeout=LONG, auth=oauth):
            pass
    assert asked == [], "the authorization URL on a link-local address was handed to authorize()"
    assert "169.254.169.254" in str(err.value) and "link-local" in str(err.value)
