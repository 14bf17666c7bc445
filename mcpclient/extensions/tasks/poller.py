"""The Tasks extension's poller: follows the tasks of one client to their end.

``_Poller.wait(task)`` gives a future (``_TaskWait``) of a task's outcome; one thread per client
(``mcpclient-tasks-<k>``, alive while there is a task to follow) sends each ``tasks/get`` when due
(the server's ``pollIntervalMs``, clamped), keeps the waits' deadlines and, in the 2026 era, one
``subscriptions/listen`` for the live task ids. States from replies and from pushes
(``notifications/tasks``) go through ``update``: a terminal one settles the waits (``outcome``:
``completed`` -> the raw ``CallToolResult``, ``failed`` -> ``RPCError``, ``cancelled`` ->
``RequestCancelled``, each with ``.task_id``), new input requests are answered once each with the
client's own handlers on a worker, then sent with ``tasks/update`` if the task is still followed
as it was when they were asked for (else a later follow asks again). ``_taskwait`` holds the
wait and what a state means; ``_taskext`` is the extension around both (``TasksExtension``, the
handle, ``ToolCallFuture``).
"""
from __future__ import annotations

import functools
import heapq
import itertools
import logging
import threading
import time
import weakref
from collections import OrderedDict
from concurrent.futures import Future
from concurrent.futures import wait as wait_all
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Protocol, Set, Tuple

from ..._util import fork as _fork
from ..._util.threads import WorkerPool
from ...errors import (
    ClientClosedError, MCPError, MethodNotFound, ProtocolError, RequestCancelled, RequestTimeout,
    TransportError,
)
from ..._engine.deadline import Deadline
from ..._engine.futures import CallFuture
from .wait import TIMED_OUT, _TaskWait, checked, created, flat, outcome_missing
from ...types._tasks import Task
from ...types._base import Raw


class PollOptions(Protocol):
    """What the poller reads of its extension (``_taskext.TasksExtension``; a protocol, so this
    module does not import the one that imports it)."""

    default_poll_interval: float
    min_poll_interval: float
    max_poll_interval: float
    listen: bool

__all__ = ["PollOptions"]

log = logging.getLogger("mcpclient")

_EARLY_KEPT = 64  # pushed states of tasks not followed yet (the reply creating them may still be queued)
_WORKERS = 4  # threads of each lane: settling waits; answering input requests (a handler may wait for a person)
_KEYS_KEPT = 1024  # tasks whose answered input keys are remembered
_CLOSE_WAIT = 2.0  # seconds close() gives the poller and a running input handler to stop
_POLLERS = itertools.count(1)  # numbers the pollers' threads


def _forked(ref: "weakref.ref[_Poller]") -> None:
    poller = ref()
    if poller is not None:
        poller.forked()


def _cancel_done(task_id: str, done: "Future[Any]") -> None:
    if not done.cancelled() and done.exception() is not None:
        log.debug("tasks/cancel %s failed: %s", task_id, done.exception())


class _Followed:
    """One task the poller follows (fields guarded by the poller's lock)."""

    __slots__ = ("task", "seen", "waiters", "polling", "token", "unsent")

    def __init__(self, task: Task, seen: Set[str]) -> None:
        self.task = task
        self.seen = seen  # input keys answered (or being answered): each is answered once
        self.waiters: List[_TaskWait] = []
        self.polling = False  # a tasks/get is in flight
        self.token = 0  # bumped by each schedule: older heap entries are stale
        self.unsent = 0  # tasks/get in a row that could not be sent (the connection broke under it)


