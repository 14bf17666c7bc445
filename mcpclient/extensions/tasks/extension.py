"""The Tasks extension (``io.modelcontextprotocol/tasks``, draft), client side: tool calls the
server answers with a task, followed to their end by this client.

With ``Client(extensions={TASKS: {}})`` a server may answer ``tools/call`` with
``resultType: "task"`` (a ``CreateTaskResult``: ``taskId``, ``status``, ``pollIntervalMs``...).
``call_tool`` / ``call_tool_future`` then wait on a ``ToolCallFuture``, which the client's
poller (``poller``) settles: it polls ``tasks/get``, answers the task's input requests with
the client's own handlers (each key once) over ``tasks/update``, takes ``notifications/tasks``
pushes at once, and maps the end: ``completed`` -> the tool's result, ``failed`` -> ``RPCError``
(``.task_id``), ``cancelled`` -> ``RequestCancelled``. Cancelling the call (or its timeout)
sends ``tasks/cancel``, never ``notifications/cancelled``; closing the client sends nothing, so
task ids stay resumable (``client.extension(Tasks).task(task_id)``, an ``ExtensionToolTask``).
"""
from __future__ import annotations

import functools
import logging
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Mapping, Optional, TypeVar, cast

from ..._util.sentinel import DEFAULT
from .poller import _Poller
from .wait import STATUSES, _TaskWait, checked, flat, of_task
from ...errors import CapabilityError, ClientClosedError, ProtocolError
from ..base import TASKS, Extension, NotificationHandler, Resolved
from ..._engine.deadline import Deadline
from ..._engine.chained import ChainedFuture
from ..._engine.futures import CallFuture, ProgressCallback
from ...protocol.eras import AsIs
from ...protocol.spec import server_has
from .core import ToolTask
from ...types._tasks import Task
from ...types import ToolResult

if TYPE_CHECKING:
    from ..._engine.call_host import CallHost
    from ...types._json import JSONObject, JSONValue
    from ..base import ExtensionContext

T = TypeVar("T")
U = TypeVar("U")

__all__ = ["TasksExtension", "ToolCallFuture", "ExtensionToolTask"]

log = logging.getLogger("mcpclient")


