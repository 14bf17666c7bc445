"""The JSON-RPC engine: ids, the pending table, sending, timeouts, cancellation and close.

One ``Session`` per connection and one way to send a request: ``call()``, which returns a
``CallFuture`` (see ``futures``). The session owns a ``Reader`` (``reader``), whose thread is the
only caller of ``transport.receive()``: it hands each reply back here (``complete``), where its
call is popped by id and delivered; it never parses a result, runs user code or blocks on
anything but the transport (it does not even write: cancellations and "busy" answers go out
through the sender pool). Server-initiated messages go to bounded pools (``_util.threads.WorkerPool``):
requests to the handler pool (``requests``), notifications to the single ordered notification
thread. Methods and params are opaque here: what the protocol spoken over JSON-RPC adds (progress,
cancellation, ping, trace context) is the session's ``rules`` (``rules.RPCRules``).

Locking: one lock (``_lock``) guards the pending table and the closed state; nothing is sent,
joined or called while holding it. Completion of a round is owned by whoever pops its id (the
reader on a reply, a canceller or the timer on cancel/timeout, the closer on shutdown), always
after releasing the lock, so no round is completed twice.

Threads (``mcpclient-<n>-<role>[-<k>]``): ``reader``, ``timer``, ``sender``, ``notify``,
``handler-<k>`` (server requests), ``worker-<k>`` (the next step of calls nobody waits on), plus
the pools features ask for with ``worker_pool()``; ``close()`` stops them all within one deadline.
"""
from __future__ import annotations

import itertools
import logging
import threading
from contextlib import nullcontext
from functools import partial
from _thread import get_ident as _get_ident
from time import monotonic as _monotonic
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Dict, FrozenSet, List, Optional, Set, Tuple

from .._util.threads import WorkerPool, join_all, next_instance
from .timer import DeadlineTimer
from .._util.ids import reply_id
from .._util.wire import format_message, should_log, wire_log
from ..errors import (
    ClientClosedError, ConnectionClosed, MCPError, ReaderThreadError, RequestCancelled,
    RequestTimeout, SendTimeout, UnsendableMessage,
)
from .abandoned import NOT_ABANDONED, AbandonedRequests
from .deadline import NEVER, Deadline
from .futures import CallFuture, ProgressCallback, Transform
from .server_requests import RequestHandler, ServerRequests
from .hooks import CallTracer
from .reader import NotificationHandler, Reader
from .rules import RPCRules
from ..transports.base import CLOSE_BUDGET, LATE_ANSWER, Transport

if TYPE_CHECKING:
    from .futures import Prepare

__all__ = ["CANCEL_GRACE", "HANDLER_GRACE", "Session"]

log = logging.getLogger("mcpclient.session")

_INF = float("inf")
HANDLER_GRACE = 1.0  # seconds close() waits for running request handlers / callbacks to return
CANCEL_GRACE = 1.0  # seconds a close waits for what cancellations decided before it still need (drain)
#: Seconds a notification or an answer to the server may take to send (it has no call deadline).
SEND_BUDGET = 10.0
_LOSS_WAIT = 0.5  # after a send found the pipe broken, how long to wait for the reader to see the end
_NO_RESULT = object()
_NOTHING: ContextManager[None] = nullcontext()  # (reusable: it holds no state)


def _run_step(call: CallFuture, payload: Any) -> None:
    call.run_step(payload)


def _dropped(call: CallFuture, payload: Any) -> None:
    """A call's step that close() dropped from the worker queue: fail the call."""
    call.fail(ClientClosedError(f"{call.method} abandoned: the client was closed"))


