"""The engine used the way a demanding program uses it: futures waited on in odd places,
cancelled, timed out, subscriptions changed from callbacks. Each test pins a finding of an
independent review of the issue-9 engine (the finding's number is in the docstring)."""
from __future__ import annotations

import concurrent.futures
import sys
import threading
from typing import Any, Dict, List

import pytest

from conftest import LONG, wait_until
from helpers import ScriptedServer
from mcpclient import Client, ClientClosedError, ConnectionClosed, RequestTimeout, SubscriptionLost
from mcpclient._engine.deadline import Deadline
from mcpclient.testing import server_command

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


def test_a_cancelled_future_counts_as_done_for_wait_and_as_completed(scripted):
    """Finding 4: ``Future.cancel()`` alone never woke ``wait()``/``as_completed()``."""
    server = scripted(lambda method, params: None)  # never answers tools/call
    with Client(server.transport, timeout=LONG) as client:
        future = client.call_tool_future("t")
        waiter = concurrent.futures.ThreadPoolExecutor(1)
        try:
            waited = waiter.submit(concurrent.futures.wait, [future], LONG)
            completed = waiter.submit(lambda: next(concurrent.futures.as_completed([future], LONG)))
            assert future.cancel() and future.cancel()  # a second cancel changes nothing
            done, not_done = waited.result(LONG)
            assert done == {future} and not not_done
            assert completed.result(LONG) is future
        finally:
            waiter.shutdown()


def test_a_blocking_calls_future_is_refused_for_anything_but_result(scripted):
    """Finding 15: an owned call (what a blocking method makes) has no Future state to ask."""
    server = scripted(lambda method, params: {"content": []})
    with Client(server.transport, timeout=LONG) as client:
        call = client.session.call("tools/call", {"name": "t"}, owned=True, deadline=Deadline(LONG))
        for misuse in (call.done, call.cancel, lambda: call.add_done_callback(print), call.exception):
            with pytest.raises(RuntimeError, match="result"):
                misuse()
        assert call.result() == {"content": []}


def test_waiting_on_a_future_from_a_notification_callback_does_not_deadlock():
    """Finding 9: the future's answer was queued behind its progress callbacks, behind the very
    callback that waited for it."""
    box: Dict[str, Any] = {}
    waited = threading.Event()

    def on_log(level: str, logger: Any, data: Any) -> None:
        future = box.get("future")
        if future is not None and not waited.is_set():
            box["text"] = future.result(timeout=LONG / 2).text  # (well before the call's own timeout)
            waited.set()

    with Client(server_command(), on_log=on_log, timeout=6 * LONG) as client:
        client.set_logging_level("debug")
        box["future"] = client.call_tool_future("slow", {"steps": 3, "delay": 0.05}, on_progress=lambda *a: None)
        client.call_tool("log", {"level": "info", "message": "hi"})  # on_log runs on the notification thread
        assert waited.wait(LONG) and box["text"].startswith("done after 3 steps")


def test_subscribe_resource_from_a_notification_callback_is_acknowledged(scripted):
    """Finding 9: the acknowledgement came on the notification thread, which was the one waiting."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    outcome: Dict[str, Any] = {}
    done = threading.Event()

    def on_notification(method: str, params: Dict[str, Any]) -> None:
        if method == "notifications/message" and not done.is_set():
            future = client.subscribe_resource_future("test://a", timeout=LONG)
            listen = server.wait_for(lambda m: m.get("method") == "subscriptions/listen")
            acknowledge(server, listen)
            try:
                outcome["result"] = future.result(timeout=LONG)
            except Exception as exc:  # noqa: BLE001 - asserted below
                outcome["result"] = exc
            done.set()

    with Client(server.transport, timeout=LONG, on_notification=on_notification) as client:
        server.notify("notifications/message", {"level": "info", "data": "go"})
        assert done.wait(LONG)
        assert outcome == {"result": None}


def test_a_subscription_timeout_is_settled_off_the_timer_thread(scripted):
    """Finding 5: the timer settled the future (running done-callbacks there) and sent the
    listen for the remaining URIs itself."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    seen: Dict[str, Any] = {}
    called = threading.Event()

    with Client(server.transport, timeout=LONG) as client:
        future = client.subscribe_resource_future("test://a", timeout=0.2)

        def on_done(_: Any) -> None:
            seen["thread"] = threading.current_thread().name
            client.ping(timeout=LONG)  # a blocking call works there
            called.set()

        future.add_done_callback(on_done)
        assert called.wait(LONG)
        with pytest.raises(RequestTimeout):
            future.result(timeout=0)
        assert "-worker-" in seen["thread"], seen
        assert client._core.subscriptions._subscribed == []  # the URI was dropped again


