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

    loop = scripted(lambda seen, msg: Reply(308, b"", {"Location": "/mcp"}) if msg["method"] == "tools/call"
                    else echo(seen, msg))
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



# --- item 9: output validation that does not depend on call order --------------------------------

SHAPE = {"name": "shape", "inputSchema": {"type": "object"},
         "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}


def shapes(structured: Any, hold: "threading.Event" = None, tools: List[Dict[str, Any]] = (SHAPE,)):
    """A server whose ``shape`` tool declares an outputSchema and answers ``structured``; its
    ``tools/list`` waits for ``hold`` (if given) before answering."""
    def handle(seen, msg):
        if msg["method"] == "tools/list":
            if hold is not None:
                hold.wait(LONG)
            return {"tools": list(tools)}
        return {"content": [], "structuredContent": structured}
    return handle


def test_output_is_validated_on_the_first_call_without_list_tools(scripted):
    """Issue 12: structuredContent was validated only if the caller had called list_tools() first."""
    from mcpclient import SchemaValidationError

    server = scripted(shapes({"n": "not a number"}))
    with Client(server.url, timeout=LONG, protocol="legacy") as client:
        with pytest.raises(SchemaValidationError, match="outputSchema"):
            client.call_tool("shape")
        with pytest.raises(SchemaValidationError):  # known now: no second listing
            client.call_tool("shape")
        with pytest.raises(SchemaValidationError):  # the future twin too (learned on its worker)
            client.call_tool_future("shape").result(LONG)
    assert len(server.requests("tools/list")) == 1


def test_the_future_twin_lists_on_its_worker_and_returns_at_once(scripted):
    from mcpclient import SchemaValidationError

    hold = threading.Event()
    server = scripted(shapes({"n": 1.5}, hold))
    with Client(server.url, timeout=LONG, protocol="legacy") as client:
        future = client.call_tool_future("shape")  # returns although the listing is held
        hold.set()
        with pytest.raises(SchemaValidationError):
            future.result(LONG)
    assert len(server.requests("tools/list")) == 1


def test_many_threads_calling_an_unknown_tool_list_once(started):
    """16 threads call a tool nobody listed, while the listing is held: one tools/list in all."""
    from helpers import ScriptedServer
    from mcpclient import SchemaValidationError

    hold = threading.Event()
    listings: List[int] = []

    def handle(method, params):
        if method == "tools/list":
            listings.append(1)
            hold.wait(LONG)
            return {"tools": [SHAPE]}
        return {"content": [], "structuredContent": {"n": "x"}}

    srv = started(ScriptedServer(handle))
    errors: List[BaseException] = []
    with Client(srv.transport, timeout=LONG) as client:
        gate = threading.Barrier(17)

        def call() -> None:
            gate.wait(LONG)
            try:
                client.call_tool("shape")
            except BaseException as exc:  # noqa: B902 - collected for the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=call, name=f"test-caller-{i}") for i in range(16)]
        for thread in threads:
            thread.start()
        gate.wait(LONG)
        assert srv.wait_for(lambda m: m.get("method") == "tools/list") is not None
        hold.set()
        for thread in threads:
            thread.join(LONG)
    assert len(errors) == 16 and all(isinstance(e, SchemaValidationError) for e in errors), \
        [e for e in errors if not isinstance(e, SchemaValidationError)][:3]
    assert len(listings) == 1


def test_a_tool_no_listing_names_is_called_unvalidated_and_not_listed_for_again(scripted, caplog):
    server = scripted(shapes({"n": "x"}, tools=[]))
    with Client(server.url, timeout=LONG, protocol="legacy") as client:
        with caplog.at_level("DEBUG", logger="mcpclient"):
            assert client.call_tool("shape").structured_content == {"n": "x"}
        client.call_tool("shape")
    assert len(server.requests("tools/list")) == 1
    assert any("not validated" in r.getMessage() for r in caplog.records)


def test_validate_output_listed_never_lists_and_false_never_validates(scripted):
    from mcpclient import SchemaValidationError

    server = scripted(shapes({"n": "x"}))
    with Client(server.url, timeout=LONG, protocol="legacy", validate_output="listed") as client:
        assert client.call_tool("shape").structured_content == {"n": "x"}
        assert server.requests("tools/list") == []
        client.list_tools()
        with pytest.raises(SchemaValidationError):
            client.call_tool("shape")
    with Client(server.url, timeout=LONG, protocol="legacy", validate_output=False) as client:
        client.list_tools()
        client.call_tool("shape")
    with pytest.raises(ValueError, match="validate_output"):
        Client(server.url, validate_output="always")


def test_a_listing_that_takes_the_whole_timeout_fails_the_call_unsent(scripted):
    from mcpclient import RequestTimeout

    hold = threading.Event()
    server = scripted(shapes({"n": 1}, hold))
    try:
        with Client(server.url, timeout=LONG, protocol="legacy") as client:
            with pytest.raises(RequestTimeout, match="outputSchema"):
                client.call_tool("shape", timeout=0.5)
            assert server.requests("tools/call") == []
            hold.set()
    finally:
        hold.set()


def test_a_list_changed_notification_makes_the_next_call_list_again(started):
    """The listing is cached until the server says its tools changed."""
    from helpers import ScriptedServer
    from mcpclient import SchemaValidationError

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    listings: List[int] = []

    def handle(method, params):
        if method == "tools/list":
            listings.append(1)
            return {"tools": [dict(SHAPE, outputSchema=schema)]}
        return {"content": [], "structuredContent": {"n": "x"}}

    srv = started(ScriptedServer(handle))
    changed = threading.Event()
    with Client(srv.transport, timeout=LONG, on_notification=lambda method, params: changed.set()) as client:
        with pytest.raises(SchemaValidationError):
            client.call_tool("shape")
        schema = {"type": "object"}  # the server's tool changed: anything goes now
        srv.notify("notifications/tools/list_changed")
        assert changed.wait(LONG)
        assert client.call_tool("shape").structured_content == {"n": "x"}
    assert len(listings) == 2


@pytest.mark.parametrize("command", ["testing", "official"])
def test_real_servers_structured_tools_validate_on_the_first_call(command):
    from conftest import OFFICIAL_SERVER, TESTING_SERVER

    if command == "official":
        pytest.importorskip("mcp")
    with Client(TESTING_SERVER if command == "testing" else OFFICIAL_SERVER, timeout=LONG) as client:
        assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"sum": 5}
        assert client._core.tools.get("add") is not None  # the call listed the tools to learn its schema


