"""Giving up on a call reaches the server over Streamable HTTP, even when its answer comes after
the give-up and the client closes right after: the answer naming a new task is still read and
the task cancelled (``tasks/cancel``); a plain call's ``notifications/cancelled`` is still sent.
A call that ``close()`` ends once it is a task always says which task (``.task_id`` and the
message). Against the Tasks extension's HTTP server, holding each answer's headers back.
"""
from __future__ import annotations

import threading
from typing import Any, Iterator, List

import pytest

from conftest import LONG, wait_until
from mcpclient import ClientClosedError, Client, MissingClientCapability, RequestTimeout
from mcpclient.extensions import TASKS
from mcpclient.transports import HTTPTransport

from helpers import ScriptedServer
from taskext_http import TaskExtHTTPServer

pytestmark = pytest.mark.timeout(60)

HELD = 0.4  # seconds the server holds each tools/call answer that made a task


@pytest.fixture
def server(started) -> Iterator[TaskExtHTTPServer]:
    yield started(TaskExtHTTPServer(era="handshake", answer_delay=HELD))


def connect(server: TaskExtHTTPServer, **options: Any) -> Client:
    options.setdefault("extensions", {TASKS: {}})
    return Client(HTTPTransport(server.url), timeout=LONG, **options)


def test_a_call_cancelled_before_its_answer_came_cancels_the_task_it_made(server) -> None:
    with connect(server) as client:
        future = client.call_tool_future("ext_forever")
        assert wait_until(lambda: len(server.engine.states()) == 1)  # made; its answer is held back
        assert future.cancel()
        [task_id] = server.engine.states()
        assert wait_until(lambda: server.engine.states()[task_id] == "cancelled")
    assert [r.body["params"]["taskId"] for r in server.requests("tasks/cancel")] == [task_id]


@pytest.mark.parametrize("blocking", [False, True], ids=["futures", "blocking"])
def test_calls_given_up_just_before_close_still_cancel_their_tasks(server, blocking) -> None:
    with connect(server) as client:
        if blocking:
            errors: List[BaseException] = []

            def call() -> None:
                try:
                    client.call_tool("ext_forever", timeout=0.1)
                except RequestTimeout as exc:
                    errors.append(exc)
            threads = [threading.Thread(target=call) for _ in range(5)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert len(errors) == 5
        else:
            futures = [client.call_tool_future("ext_forever", timeout=0.1) for _ in range(5)]
            for future in futures:
                with pytest.raises(RequestTimeout):
                    future.result()
    # closed right after: every task the calls made is cancelled on the server
    states = server.engine.states()
    assert len(states) == 5 and set(states.values()) == {"cancelled"}, states


def test_plain_calls_given_up_just_before_close_still_tell_the_server(server) -> None:
    with connect(server, extensions=None) as client:  # undeclared: ext_forever runs inline
        futures = [client.call_tool_future("ext_forever", timeout=0.1) for _ in range(5)]
        for future in futures:
            with pytest.raises(RequestTimeout):
                future.result()
    assert server.log()["cancelled_notifications"] == 5


def test_a_task_call_that_close_ends_names_its_task_every_time(started) -> None:
    server = started(TaskExtHTTPServer(era="handshake"))
    for _ in range(6):
        client = connect(server).connect()
        ended: List[BaseException] = []

        def call() -> None:
            try:
                client.call_tool("ext_forever")
            except BaseException as exc:  # noqa: BLE001 - asserted below
                ended.append(exc)
        thread = threading.Thread(target=call)
        before = set(server.engine.states())
        thread.start()
        assert wait_until(lambda: set(server.engine.states()) - before)
        [task_id] = set(server.engine.states()) - before
        assert wait_until(lambda: any(r.body["params"]["taskId"] == task_id for r in server.requests("tasks/get")))
        client.close()  # the call is a task the client follows now
        thread.join(LONG)
        [error] = ended
        assert isinstance(error, ClientClosedError), error
        assert error.task_id == task_id and task_id in str(error)


def test_a_missing_extension_the_client_declared_says_the_server_did_not_take_it(started) -> None:
    def refuse(method: str, params: Any) -> Any:
        server.peer.send({"jsonrpc": "2.0", "id": server.received[-1]["id"], "error": {
            "code": -32021, "message": "Missing required client capability",
            "data": {"requiredCapabilities": {"extensions": {TASKS: {}}}}}})
        return None

    server = started(ScriptedServer(refuse, {"tools": {}}))  # declares no extension: it dropped ours
    with Client(server.transport, timeout=LONG, extensions={TASKS: {}}) as client:
        with pytest.raises(MissingClientCapability) as caught:
            client.call_tool("needs_tasks")
    message = str(caught.value)
    assert "which this client declared" in message and "declare it:" not in message