def test_changes_made_back_to_back_all_wait_for_the_listen_that_carries_them(scripted):
    """Finding 13: the first change's listen was replaced by the second's and its future failed
    (or, racing, succeeded before any listen carrying its URI was acknowledged)."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    with Client(server.transport, timeout=LONG) as client:
        first = client.subscribe_resource_future("test://a")
        second = client.subscribe_resource_future("test://b")
        assert server.wait_for(lambda m: len(listens(server)) == 2)
        latest = listens(server)[-1]
        assert latest["params"]["notifications"]["resourceSubscriptions"] == ["test://a", "test://b"]
        assert not first.done() and not second.done()
        acknowledge(server, latest)
        assert first.result(LONG) is None and second.result(LONG) is None


def test_listen_on_a_dead_handshake_connection_ends_at_once():
    """Finding 8: the subscription was registered after the connection-lost clean-up ran and
    never ended."""
    client = Client([sys.executable, "-c", "import sys, json; sys.stdin.readline(); print(json.dumps({'jsonrpc':"
                     "'2.0','id':1,'result':{'protocolVersion':'2025-11-25','capabilities':{'tools':{'listChanged':"
                     "True}},'serverInfo':{'name':'x','version':'1'}}}), flush=True); sys.stdin.readline()"],
                    protocol="legacy", timeout=LONG)
    with client:
        assert wait_until(lambda: client.is_closed)  # the server exits after the handshake
        with pytest.raises(ConnectionClosed):  # at once (the connection is known lost), or from get()
            subscription = client.listen(tools=True)
            subscription.get(timeout=LONG)


def test_a_listen_the_server_ends_at_once_ends_whenever_it_lands(scripted):
    """Finding 12: a stdio ``notifications/cancelled`` that came before ``listen()`` registered
    its request was dropped; the subscription never ended and its request stayed pending."""
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
                assert client.session._pending == {}
        finally:
            stop.set()
            ender.join(LONG)


def test_done_callbacks_waiting_on_futures_never_starve_the_workers():
    """Finding 10: with every worker waiting in a done-callback for another future, nobody was
    left to finish that future."""
    results: List[str] = []
    done = threading.Event()
    with Client(server_command(), max_workers=2, timeout=LONG) as client:
        # each trigger's done-callback waits for a slower call: both workers wait before any of
        # those is answered, and its answer needs a worker
        others = [client.call_tool_future("slow", {"steps": 1, "delay": 0.3}) for i in range(4)]

        def wait_for_another(i: int) -> Any:
            def callback(_: Any) -> None:
                results.append(others[i].result(timeout=LONG / 2).text)
                if len(results) == 4:
                    done.set()
            return callback

        for i in range(4):
            client.call_tool_future("echo", {"text": f"trigger {i}"}).add_done_callback(wait_for_another(i))
        assert done.wait(LONG), results
        assert results == ["done after 1 steps"] * 4


def test_a_callback_that_calls_sys_exit_does_not_stop_later_callbacks(scripted):
    """Finding 16: ``SystemExit`` from a callback ended the notification thread for good."""
    seen: List[int] = []
    second = threading.Event()

    def on_notification(method: str, params: Dict[str, Any]) -> None:
        seen.append(params["n"])
        if params["n"] == 1:
            sys.exit("the callback gives up")
        second.set()

    server = scripted(lambda method, params: None)
    with Client(server.transport, timeout=LONG, on_notification=on_notification):
        server.notify("notifications/x", {"n": 1})
        server.notify("notifications/x", {"n": 2})
        assert second.wait(LONG), seen
        assert seen == [1, 2]


def test_subscribe_resource_says_why_when_its_listen_ends_unacknowledged(scripted):
    """A listen the server ends (``notifications/cancelled``) before acknowledging it fails the
    change with ``SubscriptionLost`` saying so; close() fails it with ``ClientClosedError``
    (both used to read "ended before the server acknowledged it: None")."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    with Client(server.transport, timeout=LONG) as client:
        future = client.subscribe_resource_future("test://a")
        listen = server.wait_for(lambda m: m.get("method") == "subscriptions/listen")
        server.notify("notifications/cancelled", {"requestId": listen["id"]})
        with pytest.raises(SubscriptionLost, match="the server ended the subscription"):
            future.result(timeout=LONG)
        pending = client.subscribe_resource_future("test://b")
        assert server.wait_for(lambda m: len(listens(server)) == 2)
    with pytest.raises(ClientClosedError):
        pending.result(timeout=LONG)


