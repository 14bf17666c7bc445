"""The redirect policy: a same-origin redirect is followed with every header (and a DPoP proof
for its own URL); a cross-origin one is refused by default and, when allowed, carries no
credential; method changes, loops, HTTPS-to-HTTP downgrades and malformed ``Location`` URLs are
refused as typed errors. Real servers on 127.0.0.1 (two of them are two origins).
"""
from __future__ import annotations


import pytest

from conftest import LONG
from recording_http import Recorder, servers  # noqa: F401  (servers: a fixture)
from http_scripted import Reply, ScriptedHTTPServer
from mcpclient import Client, HTTPError, HTTPTransport, Redirects


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedHTTPServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedHTTPServer(handle, **kwargs))


def echo(seen, msg):
    if msg["method"] == "tools/list":
        return {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    return {"content": [{"type": "text", "text": f"{seen.path}:{msg['params']['arguments']['text']}"}]}


def redirecting(location: str, status: int = 307):
    """A handler that sends every ``/mcp`` call to ``location`` and answers it anywhere else."""
    def handle(seen, msg):
        if seen.path == "/mcp" and msg["method"] == "tools/call":
            return Reply(status, b"", {"Location": location})
        return echo(seen, msg)
    return handle


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


def test_a_same_origin_hop_gets_a_dpop_proof_for_its_own_url(scripted):
    """A DPoP proof names the URL it is for (htu): the hop to /moved carries a new one."""
    from mcpclient.auth import AuthProvider

    class ProofPerURL(AuthProvider):  # what a DPoP provider's headers look like, without the crypto
        def headers(self, method, url):
            return {"Authorization": "DPoP tok", "DPoP": f"proof {method} {url}"}

    server = scripted(redirecting("/moved"))
    with Client(HTTPTransport(server.url, auth=ProofPerURL(), follow_redirects=True), timeout=LONG,
                protocol="legacy") as client:
        assert client.call_tool("echo", {"text": "a"}).text == "/moved:a"
    first, moved = [s for s in server.requests("tools/call")]
    assert first.headers["dpop"] == f"proof POST {server.url}"
    assert moved.headers["dpop"] == f"proof POST {server.url.replace('/mcp', '/moved')}"


def test_a_cross_origin_redirect_is_refused_by_default(scripted):
    """With follow_redirects=True, X-Api-Key (headers=) and Mcp-Session-Id never reach another
    origin (127.0.0.1 and localhost, or another port, are other origins)."""
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
    """Only the protocol's headers and those marked safe go to another origin; a token in
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

    loop = scripted(lambda seen, msg: Reply(308, b"", {"Location": "/mcp"}) if msg["method"] == "tools/call"
                    else echo(seen, msg))
    with Client(HTTPTransport(loop.url, follow_redirects=Redirects(max_redirects=3)), timeout=LONG,
                protocol="legacy") as client:
        with pytest.raises(HTTPError, match="more than 3 redirects"):
            client.call_tool("echo", {"text": "a"})
    assert len(loop.requests("tools/call")) == 4


def test_https_is_never_downgraded_to_http(scripted, certificate, monkeypatch):
    """HTTPS never downgraded, whatever the policy allows."""
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


# --- a Location that is no URL --------------------------------------------------------------------

@pytest.mark.parametrize("location", ["http://127.0.0.1:99999/mcp", "http://h:port/x", "http://127.0.0.1:-1/x"])
@pytest.mark.parametrize("cross_origin", [False, True])
def test_a_redirect_to_a_malformed_url_is_an_http_error(servers, location, cross_origin):
    """A 307 whose Location has a port that is no port is the documented ``HTTPError`` naming
    the redirect, not a bare ValueError from ``urlsplit().port`` (raised while building the
    refusal's message) reported as ConnectionClosed('... failed: ValueError')."""
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
