"""The 2026-07-28 rules as pure functions: header value encoding, x-mcp-header validation,
Mcp-Param-* headers, _meta merging, resultType, era settings."""
from __future__ import annotations

import base64

import pytest

from mcpclient.errors import ProtocolError
from mcpclient.protocol.stateless import (
    encode_header_value, header_params, mutual_version, param_headers, request_meta, result_type, with_meta,
)
from mcpclient.protocol.negotiation import era_setting


@pytest.mark.parametrize("value, wire", [
    ("us-west1", "us-west1"), ("us west 1", "us west 1"), ("", ""), (42, "42"), (-7, "-7"),
    (True, "true"), (False, "false"), ("test-method", "test-method"),
])
def test_plain_values_are_sent_as_they_are(value, wire):
    assert encode_header_value(value) == wire


@pytest.mark.parametrize("value", ["Hello, 世界", " padded ", " lead", "trail ", "line1\nline2", "a\r\nb",
                                   "\tindented", "=?base64?abc?="])
def test_unsafe_values_are_base64_wrapped(value):
    wire = encode_header_value(value)
    assert wire.startswith("=?base64?") and wire.endswith("?=")
    assert base64.b64decode(wire[len("=?base64?"):-2]).decode("utf-8") == value


def prop(kind, header):
    return {"type": kind, "x-mcp-header": header}


def test_header_params_accepts_string_integer_boolean_reachable_through_properties():
    schema = {"type": "object", "properties": {
        "region": prop("string", "Region"), "n": prop("integer", "N"), "flag": prop("boolean", "Flag"),
        "nested": {"type": "object", "properties": {"deep": prop("string", "Deep")}}, "plain": {"type": "string"}}}
    assert sorted(header_params(schema)) == [(("flag",), "Flag"), (("n",), "N"), (("nested", "deep"), "Deep"),
                                              (("region",), "Region")]
    assert header_params({"type": "object"}) == []


@pytest.mark.parametrize("schema, reason", [
    ({"properties": {"a": prop("string", "")}}, "empty"),
    ({"properties": {"a": prop("object", "A")}}, "object"),
    ({"properties": {"a": prop("array", "A")}}, "array"),
    ({"properties": {"a": prop("null", "A")}}, "null"),
    ({"properties": {"a": prop("number", "A")}}, "number"),
    ({"properties": {"a": prop("string", "Region"), "b": prop("string", "Region")}}, "twice"),
    ({"properties": {"a": prop("string", "MyField"), "b": prop("string", "myfield")}}, "twice"),
    ({"properties": {"a": prop("string", "My Region")}}, "token"),
    ({"properties": {"a": prop("string", "Region:Primary")}}, "token"),
    ({"properties": {"a": prop("string", "Région")}}, "token"),
    ({"properties": {"a": prop("string", "Region\t1")}}, "token"),
    ({"properties": {"a": {"type": "array", "items": prop("string", "Item")}}}, "reachable"),
    ({"properties": {"a": {"anyOf": [prop("string", "Any")]}}}, "reachable"),
])
def test_invalid_annotations_are_refused_with_the_reason(schema, reason):
    with pytest.raises(ValueError, match=reason):
        header_params(dict(schema, type="object"))


def test_param_headers_skip_null_absent_and_huge_values():
    spec = [(("region",), "Region"), (("verbose",), "Verbose"), (("n",), "N"), (("big",), "Big"), (("gone",), "Gone")]
    args = {"region": " x", "verbose": None, "n": 3, "big": 2 ** 60}
    assert param_headers(args, spec) == {"Mcp-Param-Region": encode_header_value(" x"), "Mcp-Param-N": "3"}


def test_meta_is_merged_into_params_without_losing_the_callers_keys():
    meta = request_meta("2026-07-28", {}, {"name": "c", "version": "1"}, "warning")
    assert meta["io.modelcontextprotocol/logLevel"] == "warning"
    assert with_meta(None, meta) == {"_meta": meta}
    merged = with_meta({"name": "t", "_meta": {"progressToken": 5}}, meta)
    assert merged["_meta"]["progressToken"] == 5 and merged["_meta"]["io.modelcontextprotocol/protocolVersion"]
    assert merged["name"] == "t"


def test_result_type_defaults_to_complete_and_rejects_junk():
    assert result_type({}) == "complete" and result_type({"resultType": "input_required"}) == "input_required"
    with pytest.raises(ProtocolError):
        result_type({"resultType": 5})
    with pytest.raises(ProtocolError):
        result_type([])


def test_versions_and_settings():
    assert mutual_version(["2026-07-28", "2025-11-25"]) == "2026-07-28"
    assert mutual_version(["2025-11-25"]) is None and mutual_version("x") is None
    assert era_setting("auto") == ("auto", "2026-07-28", "2025-11-25")
    assert era_setting("legacy") == ("legacy", None, "2025-11-25")
    assert era_setting("2026-07-28") == ("modern", "2026-07-28", None)
    assert era_setting("2025-06-18") == ("legacy", None, "2025-06-18")
    with pytest.raises(ValueError):
        era_setting("2099-01-01")


# --- against a scripted 2026 server on a MemoryTransport -------------------------------------------

from typing import Any, Dict, List  # noqa: E402

from mcpclient import Client, ElicitationResult, InputRoundsExceeded  # noqa: E402

from conftest import LONG  # noqa: E402
from helpers import ScriptedServer  # noqa: E402