def test_a_subscribe_future_ends_when_a_later_change_leaves_nothing_to_listen_for(scripted):
    """Review finding: ``subscribe_resource_future(a)`` then ``unsubscribe_resource(a)`` left the
    first future waiting for an acknowledgement no listen would ever bring (forever with
    ``timeout=None``)."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    with Client(server.transport, timeout=LONG) as client:
        first = client.subscribe_resource_future("test://a", timeout=None)
        assert server.wait_for(lambda m: m.get("method") == "subscriptions/listen")
        client.unsubscribe_resource("test://a")  # no URI left: no listen, in force at once
        assert first.result(timeout=LONG) is None
        assert client._core.subscriptions._waiters == []


def test_an_on_event_that_raises_does_not_stop_the_change_handling(scripted):
    """Review finding: an exception from a ``listen(on_event=)`` callback skipped the rest of the
    notification's handling: ``on_tools_changed``, the tool-schema and cache invalidation."""
    server = scripted(lambda method, params: {"tools": []} if method == "tools/list" else None,
                      capabilities={"tools": {"listChanged": True}})
    changed = threading.Event()

    def on_event(event: Any) -> None:
        raise RuntimeError("a bug in the user's callback")

    with Client(server.transport, timeout=LONG, protocol="legacy", on_tools_changed=lambda tools: changed.set()) as client:
        with client.listen(tools=True, on_event=on_event) as subscription:
            server.notify("notifications/tools/list_changed")
            assert subscription.get(timeout=LONG).kind == "tools_changed"
            assert changed.wait(LONG)


def test_events_before_listen_registered_its_request_reach_on_event_on_the_notification_thread_in_order(scripted):
    """Review finding: events the server sent before ``listen()`` registered its request were
    replayed on the caller's thread (``on_event`` runs on the notification thread), where the
    notification thread could deliver newer ones first."""
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
        router = client._core.subscriptions
        send = client._core.call

        def send_then_let_the_events_come_first(method: str, *args: Any, **kwargs: Any) -> Any:
            future = send(method, *args, **kwargs)
            if method == "subscriptions/listen":  # hold listen() until its events are all in
                assert wait_until(lambda: len(router._early.get(future.request_id, [])) == 3)
            return future

        client._core.call = send_then_let_the_events_come_first  # type: ignore[method-assign]
        subscription = client.listen(tools=True, prompts=True, resources=True,
                                     on_event=lambda event: seen.append((event.kind, threading.current_thread().name)))
        server.notify(kinds[2], {"_meta": {SUBSCRIPTION_ID: subscription.subscription_id}})
        assert subscription.wait_acknowledged(LONG)
        assert [subscription.get(timeout=LONG).kind for _ in range(3)] == [
            "tools_changed", "prompts_changed", "resources_changed"]
        assert [kind for kind, _ in seen] == ["tools_changed", "prompts_changed", "resources_changed"]
        assert all(name.endswith("-notify") for _, name in seen), seen
        subscription.close()