class TasksExtension(Extension):
    """The Tasks extension, client side: ``Client(extensions={TASKS: {}})`` (a dict value gives
    these options) or ``{TASKS: TasksExtension(...)}``. One instance serves one client.

    Args:
        default_poll_interval: seconds between ``tasks/get`` when the server gives no ``pollIntervalMs``.
        min_poll_interval: the shortest pause between polls of one task (a server's smaller value is raised).
        max_poll_interval: the longest pause (a server's larger value is lowered).
        listen: 2026 era: also keep a ``subscriptions/listen`` for the live task ids, so that
            ``notifications/tasks`` settle them at once (polling goes on regardless).
    """

    id = TASKS

    def __init__(self, *, default_poll_interval: float = 1.0, min_poll_interval: float = 0.01,
                 max_poll_interval: float = 30.0, listen: bool = True) -> None:
        for name, value in (("default_poll_interval", default_poll_interval), ("min_poll_interval", min_poll_interval),
                            ("max_poll_interval", max_poll_interval)):
            if type(value) not in (int, float) or not 0 < value < float("inf"):
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
        if min_poll_interval > max_poll_interval:
            raise ValueError("min_poll_interval must not exceed max_poll_interval")
        self.default_poll_interval = float(default_poll_interval)
        self.min_poll_interval = float(min_poll_interval)
        self.max_poll_interval = float(max_poll_interval)
        self.listen = bool(listen)
        self._poller: Optional[_Poller] = None
        self._ctx: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, options: Mapping[str, object]) -> "TasksExtension":
        """``Client(extensions={TASKS: {...}})``: the dict's keys are this class's options."""
        try:
            return cls(**cast(Dict[str, Any], dict(options)))  # (checked by the constructor)
        except TypeError as exc:
            raise ValueError(f"extensions[{TASKS!r}]: {exc}") from None

    def settings(self) -> JSONObject:
        """The extension has no settings: declared as ``{}``."""
        return {}

    def result_types(self) -> Mapping[str, FrozenSet[str]]:
        """``resultType: "task"`` may answer ``tools/call`` (only)."""
        return {"task": frozenset(("tools/call",))}

    def notification_handlers(self) -> Mapping[str, NotificationHandler]:
        """``notifications/tasks`` (a full task state) and the ``notifications/tasks/status`` hint."""
        return {"notifications/tasks": self._pushed, "notifications/tasks/status": self._hinted}

    def bind(self, ctx: "ExtensionContext") -> None:
        """After each connect: poll (and cancel, update) through this context; after a
        reconnect, the tasks still followed are polled at once on the new connection."""
        with self._lock:
            self._ctx = ctx
            poller = self._poller
        if poller is not None:  # a reconnect: poll at once, listen afresh
            poller.rebind(ctx)

    def poller(self, ctx: Optional["ExtensionContext"] = None) -> _Poller:
        """The client's poller, made on first use (with ``ctx``, or the one ``bind`` gave)."""
        with self._lock:
            if self._poller is None:
                ctx = ctx if ctx is not None else self._ctx
                if ctx is None:
                    raise ClientClosedError("the Tasks extension is not attached to a client")
                self._poller = _Poller(self, ctx)
            return self._poller

    def resolve(self, kind: str, method: str, raw: JSONObject, ctx: "ExtensionContext") -> Resolved:
        """A blocking ``tools/call`` answered with a task: the future of its final
        ``CallToolResult`` (raw), which the poller settles (the caller waits for it within its
        timeout, then cancels it: ``tasks/cancel``)."""
        if kind != "task" or method != "tools/call":
            raise ProtocolError(f"{method}: resultType {kind!r} is not allowed here")
        poller = self.poller(ctx)
        return poller.wait(poller.created(raw))

    def call_future(self, ctx: "ExtensionContext", method: str, params: JSONObject, transform: Callable[[JSONValue], T],
                    deadline: Deadline, on_progress: Optional[ProgressCallback]) -> Optional[CallFuture[T]]:
        """``call_tool_future``: a ``ToolCallFuture`` (nothing waits on a worker while the task runs)."""
        if method != "tools/call":
            return None
        self.poller(ctx)
        tool = cast(Callable[["JSONValue"], ToolResult], transform)  # (a tools/call's transform makes a ToolResult)
        return cast(CallFuture[T], ToolCallFuture.begin(ctx, params, tool, self, deadline, on_progress))

    def handle(self, task_id: str, name: str = "", transform: Optional[Callable[[Any], ToolResult]] = None,
               task: Optional[Task] = None) -> "ExtensionToolTask":
        """A handle for a task of this server (``Tasks.task(task_id)``; nothing is sent)."""
        if not isinstance(task_id, str) or not task_id:
            raise ValueError("task_id must be a non-empty string")
        return ExtensionToolTask(self.poller(), name, task or Task(task_id, "unknown"),
                                 transform or (lambda raw: ToolResult.from_wire(raw, name or "task")))

    def wind_down(self, ctx: "ExtensionContext", deadline: float) -> None:
        """The client is about to close: the ``tasks/cancel`` requests sent already (a call
        given up just before) are answered first, until ``deadline``."""
        poller = self._poller
        if poller is not None:
            poller.wind_down(deadline)

    def close(self) -> None:
        """The client closed: fail local waits, join the poller (no ``tasks/cancel`` is sent)."""
        poller = self._poller
        if poller is not None:
            poller.close()

    def _pushed(self, params: Dict[str, Any]) -> None:
        poller = self._poller
        if poller is None:
            return
        try:
            task = Task.from_wire(params)
        except ProtocolError as exc:
            log.debug("ignored a malformed notifications/tasks: %s", exc)
            return
        if task.status not in STATUSES:  # (polling goes on: a later state decides)
            log.debug("ignored notifications/tasks with an unknown status %r", task.status[:40])
            return
        poller.update(task)

    def _hinted(self, params: Dict[str, Any]) -> None:
        """``notifications/tasks/status``: the drafts' name of ``notifications/tasks`` (a full
        state), or a bare hint naming a task (poll it now)."""
        if isinstance(params, dict) and isinstance(params.get("status"), str):
            self._pushed(params)
            return
        poller = self._poller
        task_id = params.get("taskId") if isinstance(params, dict) else None
        if poller is not None and isinstance(task_id, str):
            poller.poll_now(task_id)


