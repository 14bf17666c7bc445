"""The Tasks extension over Streamable HTTP, against the scripted server of both eras
(``tests/taskext_http.py``, tests/servers/TASKS-EXT.md): ``Mcp-Name`` = the task id and
``Mcp-Method`` on ``tasks/get|update|cancel``; the declaration in ``initialize`` (handshake) and in
every request's ``_meta`` (2026, ``tasks/*`` included); the 2026 listen for the live task ids,
which settles a task without polling; and a task resumed by id from a second client after the
first closed (which cancels nothing)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any, Dict, Iterator, List

import pytest

from mcpclient import Client, ElicitationResult, HTTPTransport, Handlers, RequestTimeout, Tasks
from mcpclient.extensions.registry import TASKS

from helpers import supports
from conftest import LONG, wait_until
from taskext_http import TaskExtHTTPServer

META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


@pytest.fixture(params=["handshake", "2026"])
def server(request, started) -> Iterator[TaskExtHTTPServer]:
    yield started(TaskExtHTTPServer(era=request.param))


def connect(server: TaskExtHTTPServer, **options: Any) -> Client:
    options.setdefault("extensions", {TASKS: {}})
    return Client(HTTPTransport(server.url), timeout=LONG, **options)


def bodies(server: TaskExtHTTPServer, method: str) -> List[Dict[str, Any]]:
    return [s.body for s in server.requests(method)]


def test_task_methods_carry_mcp_name_and_mcp_method(server):
    def elicit(request):
        return ElicitationResult.accept({"n": 1})

    with connect(server, handlers=Handlers(elicitation=elicit)) as client:
        assert client.call_tool("ext_ask", {"kind": "elicit"}).text.startswith("answer ")
        future = client.call_tool_future("ext_forever")
        task = future.wait_task(LONG)
        assert task is not None and future.cancel()
        assert client.extension(Tasks).task(task.task_id).wait(LONG).status == "cancelled"
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        seen = server.requests(method)
        assert seen, method
        for each in seen:
            assert each.headers.get("mcp-method") == method
            assert each.headers.get("mcp-name") == each.body["params"]["taskId"]
            if server.era == "2026":  # the declaration goes with the extension's own requests too
                assert each.body["params"]["_meta"][META_CAPABILITIES]["extensions"] == {TASKS: {}}


def test_the_declaration_goes_with_every_request(server):
    with connect(server) as client:
        assert client.call_tool("ext_job", {"steps": 1, "delay": 0}).text == "job done after 1 steps"
        assert client.server.extensions.get(TASKS) == {} and supports(client, TASKS)
    if server.era == "handshake":
        (initialize,) = bodies(server, "initialize")
        assert initialize["params"]["capabilities"]["extensions"] == {TASKS: {}}
    else:
        sent = [s.body for s in server.seen if isinstance(s.body, dict) and "method" in s.body and "id" in s.body]
        assert {b["method"] for b in sent} >= {"tools/call"}
        for body in sent:
            assert body["params"]["_meta"][META_CAPABILITIES]["extensions"] == {TASKS: {}}, body["method"]


def test_a_resumed_task_from_a_second_client(server):
    first = connect(server).connect()
    try:
        future = first.call_tool_future("ext_job", {"steps": 10, "delay": 0.05})
        task = future.wait_task(LONG)
        assert task is not None
        task_id = task.task_id
    finally:
        first.close()
    assert server.requests("tasks/cancel") == []  # closing cancels nothing: the id stays resumable
    with connect(server) as second:
        assert second.extension(Tasks).task(task_id).result(timeout=LONG).text == "job done after 10 steps"
        assert second.extension(Tasks).task(task_id).status().status == "completed"


def left_behind(server: TaskExtHTTPServer, tool: str, arguments: Dict[str, Any]) -> str:
    """The id of a task of ``tool`` a first client started, then closed (nothing follows it now;
    the first client never polled it: it neither listens nor had a poll due)."""
    first = connect(server, extensions={TASKS: {"listen": False}}).connect()
    try:
        task = first.call_tool_future(tool, arguments, timeout=None).wait_task(LONG)
        assert task is not None
        return task.task_id
    finally:
        first.close()


@pytest.mark.parametrize("era", ["handshake", "2026"])
def test_status_of_a_task_nobody_follows_answers_its_input_requests(started, era):
    # A task resumed by id (its first client closed before it asked anything) is not followed:
    # status() answers its input requests itself (tasks/update) before it returns, each key
    # once; a handler's error is raised and the key is answered by a later status().
    server = started(TaskExtHTTPServer(era=era, poll_interval_ms=60000))  # (the first client never polls)
    task_id = left_behind(server, "ext_ask", {"kind": "elicit"})
    calls: List[Dict[str, Any]] = []

    def elicit(request):
        calls.append(request.requested_schema)
        if len(calls) == 1:
            raise ValueError("nobody at the keyboard yet")
        return ElicitationResult.accept({"n": 5})

    def updates() -> List[Dict[str, Any]]:
        return [b for b in bodies(server, "tasks/update") if b["params"]["taskId"] == task_id]

    with connect(server, extensions={TASKS: {"max_poll_interval": 0.05}}, handlers=Handlers(elicitation=elicit)) as second:
        handle = second.extension(Tasks).task(task_id)

        def asked() -> bool:
            try:
                return handle.status().status != "working"  # (until the task asks)
            except ValueError:
                return True

        assert wait_until(asked) and len(calls) == 1 and updates() == []  # the handler failed: nothing sent
        assert handle.status().status == "input_required" and len(calls) == 2  # answered now
        assert [u["params"]["inputResponses"] for u in updates()] == [{"q1": {"action": "accept", "content": {"n": 5}}}]
        handle.status()  # the server still lists q1 once (a stale snapshot): not answered again
        assert handle.result(timeout=LONG).text == "answer " + json.dumps({"action": "accept", "content": {"n": 5}},
                                                                           sort_keys=True)
        assert len(calls) == 2 and len(updates()) == 1


def test_an_answer_given_after_its_wait_ended_is_asked_for_again(started):
    # The handle's wait times out while the client's handler is answering; the answer is not
    # sent (nobody follows the task any more). The next wait must ask again, not count the key
    # as answered (the task would wait for it for ever).
    server = started(TaskExtHTTPServer(era="handshake", poll_interval_ms=60000))
    task_id = left_behind(server, "ext_ask", {"kind": "elicit"})
    calls, in_handler, released = [], threading.Event(), threading.Event()

    def elicit(request):
        calls.append(request)
        if len(calls) == 1:
            in_handler.set()
            released.wait(LONG)
        return ElicitationResult.accept({"n": len(calls)})

    with connect(server, extensions={TASKS: {"max_poll_interval": 0.05}}, handlers=Handlers(elicitation=elicit)) as second:
        handle = second.extension(Tasks).task(task_id)
        waited = handle.result_future(timeout=0.5)
        try:
            assert in_handler.wait(LONG)
            with pytest.raises(RequestTimeout):
                waited.result(LONG)
        finally:
            released.set()
        # (the answer is dropped by the worker that ran the handler: the key is no longer counted)
        assert wait_until(lambda: "q1" not in handle._poller._seen.get(task_id, {"q1"}))
        assert handle.result(timeout=LONG).text == "answer " + json.dumps({"action": "accept", "content": {"n": 2}},
                                                                           sort_keys=True)
        assert len(calls) == 2


def test_2026_listen_settles_a_task_without_polling(started):
    server = started(TaskExtHTTPServer(era="2026", poll_interval_ms=60000))
    with connect(server) as client:
        started_at = time.monotonic()
        future = client.call_tool_future("ext_job", {"steps": 2, "delay": 0.01})
        task = future.wait_task(LONG)
        assert task is not None
        assert future.result(LONG).text == "job done after 2 steps"
        assert time.monotonic() - started_at < LONG  # the poller would wait 30 s
    listens = bodies(server, "subscriptions/listen")
    assert listens and listens[0]["params"]["notifications"]["taskIds"] == [task.task_id]
    assert server.requests("tasks/get") == []


def test_2026_without_listening_polls(started):
    server = started(TaskExtHTTPServer(era="2026"))
    with connect(server, extensions={TASKS: {"listen": False}}) as client:
        assert client.call_tool("ext_job", {"steps": 1, "delay": 0}).text == "job done after 1 steps"
    assert server.requests("subscriptions/listen") == [] and server.requests("tasks/get")


FORK_SCRIPT = """
from mcpclient import HTTPTransport
from mcpclient.extensions.registry import TASKS

