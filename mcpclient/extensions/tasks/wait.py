"""A wait for one task of the Tasks extension, and what a task's states mean.

``_TaskWait`` is the future of one task's outcome that ``_taskpoll._Poller.wait`` hands out
and settles; ``checked`` / ``outcome`` read the server's task states (``completed`` -> the raw
``CallToolResult``, ``failed`` -> ``RPCError``, ``cancelled`` -> ``RequestCancelled``, each with
``.task_id``). Split from the poller so each module is one thing: the wait and the meaning of a
state here, the thread that follows tasks there.
"""
from __future__ import annotations

import time
from concurrent.futures import CancelledError, Future, InvalidStateError
from typing import Any, Callable, Optional, Protocol

from ..._util import fork as _fork
from ...errors import ClientClosedError, MCPError, ProtocolError, RequestCancelled, RequestTimeout, RPCError
from ..._engine.deadline import Deadline
from ..._util.threads import contained_callback
from ...types._tasks import Task
from ...types._base import Raw

__all__ = ["STATUSES", "TIMED_OUT", "checked", "created", "flat", "of_task", "outcome", "outcome_missing"]

#: What the poller delivers to a wait whose deadline passed.
TIMED_OUT = object()


class WaitOwner(Protocol):
    """What a wait asks of the poller that follows its task."""

    def submit(self, label: str, fn: Callable[..., Any], *args: Any, inputs: bool = False) -> bool:
        """Run ``fn(*args)`` on a worker; False if none can take it."""

    def release(self, waiter: "_TaskWait", cancel: bool) -> None:
        """Stop following the task for ``waiter`` (``cancel``: ``tasks/cancel`` it too)."""

    def send_cancel(self, task_id: str) -> None:
        """Send ``tasks/cancel`` for ``task_id``."""


#: What a task's ``status`` may be (anything else is out of shape: ``ProtocolError``).
STATUSES = frozenset(("working", "input_required", "completed", "failed", "cancelled"))


def checked(task: Task, what: str, task_id: Optional[str] = None) -> Task:
    """``task`` (a state from the server, ``what``), if its status is one of the extension's
    (and, with ``task_id``, it is about that task); else ``ProtocolError``."""
    if task_id is not None and task.task_id != task_id:
        raise ProtocolError(f"{what}: the answer is about task {task.task_id!r:.80}")
    if task.status not in STATUSES:
        raise ProtocolError(f"{what}: task {task.task_id!r:.80} has an unknown status {task.status!r:.40}")
    return task


def flat(raw: Raw) -> Raw:
    """A ``CreateTaskResult`` as the final text has it (flat): a draft's ``{"task": {...}}``
    is lifted (its ``resultType`` and ``_meta`` kept)."""
    inner = raw.get("task")
    if "taskId" in raw or not isinstance(inner, dict):
        return raw
    return {**inner, **{k: v for k, v in raw.items() if k != "task"}}


def created(raw: Any) -> Task:
    """The ``CreateTaskResult`` of a ``tools/call``; ``ProtocolError`` if it is not one."""
    if not isinstance(raw, dict):
        raise ProtocolError("tools/call answered resultType 'task' without an object")
    return checked(Task.from_wire(flat(raw)), "tools/call")


def outcome(task: Task) -> Raw:
    """The raw ``CallToolResult`` of a terminal task, or the error it ended with (raised)."""
    if task.status == "completed":
        if task.result is None:
            raise ProtocolError(f"task {task.task_id} completed without a result")
        return task.result
    if task.status == "failed":
        wire = task.error
        if not isinstance(wire, dict) or type(wire.get("code")) is not int or not isinstance(wire.get("message"), str):
            error: MCPError = ProtocolError(f"task {task.task_id} failed without a valid error object")
        else:
            error = RPCError.from_wire(wire, "tools/call")
        error.task_id = task.task_id
        raise error
    cancelled = RequestCancelled(f"task {task.task_id} was cancelled"
                                 + (f": {task.status_message}" if task.status_message else ""))
    cancelled.task_id = task.task_id
    raise cancelled


def of_task(error: BaseException, task_id: str) -> BaseException:
    """``error`` as the end of a call that had become task ``task_id``: an ``MCPError`` always
    carries ``.task_id``, and a closing client says which task to resume, whichever path
    (the poller's close, the session's) ended the call first."""
    if not isinstance(error, MCPError):
        return error
    if isinstance(error, ClientClosedError) and task_id not in str(error):
        closed = ClientClosedError(f"tools/call: the client was closed while task {task_id} ran "
                                   f"(resume it with client.extension(Tasks).task({task_id!r}))")
        closed.__cause__ = error
        error = closed
    if error.task_id is None:
        error.task_id = task_id
    return error


