"""Client behaviour that needs a server to misbehave in a precise way: a scripted in-memory peer.

``helpers.ScriptedServer`` answers ``initialize`` and then whatever ``handle(method, params)``
returns, so a test states exactly what the server says (a repeated cursor, an odd page).
"""
from __future__ import annotations

import time

import pytest

from mcpclient import Client, MemoryTransport, ProtocolError, RequestTimeout
from mcpclient.testing import server_command

from conftest import LONG
from helpers import ScriptedServer

@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedServer(handle, **kwargs))


def test_pagination_stops_on_a_repeated_cursor(scripted, caplog):
    pages = {None: (["a", "b"], "c1"), "c1": (["c"], "c2"), "c2": (["d"], "c1")}  # c2 points back to c1

    def handle(method, params):
        names, cursor = pages[params.get("cursor")]
        return {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names], "nextCursor": cursor}

    server = scripted(handle)
    with Client(server.transport, timeout=LONG) as client:
        assert [t.name for t in client.list_tools()] == ["a", "b", "c", "d"]
    assert any("repeated cursor" in r.getMessage() for r in caplog.records)
    assert [m.get("params", {}).get("cursor") for m in server.received if m.get("method") == "tools/list"] == \
        [None, "c1", "c2"]  # the repeated c1 is never requested again


def test_an_empty_string_cursor_is_not_the_end(scripted):
    pages = {None: (["a"], ""), "": (["b"], None)}

    def handle(method, params):
        names, cursor = pages[params.get("cursor")]
        page = {"prompts": [{"name": n} for n in names]}
        if cursor is not None:
            page["nextCursor"] = cursor
        return page

    with Client(scripted(handle).transport, timeout=LONG) as client:
        assert [p.name for p in client.list_prompts()] == ["a", "b"]


def test_a_malformed_page_is_a_protocol_error(scripted):
    with Client(scripted(lambda m, p: {"tools": "not a list"}).transport, timeout=LONG) as client:
        with pytest.raises(ProtocolError, match="tools"):
            client.list_tools()


def test_output_is_not_validated_for_an_error_result_or_with_listed_only_for_an_unlisted_tool(scripted):
    """With validate_output="listed" an unlisted tool is not validated (by default, since issue 12,
    the first call lists the tools: tests/test_checks.py)."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    def handle(method, params):
        if method == "tools/list":
            return {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}]}
        if params["arguments"].get("fail"):
            return {"content": [{"type": "text", "text": "broken"}], "isError": True}
        return {"content": [], "structuredContent": {"n": "not an int"}}

    with Client(scripted(handle).transport, timeout=LONG, validate_output="listed") as client:
        assert client.call_tool("t").structured_content == {"n": "not an int"}  # schema not known yet
        client.list_tools()
        assert client.call_tool("t", {"fail": True}).is_error  # error results are not validated
        assert client.call_tool("t", {"fail": True}).text == "broken"


def test_the_hard_cap_stops_a_call_that_keeps_reporting_progress():
    # slow: 20 steps of 0.1 s = 2 s; progress resets the 0.5 s timeout, but the cap is 0.6 s in all.
    with Client(server_command(), timeout=LONG, reset_timeout_on_progress=True, max_total_timeout=0.6) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            client.call_tool("slow", {"steps": 20, "delay": 0.1}, timeout=0.5)
        assert 0.55 <= time.monotonic() - started < 1.9
        assert info.value.method == "tools/call"
        assert client.call_tool("echo", {"text": "still fine"}).text == "still fine"


def test_initialize_is_never_cancelled():
    # A server that never answers initialize: the handshake times out, and no cancellation is sent.
    transport, peer = MemoryTransport.pair()
    try:
        with pytest.raises(RequestTimeout):
            Client(transport, timeout=0.2, protocol="legacy").connect()
        sent = []
        msg = peer.receive(timeout=LONG)
        while msg is not None:
            sent.append(msg["method"])
            msg = peer.receive(timeout=0.05)
        assert sent == ["initialize"]
    finally:
        peer.close()
