"""The server side of the Tasks extension (``io.modelcontextprotocol/tasks``), for tests.

``TaskEngine`` holds the tasks and the seven ``ext_*`` tools of ``tests/servers/TASKS-EXT.md``
independent of any transport: the stdio test server (``python -m mcpclient.testing --tasks-ext``)
and the scripted HTTP servers of the test suite feed it requests and write what it returns. It is
our own reading of the draft extension, written apart from the client so the two readings meet on
the wire. Standard library only.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ._rpc import RpcError

__all__ = ["Abandoned", "TASKS", "TOOLS", "TOOL_NAMES", "TaskEngine", "RpcError", "declared_in_meta",
           "declares", "missing_capability"]

TASKS = "io.modelcontextprotocol/tasks"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
MISSING_CAPABILITY = -32021
INVALID_PARAMS, INTERNAL_ERROR = -32602, -32603
TERMINAL = frozenset(("completed", "failed", "cancelled"))
TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
#: Requests ``ext_log`` does not list: lifecycle chatter, not what a test asks about.
UNLOGGED = frozenset(("initialize", "ping", "server/discover"))

Json = Dict[str, Any]

_NO_ARGS: Json = {"type": "object", "properties": {}}
TOOLS: List[Json] = [
    {"name": "ext_job", "description": "A task that works in steps, then completes with a text.",
     "inputSchema": {"type": "object", "properties": {
         "steps": {"type": "integer", "minimum": 0, "default": 3},
         "delay": {"type": "number", "minimum": 0, "default": 0.05}}}},
    {"name": "ext_fail", "description": "A task that fails with a JSON-RPC error.", "inputSchema": _NO_ARGS},
    {"name": "ext_tool_error", "description": "A task that completes with an isError result.",
     "inputSchema": _NO_ARGS},
    {"name": "ext_forever", "description": "A task that works until it is cancelled.", "inputSchema": _NO_ARGS},
    {"name": "ext_ask", "description": "A task that needs one answer from the client (key q1).",
     "inputSchema": {"type": "object", "properties": {
         "kind": {"type": "string", "enum": ["elicit", "sample", "roots"], "default": "elicit"}}}},
    {"name": "ext_required", "description": "Refuses clients that did not declare the tasks extension.",
     "inputSchema": _NO_ARGS},
    {"name": "ext_log", "description": "What the server saw: requests and notifications/cancelled.",
     "inputSchema": _NO_ARGS},
]
TOOL_NAMES = frozenset(t["name"] for t in TOOLS)

#: ``ext_ask``'s input request, by kind.
QUESTIONS: Dict[str, Json] = {
    "elicit": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Pick a number",
        "requestedSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}},
    "sample": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 10}},
    "roots": {"method": "roots/list", "params": {}},
}
KEY = "q1"

#: Answers the server needs from the client inline: (method, params) -> the client's result.
Ask = Callable[[str, Json], Any]
Listener = Callable[[Json], None]


class Abandoned(Exception):
    """An inline tool call was cancelled (``notifications/cancelled``) or the server is stopping:
    the transport sends no answer."""


def missing_capability() -> RpcError:
    """``-32021`` naming the tasks extension, as the spec's missing-capability error."""
    return RpcError(MISSING_CAPABILITY, f"client must declare the {TASKS} extension",
                        {"requiredCapabilities": {"extensions": {TASKS: {}}}})


def declares(capabilities: Any) -> bool:
    """Whether client capabilities (``initialize``'s or a 2026 request's) declare the extension."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS), dict)


def declared_in_meta(params: Any) -> bool:
    """2026 era: whether this request's ``_meta`` client capabilities declare the extension."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return declares(meta.get(META_CAPABILITIES) if isinstance(meta, dict) else None)