class ExtensionToolTask(ToolTask):
    """A ``ToolTask`` of the Tasks extension (``protocol == "extension"``): the same methods,
    over ``tasks/get``/``tasks/update``/``tasks/cancel``; ``result()`` follows the task with the
    client's poller (input requests answered) to its end."""

    protocol = "extension"

    def __init__(self, poller: _Poller, name: str, task: Task, transform: Callable[[Any], ToolResult]) -> None:
        self._poller = poller
        self._task = task
        super().__init__(None, name, task, transform)  # (it sends through the poller's context)

    @property  # type: ignore[override]
    def task(self) -> Task:
        """The last state seen of the task."""
        return self._poller.latest(self._task.task_id) or self._task

    @task.setter
    def task(self, value: Task) -> None:
        self._task = value

    def status(self, *, timeout: Any = DEFAULT) -> Task:
        """The task's current state (``tasks/get``); new input requests in it are answered: by
        the wait that follows the task, if there is one (in the background), else here, with
        the client's handlers and ``tasks/update``, before this returns (what a handler raises,
        or the update's error, is raised; the request is answered again by the next call)."""
        state = checked(Task.from_wire(self._poller.ctx.request("tasks/get", self._poller.task_params(self.task_id), timeout=timeout)),
                        f"tasks/get {self.task_id}", self.task_id)
        self._task = state
        if self._poller.follows(self.task_id):
            self._poller.update(state, keep_early=False, polled=True)
        else:
            self._poller.answer_unfollowed(state, timeout)
        return state

    def result(self, timeout: Optional[float] = None) -> ToolResult:
        """Follow the task to its end and return the tool's result (``RequestTimeout`` after
        ``timeout`` seconds; the task goes on). ``failed`` raises ``RPCError``, ``cancelled``
        ``RequestCancelled``."""
        return _waited(self._follow(timeout, self._transform, False))  # type: ignore[no-any-return]

    def result_future(self, timeout: Optional[float] = None) -> "Future[ToolResult]":  # type: ignore[override]
        """``result()``, returning at once; ``cancel()`` on it cancels the task on the server."""
        return self._follow(timeout, self._transform, False)

    def cancel(self, *, timeout: Any = DEFAULT) -> Task:
        """``tasks/cancel`` (cooperative: the task may still complete); the last known state."""
        self._poller.ctx.request("tasks/cancel", self._poller.task_params(self.task_id), timeout=timeout)
        return self.task

    def wait(self, timeout: Optional[float] = None) -> Task:
        """Follow the task (input requests answered) until it is terminal; its state."""
        return _waited(self._follow(timeout, None, True))  # type: ignore[no-any-return]

    def _follow(self, timeout: Optional[float], transform: Optional[Callable[[Any], Any]], state: bool) -> _TaskWait:
        waiter = self._poller.wait(self.task, transform, state, Deadline(timeout))
        waiter.cancel_on_timeout = False  # the handle's wait only: the task goes on
        return waiter

    def __repr__(self) -> str:
        return f"<ToolTask {self.name!r} {self.task_id!r} {self.task.status} (extension)>"


def _waited(waiter: _TaskWait) -> Any:
    """A handle's blocking wait: interrupted (``KeyboardInterrupt``), it lets the task go (no
    more polling for it; the task goes on, as after the wait's timeout)."""
    try:
        return waiter.result()
    except BaseException:
        waiter.let_go()
        raise


def _is_task(raw: Any) -> bool:
    return type(raw) is dict and raw.get("resultType") == "task"



def _cancel_late_task(ext: "TasksExtension", reply: Dict[str, Any]) -> None:
    """Worker: the answer to a ``tools/call`` given up before it came (timed out, cancelled):
    a task it made is cancelled (nobody waits for it; ``notifications/cancelled`` crossed it)."""
    raw: Dict[str, Any] = reply.get("result")  # type: ignore[assignment]
    task_id = flat(raw).get("taskId") if _is_task(raw) else None
    if isinstance(task_id, str) and task_id:
        ext.poller().send_cancel(task_id)


#: The first link of a ``ToolCallFuture``: the raw result, a ``CreateTaskResult`` included (the
#: era hands it over unresolved, so no worker waits for the task).
_PASSTHROUGH = AsIs(frozenset(("task",)))


