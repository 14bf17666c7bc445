"""``CallFuture``: the one future type of the engine, for every request the client makes.

A call is one JSON-RPC exchange or a chain of them: its ``transform`` turns each raw result into
the value, or returns ``Again(params)`` to send the same method once more (the next page of a
list, the next input round of a 2026 request). The same object is the session's pending entry,
so a call costs one object. There are two ways to drive it, chosen when it is made:

* **owned** (what blocking methods use): the caller waits in ``result()`` on a pre-acquired lock
  the reader releases, then runs the transform and any further rounds itself. No hand-off to
  another thread, no ``Future`` state changes: the object never leaves the caller.
* **detached** (what ``*_future`` methods return): the reader hands each reply to a worker thread
  (``mcpclient-<n>-worker-<k>``), which runs the transform, sends further rounds and completes
  the future; a timer thread enforces the deadline even if nobody waits.

Either way the transform never runs on the reader thread. Completion is owned by whoever popped
the call's id from the pending table (reader, canceller, timer, closer): see ``session``.
"""
from __future__ import annotations

import logging
from _thread import allocate_lock as _allocate_lock
from concurrent.futures import CancelledError, Future, InvalidStateError
from time import monotonic as _monotonic
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Dict, FrozenSet, Generic, Optional, Protocol, Tuple, TypeVar

from .._util.threads import WAIT_MAX, contain
from .deadline import NEVER, Deadline
from .._util.wire import format_message
from ..errors import ClientClosedError, MissingClientCapability, ProtocolError, RequestCancelled, RPCError

if TYPE_CHECKING:
    from .hooks import CallTrace

__all__ = ["Again", "CallFuture", "CallHost", "ChainedFuture", "ProgressCallback", "Transform"]

T = TypeVar("T")

ProgressCallback = Callable[[float, Optional[float], Optional[str]], Any]
Transform = Callable[[Any], Any]
#: ``(method, params) -> (params, headers)``: what every round of a call is sent with (2026: ``_meta``).
Prepare = Callable[[str, Optional[Dict[str, Any]]], Tuple[Optional[Dict[str, Any]], Optional[Dict[str, str]]]]

log = logging.getLogger("mcpclient")



class CallHost(Protocol):
    """What a call needs of the session that sends it (``Session`` is the one implementation):
    the next round, the hand-off of a detached call's step to a worker, and giving a call up."""

    def resend(self, call: "CallFuture[Any]", params: Optional[Dict[str, Any]]) -> None:
        """Send the next round of ``call`` within its one deadline."""

    def continue_call(self, call: "CallFuture[Any]", payload: Any) -> bool:
        """Run ``call.advance(payload)`` on a worker; False once the session is closing."""

    def abandon(self, rid: Any, reason: str) -> bool:
        """Stop the round ``rid`` (on the server too); False if it was no longer pending."""

    def expire(self, call: "CallFuture[Any]") -> None:
        """The deadline of ``call`` passed."""

    def waiting_for(self, call: "CallFuture[Any]", timeout: Optional[float]) -> ContextManager[None]:
        """Around a thread's wait for a detached ``call`` (refuses the reader and the timer)."""


def _guarded(fn: Callable[["Future[Any]"], object]) -> Callable[["Future[Any]"], object]:
    """``fn`` as a done-callback that cannot take the others down: ``concurrent.futures`` logs an
    ``Exception`` and goes on, but a ``SystemExit`` skipped the callbacks after it and ended the
    client thread that ran it (a worker, the timer). Here it is logged and contained, except on the
    main thread (see ``_threads.contain``)."""
    def run(future: "Future[Any]") -> object:
        try:
            return fn(future)
        except Exception:
            raise  # concurrent.futures logs it
        except BaseException as exc:
            contain(exc)
            log.exception("done-callback %s of a call raised", getattr(fn, "__qualname__", type(fn).__name__))
            return None
    return run


class Again:
    """A transform's answer meaning "not done: send the request again with ``params``"."""

    __slots__ = ("params",)

    def __init__(self, params: Optional[Dict[str, Any]]) -> None:
        self.params = params


