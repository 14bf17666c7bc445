"""The Tasks extension (``io.modelcontextprotocol/tasks``) over stdio, against the test server
with ``--tasks-ext`` (tests/servers/TASKS-EXT.md): a tool call the server answers with a task is
followed to its end by polling or by ``notifications/tasks``; failed / isError / cancelled
outcomes; cancelling and timing out send ``tasks/cancel`` (never ``notifications/cancelled``);
input requests answered once each with the client's own handlers; gating; resuming by id; and
2025-11-25 tasks still working with the extension declared."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from typing import Any, Dict, Iterator, List

import pytest

from mcpclient import CapabilityError, Client, CreateMessageResult, ElicitationResult, Handlers, InvalidParams, Limits, MissingClientCapability, RPCError, RequestCancelled, RequestTimeout, Tasks, Timeout, ToolError, ToolTask, TransportError
from mcpclient.extensions.registry import TASKS
from mcpclient.testing import server_command

from conftest import LONG, pid_alive, wait_until

EXT = server_command("--tasks-ext")


DECLARED = {TASKS: {}}


@contextlib.contextmanager
def connect(*flags: str, extensions: Any = DECLARED, **options: Any) -> Iterator[Client]:
    with Client(server_command("--tasks-ext", *flags), timeout=LONG, extensions=extensions, **options) as client:
        yield client


def server_log(client: Client) -> Dict[str, Any]:
    return client.call_tool("ext_log").structured_content  # type: ignore[return-value]


def entries(log: Dict[str, Any], method: str, task_id: Any = None) -> List[list]:
    return [e for e in log["requests"] if e[0] == method and (task_id is None or e[1] == task_id)]


def created_task(log: Dict[str, Any]) -> str:
    """The id of the (only) task the client's tools/call made."""
    made = [e[1] for e in entries(log, "tools/call") if e[1] is not None]
    assert len(made) == 1, log
    return made[0]


def test_a_task_is_polled_to_completion():
    with connect() as client:
        result = client.call_tool("ext_job", {"steps": 2, "delay": 0.01})
        assert result.text == "job done after 2 steps" and not result.is_error
        log = server_log(client)
        task_id = created_task(log)
        assert entries(log, "tools/call", task_id) == [["tools/call", task_id, ["arguments", "name"]]]  # no task param
        assert len(entries(log, "tasks/get", task_id)) >= 1
        assert not entries(log, "tasks/update") and not entries(log, "tasks/cancel")


def test_polling_honours_the_servers_poll_interval():
    # Slow server interval: polls are at least 0.3 s apart (a load only spreads them further), so
    # their number is bounded by the call's wall time; the client's min/default are not used.
    with connect("--poll-interval", "300", extensions={TASKS: {"min_poll_interval": 0.01}}) as client:
        started = time.monotonic()
        assert client.call_tool("ext_job", {"steps": 3, "delay": 0.25}).text == "job done after 3 steps"
        elapsed = time.monotonic() - started
        polls = len(entries(server_log(client), "tasks/get"))
        assert 1 <= polls <= elapsed / 0.3 + 2, (polls, elapsed)
    # Fast server interval: followed, not the client's 5 s default (which would leave one poll).
    with connect("--poll-interval", "20", extensions={TASKS: {"default_poll_interval": 5.0}}) as client:
        started = time.monotonic()
        assert client.call_tool("ext_job", {"steps": 3, "delay": 0.1}).text == "job done after 3 steps"
        assert time.monotonic() - started < 4.0
        assert len(entries(server_log(client), "tasks/get")) >= 3


def test_the_future_exposes_the_task_and_its_handle_follows_it():
    with connect() as client:
        future = client.call_tool_future("ext_job", {"steps": 2, "delay": 0.01})
        task = future.wait_task(LONG)
        assert isinstance(task, ToolTask) and task.protocol == "extension" and task.task_id.startswith("task-")
        assert future.result(LONG).text == "job done after 2 steps"
        assert future.task is task
        assert task.wait(LONG).status == "completed" and task.task.status == "completed"
        resumed = client.extension(Tasks).task(task.task_id)
        assert resumed.protocol == "extension" and resumed.result(LONG).text == "job done after 2 steps"
        state = resumed.status()
        assert state.status == "completed" and state.result is not None and state.ttl == 60000


