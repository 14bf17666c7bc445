"""Issue 12, checks on what crosses the client's edges (items 6, 9 and parts of 10): the redirect
policy, output validation that does not depend on call order, root URIs, elicitation answers
against the requested schema, and the sampling tool_use/tool_result pairing. Real servers on
real pipes and sockets: the scripted HTTP server on 127.0.0.1 (two of them are two origins), the
bundled test server, the official SDK's server."""
from __future__ import annotations

import threading
from typing import Any, Dict, List

import pytest

from conftest import LONG
from http_scripted import Reply, ScriptedHTTPServer
from mcpclient import Client, HTTPError, HTTPTransport, Redirects


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedHTTPServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedHTTPServer(handle, **kwargs))


def echo(seen, msg):
    return {"content": [{"type": "text", "text": f"{seen.path}:{msg['params']['arguments']['text']}"}]}


def redirecting(location: str, status: int = 307):
    """A handler that sends every ``/mcp`` call to ``location`` and answers it anywhere else."""
    def handle(seen, msg):
        if seen.path == "/mcp":
            return Reply(status, b"", {"Location": location})
        return echo(seen, msg)
    return handle


# --- item 6: the redirect policy -----------------------------------------------------------------

SECRET_HEADERS = {"X-Api-Key": "key-123", "X-Tenant": "acme"}


def test_a_same_origin_redirect_is_followed_with_every_header(scripted):
    server = scripted(redirecting("/moved"))
    transport = HTTPTransport(server.url, headers=SECRET_HEADERS, auth="tok", follow_redirects=True)
    with Client(transport, timeout=LONG, protocol="legacy") as client:
        assert client.call_tool("echo", {"text": "a"}).text == "/moved:a"
    moved = [s for s in server.requests("tools/call") if s.path == "/moved"]
    assert len(moved) == 1
    headers = moved[0].headers
    assert headers["x-api-key"] == "key-123" and headers["authorization"] == "Bearer tok"
    assert headers["mcp-session-id"] == server.sessions[0]
    assert moved[0].body["params"]["arguments"] == {"text": "a"}  # 307: the POST and its body again


def test_a_cross_origin_redirect_is_refused_by_default(scripted):
    """Issue 12: with follow_redirects=True, X-Api-Key (headers=) and Mcp-Session-Id reached the
    other origin (127.0.0.1 and localhost, or another port, are other origins)."""
    other = scripted(echo)
    port = other.url.split(":")[2].split("/")[0]
    for location in (other.url.replace("/mcp", "/else"), f"http://localhost:{port}/else"):
        server = scripted(redirecting(location))
        transport = HTTPTransport(server.url, headers=SECRET_HEADERS, follow_redirects=True)
        with Client(transport, timeout=LONG, protocol="legacy") as client:
            with pytest.raises(HTTPError, match="another origin") as info:
                client.call_tool("echo", {"text": "a"})
        assert info.value.status == 307
    assert other.requests() == []  # nothing reached it


def test_a_cross_origin_redirect_allowed_carries_no_credential(scripted):
    """Issue 12: only the protocol's headers and those marked safe go to another origin; a token in
    a custom header may now follow redirects too (it is stripped, not refused at construction)."""
    other = scripted(echo)
    server = scripted(redirecting(other.url.replace("/mcp", "/else")))
    transport = HTTPTransport(server.url, headers=SECRET_HEADERS, auth="tok", auth_header="X-Auth",
                              follow_redirects=Redirects(cross_origin=True, safe_headers=("x-tenant",)))
    with Client(transport, timeout=LONG, protocol="legacy") as client:
        assert client.call_tool("echo", {"text": "b"}).text == "/else:b"
    [seen] = other.requests()
    for header in ("x-api-key", "x-auth", "authorization", "mcp-session-id", "cookie", "dpop"):
        assert header not in seen.headers, header
    assert seen.headers["x-tenant"] == "acme" and seen.headers["mcp-protocol-version"]
    assert seen.body["params"]["arguments"] == {"text": "b"}


def test_redirects_that_would_change_the_method_or_loop_are_refused(scripted):
    for status in (301, 302, 303):
        server = scripted(redirecting("/moved", status))
        with Client(HTTPTransport(server.url, follow_redirects=True), timeout=LONG, protocol="legacy") as client:
            with pytest.raises(HTTPError, match="307 or 308") as info:
                client.call_tool("echo", {"text": "a"})
        assert info.value.status == status
        assert [s.path for s in server.requests("tools/call")] == ["/mcp"]

    loop = scripted(lambda seen, msg: Reply(308, b"", {"Location": "/mcp"}))
    with Client(HTTPTransport(loop.url, follow_redirects=Redirects(max_redirects=3)), timeout=LONG,
                protocol="legacy") as client:
        with pytest.raises(HTTPError, match="more than 3 redirects"):
            client.call_tool("echo", {"text": "a"})
    assert len(loop.requests("tools/call")) == 4


def test_https_is_never_downgraded_to_http(scripted, certificate, monkeypatch):
    """Issue 12: HTTPS never downgraded, whatever the policy allows."""
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", certificate[0])
    plain = scripted(echo)
    server = scripted(redirecting(plain.url.replace("/mcp", "/else")), tls=certificate)
    transport = HTTPTransport(server.url, follow_redirects=Redirects(cross_origin=True))
    with Client(transport, timeout=LONG, protocol="legacy") as client:
        with pytest.raises(HTTPError, match="never downgraded"):
            client.call_tool("echo", {"text": "a"})
    assert plain.requests() == []


def test_the_redirect_policy_refuses_credential_headers_as_safe():
    with pytest.raises(ValueError, match="credential"):
        Redirects(cross_origin=True, safe_headers=("Authorization",))
    with pytest.raises(ValueError, match="credential"):
        Redirects(safe_headers=("mcp-session-id",))
    with pytest.raises(TypeError):
        HTTPTransport("http://127.0.0.1:9/mcp", follow_redirects="yes")  # type: ignore[arg-type]
    assert HTTPTransport("http://127.0.0.1:9/mcp", follow_redirects=True).redirects == Redirects()
    assert HTTPTransport("http://127.0.0.1:9/mcp").redirects is None


@pytest.fixture
def certificate(tmp_path):
    """A self-signed certificate for 127.0.0.1: (certificate file, key file)."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True, timeout=60)
    return cert, key