def outcome(method: str, msg: Dict[str, Any], declared: FrozenSet[str] = frozenset()) -> Any:
    """The raw result of a reply, or raise the typed error it carries (``ProtocolError`` for a
    reply of a malformed shape: both or neither of result and error, an error object that is not
    ``{"code": int, "message": str, ...}``). ``declared``: the extensions this client declared
    (a ``MissingClientCapability`` says what happened to them)."""
    if "result" in msg:
        if "error" in msg:
            raise ProtocolError(f"reply to {method} has both a result and an error")
        return msg["result"]
    if "error" in msg:
        wire = msg["error"]
        if type(wire) is not dict or type(wire.get("code")) is not int or type(wire.get("message")) is not str:
            raise ProtocolError(f"reply to {method} has a malformed error object (not "
                                f"{{code: integer, message: string}}): {format_message(wire, 200)}")
        error = RPCError.from_wire(wire, method)
        error.http_status = msg.get("httpStatus")  # set by HTTP transports for a 4xx/5xx body
        if declared and isinstance(error, MissingClientCapability):
            error.explain(declared)
        raise error
    raise ProtocolError(f"reply to {method} has neither result nor error")


class _Final:
    """An owned call's value, known before any round was sent (a cache hit)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class CallFuture(Future, Generic[T]):  # type: ignore[type-arg]
    """The future of one request. ``cancel()`` also stops it on the server.

    ``request_id`` is the JSON-RPC id of the exchange in flight (a call of several rounds gets a
    new one per round). ``result()``/``exception()`` raise ``ReaderThreadError`` on the
    connection's reader or timer thread (they would wait for themselves), and a cancelled call
    raises ``RequestCancelled`` (a ``concurrent.futures.CancelledError``). Done-callbacks run on
    the thread that completes the future: a worker thread (``mcpclient-<n>-worker-<k>``), or the
    canceller's or closer's; never the reader or the timer.
    """

    # The per-call options, as class defaults: a call sets only those that differ (the engine's
    # hot path builds one of these per request, so every attribute write counts).
    request_id: Any = None
    #: The call's time limit, made by the public method that sent it (see ``deadline``)
    deadline: Deadline = NEVER
    on_progress: Optional[ProgressCallback] = None
    progress_queued = False  # its progress callbacks wait on the notification lane
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
    _reply: Any = None  # owned: the reply that landed (or a _Final value), and
    _error: Optional[BaseException] = None  # the error that ended it
    _state = "PENDING"  # what repr() shows of an owned call (its Future state is never used)

    def __init__(self, session: "CallHost", method: str, transform: Optional[Transform] = None,
                 owned: bool = False) -> None:
        if owned:
            # The blocking fast path: an owned call never leaves its caller, who waits on a bare
            # pre-acquired lock; the Future machinery (a Condition, waiters, callbacks) is never
            # touched, so it is not built. Nothing but result() is ever called on an owned call.
            self._landed = _allocate_lock()
            self._landed.acquire()
        else:
            super().__init__()
        self.method = method
        self._session = session
        self._transform = transform
        self._owned = owned

    @classmethod
    def completed(cls, session: "CallHost", method: str, value: Any) -> "CallFuture":
        """A call that needed no request (its value was known at once)."""
        future = cls(session, method)
        future.set_result(value)
        return future

    @classmethod
    def failed(cls, session: "CallHost", method: str, error: BaseException) -> "CallFuture":
        """A call refused before anything was sent."""
        future = cls(session, method)
        future.set_exception(error)
        return future

    def due(self) -> float:
        """Monotonic time at which this call times out (``inf`` for never; progress may move it)."""
        return self.deadline.at

    # --- completion (called by whoever popped the round) -----------------------------------------

    def expired(self) -> None:
        """The deadline passed while no round was pending (between rounds: the next send fails;
        futures that wait for something else than a reply override this)."""

    def land(self, msg: Optional[Dict[str, Any]], error: Optional[BaseException] = None) -> None:
        """A round ended: ``msg`` is its reply, or ``error`` says why there is none. The owner
        is woken; a detached call goes on on a worker thread (so neither the reader nor the
        timer ever runs a transform or a done-callback), or here once the workers are gone."""
        if self._owned:
            self._reply, self._error = msg, error
            self._landed.release()
        elif not self._session.continue_call(self, msg if error is None else error):
            self._settle(None, error or ClientClosedError(f"{self.method} abandoned: the client was closed"))

    def advance(self, payload: Any) -> None:
        """Worker thread (detached calls): parse a reply (or take the error that ended the
        round), then finish, or send the next round."""
        if self.cancelled():
            return
        if isinstance(payload, BaseException):
            self._settle(None, payload)
            return
        try:
            value = self._step(outcome(self.method, payload, self._session.declared_extensions))
            if type(value) is Again:
                if self.cancelled():  # cancelled while the transform ran (input rounds): stop here
                    return
                self._session.resend(self, value.params)
                if self.cancelled():  # cancelled while the round was being sent: stop it too
                    self._session.abandon(self.request_id, "cancelled by the client")
                return
        except BaseException as exc:
            self._settle(None, exc)
            return
        self._settle(value, None)

    def fail(self, error: BaseException) -> None:
        """End a detached call with ``error`` on this thread (its queued step was dropped)."""
        self._settle(None, error)

    def _step(self, raw: Any) -> Any:
        transform = self._transform
        if transform is None:
            return raw
        trace = self.trace  # (traced: the transform, and input rounds' handlers, run in the call's span)
        return transform(raw) if trace is None else trace.run(transform, raw)

    def _settle(self, value: Any, error: Optional[BaseException]) -> bool:
        """Complete the future (False if it was cancelled or completed meanwhile: then the
        outcome is dropped)."""
        trace = self.trace
        if trace is not None:  # ended before the caller is woken: the span covers the call, not the wait
            trace.end(value, error, self.request_id)
        try:
            if error is None:
                self.set_result(value)
            else:
                self.set_exception(error)
        except InvalidStateError:
            return False
        return True

    def start(self, raw: Any) -> None:
        """Begin with a result already known (a cache hit): runs the transform on this thread
        and sends a round only if it asks for one."""
        error: Optional[BaseException] = None
        try:
            value = self._step(raw)
            if type(value) is Again:
                self._session.resend(self, value.params)
                return
        except BaseException as exc:
            value, error = None, exc
        if not self._owned:
            self._settle(value, error)
            return
        self._reply, self._error = _Final(value), error
        self._landed.release()

    # --- waiting -----------------------------------------------------------------------------------

    def result(self, timeout: Optional[float] = None) -> T:
        if self._owned:
            trace = self.trace
            if trace is None:
                return self._drive()
            try:
                value = self._drive()
            except BaseException as exc:
                trace.end(None, exc, self.request_id)
                raise
            trace.end(value, None, self.request_id)
            return value  # type: ignore[no-any-return]
        try:
            with self._session.waiting_for(self, timeout):
                return super().result(timeout)
        except CancelledError as exc:
            if isinstance(exc, RequestCancelled) and not self.cancelled():
                raise  # the outcome itself (a task the server cancelled), not this future's cancel()
            raise self._cancelled_error() from exc

    def _join(self) -> T:
        """A blocking method's wait for its call (``result()``). A call an extension took over
        is detached, not owned: an interrupt while waiting for it (``KeyboardInterrupt``) cancels
        it, on the server too, before it goes on up, as an owned call's wait does (``_drive``)."""
        if self._owned:
            return self.result()
        try:
            return self.result()
        except BaseException:
            self.cancel()  # (nothing happens once it is done: then this is its outcome)
            raise

    def exception(self, timeout: Optional[float] = None) -> Optional[BaseException]:
        if self._owned:
            raise RuntimeError("a blocking call's future is waited for with result() only")
        try:
            with self._session.waiting_for(self, timeout):
                return super().exception(timeout)
        except CancelledError as exc:
            raise self._cancelled_error() from exc

    def _drive(self) -> Any:
        """The owner's wait: until each round lands or the deadline passes, then parse it here and
        send the next round if the transform asks for one."""
        session = self._session
        landed = self._landed
        while True:
            try:
                while True:
                    remaining = self.deadline.at - _monotonic()
                    if remaining <= 0:
                        session.expire(self)
                        landed.acquire()  # landed by expire(), or by the thread that beat it
                        break
                    if landed.acquire(True, min(remaining, WAIT_MAX)):
                        break
                    # else: progress may have moved the deadline; check again
            except BaseException:  # e.g. KeyboardInterrupt while waiting: stop the server's work too
                session.abandon(self.request_id, "interrupted")
                raise
            if self._error is not None:
                raise self._error
            reply = self._reply
            if type(reply) is _Final:
                return reply.value  # finished by start()
            value = self._step(outcome(self.method, reply, self._session.declared_extensions))
            if type(value) is not Again:
                return value
            session.resend(self, value.params)

    # --- cancelling ----------------------------------------------------------------------------------

    def cancel(self) -> bool:
        """Cancel the call; the request in flight is cancelled on the server too. False if it
        has finished already."""
        if self._owned:
            raise RuntimeError("a blocking call's future is waited for with result() only")
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
        return True

    def done(self) -> bool:
        if self._owned:
            raise RuntimeError("a blocking call's future is waited for with result() only")
        return super().done()

    def add_done_callback(self, fn: Callable[["Future[Any]"], object]) -> None:
        if self._owned:
            raise RuntimeError("a blocking call's future is waited for with result() only")
        super().add_done_callback(_guarded(fn))

    def _cancelled_error(self) -> RequestCancelled:
        return RequestCancelled(f"{self.method} (id {self.request_id}) was cancelled")

    def __repr__(self) -> str:
        return f"<CallFuture {self.method} id={self.request_id} {self._state.lower()}>"  # type: ignore[attr-defined]


