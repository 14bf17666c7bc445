"""The 2026-07-28 (stateless) era against a scripted in-memory server: results cached while
fresh (as copies) and dropped on change notifications, ``input_required`` rounds run with the
client's handlers (fresh ids, the state echoed, endless rounds stopped), a running call future
cancelled, and a listen the server ends leaving nothing pending.
"""
from __future__ import annotations

from typing import Any, Dict, List

import pytest

from conftest import LONG
from helpers import ScriptedServer
from mcpclient import Client, ElicitationResult, Handlers, InputRoundsExceeded, Limits


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
        assert client.server.protocol_version == "2026-07-28" and client.server.name == "scripted-2026"
        client.list_tools()
        client.list_tools()
        assert len(sent(server, "tools/list")) == 1  # the second came from the cache
        client._channel.cache.invalidate()
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
    with Client(server.transport, timeout=LONG, handlers=Handlers(elicitation=lambda r: ElicitationResult.accept({"name": "Ada"}))) as client:
        assert client.read_resource("test://x")[0].text == "hi Ada"
        assert client.read_resource("test://x")[0].text == "hi Ada"  # not cached: it took a round
    ids = [m["id"] for m in sent(server, "resources/read")]
    assert len(ids) == 4 and len(set(ids)) == 4
    assert rounds[1]["requestState"] == "opaque-1" and "requestState" not in rounds[0]


def test_endless_input_rounds_stop_with_a_typed_error(modern_server):
    def handle(method, params):
        return {"resultType": "input_required", "requestState": "again"}

    server = modern_server(handle, capabilities={"tools": {}})
    with Client(server.transport, timeout=LONG, limits=Limits(input_rounds=3)) as client:
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

    server = modern_server(handle, capabilities={"tools": {"listChanged": True}})
    with Client(server.transport, timeout=LONG) as client:
        subscription = client.listen(tools=True)
        listen = server.wait_for(lambda m: m.get("method") == "subscriptions/listen")
        meta = {"io.modelcontextprotocol/subscriptionId": listen["id"]}
        server.notify("notifications/subscriptions/acknowledged", {"notifications": {"toolsListChanged": True}, "_meta": meta})
        server.notify("notifications/tools/list_changed", {"_meta": meta})
        assert subscription.get(LONG).kind == "tools_changed"
        server.notify("notifications/cancelled", {"requestId": listen["id"]})
        assert subscription.get(LONG) is None and subscription.closed  # ended quietly
        assert client._channel.subscriptions._listens == {} and client._session._pending == {}