# --- item 10: root URIs normalized and checked ----------------------------------------------------


def test_root_uris_are_normalized_before_the_server_sees_them(memory_server):
    """Issue 12: only the file:// prefix was checked; '..' segments (plain or percent-encoded) went
    out as given, so a root that reads like a project directory could expose /etc. (The wire is
    read off a scripted peer: the official SDK's server normalizes what it receives itself.)"""
    from mcpclient import Root

    srv = memory_server()
    roots = ["file:///srv/app/../../etc", Root("file://localhost/tmp/%2e%2e/work/./x/", "X")]
    with Client(srv.transport, timeout=LONG, roots=roots) as client:
        assert srv.ask("roots/list")["result"] == {"roots": [{"uri": "file:///etc"},
                                                             {"uri": "file:///work/x/", "name": "X"}]}
        client.set_roots(lambda: ["file:///a/b/%2E%2E/c d"])  # a callable's roots: each time they are asked for
        assert srv.ask("roots/list")["result"] == {"roots": [{"uri": "file:///a/c%20d"}]}


def test_normalized_roots_reach_the_official_server():
    import json

    from conftest import OFFICIAL_SERVER

    pytest.importorskip("mcp", reason="the official `mcp` SDK needs Python 3.10+")
    with Client(OFFICIAL_SERVER, timeout=LONG, protocol="2025-11-25", roots=["file:///a/b/../c"]) as client:
        assert json.loads(client.call_tool("roots").text) == [["file:///a/c", None]]