@pytest.fixture
def modern_server():
    servers: List[ScriptedServer] = []

    def make(handle, **kwargs) -> ScriptedServer:
        servers.append(ScriptedServer(handle, modern=True, **kwargs))
        return servers[-1]

    yield make
    for s in servers:
        s.stop()


def sent(server: ScriptedServer, method: str) -> List[Dict[str, Any]]:
    return [m for m in server.received if m.get("method") == method]


def test_results_are_cached_while_fresh_and_invalidated_by_notifications(modern_server):
    ttl = {"tools/list": 60000}

    def handle(method, params):
        if method == "tools/list":
            return {"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "ttlMs": ttl["tools/list"],
                    "cacheScope": "private", "resultType": "complete"}
        if method == "prompts/list":
            return {"prompts": [], "ttlMs": 0}
        return {}

    server = modern_server(handle, capabilities={"tools": {"listChanged": True}, "prompts": {}})
    with Client(server.transport, timeout=LONG) as client:
        assert client.protocol_version == "2026-07-28" and client.server_info.name == "scripted-2026"
        client.list_tools()
        client.list_tools()
        assert len(sent(server, "tools/list")) == 1  # the second came from the cache
        client.invalidate_cache()
        client.list_tools()
        assert len(sent(server, "tools/list")) == 2
        client.list_prompts()
        client.list_prompts()
        assert len(sent(server, "prompts/list")) == 2  # ttlMs 0: never cached
        meta = sent(server, "tools/list")[0]["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcpclient"
    plain = modern_server(handle, capabilities={"tools": {}})
    with Client(plain.transport, timeout=LONG, cache=False) as client:
        client.list_tools()
        client.list_tools()
        assert len(sent(plain, "tools/list")) == 2


def test_input_required_rounds_run_the_handlers_with_fresh_ids_and_the_state_echoed(modern_server):
    rounds: List[Dict[str, Any]] = []

    def handle(method, params):
        if method != "resources/read":
            return {}
        rounds.append(params)
        if "inputResponses" not in params:
            return {"resultType": "input_required", "requestState": "opaque-1",
                    "inputRequests": {"who": {"method": "elicitation/create", "params": {
                        "message": "Who?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}
        answer = params["inputResponses"]["who"]["content"]["name"]
        return {"contents": [{"uri": params["uri"], "text": f"hi {answer}"}], "ttlMs": 60000}

    server = modern_server(handle, capabilities={"resources": {}})
    with Client(server.transport, timeout=LONG,
                elicitation_handler=lambda r: ElicitationResult.accept({"name": "Ada"})) as client:
        assert client.read_resource("test://x")[0].text == "hi Ada"
        assert client.read_resource("test://x")[0].text == "hi Ada"  # not cached: it took a round
    ids = [m["id"] for m in sent(server, "resources/read")]
    assert len(ids) == 4 and len(set(ids)) == 4
    assert rounds[1]["requestState"] == "opaque-1" and "requestState" not in rounds[0]


def test_endless_input_rounds_stop_with_a_typed_error(modern_server):
    def handle(method, params):
        return {"resultType": "input_required", "requestState": "again"}

    server = modern_server(handle, capabilities={"tools": {}})
    with Client(server.transport, timeout=LONG, max_input_rounds=3) as client:
        with pytest.raises(InputRoundsExceeded):
            client.call_tool("loop")
    assert len(sent(server, "tools/call")) == 4


def test_a_2026_call_future_can_be_cancelled_while_it_runs(modern_server):
    def handle(method, params):
        return None  # never answers tools/call

    server = modern_server(handle, capabilities={"tools": {}})
    with Client(server.transport, timeout=LONG) as client:
        future = client.call_tool_future("slow")
        assert server.wait_for(lambda m: m.get("method") == "tools/call") is not None
        assert future.cancel() and future.cancelled()
        cancel = server.wait_for(lambda m: m.get("method") == "notifications/cancelled")
        assert cancel is not None and cancel["params"]["requestId"] == sent(server, "tools/call")[0]["id"]


def test_cached_results_are_copies(modern_server):
    def handle(method, params):
        return {"contents": [{"uri": params.get("uri"), "text": "hello"}], "ttlMs": 60000}

    server = modern_server(handle, capabilities={"resources": {}})
    with Client(server.transport, timeout=LONG) as client:
        first = client.request("resources/read", {"uri": "test://x"})
        first["contents"][0]["text"] = "changed by caller 1"
        assert client.request("resources/read", {"uri": "test://x"})["contents"][0]["text"] == "hello"


def test_a_listen_the_server_ends_leaves_nothing_pending(modern_server):
    def handle(method, params):
        return None

    server = modern_server(handle, capabilities={"tools": {}})
    with Client(server.transport, timeout=LONG) as client:
        subscription = client.listen(tools=True)
        listen = server.wait_for(lambda m: m.get("method") == "subscriptions/listen")
        meta = {"io.modelcontextprotocol/subscriptionId": listen["id"]}
        server.notify("notifications/subscriptions/acknowledged", {"notifications": {"toolsListChanged": True}, "_meta": meta})
        server.notify("notifications/tools/list_changed", {"_meta": meta})
        assert subscription.get(LONG).kind == "tools_changed"
        server.notify("notifications/cancelled", {"requestId": listen["id"]})
        assert subscription.get(LONG) is None and subscription.closed  # ended quietly
        assert client._core.subscriptions._listens == {} and client.session._pending == {}