def outcome_missing(task: Task) -> bool:
    """A terminal state without what ``outcome`` needs (``result`` / ``error``)."""
    return (task.status == "completed" and task.result is None) or (task.status == "failed" and task.error is None)


class _TaskWait(Future):  # type: ignore[type-arg]
    """Waits for one task to end (its tool result; or, ``state=True``, its terminal ``Task``).
    Settled on a worker of the poller's lane (never the reader, the notification thread or the
    poller), so its done-callbacks run there.

    ``cancel()`` cancels the task on the server (``tasks/cancel``). A ``deadline`` (the tool
    call's ``Deadline``, kept by the poller) fails it with ``RequestTimeout`` and, with ``cancel_on_timeout`` (a tool
    call's one timeout), cancels the task too."""

    request_id = None  # (a link of a ChainedFuture: no request of its own)
    method = "tools/call"

    def __init__(self, poller: WaitOwner, task_id: str, transform: Optional[Callable[[Any], Any]] = None,
                 state: bool = False) -> None:
        super().__init__()
        self.task_id = task_id
        self.started = time.monotonic()
        self.cancel_on_timeout = True
        #: The call's deadline (a change of the task's ``statusMessage``/``lastUpdatedAt`` is
        #: progress: a deadline that resets starts again), or None: no limit.
        self.deadline: Optional[Deadline] = None
        self._pid = _fork.pid  # made in a parent that forked: the task is the parent's (never cancelled here)
        self._poller = poller
        self._value = transform
        self._want_state = state  # (not _state: Future's own)

    def deliver(self, payload: Any) -> None:
        """A terminal ``Task``, an error, or the timeout: settled on a worker (here if none is left)."""
        if not self.done() and not self._poller.submit(f"outcome of task {self.task_id}", self.settle, payload):
            self.settle(payload)

    def settle(self, payload: Any) -> None:
        """Worker thread: settle with the task's outcome."""
        if self.done():
            return
        if payload is TIMED_OUT:
            waited = time.monotonic() - self.started
            timed_out = RequestTimeout(f"tools/call: task {self.task_id} did not end in {waited:.3g} s"
                                       + ("; cancelled it on the server" if self.cancel_on_timeout else ""),
                                       method="tools/call")
            timed_out.task_id = self.task_id
            self._poller.release(self, cancel=False)  # first: whoever sees the timeout sees the task let go
            if self._finish(None, timed_out) and self.cancel_on_timeout and self._mine():
                self._poller.send_cancel(self.task_id)
            return
        if isinstance(payload, BaseException):
            self._finish(None, payload)
            return
        try:
            value: Any = payload if self._want_state else outcome(payload)
            if self._value is not None and not self._want_state:
                value = self._value(value)
        except BaseException as exc:
            self._finish(None, exc)
            return
        self._finish(value, None)

    def _finish(self, value: Any, error: Optional[BaseException]) -> bool:
        try:
            if error is None:
                self.set_result(value)
            else:
                self.set_exception(of_task(error, self.task_id))
        except InvalidStateError:  # cancelled meanwhile
            return False
        return True

    def add_done_callback(self, fn: Callable[["Future[Any]"], object]) -> None:
        """As ``Future``'s; a callback that raises (even ``SystemExit``) is logged, and the
        others still run (as on a ``CallFuture``)."""
        super().add_done_callback(contained_callback(fn))

    def result(self, timeout: Optional[float] = None) -> Any:
        """The outcome (``RequestCancelled`` if cancelled, ``TimeoutError`` if not done in ``timeout``)."""
        try:
            return super().result(timeout)
        except CancelledError as exc:
            if isinstance(exc, RequestCancelled):
                raise
            raise RequestCancelled(f"the wait for task {self.task_id} was cancelled") from exc

    def cancel(self) -> bool:
        """Cancel the wait, and the task on the server (``tasks/cancel``; not in a forked child:
        the task is the parent's). False if it has finished already."""
        if not super().cancel():
            return False
        try:
            self.set_running_or_notify_cancel()  # wakes concurrent.futures.wait()/as_completed()
        except RuntimeError:  # cancelled (and notified) before
            return True
        self._poller.release(self, cancel=self._mine())
        return True

    def let_go(self) -> None:
        """Stop waiting, without cancelling the task (an interrupted handle wait); nothing
        happens once it is done."""
        if Future.cancel(self):
            try:
                self.set_running_or_notify_cancel()
            except RuntimeError:  # cancelled (and notified) before
                pass
            self._poller.release(self, cancel=False)

    def _mine(self) -> bool:
        """Whether this process made the wait: a forked child that inherited it cancels it
        locally only (its task is the parent's, which still follows it)."""
        return self._pid == _fork.pid

    def __repr__(self) -> str:
        return f"<task wait {self.task_id!r} {'done' if self.done() else 'pending'}>"
