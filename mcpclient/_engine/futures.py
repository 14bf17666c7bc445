"""``CallFuture``: the one future type of the engine, for every request the client makes.

A call is one JSON-RPC exchange or a chain of them: its ``transform`` turns each raw result into
the value, or returns ``NextRound(params)`` to send the same method once more (the next page of a
list, the next input round of a 2026 request). The same object is the session's pending entry,
so a call costs one object. Every request method, blocking or not, makes one: a blocking method
is ``result()`` on it. Whoever waits in ``result()`` runs each round's next step (parse,
transform, next round) on its own thread; with nobody waiting a worker thread does, so the
transform never runs on the reader thread. Every call's deadline ends it through the session's
timer (``expire``), the same way waited on or not: a blocking caller's wait keeps its call off
the timer until the deadline is due, the caller leaves, or it runs the round's exchange itself
(``unwatched``).
Completion of a round is owned by whoever popped its id from the pending table (reader,
canceller, timer, closer): see ``session``.
"""
from __future__ import annotations

import logging
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from _thread import RLock as _RLock, allocate_lock as _allocate_lock, get_ident as _get_ident
from time import monotonic as _monotonic
from typing import TYPE_CHECKING, Any, Callable, Dict, Generic, List, Optional, Sequence, Tuple, TypeVar, Union, cast

from .._util.threads import WAIT_MAX, contained_callback, this_thread as _this_thread
from .._util.waiting import announce
from .deadline import NEVER, Deadline
from ..errors import ClientClosedError, RequestCancelled
from .replies import NextRound, outcome

if TYPE_CHECKING:
    from .call_host import CallHost
    from .hooks import CallTrace
    from ..transports.base import PendingExchange
    from ..types._json import JSONObject, JSONValue

__all__ = ["CallFuture", "ProgressCallback", "Transform"]

T = TypeVar("T")
U = TypeVar("U")

ProgressCallback = Callable[[float, Optional[float], Optional[str]], object]
Transform = Callable[[Any], Any]
if TYPE_CHECKING:  # (annotations only: the alias costs a one-shot call at import)
    #: ``(method, params) -> (params, headers)``: what every round of a call is sent with (2026: ``_meta``).
    Prepare = Callable[[str, Optional[Dict[str, Any]]], Tuple[Optional[Dict[str, Any]], Optional[Dict[str, str]]]]

log = logging.getLogger("mcpclient")


def stepping_call() -> "Optional[CallFuture[Any]]":
    """The call whose step (its transform) runs on this thread now, if any."""
    return _this_thread.stepping  # type: ignore[no-any-return]


#: ``Future``'s states in which it is over (``concurrent.futures`` keeps them as strings).
_OVER = frozenset(("FINISHED", "CANCELLED", "CANCELLED_AND_NOTIFIED"))
_CANCELLED = frozenset(("CANCELLED", "CANCELLED_AND_NOTIFIED"))
_INF = float("inf")
#: What ``_parked`` and a sleeper's slot hold when nothing was kept (a chain's link may give None).
_NOTHING: Any = object()


class _StateLock(_RLock):  # type: ignore[misc]  # (typeshed: final; CPython 3.9-3.13 allow it)
    """A ``CallFuture``'s ``_condition``, held to change state and by ``concurrent.futures.wait()``
    to add waiters. Nobody waits on it (``result()`` sleeps on a lock of its own), so a bare lock
    does, at a fraction of a ``threading.Condition``'s cost per call."""

    __slots__ = ()

    def notify_all(self) -> None:
        """Nobody waits on it (see the class)."""

    def wait(self, timeout: Optional[float] = None) -> bool:
        raise RuntimeError("a CallFuture is waited on with its own result() or exception()")


