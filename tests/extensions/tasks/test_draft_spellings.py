"""The Tasks extension as its final text spells it, and the drafts' spellings that servers still
send: a nested ``{"task": {...}}`` CreateTaskResult, ``ttlSeconds``/``pollIntervalMilliseconds``,
a ``requestState`` echoed on every ``tasks/*`` request, ``notifications/tasks/status`` carrying
a full state, and ``-32003`` for a missing capability. The client sends only the final names
(``taskIds`` on a listen, ``ttlMs``/``pollIntervalMs`` read first)."""
from __future__ import annotations

from typing import Any, Dict, List

import pytest

from conftest import LONG
from helpers import ScriptedServer
from mcpclient import Client, MissingClientCapability
from mcpclient.errors import RPCError
from mcpclient.extensions import TASKS
from mcpclient.types import Task

pytestmark = pytest.mark.timeout(60)

CAPABILITIES = {"tools": {}, "extensions": {TASKS: {}}}
DONE = {"content": [{"type": "text", "text": "done"}], "isError": False}


def test_a_nested_create_task_result_with_draft_names_and_its_request_state_echoed(started) -> None:
    polls: List[Dict[str, Any]] = []

    def handle(method: str, params: Dict[str, Any]) -> Any:
        if method == "tools/call":
            return {"resultType": "task", "task": {"taskId": "t1", "status": "working", "ttlSeconds": 60,
                                                   "pollIntervalMilliseconds": 10, "requestState": "rs-1"}}
        if method == "tasks/get":
            polls.append(params)
            if len(polls) == 1:
                return {"resultType": "complete", "taskId": "t1", "status": "working", "ttlMs": None,
                        "requestState": "rs-2"}
            return {"resultType": "complete", "taskId": "t1", "status": "completed", "result": DONE}
        return {}

    server = started(ScriptedServer(handle, CAPABILITIES))
    with Client(server.transport, timeout=LONG, extensions={TASKS: {}}) as client:
        future = client.call_tool_future("job")
        handle_ = future.wait_task(LONG)
        assert handle_ is not None and handle_.task_id == "t1"
        assert future.result(LONG).text == "done"
    created = Task.from_wire({"taskId": "t1", "status": "working", "ttlSeconds": 60, "pollIntervalMilliseconds": 10})
    assert (created.ttl, created.poll_interval) == (60_000, 10)
    assert [p.get("requestState") for p in polls] == ["rs-1", "rs-2"]


def test_a_drafts_status_notification_with_the_full_state_settles_the_task(started) -> None:
    def handle(method: str, params: Dict[str, Any]) -> Any:
        if method == "tools/call":
            return {"resultType": "task", "taskId": "t2", "status": "working", "ttlMs": 60000,
                    "pollIntervalMs": 60000}  # (no poll before the push: it settles the call)
        if method == "tasks/get":
            return {"resultType": "complete", "taskId": "t2", "status": "working", "ttlMs": 60000}
        return {}

    server = started(ScriptedServer(handle, CAPABILITIES))
    with Client(server.transport, timeout=LONG, extensions={TASKS: {"listen": False}}) as client:
        future = client.call_tool_future("job")
        assert future.wait_task(LONG) is not None
        server.notify("notifications/tasks/status", {"taskId": "t2", "status": "completed", "ttlMs": 60000,
                                                     "result": DONE})
        assert future.result(LONG).text == "done"


def test_the_drafts_code_for_a_missing_capability_is_understood() -> None:
    error = RPCError.from_wire({"code": -32003, "message": "Missing required client capability",
                                "data": {"requiredCapabilities": {"extensions": {TASKS: {}}}}}, "tools/call")
    assert isinstance(error, MissingClientCapability) and error.missing_extensions == [TASKS]
    other = RPCError.from_wire({"code": -32003, "message": "something else"}, "tools/call")
    assert type(other) is RPCError  # without requiredCapabilities it is the server's own code