@pytest.mark.parametrize("uri", ["file://relative/path", "file:relative", "file:///a?b=1", "file:///a#frag",
                                 "file:///a%00b", "file:///a%ffb", "https://example.com/x"])
def test_a_bad_root_uri_is_refused_where_it_is_given(uri):
    from conftest import TESTING_SERVER

    with pytest.raises(ValueError, match="root"):
        Client(TESTING_SERVER, roots=[uri])
    client = Client(TESTING_SERVER, roots=[])  # (never connected: nothing to close but the object)
    with pytest.raises(ValueError, match="root"):
        client.set_roots([uri])
    client.close()


# --- item 10: elicitation answers checked against the requested schema --------------------------

FORM = {"mode": "form", "message": "Who?", "requestedSchema": {
    "type": "object", "required": ["name"],
    "properties": {"name": {"type": "string", "minLength": 2, "maxLength": 10},
                   "age": {"type": "integer", "minimum": 0, "maximum": 150},
                   "color": {"type": "string", "enum": ["red", "green"]},
                   "mail": {"type": "string", "format": "email"}, "site": {"type": "string", "format": "uri"},
                   "day": {"type": "string", "format": "date"}, "at": {"type": "string", "format": "date-time"}}}}


@pytest.fixture
def memory_server(started):
    from helpers import ScriptedServer

    return lambda handle=lambda method, params: {}: started(ScriptedServer(handle))


@pytest.mark.parametrize("content", [
    {}, {"name": "a"}, {"name": "x" * 11}, {"name": "ab", "age": -1}, {"name": "ab", "age": 151},
    {"name": "ab", "color": "blue"}, {"name": "ab", "mail": "not-an-address"}, {"name": "ab", "site": "not a uri"},
    {"name": "ab", "day": "2024-02-30"}, {"name": "ab", "at": "yesterday"}, {"name": "ab", "age": 1.5}],
    ids=["required", "minLength", "maxLength", "minimum", "maximum", "enum", "email", "uri", "date", "date-time",
         "integer"])
def test_an_answer_that_breaks_the_requested_schema_is_an_internal_error(memory_server, content, caplog):
    """Issue 12: answers were checked for field names and primitive types only. The handler is
    user code: its invalid answer is logged and the server answered -32603, the value not quoted."""
    from mcpclient import ElicitationResult

    srv = memory_server()
    with Client(srv.transport, timeout=LONG, elicitation_handler=lambda r: ElicitationResult.accept(content)):
        error = srv.ask("elicitation/create", FORM)["error"]
    assert error["code"] == -32603
    logged = " ".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "requested schema" in logged
    for value in content.values():
        if isinstance(value, str) and len(value) > 2:
            assert value not in logged


def test_a_valid_answer_goes_through_and_accept_defaults_declines_what_it_cannot_fill(memory_server):
    from mcpclient import ElicitationResult, accept_defaults

    good = {"name": "ab", "age": 3, "color": "red", "mail": "a@b.example", "site": "https://x.example/y",
            "day": "2024-02-29", "at": "2024-02-29T10:00:00+01:00"}
    srv = memory_server()
    with Client(srv.transport, timeout=LONG, elicitation_handler=lambda r: ElicitationResult.accept(good)):
        assert srv.ask("elicitation/create", FORM)["result"] == {"action": "accept", "content": good}
    srv = memory_server()
    with Client(srv.transport, timeout=LONG, elicitation_handler=accept_defaults):
        assert srv.ask("elicitation/create", FORM)["result"] == {"action": "decline"}  # name: required, no default


def test_the_official_servers_form_still_accepts_its_defaults():
    from conftest import OFFICIAL_SERVER
    from mcpclient import accept_defaults

    pytest.importorskip("mcp", reason="the official `mcp` SDK needs Python 3.10+")
    with Client(OFFICIAL_SERVER, timeout=LONG, protocol="2025-11-25", elicitation_handler=accept_defaults) as client:
        assert client.call_tool("elicit_form", {"message": "Who?"}).text == \
            'accept {"age": 30, "color": "green", "name": "anon", "subscribe": true}'


# --- item 10: sampling tool_use / tool_result pairing ---------------------------------------------