class _Poller:
    """Follows the client's tasks: one thread (``mcpclient-tasks-<k>``, started when a task is to
    be followed, ended when none is left, joined by ``close``) sends each ``tasks/get`` when due
    and enforces the waits' deadlines; waits are settled on the workers of
    ``mcpclient-tasks-<k>-work``, input requests answered on those of ``mcpclient-tasks-<k>-input``
    (a handler waiting for a person holds up no outcome); replies on the client's workers.
    Nothing here holds the lock across a request or a callback."""

    def __init__(self, ext: PollOptions, ctx: Any) -> None:
        self._ext = ext
        self.ctx = ctx
        self._cond = threading.Condition(threading.Lock())
        self._followed: Dict[str, _Followed] = {}
        self._heap: List[Tuple[float, int, str, int]] = []
        self._seq = itertools.count()
        self._early: "OrderedDict[str, Task]" = OrderedDict()
        self._ended: "OrderedDict[str, Task]" = OrderedDict()  # the last states of tasks that ended here
        self._seen: "OrderedDict[str, Set[str]]" = OrderedDict()  # task id -> its answered input keys
        self._thread: Optional[threading.Thread] = None
        self._closed = False
        self._listen: Optional[CallFuture] = None  # 2026: the subscriptions/listen carrying our task ids
        self._listened: FrozenSet[str] = frozenset()
        self._listen_failed = False
        self._lanes: Dict[str, WorkerPool] = {}  # "work": outcomes; "input": input requests' handlers
        self._deadlines: List[Tuple[float, int, _TaskWait]] = []
        self._cancels: Set["Future[Any]"] = set()  # tasks/cancel requests not answered yet (wind_down)
        self._name = str(next(_POLLERS))
        _fork.in_child(functools.partial(_forked, weakref.ref(self)))

    def forked(self) -> None:
        """In a forked child (at-fork hook: no blocking, no I/O): the parent's tasks are the
        parent's; this copy follows none (the parent's threads and locks are not ours)."""
        self._cond = threading.Condition(threading.Lock())
        self._followed, self._heap, self._deadlines = {}, [], []
        self._early.clear()
        self._thread, self._lanes, self._listen, self._listened = None, {}, None, frozenset()

    # --- following --------------------------------------------------------------------------------

    def wait(self, task: Task, transform: Optional[Callable[[Any], Any]] = None, state: bool = False,
             deadline: Optional[Deadline] = None) -> _TaskWait:
        """A future of ``task``'s outcome (or terminal state); starts following it if needed.
        ``deadline`` (the tool call's: a change of the task moves it where it resets): then it
        fails with ``RequestTimeout``."""
        waiter = _TaskWait(self, task.task_id, transform, state)
        with self._cond:
            if self._closed:
                raise ClientClosedError("the client is closed")
            known = self._followed.get(task.task_id)
            fresh = known is None
            followed = self._followed[task.task_id] = _Followed(task, self._keys(task.task_id)) if known is None \
                else known
            followed.waiters.append(waiter)
            if deadline is not None and deadline.remaining() is not None:
                self._watch(waiter, deadline)
            early = self._early.pop(task.task_id, None)
            if fresh and task.status == "unknown":  # a resumed task: ask at once
                self._schedule(followed, 0.0)
            self._start()
        if fresh or early is not None:
            self.update(early or task, keep_early=False)
        return waiter

    def _keys(self, task_id: str) -> Set[str]:
        """Under the lock: the input keys answered for ``task_id`` (kept while it is followed
        again, e.g. by ``Tasks.task(id).result()`` after the call gave up: keys are unique for
        the task's lifetime)."""
        seen = self._seen.pop(task_id, None)
        self._seen[task_id] = seen = set() if seen is None else seen
        while len(self._seen) > _KEYS_KEPT:
            self._seen.popitem(last=False)
        return seen

    def follows(self, task_id: str) -> bool:
        """Whether a wait follows ``task_id`` here (then it answers the task's input requests)."""
        with self._cond:
            return task_id in self._followed

    def latest(self, task_id: str) -> Optional[Task]:
        """The last state seen of a followed task, or None."""
        with self._cond:
            followed = self._followed.get(task_id)
            return followed.task if followed is not None else self._ended.get(task_id)

    def task_params(self, task_id: str, **more: Any) -> Dict[str, Any]:
        """The params of a ``tasks/*`` request for ``task_id``: its id, ``more``, and the
        ``requestState`` its latest state carried, echoed as it came (a routing token of the
        extension's drafts, withdrawn from the final text, that servers built on them still want)."""
        params: Dict[str, Any] = {"taskId": task_id, **more}
        latest = self.latest(task_id)
        state = latest.raw.get("requestState") if latest is not None else None
        if isinstance(state, str):
            params["requestState"] = state
        return params

    def release(self, waiter: _TaskWait, cancel: bool) -> None:
        """``waiter`` is done (cancelled, timed out): stop following its task if nobody else
        waits; ``cancel``: send ``tasks/cancel``."""
        with self._cond:
            followed = self._followed.get(waiter.task_id)
            if followed is not None and waiter in followed.waiters:
                followed.waiters.remove(waiter)
                if not followed.waiters:
                    del self._followed[waiter.task_id]
                    self._cond.notify()
        if cancel:
            self.send_cancel(waiter.task_id)

    def created(self, raw: Any) -> Task:
        """The task a ``tools/call`` answer (``resultType: "task"``) made; ``ProtocolError`` if
        the answer is out of shape, and then a task it names is cancelled (nobody follows it)."""
        try:
            return created(raw)
        except ProtocolError:
            task_id = flat(raw).get("taskId") if isinstance(raw, dict) else None
            if isinstance(task_id, str) and task_id:
                self.send_cancel(task_id)
            raise

    def send_cancel(self, task_id: str) -> None:
        """``tasks/cancel`` (best effort, not waited for: an empty ack)."""
        try:
            future = self.ctx.request_future("tasks/cancel", self.task_params(task_id))
        except MCPError as exc:
            log.debug("could not cancel task %s: %s", task_id, exc)
            return
        with self._cond:
            self._cancels.add(future)
        future.add_done_callback(functools.partial(self._cancelled, task_id))

    def _cancelled(self, task_id: str, done: "Future[Any]") -> None:
        with self._cond:
            self._cancels.discard(done)
        _cancel_done(task_id, done)

    def wind_down(self, deadline: float) -> None:
        """Before the client closes: wait (until ``deadline``, monotonic) for the ``tasks/cancel``
        requests sent already to be answered, so that they reach the server."""
        with self._cond:
            pending = list(self._cancels)
        if pending:
            wait_all(pending, max(0.0, deadline - time.monotonic()))

    def poll_now(self, task_id: str) -> None:
        """A hint (``notifications/tasks/status``): poll this task now."""
        with self._cond:
            followed = self._followed.get(task_id)
            if followed is not None and not followed.polling:
                self._schedule(followed, 0.0)

    def update(self, task: Task, keep_early: bool = True, polled: bool = False) -> None:
        """A state of a task (a ``tasks/get`` reply: ``polled``; a push; a ``CreateTaskResult``):
        settle its waiters if it ended, answer new input requests, else poll again when due. An
        end without its outcome (a ``CreateTaskResult`` says ``completed``, but only ``tasks/get``
        carries the result) is asked for at once."""
        new: Raw = {}
        if task.is_terminal and not polled and outcome_missing(task):
            with self._cond:
                followed = self._followed.get(task.task_id)
                if followed is not None and not followed.polling:
                    self._schedule(followed, 0.0)
            return
        with self._cond:
            followed = self._followed.get(task.task_id)
            if followed is None:
                if keep_early:  # pushed before its reply was handled: kept for wait()
                    self._early[task.task_id] = task
                    while len(self._early) > _EARLY_KEPT:
                        self._early.popitem(last=False)
                return
            if (task.status_message, task.last_updated_at) != (followed.task.status_message,
                                                                followed.task.last_updated_at):
                for waiter in followed.waiters:  # progress: it restarts the timeouts that allow it
                    if waiter.deadline is not None:
                        waiter.deadline.progressed()
            followed.task = task
            if task.is_terminal:
                del self._followed[task.task_id]
                self._ended[task.task_id] = task
                while len(self._ended) > _EARLY_KEPT:
                    self._ended.popitem(last=False)
                waiters, followed.waiters = followed.waiters, []
                self._cond.notify()
            else:
                waiters = []
                if not followed.polling and task.status != "unknown":
                    self._schedule(followed, self._interval(task))
                requests = task.input_requests if task.status == "input_required" else None
                new = {k: v for k, v in (requests or {}).items() if k not in followed.seen}
                followed.seen.update(new)
        for waiter in waiters:
            waiter.deliver(task)
        if not task.is_terminal and new:
            if not self.submit(f"input for task {task.task_id}", self._answer, task.task_id, followed, new, inputs=True):
                self.fail(task.task_id, ClientClosedError("the client is closing"), cancel=False)

    def fail(self, task_id: str, error: BaseException, cancel: bool, cancel_calls: bool = False,
             only: Optional[_Followed] = None) -> bool:
        """End every wait for ``task_id`` with ``error``; ``cancel``: also ``tasks/cancel`` it;
        ``cancel_calls``: only if a tool call waited for it (a handle's wait only follows);
        ``only``: only if the task is still followed as ``only`` (False, nothing done, if not)."""
        with self._cond:
            if only is not None and self._followed.get(task_id) is not only:
                return False
            followed = self._followed.pop(task_id, None)
            waiters = followed.waiters if followed is not None else []
            self._cond.notify()
        cancel = cancel or (cancel_calls and any(w.cancel_on_timeout and w._mine() for w in waiters))
        if isinstance(error, MCPError) and error.task_id is None:
            error.task_id = task_id
        for waiter in waiters:
            waiter.deliver(error)
        if cancel:
            self.send_cancel(task_id)
        return True

    def _interval(self, task: Task) -> float:
        ext = self._ext
        seconds = task.poll_interval / 1000 if task.poll_interval is not None else ext.default_poll_interval
        return min(max(seconds, ext.min_poll_interval), ext.max_poll_interval)

    def _schedule(self, followed: _Followed, delay: float) -> None:
        """Under the lock: poll ``followed`` in ``delay`` seconds (replacing its earlier turn)."""
        followed.token += 1
        heapq.heappush(self._heap, (time.monotonic() + delay, next(self._seq), followed.task.task_id, followed.token))
        self._cond.notify()

    # --- the thread ---------------------------------------------------------------------------------

    def _start(self) -> None:
        """Under the lock: start the thread on first use."""
        if self._thread is None:
            name = f"mcpclient-tasks-{self._name}"
            self._thread = threading.Thread(target=self._run, name=name, daemon=True)
            self._thread.start()

    def submit(self, label: str, fn: Callable[..., Any], *args: Any, inputs: bool = False) -> bool:
        """Run ``fn(*args)`` on a worker of the poller's lane (False once closed); ``inputs``:
        of the input lane instead, whose handlers may wait for a person (outcomes never wait
        behind them)."""
        with self._cond:
            if self._closed:
                return False
            role = "input" if inputs else "work"
            lane = self._lanes.get(role)
            if lane is None:
                lane = self._lanes[role] = WorkerPool(f"mcpclient-tasks-{self._name}-{role}", _WORKERS, -1)
        return lane.try_submit(label, fn, *args)

    def _watch(self, waiter: _TaskWait, deadline: Deadline) -> None:
        """Under the lock: fail ``waiter`` at ``deadline`` unless it is done by then (or progress
        moved the deadline on)."""
        waiter.deadline = deadline
        heapq.heappush(self._deadlines, (deadline.at, next(self._seq), waiter))
        self._start()
        self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._closed:
                        return
                    ids = self._listen_wanted()
                    due = self._next_due()
                    late = self._expired()
                    if ids is not None or due is not None or late:
                        break
                    if self._idle():
                        return
                    heads = [h[0][0] for h in (self._heap, self._deadlines) if h]
                    self._cond.wait(min(heads) - time.monotonic() if heads else None)
            for waiter in late:
                waiter.deliver(TIMED_OUT)
            if ids is not None:
                self._relisten(ids)
            if due is not None:
                self._poll(due)

    def _idle(self) -> bool:
        """Under the lock: nothing to follow: the thread ends (``_start`` makes a new one when needed)."""
        if self._followed or self._listened:
            return False
        self._deadlines = [entry for entry in self._deadlines if not entry[2].done()]
        if self._deadlines:
            heapq.heapify(self._deadlines)
            return False
        self._heap.clear()
        self._thread = None
        return True

    def _expired(self) -> List[_TaskWait]:
        """Under the lock: the waits whose deadline passed (and are not done)."""
        now, late = time.monotonic(), []
        while self._deadlines and self._deadlines[0][0] <= now:
            waiter = heapq.heappop(self._deadlines)[2]
            if waiter.done():
                continue
            if waiter.deadline is not None and waiter.deadline.at > now:  # progress moved it
                heapq.heappush(self._deadlines, (waiter.deadline.at, next(self._seq), waiter))
            else:
                late.append(waiter)
        return late

    def _next_due(self) -> Optional[str]:
        """Under the lock: the id of a task whose poll is due (marked as polling), or None."""
        now = time.monotonic()
        while self._heap and self._heap[0][0] <= now:
            _, _, task_id, token = heapq.heappop(self._heap)
            followed = self._followed.get(task_id)
            if followed is not None and followed.token == token and not followed.polling:
                followed.polling = True
                return task_id
        return None

    def _poll(self, task_id: str) -> None:
        try:
            future = self.ctx.request_future("tasks/get", self.task_params(task_id))
        except BaseException as exc:
            self._polled(task_id, None, exc)
            return
        future.add_done_callback(lambda done: self._polled(task_id, done, None))

    def _polled(self, task_id: str, done: Optional[CallFuture], error: Optional[BaseException]) -> None:
        """Worker thread: a ``tasks/get`` reply (or why there is none)."""
        task: Optional[Task] = None
        if done is not None:
            error = RequestCancelled("tasks/get was cancelled") if done.cancelled() else done.exception()
            if error is None:
                try:
                    task = checked(Task.from_wire(done.result()), f"tasks/get {task_id}", task_id)
                except ProtocolError as exc:
                    error = exc
        retry = False
        with self._cond:
            followed = self._followed.get(task_id)
            if followed is not None:
                followed.polling = False
                # A slow or lost round is polled again: the connection too may have broken under
                # it (with a Reconnect policy the next poll goes out on the new one; without, it
                # is refused before it is sent). A poll that could not be sent is retried once, as
                # the connection may not have been seen lost yet; refused again, the waits end.
                unsent = done is None and isinstance(error, TransportError)
                followed.unsent = followed.unsent + 1 if unsent else 0
                retry = task is None and isinstance(error, (RequestTimeout, TransportError)) and \
                    (done is not None or followed.unsent == 1)
                if retry:
                    self._schedule(followed, self._interval(followed.task))
        if task is not None:
            self.update(task, keep_early=False, polled=True)
        elif error is not None and not retry:  # (out of shape: a call that waits for the task gives up on it)
            self.fail(task_id, error, cancel=False, cancel_calls=isinstance(error, ProtocolError))

    # --- input requests (worker thread of the input lane) --------------------------------------------

    def _responses(self, task_id: str, requests: Raw) -> Raw:
        """The client's answers to a task's input requests (its own handlers), by key; raises
        what a handler raised, or ``ProtocolError`` for a request it cannot serve."""
        answers: Raw = {}
        for key, request in requests.items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise ProtocolError(f"task {task_id}: input request {key!r:.50} has no method")
            inner = request.get("params") if isinstance(request.get("params"), dict) else {}
            try:
                answers[key] = self.ctx.answer(request["method"], inner)
            except MethodNotFound:
                raise ProtocolError(f"task {task_id}: the server asked for {request['method']}, which this "
                                    "client did not declare (configure its handler)") from None
        return answers

    def answer_unfollowed(self, task: Task, timeout: Any) -> None:
        """``ToolTask.status()`` of a task nobody follows: answer its new input requests here
        (on the caller's thread), with ``tasks/update``, before returning. Each key is answered
        once for the task (the keys a follower answers are shared); a key whose answer failed
        is not kept as answered, and the error is raised."""
        if task.status != "input_required" or not isinstance(task.input_requests, dict):
            return
        with self._cond:
            followed = self._followed.get(task.task_id)
            seen = followed.seen if followed is not None else self._keys(task.task_id)
            new = {k: v for k, v in task.input_requests.items() if k not in seen}
            seen.update(new)
        if not new:
            return
        try:
            answers = self._responses(task.task_id, new)
            self.ctx.request("tasks/update", self.task_params(task.task_id, inputResponses=answers), timeout=timeout)
        except BaseException:
            with self._cond:
                seen.difference_update(new)  # not answered: a later status() or wait tries again
            raise

    def _answer(self, task_id: str, followed: _Followed, requests: Raw) -> None:
        """Input lane: answer ``requests`` with the client's handlers, and send the answers if
        the task is still followed as it was when they were asked for (``followed``). Given up
        meanwhile (or followed again since, by another wait: another follow), nothing is sent
        and the keys are not kept as answered: a later follow, ``status()``, asks again."""
        try:
            answers = self._responses(task_id, requests)
        except BaseException as exc:  # its follow fails, and the task is cancelled (nobody will answer it)
            if not self.fail(task_id, exc, cancel=True, only=followed):
                self._unanswered(followed, requests)
                log.debug("dropped the failure of an input handler for task %s given up meanwhile: %r", task_id, exc)
            return
        with self._cond:
            stale = self._followed.get(task_id) is not followed
        if stale:
            self._unanswered(followed, requests)
            log.debug("dropped the input answers for task %s given up meanwhile", task_id)
            return
        try:
            future = self.ctx.request_future("tasks/update", self.task_params(task_id, inputResponses=answers))
        except BaseException as exc:
            self.fail(task_id, exc, cancel=False, only=followed)
            return
        future.add_done_callback(lambda done: self._updated(task_id, followed, answers, done))

    def _updated(self, task_id: str, followed: _Followed, answers: Raw, done: CallFuture) -> None:
        error = RequestCancelled("tasks/update was cancelled") if done.cancelled() else done.exception()
        if error is not None:
            if not self.fail(task_id, error, cancel=True, only=followed):  # another follow's: it asks again
                self._unanswered(followed, answers)
        else:
            self.poll_now(task_id)

    def _unanswered(self, followed: _Followed, keys: Raw) -> None:
        """``keys`` of a follow given up were not answered after all: a later follow (or
        ``status()``) asks for them again."""
        with self._cond:
            followed.seen.difference_update(keys)

    # --- 2026: one listen for the live task ids --------------------------------------------------------

    def _listen_wanted(self) -> Optional[FrozenSet[str]]:
        """Under the lock: the task ids a new listen should carry, or None (no change needed)."""
        if not self._ext.listen or self._listen_failed or not self.ctx.stateless:
            return None
        ids = frozenset(self._followed)
        return None if ids == self._listened else ids

    def _relisten(self, ids: FrozenSet[str]) -> None:
        """Replace the listen (poller thread): none when nothing is followed."""
        with self._cond:
            old, self._listen, self._listened = self._listen, None, ids
        try:
            if old is not None:
                old.cancel()
            if not ids:
                return
            fresh = self.ctx.request_future("subscriptions/listen", {"notifications": {"taskIds": sorted(ids)}},
                                            timeout=None)
        except Exception as exc:  # (refused; and nothing unforeseen may end this thread: polling goes on)
            log.log(logging.DEBUG if isinstance(exc, MCPError) else logging.WARNING,
                    "cannot listen for task notifications (%r); polling only", exc)
            with self._cond:
                self._listen_failed = True
            return
        with self._cond:
            kept = self._listened == ids and not self._closed  # (close() may have run meanwhile)
            if kept:
                self._listen = fresh
        if kept:
            fresh.add_done_callback(self._listen_ended)  # type: ignore[arg-type]
        else:
            fresh.cancel()

    def _listen_ended(self, done: CallFuture) -> None:
        """The listen ended without our asking (refused: -32021...; or its stream broke):
        polling alone goes on, on this connection (no listen loop against a failing server)."""
        if done.cancelled():
            return
        with self._cond:
            if self._listen is not done:
                return
            self._listen, self._listen_failed = None, True
        log.debug("the listen for task notifications ended (%s); polling only", done.exception())

    # --- lifecycle ----------------------------------------------------------------------------------------

    def rebind(self, ctx: Any) -> None:
        """A new connection: follow on with it (the tasks live on the server, ids unchanged)."""
        with self._cond:
            self.ctx = ctx
            self._listen, self._listened, self._listen_failed = None, frozenset(), False
            for followed in self._followed.values():
                followed.polling = False
                self._schedule(followed, 0.0)
            if self._followed and not self._closed:
                self._start()

    def close(self, deadline: Optional[float] = None) -> None:
        """Fail local waits (``ClientClosedError``), send no ``tasks/cancel``, join the thread."""
        with self._cond:
            self._closed = True
            followed = list(self._followed.values())
            self._followed.clear()
            self._heap.clear()
            self._deadlines.clear()
            thread, lanes, listen = self._thread, list(self._lanes.values()), self._listen
            self._listen = None
            self._cond.notify_all()
        for each in followed:
            for waiter in each.waiters:
                waiter.settle(ClientClosedError("the client was closed"))  # (of_task names the task)
        if listen is not None:
            listen.cancel()
        end = deadline if deadline is not None else time.monotonic() + _CLOSE_WAIT
        for lane in lanes:
            lane.shutdown(end)
        if thread is not None and thread is not threading.current_thread():
            thread.join(max(0.0, end - time.monotonic()))