def test_push_notifications_settle_a_task_without_polling():
    with connect("--notify-tasks", "--poll-interval", "60000") as client:  # the server asks for 60 s between polls
        started = time.monotonic()
        assert client.call_tool("ext_job", {"steps": 2, "delay": 0.01}).text == "job done after 2 steps"
        assert time.monotonic() - started < LONG  # far below the 30 s the poller would wait
        log = server_log(client)
        assert entries(log, "tasks/get") == []


def test_a_failed_task_raises_the_servers_error():
    with connect() as client:
        with pytest.raises(RPCError) as caught:
            client.call_tool("ext_fail")
        error = caught.value
        assert error.code == -32603 and error.message == "it broke" and error.method == "tools/call"
        assert error.task_id == created_task(server_log(client))  # type: ignore[attr-defined]


def test_a_tool_error_is_a_completed_task_with_is_error():
    with connect() as client:
        result = client.call_tool("ext_tool_error")
        assert result.is_error and result.text == "bad input"
        with pytest.raises(ToolError):
            client.call_tool("ext_tool_error", raise_on_error=True)


def test_cancelling_the_future_sends_tasks_cancel_only():
    with connect() as client:
        future = client.call_tool_future("ext_forever")
        task = future.wait_task(LONG)
        assert task is not None
        assert future.cancel() and future.cancelled()
        with pytest.raises(RequestCancelled):
            future.result()
        assert client.extension(Tasks).task(task.task_id).wait(LONG).status == "cancelled"  # the server got it
        log = server_log(client)
        assert len(entries(log, "tasks/cancel", task.task_id)) == 1
        assert log["cancelled_notifications"] == 0


def test_a_task_cancelled_through_its_handle_ends_the_call_as_cancelled():
    with connect() as client:
        future = client.call_tool_future("ext_forever", timeout=None)
        task = future.wait_task(LONG)
        assert task is not None
        with pytest.raises(RequestTimeout):  # the handle's own wait: the task goes on
            task.result(timeout=0.1)
        assert entries(server_log(client), "tasks/cancel") == []
        assert task.cancel().task_id == task.task_id
        with pytest.raises(RequestCancelled) as caught:
            future.result(LONG)
        assert caught.value.task_id == task.task_id and not future.cancelled()  # type: ignore[attr-defined]
        assert task.status().status == "cancelled"


def test_a_blocking_call_that_times_out_cancels_its_task():
    # The timeout must pass while the task runs. A loaded machine may not even have answered the
    # tools/call when a short timeout passes (then the request is cancelled as any other, with
    # notifications/cancelled): the call is made again with a longer timeout until the task
    # existed, which the error then names.
    with connect() as client:
        timeout, tries = 0.3, 1
        while True:
            with pytest.raises(RequestTimeout) as caught:
                client.call_tool("ext_forever", timeout=timeout)
            task_id = getattr(caught.value, "task_id", None)
            if task_id is not None:
                break
            timeout, tries = timeout * 2, tries + 1
            assert timeout < 2 * LONG, "the server never answered the tools/call"
        assert client.extension(Tasks).task(task_id).wait(LONG).status == "cancelled"
        log = server_log(client)
        assert len(entries(log, "tasks/cancel", task_id)) == 1 and log["cancelled_notifications"] == tries - 1


def test_task_progress_restarts_a_timeout_that_allows_it():
    with connect() as client:  # 4 steps of 0.4 s: longer than the timeout, each step is progress
        result = client.call_tool("ext_job", {"steps": 4, "delay": 0.4}, timeout=Timeout(1.0, reset_on_progress=True))
        assert result.text == "job done after 4 steps"


def test_input_requests_are_answered_once_each_with_the_clients_handlers():
    calls: Dict[str, int] = {"elicit": 0, "sample": 0, "roots": 0}
    lock = threading.Lock()

    def count(kind: str) -> None:
        with lock:
            calls[kind] += 1

    def elicit(request):
        count("elicit")
        return ElicitationResult.accept({"n": 7})

    def sample(request):
        count("sample")
        return CreateMessageResult("hi", "test-model")

    def roots():
        count("roots")
        return ["file:///srv/data"]

    with connect(handlers=Handlers(elicitation=elicit, sampling=sample, roots=roots)) as client:
        assert client.call_tool("ext_ask", {"kind": "elicit"}).text == \
            "answer " + json.dumps({"action": "accept", "content": {"n": 7}}, sort_keys=True)
        assert "hi" in client.call_tool("ext_ask", {"kind": "sample"}).text
        assert "file:///srv/data" in client.call_tool("ext_ask", {"kind": "roots"}).text
        assert calls == {"elicit": 1, "sample": 1, "roots": 1}
        log = server_log(client)
        tasks = [e[1] for e in entries(log, "tools/call") if e[1] is not None]
        assert len(tasks) == 3
        for task_id in tasks:
            assert entries(log, "tasks/update", task_id) == [["tasks/update", task_id, ["q1"]]]