def _now() -> str:
    """ISO 8601 UTC with milliseconds, as ``createdAt`` / ``lastUpdatedAt``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(text: str, is_error: bool = False) -> Json:
    result: Json = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def _answer_text(response: Any) -> Json:
    return _text("answer " + json.dumps(response, sort_keys=True))


def _task_id(params: Json) -> str:
    task_id = params.get("taskId")
    if not isinstance(task_id, str):
        raise RpcError(INVALID_PARAMS, "taskId must be a string")
    return task_id


def _arguments(params: Json) -> Tuple[str, Json]:
    """The tool name and its arguments, checked against the ``ext_*`` schemas."""
    name, args = params.get("name"), params.get("arguments") or {}
    if name not in TOOL_NAMES:
        raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    if not isinstance(args, dict):
        raise RpcError(INVALID_PARAMS, "arguments must be an object")
    steps, delay, kind = args.get("steps", 3), args.get("delay", 0.05), args.get("kind", "elicit")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise RpcError(INVALID_PARAMS, "steps must be an integer >= 0")
    if not isinstance(delay, (int, float)) or isinstance(delay, bool) or delay < 0:
        raise RpcError(INVALID_PARAMS, "delay must be a number >= 0")
    if kind not in QUESTIONS:
        raise RpcError(INVALID_PARAMS, f"kind must be one of {sorted(QUESTIONS)}")
    return str(name), {"steps": steps, "delay": delay, "kind": kind}


class _Task:
    """One task's state; changed only under the engine's lock."""

    def __init__(self, task_id: str, tool: str, args: Json, poll_interval_ms: int, ttl_ms: Optional[int]) -> None:
        self.id, self.tool, self.args = task_id, tool, args
        self.status, self.message = "working", "queued"
        self.created = self.updated = _now()
        self.poll_interval_ms, self.ttl_ms = poll_interval_ms, ttl_ms
        self.born = time.monotonic()
        self.result: Optional[Json] = None
        self.error: Optional[Json] = None
        self.requests: Json = {}  # open input requests, by key
        self.answered: Json = {}  # key -> the client's answer
        self.stale: Optional[Json] = None  # what the next `stale_polls` tasks/get still show
        self.stale_polls = 0
        self.stop = threading.Event()  # cancelled or the engine stops: the worker ends

    def detailed(self) -> Json:
        """The DetailedTask: the common fields plus inputRequests / result / error by status."""
        task: Json = {"taskId": self.id, "status": self.status, "statusMessage": self.message,
                      "createdAt": self.created, "lastUpdatedAt": self.updated, "ttlMs": self.ttl_ms,
                      "pollIntervalMs": self.poll_interval_ms}
        if self.status == "input_required":
            task["inputRequests"] = json.loads(json.dumps(self.requests))
        elif self.status == "completed":
            task["result"] = self.result
        elif self.status == "failed":
            task["error"] = self.error
        return task


class TaskEngine:
    """Tasks and ``ext_*`` tools, shared by every transport of one test server (thread-safe).

    The transport decides whether the client declared the extension (``declared=``), reports
    every request with ``record`` in arrival order (on its reading thread) and every
    ``notifications/cancelled`` with ``note_cancelled``, and feeds ``tools/call`` to
    ``call_tool`` (with the entry ``record`` returned) and ``tasks/*`` to ``handle``. Push: ``subscribe`` a listener (every change of every task) or
    ``watch`` some ids (their current state first, then changes).
    """

    def __init__(self, *, poll_interval_ms: int = 30, ttl_ms: Optional[int] = 60000) -> None:
        """``ttl_ms``: every task's ``ttlMs``; once that long has passed since its creation the
        task is forgotten (``-32602`` "task has expired"). None: ``ttlMs: null``, kept for ever."""
        self.poll_interval_ms, self.ttl_ms = poll_interval_ms, ttl_ms
        self._lock = threading.RLock()
        self._tasks: Dict[str, _Task] = {}
        self._log: List[List[Any]] = []
        self._cancelled_notifications = 0
        self._listeners: List[Listener] = []
        self._threads: List[threading.Thread] = []
        self._stopping = threading.Event()
        self._ids = itertools.count(1)

    # ----- what the server saw ----------------------------------------------------------

    def record(self, method: str, params: Any) -> Optional[List[Any]]:
        """Log one request as ``[method, taskId, keys]`` (see TASKS-EXT.md); returns the entry."""
        params = params if isinstance(params, dict) else {}
        if method in UNLOGGED or (method == "tools/call" and params.get("name") == "ext_log"):
            return None
        task_id: Any = None
        keys: List[Any] = []
        if method == "tools/call":
            keys = sorted(k for k in params if k != "_meta")
        elif method in TASK_METHODS:
            task_id = params.get("taskId")
            responses = params.get("inputResponses") if method == "tasks/update" else None
            keys = sorted(responses) if isinstance(responses, dict) else []
        elif method == "subscriptions/listen":
            wanted = params.get("notifications")
            wanted = wanted if isinstance(wanted, dict) else {}
            ids = wanted.get("taskIds", wanted.get("tasksStatus"))  # (the latter: schema.ts drift)
            keys = list(ids) if isinstance(ids, list) else []
        entry = [method, task_id, keys]
        with self._lock:
            self._log.append(entry)
        return entry

    def note_cancelled(self) -> None:
        """Count one ``notifications/cancelled`` (the extension forbids them for tasks)."""
        with self._lock:
            self._cancelled_notifications += 1

    def states(self) -> Dict[str, str]:
        """Every task's status now, by id, in creation order (what a test asks the server)."""
        with self._lock:
            return {task_id: task.status for task_id, task in self._tasks.items()}

    def log(self) -> Json:
        """What ``ext_log`` reports: ``{"requests": [...], "cancelled_notifications": n}``."""
        with self._lock:
            return {"requests": json.loads(json.dumps(self._log)),
                    "cancelled_notifications": self._cancelled_notifications}

    # ----- tools/call -------------------------------------------------------------------

    def call_tool(self, params: Json, *, declared: bool, entry: Optional[List[Any]] = None,
                  ask: Optional[Ask] = None, cancelled: Optional[threading.Event] = None,
                  mrtr: bool = False) -> Tuple[Json, Optional[Callable[[], None]]]:
        """Run ``tools/call`` of an ``ext_*`` tool: ``(result, start)``. For a declaring client
        the result is a ``CreateTaskResult`` and ``start`` begins the task's work: call it once
        the answer is written, so no push precedes it, and ``entry`` (the call's ``record``)
        gets the task id. Otherwise the tool runs inline (``start``
        is None): ``ask`` sends ``ext_ask``'s question to the client (stdio), ``mrtr`` answers
        it 2026-style with ``input_required``; ``cancelled`` ends a waiting inline call
        (``Abandoned``). Raises ``RpcError`` for a JSON-RPC error."""
        name, args = _arguments(params)
        if name == "ext_log":
            data = self.log()
            return {"content": [{"type": "text", "text": json.dumps(data)}], "structuredContent": data}, None
        if not declared:
            return self._inline(name, args, params, ask, cancelled, mrtr), None
        task = _Task(f"task-{uuid.uuid4().hex}", name, args, self.poll_interval_ms, self.ttl_ms)
        with self._lock:
            self._tasks[task.id] = task
            if entry is not None:
                entry[1] = task.id
            created = {"resultType": "task", **task.detailed()}
        return created, lambda: self._start(task)

    def _inline(self, name: str, args: Json, params: Json, ask: Optional[Ask],
                cancelled: Optional[threading.Event], mrtr: bool) -> Json:
        """Graceful degradation: the tool's outcome as a plain ``CallToolResult`` (or error)."""
        stop = cancelled if cancelled is not None else self._stopping
        if name == "ext_required":
            raise missing_capability()
        if name == "ext_fail":
            raise RpcError(INTERNAL_ERROR, "it broke")
        if name == "ext_tool_error":
            return _text("bad input", is_error=True)
        if name == "ext_job":
            for _ in range(args["steps"]):
                if stop.wait(args["delay"]):
                    raise Abandoned()
            return _text(f"job done after {args['steps']} steps")
        if name == "ext_forever":
            stop.wait()
            raise Abandoned()
        question = QUESTIONS[args["kind"]]
        if ask is not None:
            return _answer_text(ask(question["method"], question["params"]))
        if mrtr:
            responses = params.get("inputResponses")
            if isinstance(responses, dict) and KEY in responses:
                return _answer_text(responses[KEY])
            return {"resultType": "input_required", "inputRequests": {KEY: question}}
        raise RpcError(INTERNAL_ERROR, "ext_ask cannot reach this client without the tasks extension")

    def _start(self, task: _Task) -> None:
        """The task's work, once its CreateTaskResult is out."""
        if task.tool == "ext_job":
            thread = threading.Thread(target=self._job, args=(task,), name=f"taskext-job-{next(self._ids)}",
                                      daemon=True)
            with self._lock:
                self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()
        elif task.tool == "ext_fail":
            self._change(task, status="failed", message="tool failed: it broke",
                         error=RpcError(INTERNAL_ERROR, "it broke").to_json())
        elif task.tool == "ext_tool_error":
            self._change(task, status="completed", message="completed", result=_text("bad input", True))
        elif task.tool == "ext_required":
            self._change(task, status="completed", message="completed", result=_text("required ok"))
        elif task.tool == "ext_forever":
            self._change(task, message="running")
        elif task.tool == "ext_ask":
            self._change(task, status="input_required", message=f"waiting for {KEY}",
                         requests={KEY: QUESTIONS[task.args["kind"]]})

    def _job(self, task: _Task) -> None:
        steps = task.args["steps"]
        for i in range(1, steps + 1):
            if task.stop.wait(task.args["delay"]):
                return  # cancelled (tasks/cancel already settled it) or the engine stops
            self._change(task, message=f"step {i}/{steps}")
        self._change(task, status="completed", message="completed", result=_text(f"job done after {steps} steps"))

    def _change(self, task: _Task, *, status: Optional[str] = None, message: Optional[str] = None,
                result: Optional[Json] = None, error: Optional[Json] = None,
                requests: Optional[Json] = None) -> bool:
        """Apply one change to a live task and push it; a terminal task never changes again."""
        with self._lock:
            if task.status in TERMINAL:
                return False
            if status is not None:
                task.status = status
            if message is not None:
                task.message = message
            task.result, task.error = result, error
            task.requests = requests if requests is not None else {}
            task.updated = _now()
            if task.status in TERMINAL:
                task.stop.set()
            snapshot = task.detailed()
            for listener in list(self._listeners):
                listener(dict(snapshot))
        return True

    # ----- tasks/get, tasks/update, tasks/cancel ------------------------------------------

    def handle(self, method: str, params: Json, *, declared: bool) -> Json:
        """Answer one ``tasks/*`` request; ``RpcError`` for -32021 / -32602 / -32601."""
        if method not in TASK_METHODS:
            raise RpcError(-32601, f"Method not found: {method}")
        if not declared:
            raise missing_capability()
        task_id = _task_id(params)
        with self._lock:
            task = self._tasks.get(task_id)
            if task is not None and task.ttl_ms is not None and time.monotonic() - task.born > task.ttl_ms / 1000:
                task.stop.set()
                del self._tasks[task_id]
                raise RpcError(INVALID_PARAMS, f"task has expired: {task_id}")
            if task is None:
                raise RpcError(INVALID_PARAMS, f"unknown task: {task_id}")
            if method == "tasks/get":
                if task.stale_polls > 0 and task.stale is not None:
                    task.stale_polls -= 1
                    return {"resultType": "complete", **json.loads(json.dumps(task.stale))}
                return {"resultType": "complete", **task.detailed()}
            if method == "tasks/cancel":
                task.stop.set()
                self._change(task, status="cancelled", message="cancelled by client")
                return {"resultType": "complete"}
            responses = params.get("inputResponses")
            if not isinstance(responses, dict):
                raise RpcError(INVALID_PARAMS, "inputResponses must be an object")
            self._answer(task, responses)
            return {"resultType": "complete"}

    def _answer(self, task: _Task, responses: Json) -> None:
        """``tasks/update``: unknown and answered keys are ignored; answering ``q1`` completes
        the task, but the next ``tasks/get`` still shows the question (eventual consistency)."""
        fresh = {k: v for k, v in responses.items() if k in task.requests and k not in task.answered}
        if not fresh or task.status != "input_required":
            return
        task.answered.update(fresh)
        task.stale, task.stale_polls = task.detailed(), 1
        self._change(task, status="completed", message="completed", result=_answer_text(task.answered[KEY]))

    # ----- push -----------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(detailed_task)`` on every change of every task (under the lock: keep it quick)."""
        with self._lock:
            self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        """Stop calling ``listener``."""
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def watch(self, task_ids: Sequence[Any], listener: Listener) -> Tuple[List[str], Listener]:
        """For a listen: the known ids among ``task_ids`` (in order); ``listener`` gets their
        current state at once, then every change of them. Returns (agreed ids, the registered
        listener to ``unsubscribe``), atomically, so no change falls between snapshot and push."""
        with self._lock:
            agreed = [i for i in dict.fromkeys(t for t in task_ids if isinstance(t, str)) if i in self._tasks]
            wanted = frozenset(agreed)

            def filtered(task: Json) -> None:
                if task["taskId"] in wanted:
                    listener(task)

            for task_id in agreed:
                listener(self._tasks[task_id].detailed())
            self._listeners.append(filtered)
        return agreed, filtered

    # ----- lifecycle ------------------------------------------------------------------------

    @property
    def stopping(self) -> threading.Event:
        """Set by ``stop``: long waits (inline calls, listen streams) end."""
        return self._stopping

    def task(self, task_id: str) -> Optional[Json]:
        """A task's real current state (no stale view, no log entry), or None."""
        with self._lock:
            task = self._tasks.get(task_id)
            return task.detailed() if task is not None else None

    def stop(self, timeout: float = 2.0) -> None:
        """End every worker (tasks keep their last state) and join the job threads."""
        self._stopping.set()
        with self._lock:
            for task in self._tasks.values():
                task.stop.set()
            threads, self._threads = self._threads, []
        for thread in threads:
            thread.join(timeout)