class ToolCallFuture(ChainedFuture[ToolResult]):
    """``call_tool_future`` with the Tasks extension declared: a ``CallFuture[ToolResult]``
    whose ``task`` is the ``ToolTask`` once the server answered with a task (persist
    ``task.task_id`` to resume after a restart; ``wait_task()`` waits for that answer).
    ``cancel()`` before it cancels the ``tools/call`` (``notifications/cancelled``); after, the
    task (``tasks/cancel`` only). The call's ``timeout`` covers the task too: on expiry
    ``RequestTimeout``, and the task is cancelled."""

    def __init__(self, session: "CallHost[CallFuture]", first: CallFuture[U], transform: Callable[[JSONValue], ToolResult],
                 ext: "TasksExtension", name: str) -> None:
        self._tool = transform
        self._ext = ext
        self._name = name
        self._task: Optional[ToolTask] = None
        self._answered = threading.Event()  # the server answered the tools/call, or the call ended
        self._first = first
        super().__init__(session, "tools/call", first, self._linked)

    @classmethod
    def begin(cls, ctx: "ExtensionContext", params: JSONObject, transform: Callable[[JSONValue], ToolResult],
              ext: "TasksExtension", deadline: Deadline, on_progress: Optional[ProgressCallback]) -> "ToolCallFuture":
        """Send ``tools/call`` (through the extension's context) as a ``ToolCallFuture``."""
        first = ctx.call("tools/call", params, _PASSTHROUGH, deadline, on_progress=on_progress,
                         on_late=functools.partial(_cancel_late_task, ext))
        name = params.get("name")
        return cls(first._session, first, transform, ext, name if isinstance(name, str) else "")

    @property
    def task(self) -> Optional[ToolTask]:
        """The task the server runs the call as (None until it answered, or if it ran the call inline)."""
        return self._task

    def wait_task(self, timeout: Optional[float] = None) -> Optional[ToolTask]:
        """Wait (at most ``timeout`` seconds) until the server answered the call; its ``task``
        (None: it ran inline, ended, or has not answered yet)."""
        self._answered.wait(timeout)
        return self._task

    def _linked(self, raw: Any) -> Any:
        """Worker: the first answer: a result (inline), or a task to follow."""
        if not _is_task(raw):
            return self._tool(raw)
        first = self._first
        poller = self._ext.poller()
        task = poller.created(raw)
        wait = poller.wait(task, deadline=first.deadline)  # the call's one deadline covers the task
        self._task = ExtensionToolTask(poller, self._name, task, self._tool)
        self._link = self._tool
        self._answered.set()
        return wait

    def _arrived(self, done: "Future[Any]") -> None:
        if self.cancelled() and not done.cancelled() and done.exception() is None and _is_task(done.result()):
            self._ext.poller().send_cancel(str(flat(done.result()).get("taskId")))  # cancelled as the task came
        super()._arrived(done)

    def _settle(self, value: Any, error: Optional[BaseException]) -> bool:
        self._answered.set()
        task = self._task
        if error is not None and task is not None:
            error = of_task(error, task.task_id)  # one shape, whichever path ended the call
        return super()._settle(value, error)

    def cancel(self) -> bool:
        """Cancel the call: the ``tools/call`` in flight, or once it is a task, the task."""
        cancelled = super().cancel()
        self._answered.set()
        return cancelled

    def _cancel_current(self) -> None:
        """Once a task: cancel it. Before the server's answer was handled: still pending,
        ``notifications/cancelled`` (as ``CallFuture.cancel``); answered already (the reply
        waits for a worker, or is being handled), the answer is let through, so that a task it
        made is cancelled when it comes (``_arrived`` / ``run_step``): a cancelled ``first``
        would drop it, and the task would run on with nobody waiting for it."""
        first = self._first
        if self._current is not first:
            self._current.cancel()
        elif self._session.abandon(first.request_id, "cancelled by the client"):
            first.cancel()  # nothing will come for it now: end it (it sends nothing more)

    def run_step(self, value: object) -> None:
        """Worker: as ``ChainedFuture``; a task that came after ``cancel()`` is cancelled too."""
        if self.cancelled() and isinstance(value, dict) and _is_task(value):
            self._ext.poller().send_cancel(str(flat(value).get("taskId")))
            return
        super().run_step(value)


def resume(ext: Optional[Extension], server_extensions: Mapping[str, Any], server_capabilities: Dict[str, Any],
           requester: Any, task_id: str) -> ToolTask:
    """``Tasks.task(task_id)``: a handle for a task this client (or an earlier one) started;
    nothing is sent. Extension-backed when ``TASKS`` is declared (``ext``, the client's
    ``TasksExtension``; another ``Extension`` of that id declares it without one) and the server has
    it; else the 2025-11-25 handle if the server has ``tasks``; else ``ValueError`` (not declared)
    or ``CapabilityError`` (the server lacks it)."""
    if not isinstance(task_id, str) or not task_id:
        raise ValueError("task_id must be a non-empty string")
    if isinstance(ext, TasksExtension) and TASKS in server_extensions:
        return ext.handle(task_id)
    if server_has(server_capabilities, "tasks"):
        return ToolTask(requester, "", Task(task_id, "unknown"), lambda raw: ToolResult.from_wire(raw, "task"))
    if not isinstance(ext, TasksExtension):
        raise ValueError(f"Tasks.task() needs the Tasks extension: declare it with Client(extensions={{{TASKS!r}: {{}}}})")
    raise CapabilityError(f"extensions.{TASKS}", "tasks/get")