def test_a_handler_that_raises_fails_the_call_and_cancels_the_task():
    def broken(request):
        raise ValueError("no UI attached")

    with connect(handlers=Handlers(elicitation=broken)) as client:
        with pytest.raises(ValueError, match="no UI attached"):
            client.call_tool("ext_ask", {"kind": "elicit"})
        task_id = created_task(server_log(client))
        assert client.extension(Tasks).task(task_id).wait(LONG).status == "cancelled"
        log = server_log(client)
        assert entries(log, "tasks/update") == [] and len(entries(log, "tasks/cancel", task_id)) == 1


def test_a_request_the_client_cannot_serve_fails_the_call():
    with connect() as client:  # no sampling handler
        with pytest.raises(Exception, match="sampling/createMessage"):
            client.call_tool("ext_ask", {"kind": "sample"})


def test_2025_task_augmentation_against_an_extension_server_points_to_the_extension():
    with connect() as client:
        with pytest.raises(CapabilityError, match="call_tool_future"):
            client.extension(Tasks).call_tool("ext_job")
        assert entries(server_log(client), "tools/call") == []  # nothing was sent


def test_without_the_declaration_tools_run_inline_and_the_extension_is_refused():
    with connect(extensions=None) as client:
        assert client.call_tool("ext_job", {"steps": 1, "delay": 0}).text == "job done after 1 steps"
        with pytest.raises(MissingClientCapability) as caught:
            client.call_tool("ext_required")
        assert caught.value.missing_extensions == [TASKS]
        with pytest.raises(ValueError, match="extensions"):
            client.extension(Tasks).task("task-0")
        assert all(e[1] is None for e in entries(server_log(client), "tools/call"))


def test_a_server_without_the_extension():
    with Client(server_command(), timeout=LONG, extensions={TASKS: {}}) as client:
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        with pytest.raises(CapabilityError) as caught:
            client.extension(Tasks).task("task-0")
        assert caught.value.capability == f"extensions.{TASKS}"


def test_a_task_handle_needs_a_connected_client():
    from mcpclient import ClientClosedError

    client = Client(EXT, timeout=LONG, extensions=DECLARED)
    with pytest.raises(ClientClosedError, match="not connected"):  # not "the server did not declare"
        client.extension(Tasks).task("task-0")
    with client:
        assert client.extension(Tasks).task("task-0").protocol == "extension"
    with pytest.raises(ClientClosedError, match="closed"):  # not a handle that fails later
        client.extension(Tasks).task("task-0")


def test_closing_fails_waits_and_sends_no_cancel():
    from mcpclient import ClientClosedError

    with connect() as client:
        future = client.call_tool_future("ext_forever")
        task = future.wait_task(LONG)
        assert task is not None
    with pytest.raises(ClientClosedError):  # (no tasks/cancel was sent: see the HTTP resume test)
        future.result(LONG)


@pytest.mark.parametrize("reconnect", [False, True])
def test_a_server_that_dies_under_a_task_fails_the_call(reconnect):
    with connect(reconnect=reconnect) as client:
        future = client.call_tool_future("ext_forever", timeout=None)
        assert future.wait_task(LONG) is not None
        os.kill(client.transport.pid, signal.SIGKILL)
        # Without a policy the connection is gone; with one, the next poll reaches a new server,
        # which knows no such task (-32602). Either way the call ends, it never hangs.
        with pytest.raises(InvalidParams if reconnect else TransportError):
            future.result(LONG)


def test_bad_options():
    from mcpclient import TasksExtension

    with pytest.raises(ValueError):
        TasksExtension(min_poll_interval=0)
    with pytest.raises(ValueError):
        TasksExtension(min_poll_interval=5, max_poll_interval=1)
    with pytest.raises(ValueError, match="poll"):
        Client(EXT, extensions={TASKS: {"poll": 1}})