class ChainedFuture(CallFuture[T]):
    """A call made of other calls one after another (``load_skill``: the manifest, then the
    file): each link gets the previous value on a worker thread and returns the final value or
    the next ``CallFuture`` (or other future: a task to wait for); ``cancel()`` cancels the link in flight."""

    def __init__(self, session: "CallHost", method: str, first: CallFuture[Any],
                 link: Callable[[Any], Any]) -> None:
        super().__init__(session, method)
        from contextvars import copy_context  # deferred: import cost (only chains need it)

        self._current: "Future[Any]" = first
        self._link: Optional[Callable[[Any], Any]] = link
        # The caller's context (its trace span...), for the links, which run on a worker thread:
        # the requests they make are then the caller's children, as the first one is.
        self._context = copy_context()
        first.add_done_callback(self._arrived)

    @property  # type: ignore[override]
    def request_id(self) -> Any:
        """The JSON-RPC id of the link in flight (None while it waits for something else than a reply)."""
        current = self._current
        return current.request_id if isinstance(current, CallFuture) else None

    def _arrived(self, done: "Future[Any]") -> None:
        if self.cancelled():
            return
        if done.cancelled():
            self._settle(None, RequestCancelled(f"{self.method} was cancelled"))
        elif done.exception() is not None:
            self._settle(None, done.exception())
        elif not self._session.continue_call(self, done.result()):
            self._settle(None, ClientClosedError(f"{self.method} abandoned: the client was closed"))

    def advance(self, value: Any) -> None:
        """Worker thread: run the next link with the previous link's value."""
        if self.cancelled():
            return
        link, self._link = self._link, None
        try:
            nxt = self._context.run(link, value) if link is not None else value
        except BaseException as exc:
            self._settle(None, exc)
            return
        if isinstance(nxt, Future):  # a CallFuture, or another future to wait for (a task)
            self._current = nxt
            if self.cancelled():  # cancelled while the link ran: the new request goes too
                nxt.cancel()
                return
            nxt.add_done_callback(self._arrived)
        else:
            self._settle(nxt, None)

    def cancel(self) -> bool:
        if not Future.cancel(self):
            return False
        try:
            self.set_running_or_notify_cancel()  # wakes concurrent.futures.wait()/as_completed()
        except RuntimeError:  # cancelled (and notified) before
            return True
        self._cancel_current()
        return True

    def _cancel_current(self) -> None:
        """``cancel()``: stop the link in flight (a subclass may do more)."""
        self._current.cancel()