class CallFuture(Future, Generic[T]):  # type: ignore[type-arg]
    """The future of one request: a ``concurrent.futures.Future`` whose ``cancel()`` also stops
    the request on the server. A blocking method is ``result()`` on the very future it makes
    (``call_tool(...)`` is ``call_tool_future(...).result()``).

    **Who runs a round's next step.** When a reply (or the error that ends a round) arrives,
    a thread waiting in ``result()``/``exception()`` takes it and runs the step itself: parse,
    transform, send the next round or complete the future. With nobody waiting, a worker thread
    (``mcpclient-<n>-worker-<k>``) does. The reader and the timer never run a transform or a
    done-callback. The deadline ends the call through the session's timer, waited on or not, so
    a blocking call and a future end the same way at the same time (see the module docstring).

    ``request_id`` is the JSON-RPC id of the exchange in flight (a call of several rounds gets a
    new one per round). ``result()``/``exception()`` raise ``ReaderThreadError`` on the
    connection's reader or timer thread (they would wait for themselves), and a cancelled call
    raises ``RequestCancelled`` (a ``concurrent.futures.CancelledError``). Done-callbacks run on
    the thread that completes the future: the waiting caller, a worker, or the canceller's or
    closer's; never the reader or the timer.
    """

    # The per-call options, as class defaults: a call sets only those that differ (the engine's
    # hot path builds one of these per request, so every attribute write counts).
    request_id: Any = None
    #: The call's time limit, made by the public method that sent it (see ``deadline``)
    deadline: Deadline = NEVER
    on_progress: Optional[ProgressCallback] = None
    progress_queued = False  # its progress callbacks wait on the notification thread
    may_defer = False
    prepare: Optional[Prepare] = None
    headers: Optional[Dict[str, str]] = None
    idempotent: Optional[bool] = False
    setup = False
    cancellable = True
    trace: Optional["CallTrace"] = None  # its span, when tracing is on (ended once, when the call ends)
    #: ``(reply) -> None``, run on a worker for a reply that came after the call was given up
    #: (timed out, cancelled): what the reply made on the server may need undoing (a task).
    on_late: Optional[Callable[[Dict[str, Any]], Any]] = None
    _in_result = 0  # threads in _wait_loop: one of them runs the next step (see _step_handed)
    #: The thread that made the call announced it will wait for it (``_util.waiting``): a
    #: reply that comes before it reaches ``result()`` is parked for it, not handed to a worker.
    _waiter_coming = False
    _parked: Any = _NOTHING  # a round's outcome (a reply, an error, a link's value) kept for one; under _mutex
    #: The threads sleeping in ``_wait_here``, in order, each as ``[its bare lock, what it was
    #: handed]`` (a new list per change; guarded by _mutex).
    _sleepers: Sequence[List[Any]] = ()
    #: The announced caller's place in ``_sleepers`` (and its thread), taken as the call is made.
    _own_sleeper: Optional[List[Any]] = None
    # Future's lists, made when first used (most calls have neither waiters nor callbacks).
    _waiter_list: Optional[List[Any]] = None
    _callback_list: "Optional[List[Callable[[Future[Any]], object]]]" = None
    _stepping: Optional[int] = None  # the thread in result() running a step now
    _inner: "Optional[Future[Any]]" = None  # what a step waits for (cancel_with_it)
    #: The exchange of the round in flight, if the transport lets a thread that waits for it
    #: run it (``Transport.send``'s return); taken, under ``_mutex``, by one such thread. Posted
    #: to the transport's thread at once, unless the caller announced it waits (``unposted``).
    exchange_here: Optional["PendingExchange"] = None
    unposted = False
    #: Its deadline is not on the timer: the announced caller's wait keeps it (one timer entry less
    #: per blocking call), and hands it to the timer when due or when nobody waits (under _mutex).
    unwatched = False

    def __init__(self, session: "CallHost[CallFuture]", method: str,
                 transform: Optional[Callable[[JSONValue], object]] = None) -> None:
        # Future.__init__'s fields, with a _StateLock for its threading.Condition (see there).
        self._condition = _StateLock()  # type: ignore[assignment]
        self._state = "PENDING"
        self._result = self._exception = None
        self._mutex = _allocate_lock()  # guards _in_result, _parked, _sleepers, exchange_here's taking
        self.method = method
        self._session = session
        self._transform = transform

    @classmethod
    def completed(cls, session: "CallHost[CallFuture]", method: str, value: T) -> "CallFuture[T]":
        """A call that needed no request (its value was known at once)."""
        future = cls(session, method)
        future.set_result(value)
        return future

    @classmethod
    def failed(cls, session: "CallHost[CallFuture]", method: str, error: BaseException) -> "CallFuture":
        """A call refused before anything was sent."""
        future = cls(session, method)
        future.set_exception(error)
        return future

    def due(self) -> float:
        """Monotonic time at which this call times out (``inf`` for never; progress may move it)."""
        return self.deadline.at

    # --- completion (called by whoever popped the round) -----------------------------------------

    def undefer(self) -> None:
        """(Under the session's lock.) Never hold this call's answer back behind its progress
        callbacks (``Session.release_held``)."""
        self.may_defer = self.progress_queued = False

    def expired(self) -> None:
        """The deadline passed while no round was pending (between rounds: the next send fails;
        futures that wait for something else than a reply override this)."""

    def deliver(self, msg: object, error: Optional[BaseException] = None) -> None:
        """A round ended: ``msg`` is its outcome (a reply; a chain's link value, None maybe), or
        ``error`` says why there is none. A thread waiting in ``result()``, or announced to
        (``_waiter_coming``), takes it (``_keep``); else a worker runs the next step (so neither the reader nor the timer ever runs a
        transform or a done-callback), or this thread once the workers are gone."""
        payload = msg if error is None else error
        mutex = self._mutex
        mutex.acquire()
        if self._in_result or self._waiter_coming:
            self._keep(payload)
            mutex.release()
            return
        mutex.release()
        self._hand_off(payload)

    def _keep(self, payload: Any) -> None:
        """(Under ``_mutex``.) ``payload`` for a thread in ``result()``: the first one asleep is
        woken with it in hand; with none asleep it is parked for the next to look."""
        sleepers = self._sleepers
        if sleepers:
            self._sleepers = sleepers[1:]
            sleepers[0][1] = payload
            sleepers[0][0].release()
        else:
            self._parked = payload

    def waiter_left(self) -> None:
        """The thread that announced it would wait for this call will not (any more): a reply
        parked for it goes to a worker (``Announced``; only that thread calls this)."""
        if not self._waiter_coming:
            return
        self._mutex.acquire()
        self._waiter_coming = False
        self._drop_own_sleeper()
        self._pass_on()

    def _pass_on(self) -> None:
        """(Holding ``_mutex``, which it releases.) If no thread waits in ``result()`` any more,
        what was kept for one goes on: a parked reply to a worker, an exchange not posted yet
        to the transport's thread."""
        left, exchange = _NOTHING, None
        watch = False
        if not self._in_result:
            left, self._parked = self._parked, _NOTHING
            if self.unposted:
                exchange, self.exchange_here, self.unposted = self.exchange_here, None, False
            if self.unwatched and self._state not in _OVER:  # nobody enforces its deadline now
                self.unwatched, watch = False, True
        self._mutex.release()
        if watch:
            self._session.watch(self)
        if exchange is not None:
            exchange.post()
        if left is not _NOTHING:
            self._hand_off(left)

    def announce_waiter(self) -> bool:
        """Called as the call is made, its deadline set: if the thread making it announced it
        will wait for it (``_util.waiting.wait_for``), a reply that comes first is parked for that
        thread, and its wait keeps the deadline (``unwatched``); True then."""
        announced = self._waiter_coming = announce(self)
        if announced:
            if self.deadline.at != _INF:
                self.unwatched = True
            if not self._session.exchanges:
                sleeper = self._own_sleeper = [_allocate_lock(), _NOTHING, _get_ident()]
                sleeper[0].acquire()
                self._sleepers = [sleeper]  # (nothing else waits yet: the call is not sent)
        return announced

    def keep_exchange(self, exchange: "PendingExchange") -> None:
        """The round's exchange (``Transport.send``): the announced caller runs it; else it is
        posted now, and a thread that waits for the answer runs it if no poster began it."""
        self.exchange_here = exchange
        if self._own_sleeper is not None:  # (its caller runs the exchange first: see _wait_loop)
            with self._mutex:
                self._drop_own_sleeper()
        if self.unwatched:  # (a thread running an exchange does not watch the deadline meanwhile)
            with self._mutex:
                watch, self.unwatched = self.unwatched, False
            if watch:
                self._session.watch(self)
        if self._waiter_coming:
            self.unposted = True
        else:
            exchange.post()

    def _hand_off(self, payload: Any) -> None:
        if not self._session.continue_call(self, payload):
            error = payload if isinstance(payload, BaseException) else None
            self._settle(None, error or ClientClosedError(f"{self.method} abandoned: the client was closed"))

    def run_step(self, payload: Union["JSONObject", BaseException]) -> None:
        """Run a round's next step (a waiting caller, or a worker): parse the reply (or take the
        error that ended the round), then finish, or send the next round."""
        if self._state in _CANCELLED:
            return
        if isinstance(payload, BaseException):
            self._settle(None, payload)
            return
        try:
            value = outcome(self.method, payload, self._session.declared_extensions)
            transform = self._transform
            if transform is not None:
                this_thread = _this_thread
                outer, this_thread.stepping = this_thread.stepping, self  # (a future the transform waits for is cancelled with this call)
                try:
                    trace = self.trace  # (traced: the transform, and input rounds' handlers, run in the call's span)
                    value = transform(value) if trace is None else trace.run(transform, value)
                finally:
                    this_thread.stepping = outer
            if type(value) is NextRound:
                if self._state in _CANCELLED:  # cancelled while the transform ran (input rounds): stop here
                    return
                self._session.resend(self, value.params)
                if self._state in _CANCELLED:  # cancelled while the round was being sent: stop it too
                    self._session.abandon(self.request_id, "cancelled by the client")
                return
        except BaseException as exc:
            self._settle(None, exc)
            return
        self._settle(value, None)

    def fail(self, error: BaseException) -> None:
        """End the call with ``error`` on this thread (its queued step was dropped)."""
        self._settle(None, error)

    def cancel_with_it(self, inner: "Future[U]") -> None:
        """Cancel ``inner`` (what a step of this call waits for: a task an extension follows)
        when this call is cancelled, on whichever thread the step runs; at once if it is."""
        with self._mutex:
            self._inner = inner
        if self._state in _CANCELLED:
            inner.cancel()

    def _settle(self, value: Any, error: Optional[BaseException]) -> bool:
        """Complete the future (False if it was cancelled or completed meanwhile: then the
        outcome is dropped)."""
        trace = self.trace
        if trace is not None:  # ended before the caller is woken: the span covers the call, not the wait
            trace.end(value, error, self.request_id)
        # Future.set_result/set_exception, in one frame (this runs once per call): the state
        # changes under _condition, where concurrent.futures.wait()/as_completed() add waiters.
        with self._condition:
            if self._state in _OVER:
                return False
            if error is None:
                self._result = value
            else:
                self._exception = error
            self._state = "FINISHED"
            if self._waiter_list:
                for waiter in self._waiter_list:
                    if error is None:
                        waiter.add_result(self)
                    else:
                        waiter.add_exception(self)
        if self._sleepers:  # (_invoke_callbacks, inline)
            self._wake()
        if self._callback_list:
            self._run_done_callbacks()
        return True

    def start(self, raw: object) -> None:
        """Begin with a result already known (a cache hit): the step runs on this thread, and
        a round is sent only if it asks for one."""
        self.run_step({"result": cast("JSONValue", raw)})

    # --- waiting -----------------------------------------------------------------------------------

    def done(self) -> bool:
        """Whether the call is over (answered, failed or cancelled). Read without the lock:
        the state is one attribute, and the engine asks on every call."""
        return self._state in _OVER

    def result(self, timeout: Optional[float] = None) -> T:
        if self._state not in _OVER:
            if _this_thread.is_library:  # (the reader, a worker...: see _wait_guarded)
                self._wait_guarded(timeout)
            else:
                self._wait_here(timeout)
        if self._state == "FINISHED":
            error = self._exception
            if error is None:
                return self._result  # type: ignore[no-any-return, return-value]
            try:
                raise error
            finally:
                del error  # (no reference cycle through this frame: as Future.result)
        raise self._cancelled_error()

    def exception(self, timeout: Optional[float] = None) -> Optional[BaseException]:
        if self._state not in _OVER:
            if _this_thread.is_library:
                self._wait_guarded(timeout)
            else:
                self._wait_here(timeout)
        if self._state == "FINISHED":
            return self._exception  # type: ignore[no-any-return]
        raise self._cancelled_error()

    def _wait_guarded(self, timeout: Optional[float]) -> None:
        """``_wait_here`` on one of the library's threads: within ``waiting_for`` (which refuses
        the reader and the timer: they would wait for themselves)."""
        guard = self._session.waiting_for(self, timeout)
        if guard is None:
            self._wait_here(timeout)
            return
        with guard:
            self._wait_here(timeout)

    def _drop_own_sleeper(self) -> None:
        """(Under ``_mutex``; any thread.) The announced caller's place among the sleepers goes:
        still there, it is released (its thread, if asleep on it, goes on to ``_wait_loop``);
        what it was handed is kept for whoever waits next (or parked)."""
        own, self._own_sleeper = self._own_sleeper, None
        if own is None:
            return
        if any(s is own for s in self._sleepers):  # (else _keep or _wake took it, and released it)
            self._sleepers = [s for s in self._sleepers if s is not own]
            own[0].release()
        elif own[1] is not _NOTHING:
            handed, own[1] = own[1], _NOTHING
            self._keep(handed)

    def _wait_here(self, timeout: Optional[float]) -> None:
        own = self._own_sleeper
        if own is not None and timeout is None and own[2] == _get_ident():
            # The announced caller, back from sending, asleep at once where the call's making put
            # it: the reply that wakes the reader finds it asleep more often (one switch less).
            if self.unwatched:
                limit = self.deadline.at - _monotonic()
                if not 0.0 < limit < WAIT_MAX:
                    limit = 0.0 if limit <= 0.0 else WAIT_MAX
            else:
                limit = WAIT_MAX
            try:
                woken = own[0].acquire(True, limit)
            except BaseException:
                with self._mutex:
                    self._drop_own_sleeper()
                raise
            if woken and own[1] is not _NOTHING and self._step_handed(own):
                return
        self._wait_loop(timeout)

    def _step_handed(self, own: List[Any]) -> bool:
        """The announced caller, woken with its round's outcome in hand (``_keep``), runs the step
        at once; True if that ended the call (if the place was dropped meanwhile, ``_wait_loop`` does)."""
        mutex = self._mutex
        mutex.acquire()
        arrived = _NOTHING
        if self._own_sleeper is own:
            self._own_sleeper = None
            arrived, own[1] = own[1], _NOTHING
        mutex.release()
        if arrived is _NOTHING:
            return False
        self._stepping = _get_ident()
        try:
            self.run_step(arrived)
        except BaseException:  # (an interrupt: what comes next goes to a worker)
            self.waiter_left()
            raise
        finally:
            self._stepping = None
        if self._state not in _OVER:  # (a next round was sent: _wait_loop waits for it)
            return False
        self._waiter_coming = False
        self._parked = _NOTHING  # (a round answered as it was cancelled: nobody takes it)
        return True

    def _wait_loop(self, timeout: Optional[float]) -> None:
        """Wait until the call is over, running the steps of the rounds that end meanwhile on
        this thread (``run_step``), and its exchange if the transport left it to a waiting
        thread. ``TimeoutError`` once ``timeout`` seconds (this wait's own, not the call's
        deadline) passed first.

        Each waiting thread sleeps on a bare lock of its own (``_sleepers``), released by
        ``deliver``, which hands it the round's outcome, or by the completion (``_wake``);
        ``_mutex`` guards what they share."""
        end = None if timeout is None else _monotonic() + timeout
        mutex = self._mutex
        mutex.acquire()
        held = True  # whether this thread holds _mutex
        sleeper: Optional[List[Any]] = None  # this thread's place in _sleepers while it sleeps
        self._in_result += 1
        self._waiter_coming = False  # (here now)
        if self._own_sleeper is not None and self._own_sleeper[2] == _get_ident():
            self._drop_own_sleeper()  # (what it was handed goes to _parked: taken below)
        try:
            while self._state not in _OVER:
                here = self.exchange_here  # (first: a round that ended before it ran still ends there)
                if here is not None and (end is None or self.unposted):
                    self.exchange_here = None
                    posting, self.unposted = end is not None, False
                    mutex.release()
                    held = False
                    if posting:  # (a wait of its own may not run it: a poster thread does)
                        here.post()
                    else:
                        reply = here.run()  # None: taken by a transport thread, or answered through receive()
                        if reply is not None:
                            self._session.answered_here(reply)
                    mutex.acquire()
                    held = True
                    continue
                arrived = self._parked
                if arrived is not _NOTHING:
                    self._parked = _NOTHING
                else:
                    sleeper = [_allocate_lock(), _NOTHING]
                    sleeper[0].acquire()
                    self._sleepers = [*self._sleepers, sleeper]
                    if self._state in _OVER:  # (completed since the loop's test: its completer may
                        break  # have looked for sleepers before this one was added, without the lock)
                    limit = WAIT_MAX if end is None else max(0.0, end - _monotonic())
                    if self.unwatched:  # (its deadline: see unwatched)
                        left = self.deadline.at - _monotonic()
                        if left < limit:
                            limit = left if left > 0 else 0.0
                    mutex.release()
                    held = False
                    woken = sleeper[0].acquire(True, limit)
                    arrived = sleeper[1]
                    if arrived is _NOTHING:  # (woken by the completion, or not woken)
                        mutex.acquire()
                        held = True
                        arrived = sleeper[1]  # (handed over just now?)
                        if arrived is _NOTHING:
                            if not woken:
                                self._left_asleep(sleeper, end)
                            sleeper = None
                            continue
                    sleeper = None
                if held:
                    mutex.release()
                    held = False
                self._stepping = _get_ident()
                try:
                    self.run_step(arrived)
                finally:
                    self._stepping = None
                if self._state in _OVER:
                    self._parked = _NOTHING  # (a round answered as it was cancelled: nobody takes it)
                    return  # (the finally needs no lock then: see there)
                mutex.acquire()
                held = True
        finally:
            if not held and self._state not in _OVER:  # (a step on this thread raised, or an interrupt)
                mutex.acquire()
                held = True
            if sleeper is not None and held:  # (interrupted asleep: what it was handed goes on)
                self._sleepers = [s for s in self._sleepers if s is not sleeper]
                if sleeper[1] is not _NOTHING:
                    self._keep(sleeper[1])
            self._in_result -= 1  # (without the lock once over: no round is delivered any more)
            if held:
                self._pass_on()  # (the last waiter leaves: its own timeout, an interrupt)

    def _left_asleep(self, sleeper: List[Any], end: Optional[float]) -> None:
        """(Under ``_mutex``.) This thread's sleep ran out with nothing handed to it: out of
        ``_sleepers``; a deadline due goes to the timer; ``TimeoutError`` at the wait's ``end``."""
        self._sleepers = [s for s in self._sleepers if s is not sleeper]
        if self.unwatched and self.deadline.at <= _monotonic():  # (progress may have moved it)
            self.unwatched = False
            self._session.watch(self)  # due: the timer expires it now
        elif end is not None and _monotonic() >= end and self._state not in _OVER and self._parked is _NOTHING:
            raise FutureTimeout()

    # --- cancelling ----------------------------------------------------------------------------------

    def cancel(self) -> bool:
        """Cancel the call; the request in flight is cancelled on the server too. False if it
        has finished already."""
        trace = self.trace
        if trace is not None and not super().done():  # ended before anyone is woken, as _settle does
            trace.end(None, self._cancelled_error(), self.request_id)
        if not super().cancel():
            return False
        # Future.cancel() wakes result() callers but not concurrent.futures.wait()/as_completed():
        # an executor does that when it picks the cancelled item up; this call is its own executor.
        try:
            self.set_running_or_notify_cancel()
        except RuntimeError:  # cancelled (and notified) before: nothing more to do
            return True
        self._session.abandon(self.request_id, "cancelled by the client")
        inner = self._inner
        if inner is not None:  # a step waits for it (on a worker, maybe): it stops too
            inner.cancel()
        return True

    def add_done_callback(self, fn: Callable[["Future[T]"], object]) -> None:
        super().add_done_callback(contained_callback(fn))

    # Where ``Future``'s own methods and ``concurrent.futures.wait()`` find its two lists.
    @property
    def _waiters(self) -> List[Any]:  # type: ignore[override]
        found = self._waiter_list
        if found is None:
            found = self._waiter_list = []
        return found

    @property
    def _done_callbacks(self) -> "List[Callable[[Future[Any]], object]]":
        found = self._callback_list
        if found is None:
            found = self._callback_list = []
        return found

    def _invoke_callbacks(self) -> None:
        """(``Future``'s hook, after it woke the threads waiting on its condition.) Wakes the
        threads sleeping in ``_wait_here``; then the done-callbacks. Those of a call that a thread
        waiting in ``result()`` completed run on a worker: that caller returns now, whatever
        they do (wait for another call...), as it would from an executor's future."""
        if self._sleepers:  # (read without the lock: a waiter adds itself, then tests the state)
            self._wake()
        if self._callback_list:
            self._run_done_callbacks()

    def _wake(self) -> None:
        mutex = self._mutex
        mutex.acquire()
        sleepers, self._sleepers = self._sleepers, ()
        mutex.release()
        for sleeper in sleepers:
            sleeper[0].release()

    def _run_done_callbacks(self) -> None:
        if self._stepping == _get_ident() and self._session.on_worker(
                f"done-callbacks of {self.method}", super()._invoke_callbacks):  # type: ignore[misc]
            return
        super()._invoke_callbacks()  # type: ignore[misc]

    def _cancelled_error(self) -> RequestCancelled:
        return RequestCancelled(f"{self.method} (id {self.request_id}) was cancelled")

    def __repr__(self) -> str:
        return f"<CallFuture {self.method} id={self.request_id} {self._state.lower()}>"  # type: ignore[attr-defined]
