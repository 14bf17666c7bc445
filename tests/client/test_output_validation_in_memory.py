"""Output validation against a scripted in-memory server, for timings a real server cannot
be made to keep: a listing that raced a ``tools/list_changed`` never puts the old schema back, a
future's validation runs on a worker (never the reader, which keeps answering other calls), and
nothing is validated for an error result, or for an unlisted tool with ``validate_output="listed"``.
"""
from __future__ import annotations

import threading
from typing import Any, Dict, List

import pytest

from conftest import LONG
from helpers import ScriptedServer, Twins
from mcpclient import Client, Handlers, RequestTimeout


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedServer(handle, **kwargs))


def test_output_is_not_validated_for_an_error_result_or_with_listed_only_for_an_unlisted_tool(scripted):
    """With validate_output="listed" an unlisted tool is not validated (by default
    the first call lists the tools: tests/client/test_output_validation.py)."""
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


pytestmark = pytest.mark.timeout(60)


# --- a listing racing a tools/list_changed --------------------------------------------------------


def test_a_listing_that_raced_a_tools_change_does_not_put_the_old_schema_back(scripted):
    """A ``tools/list_changed`` handled on the notification thread while a listing runs on the
    caller's: the old ``outputSchema`` does not come back, and a result valid for the new tool
    passes validation."""
    old_schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    answer_listing = threading.Event()
    listing_sent = threading.Event()

    new_schema = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    listings: List[int] = []

    def handle(method: str, params: Dict[str, Any]) -> Any:
        if method == "tools/list":
            listings.append(1)
            if len(listings) > 1:  # listed again after the change (the call lists the unknown tool)
                return {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": new_schema}]}
            listing_sent.set()
            assert answer_listing.wait(LONG)
            return {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": old_schema}]}
        return {"content": [], "structuredContent": {"s": "the new tool's output"}}

    server = scripted(handle, capabilities={"tools": {"listChanged": True}})
    changed = threading.Event()
    with Client(server.transport, timeout=LONG, handlers=Handlers(on_notification=lambda method, params: changed.set())) as client:
        listing = Twins(client).list_tools()
        assert listing_sent.wait(LONG)
        server.notify("notifications/tools/list_changed")  # the tool changed while it was being listed
        assert changed.wait(LONG)  # routed (and the table forgotten) before the listing's answer
        answer_listing.set()
        assert [t.name for t in listing.result(LONG)] == ["t"]
        result = client.call_tool("t")  # not validated against the schema the change made stale
        assert result.structured_content == {"s": "the new tool's output"}
    assert len(listings) == 2  # the stale listing was not kept: the call listed the new tool


# --- a future's validation runs on a worker -------------------------------------------------------


def test_a_futures_validation_runs_off_the_reader_and_never_stalls_other_calls(scripted, monkeypatch):
    """A future's transform (output validation, the first ``import jsonschema``, the cache's deep
    copy) runs off the reader thread: while it runs, other calls on the connection are answered."""
    import mcpclient.protocol.params as params_module

    schema = {"type": "object"}
    held, release = threading.Event(), threading.Event()
    where: List[str] = []
    real = params_module.validate_structured

    def slow_validation(value: Any, schema: Any, tool: Any = None) -> None:
        where.append(threading.current_thread().name)
        held.set()
        release.wait(LONG)
        real(value, schema, tool)

    monkeypatch.setattr(params_module, "validate_structured", slow_validation)
    server = scripted(lambda method, params: {"tools": [{"name": "t", "inputSchema": {}, "outputSchema": schema}]}
                      if method == "tools/list" else {"content": [], "structuredContent": {}})
    with Client(server.transport, timeout=LONG) as client:
        client.list_tools()
        future = client.call_tool_future("t")
        try:
            assert held.wait(LONG)
            client.ping(timeout=5)  # answered while the validation is still running
        except RequestTimeout:
            pytest.fail("a ping could not be answered while a future's result was being validated")
        finally:
            release.set()
        assert future.result(LONG).structured_content == {}
        assert len(where) == 1 and "-worker-" in where[0], where