def _use(*ids: str) -> Dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": "w", "input": {}} for i in ids]}


def _result(*ids: str) -> Dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "toolUseId": i, "content": []} for i in ids]}


ASK = {"role": "user", "content": {"type": "text", "text": "weather?"}}
TEXT = {"type": "text", "text": "here:"}

BROKEN_PAIRINGS = {
    "missing result": [ASK, _use("a", "b"), _result("a")],
    "unknown id": [ASK, _use("a"), _result("z")],
    "answered twice": [ASK, _use("a"), _result("a", "a")],
    "result mixed with text": [ASK, _use("a"), {"role": "user", "content": [TEXT] + _result("a")["content"]}],
    "result without a tool_use before it": [ASK, _result("a")],
    "result not right after": [ASK, _use("a"), ASK, _result("a")],
    "tool_use never answered": [ASK, _use("a")],
    "tool_use in a user message": [{"role": "user", "content": _use("a")["content"]}, _result("a")],
    "result in an assistant message": [ASK, _use("a"), {"role": "assistant", "content": _result("a")["content"]}],
}


@pytest.mark.parametrize("messages", list(BROKEN_PAIRINGS.values()), ids=list(BROKEN_PAIRINGS))
def test_a_sampling_request_that_breaks_the_tool_pairing_is_invalid_params(memory_server, messages):
    """Issue 12: such a request reached the user's handler (and their LLM) instead of -32602."""
    called: List[Any] = []
    srv = memory_server()
    with Client(srv.transport, timeout=LONG, sampling_handler=lambda r: called.append(r) or {},
                capabilities={"sampling": {"tools": {}}}):
        error = srv.ask("sampling/createMessage", {"messages": messages, "maxTokens": 5})["error"]
    assert error["code"] == -32602 and called == []


def test_a_well_paired_sampling_request_reaches_the_handler(memory_server):
    from mcpclient import CreateMessageResult

    srv = memory_server()
    messages = [ASK, {"role": "assistant", "content": [TEXT] + _use("a", "b")["content"]}, _result("b", "a"),
                {"role": "assistant", "content": TEXT}, ASK]
    with Client(srv.transport, timeout=LONG, sampling_handler=lambda r: CreateMessageResult("sunny", "m"),
                capabilities={"sampling": {"tools": {}}}):
        answer = srv.ask("sampling/createMessage", {"messages": messages, "maxTokens": 5})
    assert answer["result"]["content"] == {"type": "text", "text": "sunny"}


def test_a_listing_that_fails_is_not_made_again_by_every_call(scripted):
    """Found by the issue-12 suite-time review: a tools/list whose connection the server dropped
    (retried, with backoff, then ConnectionClosed) was made again before every later call_tool,
    each paying the retries."""
    from http_scripted import DROP

    def handle(seen: Any, msg: Dict[str, Any]) -> Any:
        if msg["method"] == "tools/list":
            return DROP
        return {"content": [{"type": "text", "text": "fine"}]}

    server = scripted(handle)
    with Client(HTTPTransport(server.url), timeout=LONG) as client:
        assert client.call_tool("echo", {}).text == "fine"  # (listed first: it failed, the call went on)
        listed = len(server.requests("tools/list"))
        assert listed >= 1
        for _ in range(3):
            assert client.call_tool("echo", {}).text == "fine"
        assert len(server.requests("tools/list")) == listed


def test_a_handler_answer_json_cannot_encode_reaches_the_server_as_an_internal_error(memory_server, caplog):
    """Found by the issue-14 registry review: an answer the JSON encoder refuses (a lone surrogate,
    NaN, a set) was dropped with a debug log, and the server waited for ever for it."""
    from mcpclient import CreateMessageResult

    srv = memory_server()
    with Client(srv.transport, timeout=LONG, sampling_handler=lambda r: CreateMessageResult("bad \ud800", "m")):
        answer = srv.ask("sampling/createMessage", {"messages": [ASK], "maxTokens": 5})
    assert answer["error"]["code"] == -32603 and "result" not in answer
    assert "cannot be sent" in caplog.text