client = Client(HTTPTransport(sys.argv[1]), timeout=20, reconnect=Reconnect(),
                extensions={TASKS: {"default_poll_interval": 0.03}}).connect()
future = client.call_tool_future("ext_forever", timeout=None)  # the parent's task, followed (polled)
task_id = future.wait_task(20).task_id


def child():
    # A task of the child's own (its own connection: Reconnect), followed to its end: the
    # parent's task is polled meanwhile only by the parent. Then the inherited future is
    # cancelled: the parent's task is the parent's, nothing is sent for it.
    text = client.call_tool("ext_job", {"steps": 3, "delay": 0.05}).text
    cancelled = future.cancel()
    client.call_tool("ext_job", {"steps": 0})  # (anything sent for the cancel went before this)
    session = client.transport.session_id
    client.close()
    return {"text": text, "cancelled": cancelled, "session": session}


out = in_child(child)
state = client.extension(Tasks).task(task_id).status().status  # still running for the parent
future.cancel()
ended = client.extension(Tasks).task(task_id).wait(20).status
client.close()
print(json.dumps({"child": out, "task_id": task_id, "state": state, "ended": ended}), flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_neither_follows_nor_cancels_the_parents_tasks(started):
    server = started(TaskExtHTTPServer(era="handshake"))
    from forking import PRELUDE  # (in_child: fork, run a function in the child, get its result through a pipe)

    script = textwrap.dedent(PRELUDE) + FORK_SCRIPT
    proc = subprocess.run([sys.executable, "-c", script, server.url], capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    child, task_id = out["child"], out["task_id"]
    assert child.get("text") == "job done after 3 steps" and child["cancelled"] is True, out
    assert out["state"] == "working" and out["ended"] == "cancelled", out
    by_child = [s.body for s in server.seen if s.headers.get("mcp-session-id") == child["session"]]
    assert [b for b in by_child if isinstance(b, dict) and b.get("params", {}).get("taskId") == task_id] == []
    assert len([b for b in bodies(server, "tasks/cancel") if b["params"]["taskId"] == task_id]) == 1


def test_a_listen_that_cannot_be_sent_leaves_polling_alive(started, monkeypatch):
    # Whatever sending the 2026 listen raises must not end the poller's thread: the task is
    # still polled to its end. (A fault no real server makes: the request raises unexpectedly.)
    server = started(TaskExtHTTPServer(era="2026"))
    with connect(server) as client:
        poller = client._channel.extensions.extensions[TASKS].poller()
        send = poller.ctx.request_future

        def broken(method, *args, **kwargs):
            if method == "subscriptions/listen":
                raise RuntimeError("unforeseen")
            return send(method, *args, **kwargs)

        monkeypatch.setattr(poller.ctx, "request_future", broken)
        future = client.call_tool_future("ext_job", {"steps": 2, "delay": 0.01})
        assert future.result(LONG).text == "job done after 2 steps"
    assert bodies(server, "subscriptions/listen") == [] and server.requests("tasks/get")


def test_ctrl_c_in_a_handles_wait_lets_the_task_go_without_cancelling_it(started):
    # A handle's wait (client.extension(Tasks).task(id).result()) interrupted by Ctrl-C stops following the task
    # (no more polling for nobody) and cancels nothing: the task is resumable, as after the
    # wait's timeout.
    server = started(TaskExtHTTPServer(era="handshake", poll_interval_ms=60000))
    task_id = left_behind(server, "ext_ask", {"kind": "elicit"})
    main = threading.main_thread().ident
    assert threading.get_ident() == main  # (signals go to the main thread)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupted, calls = threading.Event(), []

    def elicit(request):
        calls.append(request)
        if len(calls) == 1:
            signal.pthread_kill(main, signal.SIGINT)  # type: ignore[arg-type]
            interrupted.wait(LONG)
        return ElicitationResult.decline()

    try:
        with connect(server, extensions={TASKS: {"max_poll_interval": 0.05}}, handlers=Handlers(elicitation=elicit)) as second:
            handle = second.extension(Tasks).task(task_id)
            with pytest.raises(KeyboardInterrupt):
                handle.result(timeout=LONG)
            interrupted.set()
            assert not handle._poller.follows(task_id)
            # (the first answer, given after the wait ended, was dropped: status() asks again)
            assert wait_until(lambda: "q1" not in handle._poller._seen.get(task_id, {"q1"}))
            assert handle.status().status == "input_required" and len(calls) == 2
    finally:
        signal.signal(signal.SIGINT, previous)
    assert server.requests("tasks/cancel") == []