def test_2025_tasks_still_work_with_the_extension_declared():
    from tasks_servers import require_tasks_python, tasks_server_command

    require_tasks_python()
    with Client(tasks_server_command(), timeout=LONG, extensions={TASKS: {}}) as client:
        job = client.extension(Tasks).call_tool("job", {"steps": 2, "delay": 0.01})
        assert job.protocol == "2025-11-25"
        assert job.result(timeout=LONG).text == "job done after 2 steps"
        assert job.result_future(LONG).result(LONG).text == "job done after 2 steps"
        resumed = client.extension(Tasks).task(job.task_id)  # the server has 2025-11-25 tasks, not the extension
        assert resumed.protocol == "2025-11-25" and resumed.status().status == "completed"


@contextlib.contextmanager
def sigint_to_main_thread() -> Iterator[Any]:
    """``interrupt()`` sends a real SIGINT to the main thread (the test's: signals go there), whose
    default handler raises ``KeyboardInterrupt`` in the blocking call it is in."""
    main = threading.main_thread().ident
    assert threading.get_ident() == main  # (signals go to the main thread)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield lambda: signal.pthread_kill(main, signal.SIGINT)  # type: ignore[arg-type]
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("how", ["call_tool", "request"])
def test_ctrl_c_in_a_blocking_call_cancels_its_task(how):
    # Ctrl-C while call_tool waits for a task: KeyboardInterrupt goes on up, and the task is
    # cancelled on the server (tasks/cancel, once; never notifications/cancelled), as an
    # interrupted ordinary call is (notifications/cancelled). The interrupt comes from the input
    # request's handler: the task certainly exists then; the handler answers only after the
    # task is followed again (a handle's wait): the answer, asked for by the call given up, is
    # still not sent.
    followed_again, answered = threading.Event(), threading.Event()

    with sigint_to_main_thread() as interrupt:
        def elicit(request):
            interrupt()
            followed_again.wait(LONG)
            answered.set()
            return ElicitationResult.accept({"n": 1})

        with connect(handlers=Handlers(elicitation=elicit)) as client:
            with pytest.raises(KeyboardInterrupt):
                if how == "call_tool":
                    client.call_tool("ext_ask", {"kind": "elicit"}, timeout=None)
                else:  # (the raw request waits for the task the extension resolves)
                    client.request("tools/call", {"name": "ext_ask", "arguments": {"kind": "elicit"}}, timeout=None)
            task_id = created_task(server_log(client))
            handle = client.extension(Tasks).task(task_id)
            following = handle.result_future(LONG)
            followed_again.set()
            assert answered.wait(LONG)
            assert handle.wait(LONG).status == "cancelled"
            with pytest.raises(RequestCancelled):
                following.result(LONG)
            log = server_log(client)
            assert len(entries(log, "tasks/cancel", task_id)) == 1 and log["cancelled_notifications"] == 0
            assert entries(log, "tasks/update") == []  # the answer came after the call was given up


def test_ctrl_c_before_the_server_answered_cancels_the_request():
    # With the extension declared, a blocking call the server has not answered yet (here: one it
    # runs inline, no task) is cancelled as any other: notifications/cancelled.
    with sigint_to_main_thread() as interrupt:
        fired = threading.Event()

        def progress(done, total, message):
            if not fired.is_set():
                fired.set()
                interrupt()

        with connect() as client:
            with pytest.raises(KeyboardInterrupt):
                client.call_tool("slow", {"steps": 1000, "delay": 0.05}, on_progress=progress, timeout=None)
            log = server_log(client)
            assert log["cancelled_notifications"] == 1 and entries(log, "tasks/cancel") == []


def test_a_call_cancelled_while_its_task_answer_waits_for_a_worker_cancels_the_task():
    # The server answered the tools/call with a task, but the answer waits for the only worker
    # (busy here); the call is cancelled meanwhile. A task made for a call nobody waits for any
    # more must be cancelled on the server (tasks/cancel), not dropped with the answer.
    gate = threading.Event()
    with connect(limits=Limits(workers=1)) as client:
        assert client._session._workers.try_submit("test: the only worker is busy", gate.wait, LONG)
        future = client.call_tool_future("ext_forever")
        rid = future.request_id
        try:
            assert wait_until(lambda: not client._session.is_pending(rid))  # answered, not handled yet
            assert future.cancel() and future.cancelled()
        finally:
            gate.set()
        with pytest.raises(RequestCancelled):
            future.result(LONG)
        task_id = created_task(server_log(client))
        assert client.extension(Tasks).task(task_id).wait(LONG).status == "cancelled"
        log = server_log(client)
        assert len(entries(log, "tasks/cancel", task_id)) == 1 and log["cancelled_notifications"] == 0
        assert future.task is None


