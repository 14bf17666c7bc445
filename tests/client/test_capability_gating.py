"""What the server did not declare is refused before anything is sent, the same way in both eras:
``subscribe_resource`` without ``resources.subscribe``, ``listen()`` for kinds without
``listChanged`` (asked for several, it listens for the declared ones and ``acknowledged`` says
which). Against the official SDK's server as most servers are written (no subscriptions), and
a scripted one that records what reached it.
"""
from __future__ import annotations

import sys
from typing import Any, Dict, List

import pytest

from conftest import LONG, SERVERS, require_official_sdk
from helpers import ScriptedServer, Twins
from mcpclient import CapabilityError, Client

require_official_sdk()

pytestmark = pytest.mark.timeout(60)

WITHOUT_SUBSCRIPTIONS = [sys.executable, str(SERVERS / "official_without_subscriptions.py")]
ERAS = ["legacy", "2026-07-28"]


@pytest.fixture(params=ERAS)
def official(request):
    """A connection in each era to the official SDK's server that serves no subscriptions."""
    with Client(WITHOUT_SUBSCRIPTIONS, protocol=request.param, timeout=LONG) as client:
        assert (client.server.protocol_version == "2026-07-28") is (request.param != "legacy")
        assert client.server.capabilities["resources"].get("subscribe") is False
        yield client


def test_subscribe_resource_is_refused_when_the_server_cannot_subscribe_in_either_era(official):
    with pytest.raises(CapabilityError) as caught:
        official.subscribe_resource("test://plain")
    assert caught.value.capability == "resources.subscribe"
    with pytest.raises(CapabilityError):
        Twins(official).subscribe_resource("test://plain")
    with pytest.raises(CapabilityError):
        official.unsubscribe_resource("test://plain")
    assert official.call_tool("echo", {"text": "still here"}).text == "still here"


def test_listen_for_tool_changes_is_refused_when_the_server_announces_none_in_either_era(official):
    with pytest.raises(CapabilityError) as caught:
        official.listen(tools=True)
    assert caught.value.capability == "tools.listChanged"
    assert caught.value.method == "subscriptions/listen"
    with pytest.raises(CapabilityError):
        official.listen(tools=True, prompts=True, resources=True, resource_uris=["test://plain"])
    assert official.call_tool("echo", {"text": "still here"}).text == "still here"


def sent(server: ScriptedServer, method: str) -> List[Dict[str, Any]]:
    return [m for m in server.received if m.get("method") == method]


@pytest.mark.parametrize("modern", [False, True], ids=["handshake", "2026"])
def test_listen_asked_for_several_kinds_listens_for_the_declared_ones(started, modern):
    def handle(method: str, params: Any) -> Any:
        if method == "subscriptions/listen":
            server.notify("notifications/subscriptions/acknowledged", {
                "notifications": params["notifications"],
                "_meta": {"io.modelcontextprotocol/subscriptionId": server.received[-1]["id"]}})
            return None  # a listen stays open
        return {}

    server = started(ScriptedServer(handle, capabilities={"tools": {"listChanged": True}, "resources": {}},
                                    modern=modern))
    with Client(server.transport, timeout=LONG) as client:
        subscription = client.listen(tools=True, prompts=True, resources=True, resource_uris=["test://a"])
        assert subscription.wait_acknowledged(LONG)
        assert subscription.acknowledged == {"toolsListChanged": True}
        assert sent(server, "resources/subscribe") == []
        listens = sent(server, "subscriptions/listen")
        if modern:
            assert [m["params"]["notifications"] for m in listens] == [{"toolsListChanged": True}]
        else:
            assert listens == []
        subscription.close()


@pytest.mark.parametrize("modern", [False, True], ids=["handshake", "2026"])
def test_nothing_is_sent_for_a_subscription_the_server_did_not_declare(started, modern):
    server = started(ScriptedServer(lambda method, params: {}, capabilities={"resources": {"listChanged": True}},
                                    modern=modern))
    with Client(server.transport, timeout=LONG) as client:
        with pytest.raises(CapabilityError):
            client.subscribe_resource("test://a")
        with pytest.raises(CapabilityError):
            client.listen(resource_uris=["test://a"])
        client.ping()
        assert sent(server, "resources/subscribe") == sent(server, "subscriptions/listen") == []
