"""Resource subscriptions and listens against a scripted in-memory server: changed from
callbacks, timed out off the timer thread, carried by the listen that acknowledges them, ended
when the server or the connection ends them, and the events they deliver in order.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Any, Dict, List

import pytest

from conftest import LONG, wait_until
from helpers import ScriptedServer, Twins
from mcpclient import Client, ClientClosedError, ConnectionClosed, Handlers, RequestTimeout, SubscriptionLost
from helpers import tool_changes


pytestmark = pytest.mark.timeout(60)


ACK = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedServer(handle, **kwargs))


def listens(server: ScriptedServer) -> List[Dict[str, Any]]:
    return [m for m in server.received if m.get("method") == "subscriptions/listen"]


def acknowledge(server: ScriptedServer, listen: Dict[str, Any]) -> None:
    server.notify(ACK, {"notifications": listen["params"]["notifications"],
                        "_meta": {SUBSCRIPTION_ID: listen["id"]}})


def test_subscribe_resource_from_a_notification_callback_is_acknowledged(scripted):
    """A subscription made and waited for inside a notification callback is acknowledged: the
    acknowledgement does not need the notification thread, which is the one waiting."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    outcome: Dict[str, Any] = {}
    done = threading.Event()

    def on_notification(method: str, params: Dict[str, Any]) -> None:
        if method == "notifications/message" and not done.is_set():
            future = Twins(client).subscribe_resource("test://a", timeout=LONG)
            listen = server.wait_for(lambda m: m.get("method") == "subscriptions/listen")
            acknowledge(server, listen)
            try:
                outcome["result"] = future.result(timeout=LONG)
            except Exception as exc:  # noqa: BLE001 - asserted below
                outcome["result"] = exc
            done.set()

    with Client(server.transport, timeout=LONG, handlers=Handlers(on_notification=on_notification)) as client:
        server.notify("notifications/message", {"level": "info", "data": "go"})
        assert done.wait(LONG)
        assert outcome == {"result": None}