class Session:
    """JSON-RPC over one transport. Thread-safe: any thread may start, wait on or cancel calls.

    Args:
        transport: an unstarted ``Transport``; ``start()`` starts it.
        rules: what the protocol spoken over JSON-RPC adds to it (``protocol.rpc_rules.MCPRules``).
        on_request: ``(method, params) -> result`` for server-initiated requests; runs on a
            handler thread; raise ``RPCError`` to answer with that error (``self.requests``).
        on_notification: ``(method, params)`` for server notifications; runs on the single,
            ordered notification thread (``self.reader``).
        on_notification_read: ``(method, params)``, on the reader thread as soon as a
            notification is read (see ``Reader``); it must never block or run user code.
        max_workers: threads for server requests, and for the next step of calls nobody waits on.
        max_queued: how many server messages may wait per pool before new ones are refused
            (requests get a JSON-RPC error, notifications are dropped and counted).
    """

    def __init__(self, transport: Transport, *, rules: RPCRules, on_request: Optional[RequestHandler] = None,
                 on_notification: Optional[NotificationHandler] = None,
                 on_notification_read: Optional[NotificationHandler] = None, max_workers: int = 4,
                 max_queued: int = 1000) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.transport = transport
        self._rules = rules
        #: ``(error)`` once, on the reader thread, when the connection ends (not after ``close()``): first
        self.on_lost: Optional[Callable[[BaseException], None]] = None
        #: ``()`` per server session the transport renewed (``session_renewed``); must not block.
        self.on_session_renewed: Optional[Callable[[], None]] = None
        self.tracer: Optional[CallTracer] = None  # traces each request (the client sets it at connect)
        self.instance = transport.info.instance or next_instance()
        self._prefix = prefix = f"mcpclient-{self.instance}"
        self._handlers = WorkerPool(f"{prefix}-handler", max_workers, max_queued)
        self._notifier = WorkerPool(f"{prefix}-notify", 1, max_queued)
        self._sender = WorkerPool(f"{prefix}-sender", 1, 1024)  # writes for threads that must not block
        self._workers = WorkerPool(f"{prefix}-worker", max_workers, -1, on_drop=_dropped)
        #: the server's requests: ``on_request``, ``on_request_read``, ``reply()``
        self.requests = ServerRequests(self._handlers, self._post, self._send_quietly, rules.answer_at_once,
                                       on_request=on_request)
        self._extra: List[WorkerPool] = []  # pools features asked for (worker_pool()), stopped with the rest
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: Dict[int, CallFuture] = {}
        self._deferred: Dict[int, Tuple[CallFuture, Dict[str, Any]]] = {}  # answered, queued behind progress
        self._abandoned = AbandonedRequests()  # ids of calls given up on, and what their late replies are for
        self._closed_error: Optional[Callable[[], MCPError]] = None
        self._closing = False
        self._closer: Optional[int] = None
        self._closed = threading.Event()
        self._io_idents: Set[int] = set()  # reader and timer: a blocking call there would deadlock
        #: the reader thread: what it reads and where each message goes
        self.reader = Reader(transport, self, self.requests, rules, self._notifier, name=f"{prefix}-reader",
                             io_idents=self._io_idents, on_notification=on_notification,
                             on_notification_read=on_notification_read)
        self._timer = DeadlineTimer(f"{prefix}-timer", self.expire, self._io_idents)
        self.late_replies = 0  # replies to calls that had timed out or been cancelled
        #: The extension ids this client declared (``replies.outcome``); set by whoever makes the session.
        self.declared_extensions: FrozenSet[str] = frozenset()
        self.exchanges = False  # the transport left a round's exchange to a caller (HTTP): see CallHost
        self.unknown_replies = 0
        self.dropped_sends = 0  # cancellations/answers that could not be queued for sending

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the transport and the reader thread (``ClientClosedError`` if closed meanwhile)."""
        self._check_open()
        self.transport.start()
        with self._lock:
            if not self._closing:
                self.reader.start()
                return
        self.transport.close()  # close() ran while the transport was starting: undo the start
        raise ClientClosedError("the client was closed while connecting")

    @property
    def is_closed(self) -> bool:
        return self._closed_error is not None

    def after_notifications(self, label: str, fn: Callable[..., Any], *args: Any) -> bool:
        """Run ``fn(*args)`` on the notification thread after the notifications queued there
        (False if the queue is full or the session closing)."""
        return self._notifier.try_submit(label, fn, *args)

    def worker_pool(self, role: str, workers: int, queue: int = -1) -> WorkerPool:
        """A pool of ``workers`` threads (``mcpclient-<n>-<role>[-<k>]``) that ``close()`` stops."""
        pool = WorkerPool(f"{self._prefix}-{role}", workers, queue)
        with self._lock:
            if self._closing:
                pool.shutdown(_monotonic())  # refuses work from the start
            self._extra.append(pool)
        return pool

    def close(self, deadline: Optional[float] = None, error: Optional[Callable[[], MCPError]] = None) -> None:
        """Refuse new calls, fail pending ones, close the transport, stop every thread.

        Idempotent and callable from any thread, a callback or handler included; returns by
        ``deadline`` (monotonic; default ``CLOSE_BUDGET`` s from now), of which running handlers
        and callbacks get at most ``HANDLER_GRACE`` s. A second caller waits for the first to
        finish (unless it is one of the threads the first is joining, or the first itself,
        re-entering from a callback). ``error`` makes the errors pending and later calls get
        (the connection was found dead: a failed keepalive); default ``ClientClosedError``.
        """
        if deadline is None:
            deadline = _monotonic() + CLOSE_BUDGET
        with self._lock:
            already = self._closing
            if not already:
                self._closing = self.requests.closing = True
                self._closer = _get_ident()
                # (a connection lost first keeps its error: a call racing with this close says so)
                self._closed_error = error or self._closed_error or (lambda: ClientClosedError("the client is closed"))
                pending, self._pending = self._pending, {}
                deferred, self._deferred = self._deferred, {}
        if already:
            if self._closer != _get_ident() and not self._owns_current_thread():
                self._closed.wait(max(0.0, deadline - _monotonic()))
            return
        self._fail_all(pending, lambda call: error() if error is not None else
                       ClientClosedError(f"{call.method} abandoned: the client was closed"))
        for call, msg in deferred.values():  # answered already: deliver the answer
            call.deliver(msg)
        try:
            self.transport.close(deadline)
        finally:
            self._timer.stop()
            join_all([t for t in (self.reader.thread, self._timer.thread) if t is not None], deadline)
            self._sender.shutdown(deadline)
            # User code gets a short grace; one that ignores close() finishes on its own (daemons).
            grace = min(deadline, _monotonic() + HANDLER_GRACE)
            with self._lock:
                extra = list(self._extra)
            for pool in [self._handlers, self._notifier, self._workers] + extra:
                pool.shutdown(grace)
            self._closed.set()

    def _owns_current_thread(self) -> bool:
        ident = _get_ident()
        pools = [self._handlers, self._notifier, self._sender, self._workers] + self._extra
        return ident in self._io_idents or any(ident in pool.idents for pool in pools)

    def threads(self) -> List[threading.Thread]:
        """Every thread this session started that may still be alive (for tests and diagnostics)."""
        found = [t for t in (self.reader.thread, self._timer.thread) if t is not None]
        for pool in [self._handlers, self._notifier, self._sender, self._workers] + self._extra:
            found += pool.threads()
        return found

    # --- outgoing -------------------------------------------------------------------------------

    def _check_open(self) -> None:
        factory = self._closed_error
        if factory is not None:
            raise factory()

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, *, deadline: Deadline = NEVER,
             transform: Optional[Transform] = None,
             on_progress: Optional[ProgressCallback] = None, prepare: Optional[Prepare] = None,
             headers: Optional[Dict[str, str]] = None, idempotent: Optional[bool] = False, setup: bool = False,
             cancellable: bool = True, known: Any = _NO_RESULT,
             on_late: Optional[Callable[[Dict[str, Any]], Any]] = None) -> CallFuture:
        """Send a request; return its ``CallFuture`` (the one way to send a request).

        ``deadline`` is the call's time limit, made by whoever the call is for (a ``Deadline``
        that resets is moved by the call's progress notifications); it also bounds sending. On
        expiry (the timer's ``expire``) the request is cancelled on the server and ``RequestTimeout``
        raised. ``transform`` turns each raw result into the value (or ``NextRound`` for another
        round), on the thread waiting in ``result()`` or else a worker.
        ``prepare`` adds what each further round needs (2026: ``_meta``); ``headers``,
        ``idempotent`` and ``setup`` are passed to the transport; a call that is not
        ``cancellable`` is never cancelled on the server (``initialize``). ``known``: a raw
        result already at hand (a cache hit), so the first round is not sent. ``on_late(reply)``
        (a worker) gets the answer that comes after the call gave up (what the request
        made may need undoing: a task); the transport waits ``LATE_ANSWER`` s longer for it, and
        ``drain`` for it before a close.
        """
        call: CallFuture[Any] = CallFuture(self, method, transform)
        if deadline is not NEVER:
            call.deadline = deadline
        announced = call.announce_waiter()  # (then that caller's wait keeps the deadline: ``unwatched``)
        if on_progress is not None:
            call.on_progress = on_progress
            # (on the notification thread, never behind its progress callbacks: queued behind this one)
            call.may_defer = _get_ident() not in self._notifier.idents
        if idempotent is not False:  # tools/call: None (unknown)
            call.idempotent = idempotent
        if on_late is not None:
            call.on_late = on_late
        if prepare is not None or headers is not None or setup or not cancellable:
            call.prepare, call.headers, call.setup, call.cancellable = prepare, headers, setup, cancellable
        tracer = self.tracer
        if tracer is not None:  # (tracing off: this one test is all it costs)
            call.trace = tracer.start(method, params)
        # Else the timer keeps it, from before the send; one met before the round was pending: see _send_round.
        at = deadline.at
        if at != _INF and not announced:
            self._timer.watch(call, at)
        try:
            if known is not _NO_RESULT:
                call.start(known)
            else:
                self._send_round(call, params, headers)
        except BaseException as exc:  # not sent: its span ends here (else the call ends it when done)
            if call.trace is not None:
                call.trace.end(None, exc, call.request_id)
            raise
        return call

    def resend(self, call: CallFuture, params: Optional[Dict[str, Any]]) -> None:
        """Send the next round of ``call`` (same method, new id) with ``params``, within the
        call's one deadline."""
        if call.deadline.passed():
            raise RequestTimeout(f"{call.method} ran out of time after {_monotonic() - call.deadline.started:.3g} s "
                                 "(between rounds)", method=call.method, request_id=call.request_id)
        headers = call.headers
        if call.prepare is not None:
            params, headers = call.prepare(call.method, params)
        self._send_round(call, params, headers)  # (one deadline, kept since call(): timer or waiting caller)

    def _send_round(self, call: CallFuture, params: Optional[Dict[str, Any]],
                    headers: Optional[Dict[str, str]]) -> None:
        rid = next(self._ids)
        call.request_id = rid
        if call.progress_queued:
            call.progress_queued = False
        method = call.method
        if call.on_progress is not None or call.deadline.resets or call.trace is not None:
            params = self._rules.decorate(params, rid, call)  # (progress and trace context)
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        with self._lock:
            if self._closed_error is not None:
                raise self._closed_error()
            self._pending[rid] = call
        deadline = call.deadline.at
        if call.on_late is not None and deadline != _INF:
            deadline += LATE_ANSWER  # (the timer still ends the call at its deadline)
        if wire_log.isEnabledFor(logging.DEBUG):
            wire_log.debug("-> %s", format_message(message))
        try:
            here = self.transport.send(message, deadline=None if deadline == _INF else deadline, headers=headers,
                                       idempotent=call.idempotent, setup=call.setup)
        except BaseException as exc:  # not sent (closed, broken pipe, unencodable params): forget it
            if not isinstance(exc, Exception):
                # Interrupted (Ctrl-C) while the transport sent it: it may be running, so it is
                # cancelled as an interrupted wait is.
                self.abandon(rid, "interrupted")
                raise
            with self._lock:
                self._pending.pop(rid, None)
                closing = self._closing
            if closing and isinstance(exc, MCPError):  # close() raced with this call: say why it closed
                factory = self._closed_error
                error = factory() if factory is not None else None
                if error is None or isinstance(error, ClientClosedError):  # (else: the connection was lost)
                    error = ClientClosedError(f"{method}: the client was closed")
                raise error from exc
            if isinstance(exc, SendTimeout):
                raise RequestTimeout(f"{method} (id {rid}) could not be sent in time: {exc}",
                                     method=method, request_id=rid) from exc
            reader = self.reader.thread
            if isinstance(exc, ConnectionClosed) and reader is not None and reader.ident != _get_ident() \
                    and not self.transport.info.remote:
                # The pipe broke: the reader meets the end of the stream next. Wait (briefly) for
                # it, so the caller's next call finds the connection known lost (reconnect).
                reader.join(_LOSS_WAIT)
            raise
        if here is not None:
            self.exchanges = True
            call.keep_exchange(here)
        if call.deadline.at <= _monotonic():  # (read now: progress may have moved it)
            self.expire(call)  # the timer may have met it before it was pending (each round ends once)

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None, *, setup: bool = False) -> None:
        """Send a notification (fire and forget; raises if the connection is gone)."""
        self._check_open()
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message, setup=setup)

    def _send(self, message: Dict[str, Any], *, setup: bool = False) -> None:
        """Send a notification or an answer, within ``SEND_BUDGET`` (a server that stopped reading,
        or an HTTP server that never answers the POST, must not hold the sender for ever)."""
        if wire_log.isEnabledFor(logging.DEBUG):
            wire_log.debug("-> %s", format_message(message))
        self.transport.send(message, setup=setup, deadline=_monotonic() + SEND_BUDGET)

    def _post(self, message: Dict[str, Any]) -> None:
        """Send from a thread that must not block (reader, timer, a canceller): via the sender pool."""
        if not self._sender.try_submit("send", self._send_quietly, message):
            self.dropped_sends += 1
            if should_log(self.dropped_sends):
                log.warning("could not queue %s for sending (%d dropped so far)",
                            message.get("method", "an answer"), self.dropped_sends)

    def _send_quietly(self, message: Dict[str, Any]) -> None:
        try:
            self._send(message)
        except UnsendableMessage as exc:
            if "method" in message or "result" not in message:
                log.debug("could not send %s: %s", message.get("method", "response"), exc)
                return
            # A handler's answer JSON cannot encode: the server still gets an answer (else it
            # waits for ever), with a fixed message; what the handler returned goes to the log only.
            log.warning("the answer to server request %r cannot be sent: %s", message.get("id"), exc)
            self._send_quietly({"jsonrpc": "2.0", "id": message.get("id"),
                                "error": {"code": -32603, "message": "client handler returned a result JSON cannot encode"}})
        except MCPError as exc:
            log.debug("could not send %s: %s", message.get("method", "response"), exc)

    def waiting_for(self, call: CallFuture, timeout: Optional[float]) -> Optional[ContextManager[None]]:
        """Around a library thread's wait for ``call`` (``CallFuture`` asks on those only:
        ``_util.threads.this_thread``): the reader and the timer are refused
        (``ReaderThreadError``: they would wait for themselves); on the notification thread, the
        call's answer is delivered now if it waits there behind progress callbacks (behind this
        very thread); on a worker thread, the worker pool grows by one meanwhile (the answer may
        need a worker, and every worker may be waiting). None: nothing to do around it."""
        if timeout is not None and timeout <= 0:
            return None
        ident = _get_ident()
        if ident in self._io_idents:
            self.check_not_reader(call.method)
        if ident in self._notifier.idents:
            self.release_held(call)
        if ident in self._workers.idents:
            return self._workers.waiting()
        return None

    def worker_waits(self) -> ContextManager[None]:
        """Around a wait that is not for a call (another thread's job): on a worker thread, the
        pool grows by one meanwhile, as it does while a worker waits for a call."""
        return self._workers.waiting() if _get_ident() in self._workers.idents else _NOTHING

    def release_held(self, call: CallFuture) -> None:
        """A thread of the notification pool waits for ``call``: from now on its answer (and, for
        a chain, those of its links) is never held back behind its progress callbacks, queued
        behind that very thread; what is held back already is delivered now."""
        with self._lock:
            call.undefer()
            held = [rid for rid, (waiting, _) in self._deferred.items() if not waiting.may_defer]
        for rid in held:
            self._finish_deferred(rid)

    def check_not_reader(self, method: str) -> None:
        """Raise ``ReaderThreadError`` on the reader or timer thread (a blocking call would deadlock)."""
        if _get_ident() in self._io_idents:
            raise ReaderThreadError(
                f"{method} would block the connection's {threading.current_thread().name} thread "
                "(in a future's done-callback?); call it from another thread")

    # --- results, timeouts and cancellation -------------------------------------------------------

    def continue_call(self, call: CallFuture, payload: Any) -> bool:
        """Hand the next step of a call nobody waits on to a worker: ``call.run_step(payload)``
        (False once the session is closing; queued steps that close() drops fail their call)."""
        return self._workers.try_submit(f"result of {call.method}", _run_step, call, payload)

    def answered_here(self, reply: Dict[str, Any]) -> None:
        """A reply read on a waiting caller's thread (``Transport.send``): dispatched there, as
        the reader would."""
        if wire_log.isEnabledFor(logging.DEBUG):
            wire_log.debug("<- %s", format_message(reply))
        self.complete(reply)

    def on_worker(self, label: str, fn: Callable[..., Any], *args: Any) -> bool:
        """Run ``fn(*args)`` on a worker thread (False once the session is closing)."""
        return self._workers.try_submit(label, fn, *args)

    def abandon(self, rid: Any, reason: str) -> bool:
        """Pop a pending round and tell the server to stop; False if it was no longer pending
        (then whoever popped it delivers its outcome)."""
        with self._lock:
            call = self._pending.pop(rid, None)
            if call is None:
                return False
            self._abandoned.add(rid, call.on_late)
        if call.cancellable and not self.transport.cancel_request(rid):
            message = self._rules.cancel_message(rid, reason)
            if message is not None:
                self._post(message)
        return True

    def watch(self, call: CallFuture) -> None:
        """Have the timer end ``call`` at its deadline (``expire``), waited on or not."""
        self._timer.watch(call)

    def expire(self, call: CallFuture) -> None:
        """The deadline of ``call`` passed (the timer thread, or ``call()`` right after sending)."""
        rid = call.request_id
        if rid is None:  # a future that waits for something other than a reply
            call.expired()
        elif self._pending.get(rid) is call and self.abandon(rid, "timed out"):
            waited = _monotonic() - call.deadline.started
            call.deliver(None, RequestTimeout(
                f"{call.method} (id {rid}) got no answer in {waited:.3g} s"
                + ("; cancelled it on the server" if call.cancellable else ""),
                method=call.method, request_id=rid))
        else:  # answered in time, but still queued behind slow progress callbacks: deliver it now
            self._finish_deferred(rid)

    def is_pending(self, rid: Any) -> bool:
        """Whether a request of ours with id ``rid`` awaits its answer."""
        return rid in self._pending

    def forget(self, rid: int) -> bool:
        """The server ended request ``rid`` without answering (a listen it cancelled): finish its
        future as cancelled, send nothing. False if it was no longer pending."""
        with self._lock:
            call = self._pending.pop(rid, None)
            if call is None:
                return False
            self._abandoned.add(rid, None)
        call.deliver(None, RequestCancelled(f"{call.method} (id {rid}) was ended by the server"))
        return True

    # --- what the reader hands over (ReaderHost, InFlight: on the reader thread) ------------------

    def complete(self, msg: Dict[str, Any]) -> None:
        """A reply: pop its call and deliver it, behind the call's queued progress callbacks if
        it has some (so a caller never returns before its own progress), else as a late or an
        unknown reply."""
        rid: Any = msg.get("id")
        call: Optional[CallFuture] = None
        defer = False
        if type(rid) is not int and (named := reply_id(rid)) is not None:
            rid = named  # (11.0 names request 11: _util.ids)
        if type(rid) is int:
            with self._lock:  # decided once, here: waiting_for() clears may_defer under this lock
                call = self._pending.pop(rid, None)
                if call is not None and call.progress_queued and call.may_defer:
                    defer = True
                    self._deferred[rid] = (call, msg)
        if call is None:
            self._unmatched(rid, msg)
        elif not defer:
            call.deliver(msg)
        elif not self._notifier.try_submit("call completion", self._finish_deferred, rid):
            self._finish_deferred(rid)

    def _finish_deferred(self, rid: int) -> None:
        with self._lock:
            entry = self._deferred.pop(rid, None)
        if entry is not None:  # else it was delivered already (close, or its deadline)
            entry[0].deliver(entry[1])

    def _unmatched(self, rid: Any, msg: Dict[str, Any]) -> None:
        with self._lock:
            on_late = self._abandoned.take(rid)
            late = self._closing or on_late is not NOT_ABANDONED
        if late:
            self.late_replies += 1
            log.debug("dropped a late reply to abandoned request %s", rid)
            if callable(on_late) and not self._workers.try_submit("late reply", self._abandoned.run, on_late, msg):
                self._abandoned.ran()  # (on a worker: never the reader; none left: closing)
        elif rid is None and "error" in msg:
            log.warning("server reported an error not tied to a request: %.300s", format_message(msg["error"], 300))
        else:
            self.unknown_replies += 1
            if should_log(self.unknown_replies):
                log.warning("dropped a reply to unknown request id %.50r (%d so far)", rid, self.unknown_replies)

    def session_renewed(self) -> None:
        """``on_session_renewed``, on the notification thread (the reader reads on meanwhile):
        what lived in the old server session is set up again."""
        hook = self.on_session_renewed
        if hook is not None and not self._notifier.try_submit("session renewal", hook):
            log.warning("the notification queue is full: the renewed session's subscriptions were not set up again")

    def fail(self, request_id: Any, error: BaseException) -> None:
        """The transport could not deliver the reply to ``request_id``: its round ends with ``error``."""
        with self._lock:
            call = self._pending.pop(request_id, None) if type(request_id) is int else None
        if call is not None:
            call.deliver(None, error)
        else:
            log.debug("delivery failure for a request no longer pending (%r): %s", request_id, error)

    def progressed(self, request_id: Any, progress: Any, total: Any, message: Any) -> Optional[Callable[[], object]]:
        """Our request ``request_id`` made progress: its deadline moves (if it resets); its
        ``on_progress``, returned, runs with the notification (its answer then waits behind it)."""
        call = self._pending.get(request_id) if type(request_id) is int else None  # dict.get is atomic
        if call is None:
            return None
        call.deadline.progressed()
        if call.on_progress is None:
            return None
        call.progress_queued = call.may_defer
        return partial(call.on_progress, progress, total, message)

    def server_cancelled(self, request_id: Any) -> None:
        """The server cancelled its request ``request_id``: its answer is never sent."""
        self.requests.cancelled(request_id)

    def connection_lost(self, error: Callable[[], MCPError], reason: BaseException) -> None:
        """The reader's stream ended: ``on_lost``, then every pending call fails at once, each
        with its own ``error()`` (caused by ``reason``); later calls get one too."""
        with self._lock:
            if self._closed_error is None:
                self._closed_error = error
            pending, self._pending = self._pending, {}
        if pending and not self._closing:
            log.warning("connection lost with %d calls pending: %s", len(pending), reason)
        if self.on_lost is not None:  # first: a caller woken below finds the connection known lost
            try:
                self.on_lost(error())
            except BaseException:  # the pending calls below must fail all the same
                log.exception("on_lost callback failed")
        self._fail_all(pending, lambda call: error(), reason)

    def _fail_all(self, pending: Dict[int, CallFuture], error_for: Callable[[CallFuture], BaseException],
                  cause: Optional[BaseException] = None) -> None:
        """Fail calls taken from the pending table, each cancelled in the transport first (so an
        exchange its caller has yet to run is never sent), with ``error_for(call)`` from ``cause``."""
        for rid, call in pending.items():
            self.transport.cancel_request(rid)
            exc = error_for(call)
            if cause is not None:
                exc.__cause__ = cause
            call.deliver(None, exc)

    # --- closing -------------------------------------------------------------------------------

    def drain(self, deadline: float) -> None:
        """Before the client closes: give the cancellations decided already what they still
        need, until ``deadline`` (monotonic): the late answers of calls given up with an
        ``on_late`` (they may name what those calls made: a task to cancel), those handlers,
        and the queued sends (the cancellations). Returns at once if none is due."""
        self._abandoned.wait(deadline, lambda: self._closing)
        self._sender.flush(deadline)
