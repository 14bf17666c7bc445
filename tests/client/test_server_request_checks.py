"""What the client checks on server -> client requests before its handlers see them or the
server sees their answers: root URIs normalized and refused where they are given, elicitation
answers checked against the requested schema, sampling's tool_use / tool_result pairing, and a
handler answer JSON cannot encode. The scripted in-memory server, and the official SDK's.
"""
from __future__ import annotations

from typing import Any, Dict, List

import pytest

from conftest import LONG, require_official_sdk
from mcpclient import Client, Handlers

# --- root URIs normalized and checked ----------------------------------------------------


def test_root_uris_are_normalized_before_the_server_sees_them(memory_server):
    """Checking the file:// prefix is not enough: '..' segments (plain or percent-encoded) are
    resolved before a root goes out, so a root that reads like a project directory cannot expose
    /etc. (The wire is read off a scripted peer: the official SDK's server normalizes what it
    receives itself.)"""
    from mcpclient import Root

    srv = memory_server()
    roots = ["file:///srv/app/../../etc", Root("file://localhost/tmp/%2e%2e/work/./x/", "X")]
    with Client(srv.transport, timeout=LONG, handlers=Handlers(roots=roots)) as client:
        assert srv.ask("roots/list")["result"] == {"roots": [{"uri": "file:///etc"},
                                                             {"uri": "file:///work/x/", "name": "X"}]}
        client.set_roots(lambda: ["file:///a/b/%2E%2E/c d"])  # a callable's roots: each time they are asked for
        assert srv.ask("roots/list")["result"] == {"roots": [{"uri": "file:///a/c%20d"}]}


def test_normalized_roots_reach_the_official_server():
    import json

    from conftest import OFFICIAL_SERVER

    require_official_sdk()
    with Client(OFFICIAL_SERVER, timeout=LONG, protocol="2025-11-25", handlers=Handlers(roots=["file:///a/b/../c"])) as client:
        assert json.loads(client.call_tool("roots").text) == [["file:///a/c", None]]


@pytest.mark.parametrize("uri", ["file://relative/path", "file:relative", "file:///a?b=1", "file:///a#frag",
                                 "file:///a%00b", "file:///a%ffb", "https://example.com/x"])
def test_a_bad_root_uri_is_refused_where_it_is_given(uri):
    from conftest import TESTING_SERVER

    with pytest.raises(ValueError, match="root"):
        Client(TESTING_SERVER, handlers=Handlers(roots=[uri]))
    client = Client(TESTING_SERVER, handlers=Handlers(roots=[]))  # (never connected: nothing to close but the object)
    with pytest.raises(ValueError, match="root"):
        client.set_roots([uri])
    client.close()


# --- elicitation answers checked against the requested schema --------------------------

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
    """Answers are checked against the requested schema, not only for field names and primitive
    types. The handler is user code: its invalid answer is logged and the server answered -32603,
    the value not quoted."""
    from mcpclient import ElicitationResult

    srv = memory_server()
    with Client(srv.transport, timeout=LONG, handlers=Handlers(elicitation=lambda r: ElicitationResult.accept(content))):
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
    with Client(srv.transport, timeout=LONG, handlers=Handlers(elicitation=lambda r: ElicitationResult.accept(good))):
        assert srv.ask("elicitation/create", FORM)["result"] == {"action": "accept", "content": good}
    srv = memory_server()
    with Client(srv.transport, timeout=LONG, handlers=Handlers(elicitation=accept_defaults)):
        assert srv.ask("elicitation/create", FORM)["result"] == {"action": "decline"}  # name: required, no default


def test_the_official_servers_form_still_accepts_its_defaults():
    from conftest import OFFICIAL_SERVER
    from mcpclient import accept_defaults

    require_official_sdk()
    with Client(OFFICIAL_SERVER, timeout=LONG, protocol="2025-11-25", handlers=Handlers(elicitation=accept_defaults)) as client:
        assert client.call_tool("elicit_form", {"message": "Who?"}).text == \
            'accept {"age": 30, "color": "green", "name": "anon", "subscribe": true}'


# --- sampling tool_use / tool_result pairing ---------------------------------------------

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
    """Such a request never reaches the user's handler (and their LLM): the server gets -32602."""
    called: List[Any] = []
    srv = memory_server()
    with Client(srv.transport, timeout=LONG, capabilities={"sampling": {"tools": {}}}, handlers=Handlers(sampling=lambda r: called.append(r) or {})):
        error = srv.ask("sampling/createMessage", {"messages": messages, "maxTokens": 5})["error"]
    assert error["code"] == -32602 and called == []


def test_a_well_paired_sampling_request_reaches_the_handler(memory_server):
    from mcpclient import CreateMessageResult

    srv = memory_server()
    messages = [ASK, {"role": "assistant", "content": [TEXT] + _use("a", "b")["content"]}, _result("b", "a"),
                {"role": "assistant", "content": TEXT}, ASK]
    with Client(srv.transport, timeout=LONG, capabilities={"sampling": {"tools": {}}}, handlers=Handlers(sampling=lambda r: CreateMessageResult("sunny", "m"))):
        answer = srv.ask("sampling/createMessage", {"messages": messages, "maxTokens": 5})
    assert answer["result"]["content"] == {"type": "text", "text": "sunny"}


def test_a_handler_answer_json_cannot_encode_reaches_the_server_as_an_internal_error(memory_server, caplog):
    """An answer the JSON encoder refuses (a lone surrogate, NaN, a set) reaches the server as
    -32603, and the log says it cannot be sent: the server is never left waiting for it."""
    from mcpclient import CreateMessageResult

    srv = memory_server()
    with Client(srv.transport, timeout=LONG, handlers=Handlers(sampling=lambda r: CreateMessageResult("bad \ud800", "m"))):
        answer = srv.ask("sampling/createMessage", {"messages": [ASK], "maxTokens": 5})
    assert answer["error"]["code"] == -32603 and "result" not in answer
    assert "cannot be sent" in caplog.text