def test_a_subscription_timeout_is_settled_off_the_timer_thread(scripted):
    """A subscription that times out is settled off the timer thread: its done-callbacks run on
    a worker (where a blocking call works), and its URI is dropped again."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    seen: Dict[str, Any] = {}
    called = threading.Event()

    with Client(server.transport, timeout=LONG) as client:
        future = Twins(client).subscribe_resource("test://a", timeout=0.2)

        def on_done(_: Any) -> None:
            seen["thread"] = threading.current_thread().name
            client.ping(timeout=LONG)  # a blocking call works there
            called.set()

        future.add_done_callback(on_done)
        assert called.wait(LONG)
        with pytest.raises(RequestTimeout):
            future.result(timeout=0)
        assert "-worker-" in seen["thread"], seen
        assert client._channel.subscriptions._subscribed == []  # the URI was dropped again


def test_changes_made_back_to_back_all_wait_for_the_listen_that_carries_them(scripted):
    """Two changes made back to back: the second's listen carries both URIs, neither future ends
    before that listen is acknowledged (the first's is replaced, not failed), then both succeed."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    with Client(server.transport, timeout=LONG) as client:
        first = Twins(client).subscribe_resource("test://a")
        second = Twins(client).subscribe_resource("test://b")
        assert server.wait_for(lambda m: len(listens(server)) == 2)
        latest = listens(server)[-1]
        assert latest["params"]["notifications"]["resourceSubscriptions"] == ["test://a", "test://b"]
        assert not first.done() and not second.done()
        acknowledge(server, latest)
        assert first.result(LONG) is None and second.result(LONG) is None


def test_listen_on_a_dead_handshake_connection_ends_at_once():
    """``listen()`` on a handshake connection the server already left ends with
    ``ConnectionClosed``, though it registers after the connection-lost clean-up ran."""
    client = Client([sys.executable, "-c", "import sys, json; sys.stdin.readline(); print(json.dumps({'jsonrpc':"
                     "'2.0','id':1,'result':{'protocolVersion':'2025-11-25','capabilities':{'tools':{'listChanged':"
                     "True}},'serverInfo':{'name':'x','version':'1'}}}), flush=True); sys.stdin.readline()"],
                    protocol="legacy", timeout=LONG)
    with client:
        assert wait_until(lambda: client._is_closed)  # the server exits after the handshake
        with pytest.raises(ConnectionClosed):  # at once (the connection is known lost), or from get()
            subscription = client.listen(tools=True)
            subscription.get(timeout=LONG)


def test_a_listen_the_server_ends_at_once_ends_whenever_it_lands(scripted):
    """A stdio ``notifications/cancelled`` that comes before ``listen()`` registered its request
    is not dropped: the subscription ends and its request does not stay pending."""
    def handle(method: str, params: Dict[str, Any]) -> Any:
        return None

    for _ in range(10):
        server = scripted(handle, capabilities={"tools": {"listChanged": True}}, modern=True)
        stop = threading.Event()

        def end_listens() -> None:  # answers each listen with its end at once
            ended = set()
            while not stop.is_set():
                for listen in listens(server):
                    if listen["id"] not in ended:
                        ended.add(listen["id"])
                        server.notify("notifications/cancelled", {"requestId": listen["id"]})
                stop.wait(0.001)

        ender = threading.Thread(target=end_listens)
        ender.start()
        try:
            with Client(server.transport, timeout=LONG) as client:
                subscription = client.listen(tools=True)
                assert subscription.get(timeout=LONG) is None and subscription.closed
                assert client._session._pending == {}
        finally:
            stop.set()
            ender.join(LONG)


def test_subscribe_resource_says_why_when_its_listen_ends_unacknowledged(scripted):
    """A listen the server ends (``notifications/cancelled``) before acknowledging it fails the
    change with ``SubscriptionLost`` saying so; close() fails it with ``ClientClosedError``
    (each message names its cause)."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    with Client(server.transport, timeout=LONG) as client:
        future = Twins(client).subscribe_resource("test://a")
        listen = server.wait_for(lambda m: m.get("method") == "subscriptions/listen")
        server.notify("notifications/cancelled", {"requestId": listen["id"]})
        with pytest.raises(SubscriptionLost, match="the server ended the subscription"):
            future.result(timeout=LONG)
        pending = Twins(client).subscribe_resource("test://b")
        assert server.wait_for(lambda m: len(listens(server)) == 2)
    with pytest.raises(ClientClosedError):
        pending.result(timeout=LONG)


def test_a_subscribe_future_ends_when_a_later_change_leaves_nothing_to_listen_for(scripted):
    """``subscribe_resource_future(a)`` then ``unsubscribe_resource(a)``: the first future ends,
    rather than waiting for an acknowledgement no listen would ever bring (forever with
    ``timeout=None``)."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    with Client(server.transport, timeout=LONG) as client:
        first = Twins(client).subscribe_resource("test://a", timeout=None)
        assert server.wait_for(lambda m: m.get("method") == "subscriptions/listen")
        client.unsubscribe_resource("test://a")  # no URI left: no listen, in force at once
        assert first.result(timeout=LONG) is None
        assert client._channel.subscriptions._waiters == []


def test_an_on_event_that_raises_does_not_stop_the_change_handling(scripted):
    """An exception from a ``listen(on_event=)`` callback skips none of the rest of the
    notification's handling: the notification handler, the tool-schema and cache invalidation."""
    server = scripted(lambda method, params: {"tools": []} if method == "tools/list" else None,
                      capabilities={"tools": {"listChanged": True}})
    changed = threading.Event()

    def on_event(event: Any) -> None:
        raise RuntimeError("a bug in the user's callback")

    with Client(server.transport, timeout=LONG, protocol="legacy",
                handlers=Handlers(on_notification=tool_changes(changed.set))) as client:
        with client.listen(tools=True, on_event=on_event) as subscription:
            server.notify("notifications/tools/list_changed")
            assert subscription.get(timeout=LONG).kind == "tools_changed"
            assert changed.wait(LONG)


def test_events_before_listen_registered_its_request_reach_on_event_on_the_notification_thread_in_order(scripted):
    """Events the server sent before ``listen()`` registered its request reach ``on_event`` on
    the notification thread, in order; replayed on the caller's thread, newer ones could come
    first."""
    kinds = ["notifications/tools/list_changed", "notifications/prompts/list_changed",
             "notifications/resources/list_changed"]

    def handle(method: str, params: Dict[str, Any]) -> Any:
        if method == "subscriptions/listen":
            listen = listens(server)[-1]
            acknowledge(server, listen)
            for kind in kinds[:2]:
                server.notify(kind, {"_meta": {SUBSCRIPTION_ID: listen["id"]}})
        return None

    server = scripted(handle, capabilities={"tools": {"listChanged": True}, "prompts": {"listChanged": True},
                                            "resources": {"listChanged": True}}, modern=True)
    seen: List[Any] = []
    with Client(server.transport, timeout=LONG) as client:
        router = client._channel.subscriptions
        send = client._channel.call

        def send_then_let_the_events_come_first(method: str, *args: Any, **kwargs: Any) -> Any:
            future = send(method, *args, **kwargs)
            if method == "subscriptions/listen":  # hold listen() until its events are all in
                assert wait_until(lambda: len(router._early.get(future.request_id, [])) == 3)
            return future

        client._channel.call = send_then_let_the_events_come_first  # type: ignore[method-assign]
        subscription = client.listen(tools=True, prompts=True, resources=True,
                                     on_event=lambda event: seen.append((event.kind, threading.current_thread().name)))
        server.notify(kinds[2], {"_meta": {SUBSCRIPTION_ID: subscription.subscription_id}})
        assert subscription.wait_acknowledged(LONG)
        assert [subscription.get(timeout=LONG).kind for _ in range(3)] == [
            "tools_changed", "prompts_changed", "resources_changed"]
        assert [kind for kind, _ in seen] == ["tools_changed", "prompts_changed", "resources_changed"]
        assert all(name.endswith("-notify") for _, name in seen), seen
        subscription.close()


# --- a subscription change behind another ---------------------------------------------------------


def test_a_subscription_change_behind_another_keeps_its_own_timeout(scripted):
    """A first change waits (up to its timeout, here ``LONG``) for the server to acknowledge its
    listen; a second ``subscribe_resource(timeout=0.3)`` meanwhile fails at its own timeout, not
    after the first one's."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    outcome: List[Any] = []

    def first() -> None:
        try:
            client.subscribe_resource("test://a", timeout=LONG)  # never acknowledged
        except Exception as exc:  # noqa: BLE001 - the close() below ends it
            outcome.append(exc)

    with Client(server.transport, timeout=LONG) as client:
        waiter = threading.Thread(target=first, name="test-first-subscriber")
        waiter.start()
        try:
            assert server.wait_for(lambda m: m.get("method") == "subscriptions/listen")
            started = time.monotonic()
            with pytest.raises(RequestTimeout):
                client.subscribe_resource("test://b", timeout=0.3)
            assert time.monotonic() - started < LONG / 2
        finally:
            client.close()
            waiter.join(LONG)
    assert not waiter.is_alive() and isinstance(outcome[0], ClientClosedError)
