"""Tasks (MCP 2025-11-25, experimental): long-running tool calls the server runs in the background.

``client.extension(Tasks).call_tool(name, args)`` sends the call task-augmented and returns a
``ToolTask`` at once; the server keeps working and the handle polls (``status()``), waits for the
outcome (``result()``, over ``tasks/result``, which the server holds open until the task ends) or
cancels (``cancel()``, over ``tasks/cancel`` — never ``notifications/cancelled``).

The client can also be the task *receiver*: with ``Handlers(task_requests=True)`` a server may ask
for sampling or elicitation as a task. ``TaskStore`` then answers at once with a working task,
runs the user's handler on its own thread, and serves the server's ``tasks/get``,
``tasks/result``, ``tasks/list`` and ``tasks/cancel`` for it.
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from ..._util.sentinel import DEFAULT
from ..._util.threads import WorkerPool
from ...errors import CapabilityError, InternalError, InvalidParams, ProtocolError, RequestTimeout, RPCError
from ..._engine.deadline import Deadline
from ..._engine.futures import CallFuture
from ...policies.timeout import CallTimeout
from ...protocol.spec import server_has
from ...types._base import Raw
from ...types import Tool, ToolResult
from ...types._tasks import TERMINAL, Task
from ..base import TASKS, server_settings

if TYPE_CHECKING:
    from ..._engine.requester import Requester


__all__ = ["Task", "TaskStore", "ToolTask", "start"]  # (Task: mcpclient.types, re-exported)

log = logging.getLogger("mcpclient")

_KEPT_TASKS = 1000  # finished receiver-side tasks remembered for the server's late tasks/result


class ToolTask:
    """A tool call running as a task on the server. Thread-safe; every method is one request.

    ``task`` is the state the server first reported (``CreateTaskResult``). ``protocol`` says
    which tasks this is: ``"2025-11-25"`` (``Tasks.call_tool``, this class) or
    ``"extension"`` (the Tasks extension's task, same methods).
    """
    # The Tasks extension's task is ``_taskext.ExtensionToolTask``.

    protocol = "2025-11-25"

    def __init__(self, requester: Optional["Requester"], name: str, task: Task,
                 transform: Callable[[Any], ToolResult]) -> None:
        self._requester: "Requester" = requester  # type: ignore[assignment]  # (None: a subclass that sends its own way)
        self.name = name
        self.task = task
        self._transform = transform

    @property
    def task_id(self) -> str:
        """The server's id of the task."""
        return self.task.task_id

    @property
    def status_message(self) -> Optional[str]:
        """The server's last known message about the task (``statusMessage``), or None."""
        return self.task.status_message

    def __repr__(self) -> str:
        return f"<ToolTask {self.name!r} {self.task_id!r} {self.task.status}>"

    def status(self, *, timeout: CallTimeout = DEFAULT) -> Task:
        """The task's current state (``tasks/get``)."""
        requester = self._requester
        return requester.call("tasks/get", {"taskId": self.task_id}, Task.from_wire,  # type: ignore[no-any-return]
                              requester.deadline(timeout)).result()

    def result(self, timeout: Optional[float] = None) -> ToolResult:
        """Wait for the task to end and return the tool's result (``tasks/result``).

        ``timeout`` (seconds, ``None`` = as long as it takes) bounds the wait; on expiry
        ``RequestTimeout`` is raised and the task keeps running on the server. A tool that
        failed gives ``is_error=True`` as usual; a task that failed otherwise raises ``RPCError``.
        """
        requester = self._requester
        return requester.call("tasks/result", {"taskId": self.task_id}, self._transform,  # type: ignore[no-any-return]
                              requester.deadline(timeout), check=False).result()

    def result_future(self, timeout: Optional[float] = None) -> CallFuture[ToolResult]:
        """``result()``, returning at once: a future of the tool's ``ToolResult``."""
        requester = self._requester
        return requester.call("tasks/result", {"taskId": self.task_id}, self._transform, requester.deadline(timeout), check=False)

    def cancel(self, *, timeout: CallTimeout = DEFAULT) -> Task:
        """Ask the server to cancel the task (``tasks/cancel``); returns its state afterwards."""
        requester = self._requester
        return requester.call("tasks/cancel", {"taskId": self.task_id}, Task.from_wire,  # type: ignore[no-any-return]
                              requester.deadline(timeout)).result()

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


def start(requester: "Requester", capabilities: Dict[str, Any], known: Optional[Tool], params: Dict[str, Any],
          transform: Callable[[Any], ToolResult], task: Any, deadline: Deadline) -> "ToolTask":
    """``Tasks.call_tool(...)``: send the call task-augmented; the ``ToolTask``."""
    name = params["name"]
    if not server_has(capabilities, "tasks.requests.tools.call"):
        error = CapabilityError("tasks.requests.tools.call", "tools/call")
        if server_settings(capabilities, TASKS) is not None:
            error.args = (f"{error}; this server runs tasks with the Tasks extension: declare it "
                          "(Client(extensions={TASKS: {}})) and call call_tool_future(...) (its .task)",)
        raise error
    if known is not None and known.task_support == "forbidden":
        raise CapabilityError("execution.taskSupport", f"tools/call {name}")
    params["task"] = {} if task is True else dict(task)

    def created(raw: Any) -> ToolTask:
        if not isinstance(raw, dict) or "task" not in raw:
            raise ProtocolError(f"tools/call {name} as a task: the server answered without a task")
        return ToolTask(requester, name, Task.from_wire(raw["task"]), transform)
    return requester.call("tools/call", params, created, deadline).result()  # type: ignore[no-any-return]


# --- the client as task receiver ------------------------------------------------------------------

RELATED_TASK = "io.modelcontextprotocol/related-task"
Reply = Callable[..., None]  # ServerRequests.reply(rid, result=None, error=None)


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
        self.finished_at: Optional[float] = None  # monotonic
        self.result: Optional[Raw] = None
        self.error: Optional[RPCError] = None
        self.waiters: List[Any] = []  # request ids of the server's pending tasks/result

    def wire(self) -> Raw:
        task: Raw = {"taskId": self.id, "status": self.status, "createdAt": self.created,
                     "lastUpdatedAt": self.updated, "ttl": self.ttl, "pollInterval": 200}
        if self.message:
            task["statusMessage"] = self.message
        return task


class TaskStore:
    """Runs task-augmented server requests (sampling, elicitation) and serves ``tasks/*`` for them.

    Nothing here blocks a thread on the server's behalf: ``tasks/get``/``list``/``cancel`` are
    answered on the reader thread, and a ``tasks/result`` is answered when its task ends. At most
    ``limit`` tasks may be unfinished at once (more are refused as busy); finished ones are kept
    until their ``ttl`` passes, and at most ``_KEPT_TASKS`` of them.
    """

    def __init__(self, instance: int, workers: int, limit: int = 100) -> None:
        self._tasks: Dict[str, _Local] = {}
        self._lock = threading.Lock()
        self._limit = limit
        self._lane = WorkerPool(f"mcpclient-{instance}-task", workers, max(0, limit - workers))
        self._reply: Optional[Reply] = None
        self._closed = False

    def start(self, method: str, params: Raw, run: Callable[[], Raw]) -> Raw:
        """Accept a checked task-augmented request: run ``run()`` in the background, return the
        ``CreateTaskResult`` to answer now."""
        spec = params.get("task")
        ttl = spec.get("ttl") if isinstance(spec, dict) else None
        task = _Local(method, ttl if isinstance(ttl, int) else None)
        with self._lock:
            if self._closed:
                raise InternalError(-32603, "the client is closing")
            if sum(1 for t in self._tasks.values() if t.finished_at is None) >= self._limit:
                raise InternalError(-32603, "client busy: too many tasks running")
            self._forget_old()
            self._tasks[task.id] = task
            created = task.wire()
        if not self._lane.try_submit(f"task {method}", self._run, task, run):
            with self._lock:
                self._tasks.pop(task.id, None)
            raise InternalError(-32603, "client busy: too many tasks running")
        return {"task": created}

    def _run(self, task: _Local, run: Callable[[], Raw]) -> None:
        result: Optional[Raw] = None
        error: Optional[RPCError] = None
        try:
            result = run()
        except RPCError as exc:
            error = exc
        except BaseException:  # the handler's bug (SystemExit too): a safe message for the server, details in the log
            log.exception("task handler for %s failed", task.method)
            error = InternalError(-32603, f"client handler for {task.method} failed")
        finally:
            with self._lock:
                if task.finished_at is None:  # not cancelled meanwhile
                    task.result, task.error = result, error
                    task.status = "completed" if error is None else "failed"
                    task.updated, task.finished_at = _now(), time.monotonic()
                waiters, task.waiters = task.waiters, []
            for rid in waiters:
                self._answer_result(task, rid)

    def take_at_once(self, rid: Any, method: str, params: Raw, reply: Reply) -> bool:
        """Serve a ``tasks/*`` request on the reader thread (never blocks); False if not ours."""
        self._reply = reply
        if method == "tasks/list":
            with self._lock:
                self._forget_old()
                reply(rid, {"tasks": [t.wire() for t in self._tasks.values()]})
            return True
        task_id = params.get("taskId")
        with self._lock:
            task = self._tasks.get(task_id) if isinstance(task_id, str) else None
            if task is None:
                raise InvalidParams(-32602, f"unknown task {task_id!r:.100}")
            if method == "tasks/get":
                reply(rid, task.wire())
            elif method == "tasks/cancel":
                if task.status in TERMINAL:
                    raise InvalidParams(-32602, f"task {task_id} is already {task.status}")
                task.status, task.updated, task.finished_at = "cancelled", _now(), time.monotonic()
                waiters, task.waiters = task.waiters, []
                reply(rid, task.wire())
            elif method == "tasks/result":
                if task.finished_at is None:
                    task.waiters.append(rid)  # answered when the task ends
                    return True
                waiters = [rid]
            else:
                return False
        if method in ("tasks/cancel", "tasks/result"):
            for waiting in waiters:
                self._answer_result(task, waiting)
        return True

    def _answer_result(self, task: _Local, rid: Any) -> None:
        reply = self._reply
        if reply is None:
            return
        related: Raw = {RELATED_TASK: {"taskId": task.id}}
        if task.status == "cancelled":
            reply(rid, error=InvalidParams(-32602, f"task {task.id} was cancelled"))
        elif task.error is not None:
            reply(rid, error=task.error)
        else:
            result = dict(task.result or {})
            meta = result.get("_meta")
            result["_meta"] = {**(meta if isinstance(meta, dict) else {}), **related}
            reply(rid, result)

    def _forget_old(self) -> None:
        """Drop finished tasks past their ttl, and the oldest finished beyond _KEPT_TASKS (under the lock)."""
        now = time.monotonic()
        finished = [t for t in self._tasks.values() if t.finished_at is not None]
        expired = {t.id for t in finished if t.ttl is not None and now - t.finished_at > t.ttl / 1000}
        excess = len(finished) - len(expired) - _KEPT_TASKS
        if excess > 0:
            expired.update([t.id for t in finished if t.id not in expired][:excess])
        for task_id in expired:
            del self._tasks[task_id]

    def release(self) -> None:
        """The client is closing: unfinished tasks end as cancelled; nothing new is accepted."""
        with self._lock:
            self._closed = True
            for task in self._tasks.values():
                if task.finished_at is None:
                    task.status, task.finished_at = "cancelled", time.monotonic()

    def close(self, deadline: float) -> None:
        self.release()
        self._lane.shutdown(deadline)