# --- a server that answers out of shape: a typed error for the waiting call, never a hang --------

def task_fields(task_id: str = "t-1", status: str = "working", **more: Any) -> Dict[str, Any]:
    return {"taskId": task_id, "status": status, "createdAt": "2026-12-01T23:00:00.000Z",
            "lastUpdatedAt": "2026-12-01T23:00:00.000Z", "ttlMs": None, "pollIntervalMs": 10, **more}


def scripted_tasks(started, created: Any, polled: Any):
    """A scripted server of the extension: ``tools/call`` answers ``created``, ``tasks/get``
    ``polled``; ``tasks/cancel`` is acknowledged."""
    from helpers import ScriptedServer

    def handle(method, params):
        if method == "tools/call":
            return created
        if method == "tasks/get":
            return polled
        return {"resultType": "complete"}

    return started(ScriptedServer(handle, capabilities={"tools": {}, "extensions": {TASKS: {}}}))


def cancels(server) -> List[Any]:
    return [m["params"]["taskId"] for m in server.received if m.get("method") == "tasks/cancel"]


BAD_STATES = {
    "not an object": [1, 2],
    "no status": {"resultType": "complete", "taskId": "t-1"},
    "status unknown": {"resultType": "complete", **task_fields(status="unknown")},
    "status pending": {"resultType": "complete", **task_fields(status="pending")},
    "another task": {"resultType": "complete", **task_fields("t-2", "completed", result={"content": []})},
    "completed without result": {"resultType": "complete", **task_fields(status="completed")},
    "failed without error object": {"resultType": "complete", **task_fields(status="failed", error="it broke")},
}


@pytest.mark.parametrize("answer", list(BAD_STATES.values()), ids=list(BAD_STATES))
def test_a_malformed_tasks_get_answer_fails_the_call_with_a_protocol_error(started, answer):
    from mcpclient import ProtocolError

    server = scripted_tasks(started, {"resultType": "task", **task_fields()}, answer)
    with Client(server.transport, timeout=LONG, extensions=DECLARED) as client:
        future = client.call_tool_future("job", timeout=None)  # (no deadline: a hang would stay one)
        with pytest.raises(ProtocolError):
            future.result(LONG)
        if answer is BAD_STATES["completed without result"] or answer is BAD_STATES["failed without error object"]:
            return  # (the task ended: nothing to cancel)
        # The call gave up on a task it cannot follow: the task is cancelled.
        assert server.wait_for(lambda m: m.get("method") == "tasks/cancel") is not None
        assert cancels(server) == ["t-1"]


def test_a_malformed_create_task_result_fails_the_call_and_cancels_the_task(started):
    from mcpclient import ProtocolError

    server = scripted_tasks(started, {"resultType": "task", **task_fields(status="pending")}, None)
    with Client(server.transport, timeout=LONG, extensions=DECLARED) as client:
        with pytest.raises(ProtocolError, match="pending"):
            client.call_tool("job", timeout=None)
        assert server.wait_for(lambda m: m.get("method") == "tasks/cancel") is not None
        assert cancels(server) == ["t-1"]


def test_a_done_callback_that_raises_does_not_stop_the_others():
    # A task wait's done-callbacks run on a worker of the poller: one that raises (SystemExit
    # too) is logged, the next still runs, and the worker lives on.
    ran = threading.Event()

    def exits(_):
        raise SystemExit("from a callback")

    with connect() as client:
        future = client.call_tool_future("ext_forever", timeout=None)
        task = future.wait_task(LONG)
        assert task is not None
        waited = task.result_future()
        waited.add_done_callback(exits)
        waited.add_done_callback(lambda _: ran.set())
        task.cancel()
        assert ran.wait(LONG), "the callback after the raising one never ran"
        with pytest.raises(RequestCancelled):
            future.result(LONG)
        assert client.call_tool("ext_job", {"steps": 1, "delay": 0}).text == "job done after 1 steps"


