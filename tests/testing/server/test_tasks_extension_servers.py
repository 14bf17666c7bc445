"""The Tasks extension test servers at the wire level (``tests/servers/TASKS-EXT.md``).

Raw JSON-RPC over the stdio pipe of ``python -m mcpclient.testing --tasks-ext`` and raw HTTP
(``requests``) to ``tests/taskext_http.py``, without mcpclient's ``Client``: these pin the server
side, so the client tests (``tests/extensions/tasks/test_tasks_extension_*.py``) meet a server that is known to follow the
contract.
"""
from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest
import requests

from conftest import LONG, TESTING_SERVER, wait_until
from mcpclient.testing.server import catalog
from mcpclient.testing.server.taskext import META_CAPABILITIES, META_SUBSCRIPTION, TASKS, TOOLS
from taskext_http import NAMED, TaskExtHTTPServer

DECLARED: Dict[str, Any] = {"extensions": {TASKS: {}}}
TASK_KEYS = {"taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
MISSING: Dict[str, Any] = {"requiredCapabilities": {"extensions": {TASKS: {}}}}
Json = Dict[str, Any]


class Pipe:
    """The stdio server in a subprocess, spoken to in raw JSON lines. A reader thread sorts what
    arrives: responses by id, everything else (notifications, server requests) into a queue."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(TESTING_SERVER + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._ids = iter(range(1, 1 << 30))
        self._responses: Dict[Any, "queue.Queue[Json]"] = {}
        self._lock = threading.Lock()
        self.incoming: "queue.Queue[Json]" = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="taskext-test-reader", daemon=True)
        self._reader.start()

    def _slot(self, rid: Any) -> "queue.Queue[Json]":
        with self._lock:
            return self._responses.setdefault(rid, queue.Queue())

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if "method" in message:
                self.incoming.put(message)
            else:
                self._slot(message.get("id")).put(message)

    def write(self, message: Json) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def send(self, method: str, params: Optional[Json] = None) -> int:
        """Send a request; its id (see :meth:`response`)."""
        rid = next(self._ids)
        self.write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        return rid

    def response(self, rid: Any, timeout: float = LONG) -> Json:
        return self._slot(rid).get(timeout=timeout)

    def rpc(self, method: str, params: Optional[Json] = None) -> Json:
        """Send a request and return its whole response message."""
        return self.response(self.send(method, params))

    def call(self, method: str, params: Optional[Json] = None) -> Json:
        """Send a request and return its result (fails on an error)."""
        reply = self.rpc(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def notify(self, method: str, params: Json) -> None:
        self.write({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, capabilities: Optional[Json] = None) -> Json:
        result = self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": capabilities or {},
                                          "clientInfo": {"name": "raw", "version": "1"}})
        self.notify("notifications/initialized", {})
        return result

    def next_incoming(self, timeout: float = LONG) -> Json:
        return self.incoming.get(timeout=timeout)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(LONG)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(LONG)
            self._reader.join(LONG)
            assert self.proc.stdout is not None
            self.proc.stdout.close()


@pytest.fixture
def pipe() -> Iterator[Callable[..., Pipe]]:
    """``pipe(*flags, declare=True)``: an initialized stdio server, closed after the test."""
    pipes: List[Pipe] = []

    def start(*flags: str, declare: bool = True) -> Pipe:
        server = Pipe(*flags)
        pipes.append(server)
        server.initialize(DECLARED if declare else None)
        return server

    yield start
    for server in pipes:
        server.close()


def poll(get: Callable[[], Json], until: Callable[[Json], bool]) -> List[Json]:
    """Call ``tasks/get`` (``get``) until ``until`` holds; every answer, in order. Bounded."""
    seen: List[Json] = []
    for _ in range(2000):  # ~LONG at the server's pace; a task that never gets there fails here
        seen.append(get())
        if until(seen[-1]):
            return seen
        threading.Event().wait(0.005)  # the server's own clock moves the task on; be gentle
    raise AssertionError(f"task never got there: {seen[-1]}")


def terminal(task: Json) -> bool:
    return task["status"] in ("completed", "failed", "cancelled")


def start_task(server: Pipe, tool: str, arguments: Optional[Json] = None) -> str:
    created = server.call("tools/call", {"name": tool, "arguments": arguments or {}})
    assert created["resultType"] == "task" and set(created) == TASK_KEYS | {"resultType"}, created
    return created["taskId"]


def getter(server: Pipe, task_id: str) -> Callable[[], Json]:
    return lambda: server.call("tasks/get", {"taskId": task_id})


def requests_of(server: Pipe, method: Optional[str] = None) -> List[List[Any]]:
    log = server.call("tools/call", {"name": "ext_log", "arguments": {}})["structuredContent"]
    return [r for r in log["requests"] if method is None or r[0] == method]


# ---------------------------------------------------------------- stdio: surface

def test_without_the_flag_the_server_is_the_contract_one(pipe):
    server = pipe()
    info = server.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": DECLARED,
                                     "clientInfo": {"name": "raw", "version": "1"}})["result"]
    assert "extensions" not in info["capabilities"]
    assert server.call("tools/list")["tools"] == catalog.TOOLS
    assert server.rpc("tasks/get", {"taskId": "x"})["error"]["code"] == -32601
    assert server.rpc("tools/call", {"name": "ext_job"})["error"]["code"] == -32602  # unknown tool


def test_the_flag_declares_the_extension_and_adds_the_tools():
    server = Pipe("--tasks-ext")
    try:
        info = server.initialize(DECLARED)
        assert info["capabilities"]["extensions"] == {TASKS: {}}
        assert {k for k in info["capabilities"] if k != "extensions"} == {"tools", "resources", "prompts",
                                                                          "completions", "logging"}
        assert server.call("tools/list")["tools"] == catalog.TOOLS + TOOLS
    finally:
        server.close()


# ---------------------------------------------------------------- stdio: lifecycles

def test_ext_job_runs_to_completion_by_polling(pipe):
    server = pipe("--tasks-ext", "--poll-interval", "45")
    created = server.call("tools/call", {"name": "ext_job", "arguments": {"steps": 3, "delay": 0.02}})
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["ttlMs"] == 60000 and created["pollIntervalMs"] == 45
    assert ISO.match(created["createdAt"]) and ISO.match(created["lastUpdatedAt"])
    assert re.fullmatch(r"task-[0-9a-f]{32}", created["taskId"])
    answers = poll(getter(server, created["taskId"]), terminal)
    assert all(a["resultType"] == "complete" and TASK_KEYS <= set(a) for a in answers)
    messages = [a["statusMessage"] for a in answers]
    assert set(messages) <= {"queued", "step 1/3", "step 2/3", "step 3/3", "completed"}
    last = answers[-1]
    assert last["status"] == "completed" and "error" not in last and "inputRequests" not in last
    assert last["result"] == {"content": [{"type": "text", "text": "job done after 3 steps"}]}
    assert last["createdAt"] == created["createdAt"] and last["lastUpdatedAt"] >= created["lastUpdatedAt"]
    calls = requests_of(server, "tools/call")
    assert calls == [["tools/call", created["taskId"], ["arguments", "name"]]]  # no `task` param
    assert len(requests_of(server, "tasks/get")) == len(answers)


ENDS_AT_ONCE = {
    "ext_fail": {"status": "failed", "error": {"code": -32603, "message": "it broke"}},
    "ext_tool_error": {"status": "completed",
                       "result": {"content": [{"type": "text", "text": "bad input"}], "isError": True}},
    "ext_required": {"status": "completed", "result": {"content": [{"type": "text", "text": "required ok"}]}},
}


def test_tasks_that_end_at_once(pipe):
    server = pipe("--tasks-ext")
    for tool, outcome in ENDS_AT_ONCE.items():
        last = poll(getter(server, start_task(server, tool)), terminal)[-1]
        assert {k: last[k] for k in outcome} == outcome, tool
        assert not ({"result", "error", "inputRequests"} - set(outcome)) & set(last), last


def test_ext_forever_works_until_tasks_cancel(pipe):
    server = pipe("--tasks-ext")
    task_id = start_task(server, "ext_forever")
    get = getter(server, task_id)
    assert poll(get, lambda t: t["statusMessage"] == "running")[-1]["status"] == "working"
    assert server.call("tasks/cancel", {"taskId": task_id}) == {"resultType": "complete"}
    cancelled = get()
    assert cancelled["status"] == "cancelled" and cancelled["statusMessage"] == "cancelled by client"
    assert server.call("tasks/cancel", {"taskId": task_id}) == {"resultType": "complete"}  # terminal: same ack
    assert get()["status"] == "cancelled"
    log = server.call("tools/call", {"name": "ext_log"})["structuredContent"]
    assert [r for r in log["requests"] if r[0] == "tasks/cancel"] == [["tasks/cancel", task_id, []]] * 2
    assert log["cancelled_notifications"] == 0


def test_a_finished_task_is_not_cancelled(pipe):
    server = pipe("--tasks-ext")
    task_id = start_task(server, "ext_job", {"steps": 0})
    poll(getter(server, task_id), terminal)
    assert server.call("tasks/cancel", {"taskId": task_id}) == {"resultType": "complete"}
    assert server.call("tasks/get", {"taskId": task_id})["status"] == "completed"


ASKS = [
    ("elicit", "elicitation/create", {"action": "accept", "content": {"n": 7}}),
    ("sample", "sampling/createMessage", {"role": "assistant", "content": {"type": "text", "text": "hi"},
                                          "model": "m"}),
    ("roots", "roots/list", {"roots": [{"uri": "file:///tmp"}]}),
]


def test_ext_ask_lists_q1_until_answered_and_once_more(pipe):
    server = pipe("--tasks-ext")
    for kind, method, answer in ASKS:
        ask_once(server, kind, method, answer)
    assert [r[2] for r in requests_of(server, "tasks/update")] == [["q1", "zz"], ["q1"]] * len(ASKS)


def ask_once(server: Pipe, kind: str, method: str, answer: Json) -> None:
    task_id = start_task(server, "ext_ask", {"kind": kind})
    get = getter(server, task_id)
    asking = poll(get, lambda t: t["status"] == "input_required")[-1]
    assert list(asking["inputRequests"]) == ["q1"] and asking["inputRequests"]["q1"]["method"] == method
    assert get()["inputRequests"] == asking["inputRequests"]  # still listed while unanswered
    update = {"taskId": task_id, "inputResponses": {"q1": answer, "zz": {"ignored": True}}}
    assert server.call("tasks/update", update) == {"resultType": "complete"}
    stale = get()
    assert stale["status"] == "input_required" and stale["inputRequests"] == asking["inputRequests"]
    done = get()
    assert done["status"] == "completed" and "inputRequests" not in done
    assert done["result"]["content"][0]["text"] == "answer " + json.dumps(answer, sort_keys=True)
    assert server.call("tasks/update", {"taskId": task_id, "inputResponses": {"q1": {"late": 1}}}) == \
        {"resultType": "complete"}
    assert get()["result"] == done["result"]  # a second answer for q1 is ignored


# ---------------------------------------------------------------- stdio: errors

def test_unknown_ids_and_bad_params_are_invalid_params(pipe):
    server = pipe("--tasks-ext")
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        error = server.rpc(method, {"taskId": "task-nope", "inputResponses": {}})["error"]
        assert error["code"] == -32602 and "task-nope" in error["message"]
        assert server.rpc(method, {})["error"]["code"] == -32602
    task_id = start_task(server, "ext_forever")
    assert server.rpc("tasks/update", {"taskId": task_id, "inputResponses": []})["error"]["code"] == -32602
    assert server.rpc("tools/call", {"name": "ext_job", "arguments": {"steps": -1}})["error"]["code"] == -32602
    assert server.rpc("tools/call", {"name": "ext_ask", "arguments": {"kind": "x"}})["error"]["code"] == -32602


def test_a_client_that_did_not_declare_gets_no_tasks(pipe):
    server = pipe("--tasks-ext", "--notify-tasks", declare=False)
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        error = server.rpc(method, {"taskId": "task-nope"})["error"]
        assert error["code"] == -32021 and error["data"] == MISSING
    error = server.rpc("tools/call", {"name": "ext_required"})["error"]
    assert error["code"] == -32021 and error["data"] == MISSING and TASKS in error["message"]
    assert server.call("tools/call", {"name": "ext_job", "arguments": {"steps": 2, "delay": 0}}) == \
        {"content": [{"type": "text", "text": "job done after 2 steps"}]}
    assert server.rpc("tools/call", {"name": "ext_fail"})["error"] == {"code": -32603, "message": "it broke"}
    assert server.call("tools/call", {"name": "ext_tool_error"})["isError"] is True
    assert server.incoming.empty()  # no notifications/tasks: no tasks
    assert [r[1] for r in requests_of(server, "tools/call")] == [None] * 4


def test_inline_ext_ask_asks_the_client_directly(pipe):
    server = pipe("--tasks-ext", declare=False)
    rid = server.send("tools/call", {"name": "ext_ask", "arguments": {"kind": "elicit"}})
    asked = server.next_incoming()
    assert asked["method"] == "elicitation/create" and asked["params"]["message"] == "Pick a number"
    server.write({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}})
    assert server.response(rid)["result"]["content"][0]["text"] == 'answer {"action": "decline"}'


def test_inline_ext_forever_ends_with_notifications_cancelled(pipe):
    server = pipe("--tasks-ext", declare=False)
    rid = server.send("tools/call", {"name": "ext_forever"})
    server.notify("notifications/cancelled", {"requestId": rid})
    log = server.call("tools/call", {"name": "ext_log"})["structuredContent"]
    assert log["cancelled_notifications"] == 1
    assert log["requests"] == [["tools/call", None, ["name"]]]
    with pytest.raises(queue.Empty):
        server.response(rid, timeout=0.1)  # a cancelled request is not answered


# ---------------------------------------------------------------- stdio: push

def test_notify_tasks_pushes_every_change_after_the_create_result(pipe):
    server = pipe("--tasks-ext", "--notify-tasks", "--poll-interval", "60000")
    rid = server.send("tools/call", {"name": "ext_job", "arguments": {"steps": 2, "delay": 0.01}})
    created = server.response(rid)["result"]
    pushed = []
    while not pushed or not terminal(pushed[-1]):
        message = server.next_incoming()
        assert message["method"] == "notifications/tasks" and "id" not in message
        pushed.append(message["params"])
    assert [p["statusMessage"] for p in pushed] == ["step 1/2", "step 2/2", "completed"]
    assert all(p["taskId"] == created["taskId"] and TASK_KEYS <= set(p) and "resultType" not in p for p in pushed)
    assert pushed[-1]["result"]["content"][0]["text"] == "job done after 2 steps"
    task_id = start_task(server, "ext_ask", {"kind": "roots"})
    asking = server.next_incoming()["params"]
    assert asking["taskId"] == task_id and asking["inputRequests"]["q1"]["method"] == "roots/list"
    server.call("tasks/update", {"taskId": task_id, "inputResponses": {"q1": {"roots": []}}})
    assert server.next_incoming()["params"]["status"] == "completed"  # push shows the real state
    assert requests_of(server, "tasks/get") == []


# ---------------------------------------------------------------- HTTP

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Http:
    """Raw JSON-RPC POSTs to one scripted server; ``session`` (handshake) or ``_meta`` (2026), and
    the routing headers a 2026 client sends (``headers`` overrides them; a None value drops one)."""

    def __init__(self, server: TaskExtHTTPServer, *, declare: bool = True) -> None:
        self.server, self.declare, self.session = server, declare, None
        if server.era == "handshake":
            reply = self.post("initialize", {"protocolVersion": "2025-11-25", "clientInfo": {"name": "raw", "version": "1"},
                                             "capabilities": DECLARED if declare else {}})
            self.session = reply.headers["Mcp-Session-Id"]

    def post(self, method: str, params: Optional[Json] = None, *, stream: bool = False,
             headers: Optional[Dict[str, Optional[str]]] = None) -> requests.Response:
        params = dict(params or {})
        if self.server.era == "2026":
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                               META_CAPABILITIES: DECLARED if self.declare else {}}
        named = {"Mcp-Name": str(params[NAMED[method]])} if NAMED.get(method) in params else {}
        extra = {"Mcp-Method": method, **named, **(headers or {})}
        if self.session:
            extra["Mcp-Session-Id"] = self.session
        sent = {k: v for k, v in {**HEADERS, **extra}.items() if v is not None}
        return requests.post(self.server.url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                             headers=sent, stream=stream, timeout=LONG)

    def call(self, method: str, params: Optional[Json] = None, **kwargs: Any) -> Json:
        reply = self.post(method, params, **kwargs)
        assert reply.status_code == 200 and "result" in reply.json(), reply.text
        return reply.json()["result"]


@pytest.fixture(params=["handshake", "2026"])
def http_server(request, started) -> TaskExtHTTPServer:
    return started(TaskExtHTTPServer(request.param))


def test_http_tasks_in_both_eras(http_server):
    client = Http(http_server)
    if http_server.era == "2026":
        discovered = client.call("server/discover")
        assert discovered["capabilities"]["extensions"] == {TASKS: {}}
    assert [t["name"] for t in client.call("tools/list")["tools"]] == [t["name"] for t in TOOLS]
    created = client.call("tools/call", {"name": "ext_ask", "arguments": {"kind": "sample"}},
                          headers={"Mcp-Name": "ext_ask"})
    assert created["resultType"] == "task"
    task_id = created["taskId"]
    named = {"Mcp-Name": task_id}
    asking = client.call("tasks/get", {"taskId": task_id}, headers=named)
    assert asking["resultType"] == "complete" and asking["status"] == "input_required"
    client.call("tasks/update", {"taskId": task_id, "inputResponses": {"q1": {"ok": 1}}}, headers=named)
    assert client.call("tasks/get", {"taskId": task_id}, headers=named)["status"] == "input_required"  # stale
    assert client.call("tasks/get", {"taskId": task_id}, headers=named)["result"]["content"][0]["text"] == \
        'answer {"ok": 1}'
    assert client.call("tasks/cancel", {"taskId": task_id}, headers=named) == {"resultType": "complete"}
    named_requests = http_server.requests("tasks/get") + http_server.requests("tasks/cancel")
    assert [seen.rpc_method for seen in named_requests] == ["tasks/get"] * 3 + ["tasks/cancel"]
    for seen in named_requests:
        assert seen.headers["mcp-name"] == task_id and seen.headers["mcp-method"] == seen.rpc_method
    error = client.post("tasks/get", {"taskId": "task-nope"}).json()["error"]
    assert error["code"] == -32602
    assert [r[0] for r in http_server.log()["requests"]][-1] == "tasks/get"


def test_http_a_client_that_did_not_declare_gets_400_and_inline_tools(http_server):
    client = Http(http_server, declare=False)
    refused = client.post("tools/call", {"name": "ext_required"})
    assert refused.status_code == 400 and refused.json()["error"]["data"] == MISSING
    refused = client.post("tasks/get", {"taskId": "task-nope"})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == -32021
    job = client.call("tools/call", {"name": "ext_job", "arguments": {"steps": 1, "delay": 0}})
    assert job["content"][0]["text"] == "job done after 1 steps"
    assert ("resultType" in job) == (http_server.era == "2026")


def test_http_handshake_tasks_are_shared_by_sessions_so_a_new_client_resumes(started):
    server = started(TaskExtHTTPServer("handshake"))
    first = Http(server)
    task_id = first.call("tools/call", {"name": "ext_job", "arguments": {"steps": 2, "delay": 0.01}})["taskId"]
    second = Http(server)
    assert second.session != first.session
    last = poll(lambda: second.call("tasks/get", {"taskId": task_id}), terminal)[-1]
    assert last["result"]["content"][0]["text"] == "job done after 2 steps"
    refused = Http(server, declare=False).post("tasks/get", {"taskId": task_id})
    assert refused.status_code == 400  # the declaration is per session


def test_http_2026_declaration_is_per_request_and_ext_ask_falls_back_to_mrtr(started):
    server = started(TaskExtHTTPServer("2026"))
    declared, undeclared = Http(server), Http(server, declare=False)
    task_id = declared.call("tools/call", {"name": "ext_forever"})["taskId"]
    assert undeclared.post("tasks/get", {"taskId": task_id}).status_code == 400
    asked = undeclared.call("tools/call", {"name": "ext_ask", "arguments": {"kind": "roots"}})
    assert asked == {"resultType": "input_required", "inputRequests": {"q1": {"method": "roots/list", "params": {}}}}
    answered = undeclared.call("tools/call", {"name": "ext_ask", "arguments": {"kind": "roots"},
                                              "inputResponses": {"q1": {"roots": []}}})
    assert answered == {"resultType": "complete", "content": [{"type": "text", "text": 'answer {"roots": []}'}]}


def sse_messages(reply: requests.Response) -> Iterator[Json]:
    for line in reply.iter_lines():
        if line.startswith(b"data:"):
            yield json.loads(line[5:])


def test_http_2026_listen_acknowledges_known_ids_then_pushes_states(started):
    server = started(TaskExtHTTPServer("2026", poll_interval_ms=60000))
    client = Http(server)
    task_id = client.call("tools/call", {"name": "ext_job", "arguments": {"steps": 2, "delay": 0.02}})["taskId"]
    listen = client.post("subscriptions/listen", {"notifications": {"taskIds": [task_id, "task-nope"]}}, stream=True)
    try:
        assert listen.status_code == 200 and listen.headers["Content-Type"] == "text/event-stream"
        messages = sse_messages(listen)
        ack = next(messages)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"taskIds": [task_id]}
        assert ack["params"]["_meta"] == {META_SUBSCRIPTION: 1}
        pushed = []
        for message in messages:
            assert message["method"] == "notifications/tasks" and message["params"]["_meta"] == {META_SUBSCRIPTION: 1}
            pushed.append(message["params"])
            if terminal(pushed[-1]):
                break
    finally:
        listen.close()
    assert pushed[-1]["status"] == "completed" and pushed[-1]["result"]["content"][0]["text"] == "job done after 2 steps"
    assert {p["taskId"] for p in pushed} == {task_id}
    assert server.requests("tasks/get") == []
    assert ["subscriptions/listen", None, [task_id, "task-nope"]] in server.log()["requests"]


def test_http_2026_listening_for_tasks_needs_the_declaration(started):
    server = started(TaskExtHTTPServer("2026"))
    refused = Http(server, declare=False).post("subscriptions/listen", {"notifications": {"taskIds": ["x"]}})
    assert refused.status_code == 400 and refused.json()["error"]["data"] == MISSING


def test_http_2026_routing_headers_must_match_the_body(started):
    server = started(TaskExtHTTPServer("2026"))
    client = Http(server)
    task_id = client.call("tools/call", {"name": "ext_forever"}, headers={"Mcp-Name": "ext_forever"})["taskId"]
    for headers in ({"Mcp-Name": None}, {"Mcp-Name": "task-other"}, {"Mcp-Method": "tasks/cancel"},
                    {"Mcp-Method": None}):
        refused = client.post("tasks/get", {"taskId": task_id}, headers=headers)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == -32020, headers
    assert client.post("tools/call", {"name": "ext_log"}, headers={"Mcp-Name": None}).status_code == 400
    assert client.call("tasks/get", {"taskId": task_id})["status"] == "working"
    assert [r[0] for r in server.log()["requests"]] == ["tools/call", "tasks/get"]  # refusals never reach it


def test_http_tasks_expire_after_their_ttl(started):
    # 1 s: long enough that the first tasks/get lands before expiry on a slow, loaded host (50 ms did not)
    server = started(TaskExtHTTPServer("handshake", ttl_ms=1000))
    client = Http(server)
    task_id = client.call("tools/call", {"name": "ext_forever"})["taskId"]
    assert client.call("tasks/get", {"taskId": task_id})["ttlMs"] == 1000
    answers: List[Json] = []

    def expired() -> bool:  # (the TTL runs on the server's clock: poll it, as a client would)
        answers.append(client.post("tasks/get", {"taskId": task_id}).json())
        return "error" in answers[-1]

    assert wait_until(expired)
    assert answers[-1]["error"] == {"code": -32602, "message": f"task has expired: {task_id}"}
    error = client.post("tasks/cancel", {"taskId": task_id}).json()["error"]  # forgotten for good
    assert error == {"code": -32602, "message": f"unknown task: {task_id}"}


def test_http_ttl_none_is_null_and_never_expires(started):
    server = started(TaskExtHTTPServer("2026", ttl_ms=None))
    created = Http(server).call("tools/call", {"name": "ext_tool_error"})
    assert created["ttlMs"] is None and "ttlMs" in created


def test_http_era_is_checked():
    with pytest.raises(ValueError):
        TaskExtHTTPServer("2025")


def test_http_2026_listen_answers_the_schema_drift_spelling_in_kind(started):
    """``schema.ts`` spells the filter ``tasksStatus`` and the push ``notifications/tasks/status``
    (the normative text: ``taskIds``, ``notifications/tasks``): a client of that dialect gets it back."""
    server = started(TaskExtHTTPServer("2026"))
    client = Http(server)
    task_id = client.call("tools/call", {"name": "ext_fail"})["taskId"]
    listen = client.post("subscriptions/listen", {"notifications": {"tasksStatus": [task_id]}}, stream=True)
    try:
        messages = sse_messages(listen)
        assert next(messages)["params"]["notifications"] == {"tasksStatus": [task_id]}
        pushed = next(messages)
    finally:
        listen.close()
    assert pushed["method"] == "notifications/tasks/status" and pushed["params"]["status"] == "failed"
    assert pushed["params"]["error"] == {"code": -32603, "message": "it broke"}
