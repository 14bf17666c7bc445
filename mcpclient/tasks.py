"""Tasks (MCP 2025-11-25, experimental): long-running tool calls the server runs in the background.

``Client.call_tool(name, args, task=True)`` sends the call task-augmented and returns a
``ToolTask`` at once; the server keeps working and the handle polls (``status()``), waits for the
outcome (``result()``, over ``tasks/result``, which the server holds open until the task ends) or
cancels (``cancel()``, over ``tasks/cancel`` — never ``notifications/cancelled``).

The client can also be the task *receiver*: with ``Client(task_requests=True)`` a server may ask
for sampling or elicitation as a task. ``TaskStore`` then answers at once with a working task,
runs the user's handler on its own thread, and serves the server's ``tasks/get``,
``tasks/result``, ``tasks/list`` and ``tasks/cancel`` for it.
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional

from ._sentinel import DEFAULT
from ._threads import Lane
from .errors import InvalidParams, MCPError, ProtocolError, RequestTimeout, RPCError
from .types import Raw, ToolResult, _Record, _record

if TYPE_CHECKING:
    from .client import Client

__all__ = ["Task", "TaskStore", "ToolTask"]

log = logging.getLogger("mcpclient")

TERMINAL = frozenset(("completed", "failed", "cancelled"))
_KEPT_TASKS = 1000  # finished receiver-side tasks remembered for the server's late tasks/result


@_record
class Task(_Record):
    """The state of a task (``tasks/get``): ``status`` is ``working``, ``input_required``,
    ``completed``, ``failed`` or ``cancelled``. Times are the server's ISO 8601 strings; ``ttl``
    and ``poll_interval`` are milliseconds."""

    task_id: str
    status: str
    status_message: Optional[str] = None
    created_at: Optional[str] = None
    last_updated_at: Optional[str] = None
    ttl: Optional[int] = None
    poll_interval: Optional[int] = None
    meta: Optional[Raw] = None
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    @classmethod
    def from_wire(cls, raw: Any) -> "Task":
        if not isinstance(raw, dict) or not isinstance(raw.get("taskId"), str) or not isinstance(raw.get("status"), str):
            raise ProtocolError("task: expected an object with string 'taskId' and 'status'")
        return cls(raw["taskId"], raw["status"], raw.get("statusMessage"), raw.get("createdAt"),
                   raw.get("lastUpdatedAt"), raw.get("ttl"), raw.get("pollInterval"), raw.get("_meta"), raw)


class ToolTask:
    """A tool call running as a task on the server. Thread-safe; every method is one request.

    ``task`` is the state the server first reported (``CreateTaskResult``).
    """

    def __init__(self, client: "Client", name: str, task: Task, transform: Callable[[Any], ToolResult]) -> None:
        self._client = client
        self.name = name
        self.task = task
        self._transform = transform

    @property
    def task_id(self) -> str:
        return self.task.task_id

    def __repr__(self) -> str:
        return f"<ToolTask {self.name!r} {self.task_id!r} {self.task.status}>"

    def status(self, *, timeout: Any = DEFAULT) -> Task:
        """The task's current state (``tasks/get``)."""
        return self._client._run("tasks/get", {"taskId": self.task_id}, Task.from_wire, timeout)

    def result(self, timeout: Optional[float] = None) -> ToolResult:
        """Wait for the task to end and return the tool's result (``tasks/result``).

        ``timeout`` (seconds, ``None`` = as long as it takes) bounds the wait; on expiry
        ``RequestTimeout`` is raised and the task keeps running on the server. A tool that
        failed gives ``is_error=True`` as usual; a task that failed otherwise raises ``RPCError``.
        """
        return self._client._run("tasks/result", {"taskId": self.task_id}, self._transform, timeout,
                                 check=False)

    def cancel(self, *, timeout: Any = DEFAULT) -> Task:
        """Ask the server to cancel the task (``tasks/cancel``); returns its state afterwards."""
        return self._client._run("tasks/cancel", {"taskId": self.task_id}, Task.from_wire, timeout)

    def wait(self, timeout: Optional[float] = None) -> Task:
        """Poll ``tasks/get`` (at the server's ``pollInterval``) until the task is terminal or
        needs input; returns that state. ``RequestTimeout`` after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = threading.Event()
        while True:
            state = self.status()
            if state.is_terminal or state.status == "input_required":
                return state
            delay = max(0.05, min((state.poll_interval or 1000) / 1000, 5.0))
            if deadline is not None and time.monotonic() + delay > deadline:
                raise RequestTimeout(f"task {self.task_id} still {state.status} after {timeout} s",
                                     method="tasks/get")
            pause.wait(delay)  # the server's polling interval, not a synchronisation


# --- the client as task receiver ------------------------------------------------------------------

def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Local:
    """One task this client runs for the server."""

    def __init__(self, method: str, ttl: Optional[int]) -> None:
        self.id = f"mcpclient-{uuid.uuid4().hex}"
        self.method = method
        self.status = "working"
        self.message: Optional[str] = None
        self.created = self.updated = _now()
        self.ttl = ttl
        self.result: Optional[Raw] = None
        self.error: Optional[RPCError] = None
        self.done = threading.Event()

    def wire(self) -> Raw:
        task: Raw = {"taskId": self.id, "status": self.status, "createdAt": self.created,
                     "lastUpdatedAt": self.updated, "ttl": self.ttl, "pollInterval": 200}
        if self.message:
            task["statusMessage"] = self.message
        return task


class TaskStore:
    """Runs task-augmented server requests (sampling, elicitation) and serves ``tasks/*`` for them."""

    def __init__(self, instance: int, workers: int) -> None:
        self._tasks: Dict[str, _Local] = {}
        self._lock = threading.Lock()
        self._lane = Lane(f"mcpclient-{instance}-task", workers, -1)

    def start(self, method: str, params: Raw, run: Callable[[Raw], Raw]) -> Raw:
        """Accept a task-augmented request: run ``run(params)`` in the background, answer
        ``CreateTaskResult`` now."""
        spec = params.get("task")
        ttl = spec.get("ttl") if isinstance(spec, dict) and isinstance(spec.get("ttl"), int) else None
        task = _Local(method, ttl)
        plain = {k: v for k, v in params.items() if k != "task"}
        with self._lock:
            self._tasks[task.id] = task
            self._forget_old()
        if not self._lane.try_submit(f"task {method}", self._run, task, run, plain):
            raise MCPError("the client is closed")
        return {"task": task.wire()}

    def _run(self, task: _Local, run: Callable[[Raw], Raw], params: Raw) -> None:
        try:
            result, error, status = run(params), None, "completed"
        except RPCError as exc:
            result, error, status = None, exc, "failed"
        except Exception:  # the handler's bug: a safe message for the server, details in the log
            log.exception("task handler for %s failed", task.method)
            result, error, status = None, RPCError(-32603, f"client handler for {task.method} failed"), "failed"
        with self._lock:
            if task.status == "cancelled":
                task.done.set()
                return
            task.result, task.error, task.status, task.updated = result, error, status, _now()
        task.done.set()

    def answer(self, method: str, params: Raw) -> Raw:
        """Serve the server's ``tasks/*`` request (on a handler thread; ``tasks/result`` blocks)."""
        if method == "tasks/list":
            with self._lock:
                return {"tasks": [t.wire() for t in self._tasks.values()]}
        task_id = params.get("taskId")
        with self._lock:
            task = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            raise InvalidParams(-32602, f"unknown task {task_id!r:.100}")
        if method == "tasks/get":
            with self._lock:
                return task.wire()
        if method == "tasks/cancel":
            with self._lock:
                if task.status in TERMINAL:
                    raise InvalidParams(-32602, f"task {task_id} is already {task.status}")
                task.status, task.updated = "cancelled", _now()
                task.done.set()
                return task.wire()
        task.done.wait()  # tasks/result: held until the task ends
        with self._lock:
            related = {"io.modelcontextprotocol/related-task": {"taskId": task.id}}
            if task.error is not None:
                raise type(task.error)(task.error.code, task.error.message, task.error.data)
            if task.status == "cancelled":
                raise InvalidParams(-32602, f"task {task_id} was cancelled")
            return dict(task.result or {}, _meta=related)

    def _forget_old(self) -> None:
        if len(self._tasks) > _KEPT_TASKS:
            for old in [t for t in self._tasks.values() if t.done.is_set()][: len(self._tasks) - _KEPT_TASKS]:
                del self._tasks[old.id]

    def close(self, deadline: float) -> None:
        with self._lock:
            tasks = list(self._tasks.values())
            for task in tasks:
                if task.status not in TERMINAL:
                    task.status = "cancelled"
        for task in tasks:  # release the server's pending tasks/result waits
            task.done.set()
        self._lane.shutdown(deadline)