@pytest.mark.parametrize("how", ["cancel", "timeout"])
def test_a_task_answered_after_the_call_was_given_up_is_cancelled(started, how):
    # The call is given up (cancelled, timed out: notifications/cancelled) while the server is
    # making its task; the CreateTaskResult crosses the cancellation. A task nobody waits for
    # must be cancelled: tasks/cancel when the late answer comes.
    from helpers import ScriptedServer

    asked, gate = threading.Event(), threading.Event()

    def handle(method, params):
        if method == "tools/call":
            asked.set()
            gate.wait(LONG)  # (the server is slow to answer)
            return {"resultType": "task", **task_fields()}
        return {"resultType": "complete"}

    server = started(ScriptedServer(handle, capabilities={"tools": {}, "extensions": {TASKS: {}}}))
    with Client(server.transport, timeout=LONG, extensions=DECLARED) as client:
        future = client.call_tool_future("job", timeout=None if how == "cancel" else 0.3)
        try:
            assert asked.wait(LONG)
            if how == "cancel":
                assert future.cancel()
            else:
                assert isinstance(future.exception(LONG), RequestTimeout)
        finally:
            gate.set()
        assert server.wait_for(lambda m: m.get("method") == "tasks/cancel") is not None
        assert cancels(server) == ["t-1"]
        assert [m for m in server.received if m.get("method") == "notifications/cancelled"]


def test_input_handlers_waiting_for_a_person_do_not_hold_up_other_tasks():
    # Handlers answering input requests may wait for a person for long; other tasks' outcomes
    # must still reach their callers meanwhile (they were queued behind the busy handlers).
    busy, entered, gate = 6, threading.Semaphore(0), threading.Event()

    def elicit(request):
        entered.release()
        gate.wait(LONG)
        return ElicitationResult.decline()

    with connect(handlers=Handlers(elicitation=elicit)) as client:
        asking = [client.call_tool_future("ext_ask", {"kind": "elicit"}, timeout=None) for _ in range(busy)]
        try:
            for _ in range(4):  # (as many handlers as there are workers for them, at least)
                assert entered.acquire(timeout=LONG)
            job = client.call_tool_future("ext_job", {"steps": 1, "delay": 0})
            assert job.result(LONG).text == "job done after 1 steps"
        finally:
            gate.set()
        for future in asking:
            assert future.result(LONG).text.startswith("answer ")


def test_a_client_with_the_extension_nobody_closed_is_collected_with_its_poller():
    """The extension reaches the client only weakly (the call it sends a claimed ``tools/call``
    with, its context): a client dropped unclosed after following a task is collected, and its
    server and poller thread stop, as a client without extensions is."""
    import gc
    import warnings

    client = Client(server_command("--tasks-ext"), extensions=DECLARED, timeout=LONG).connect()
    assert client.call_tool("ext_job", {"steps": 2}).text == "job done after 2 steps"
    pid = client.transport.pid
    pollers = [t for t in threading.enumerate() if t.name.startswith("mcpclient-tasks-")]
    assert pollers  # the task was followed: its poller is running
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        del client
        gc.collect()
    assert wait_until(lambda: not pid_alive(pid))
    for thread in pollers:
        thread.join(LONG)
        assert not thread.is_alive(), thread.name



def test_cancelling_a_requests_future_while_its_answer_waits_for_its_task_cancels_the_task():
    # Nobody waits on the future: a worker runs its step, which waits for the task the
    # extension follows (an input request keeps it open). Cancelling the future stops that
    # task too (tasks/cancel, once), on whichever thread the step waits.
    asked, release = threading.Event(), threading.Event()

    def elicit(request):
        asked.set()
        release.wait(LONG)
        return ElicitationResult.accept({"n": 1})

    with connect(handlers=Handlers(elicitation=elicit)) as client:
        future = client.request_future("tools/call", {"name": "ext_ask", "arguments": {"kind": "elicit"}}, timeout=None)
        try:
            assert asked.wait(LONG)  # the task exists, and its step waits for it on a worker
            assert future.cancel()
        finally:
            release.set()
        task_id = created_task(server_log(client))
        assert client.extension(Tasks).task(task_id).wait(LONG).status == "cancelled"
        assert len(entries(server_log(client), "tasks/cancel", task_id)) == 1
