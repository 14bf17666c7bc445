"""The JSON-RPC engine: ids, the pending table, the reader thread, dispatch, timeouts, cancellation.

One ``Session`` per connection. The reader thread is the only caller of ``transport.receive()``;
it completes the call of each response by id (a ``CallFuture``, or for a blocking caller a plain
lock, which is cheaper) and hands every server-initiated message to a bounded lane
(``_threads.Lane``), so it never runs user code and never blocks on anything but the transport:
it does not even write (cancellations and "busy" answers go out through the sender lane).
Methods and params are opaque here: MCP meaning lives in ``client.py``.

Locking: one lock (``_lock``) guards the pending table and the closed state. Completion of a
call is owned by whoever pops its id (the reader on a reply, a canceller on cancel/timeout, the
closer on shutdown), always after releasing the lock, so no call is completed twice.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import math
import threading
import weakref
from _thread import allocate_lock as _allocate_lock
from _thread import get_ident as _get_ident
from concurrent.futures import CancelledError, Future
from time import monotonic as _monotonic
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ._threads import Lane, join_all, next_instance, start_thread
from ._wire import format_message, rarely, wire_log
from .errors import (
    ClientClosedError, ConnectionClosed, InternalError, MCPError, MethodNotFound, ProcessExited, ProtocolError,
    ReaderThreadError, RequestCancelled, RequestTimeout, RPCError, SendTimeout,
)
from .transports.base import DeliveryFailed, Transport

__all__ = ["CallFuture", "GuardedFuture", "Session"]

log = logging.getLogger("mcpclient.session")

ProgressCallback = Callable[[float, Optional[float], Optional[str]], Any]
RequestHandler = Callable[[str, Dict[str, Any]], Any]
NotificationHandler = Callable[[str, Dict[str, Any]], Any]

_INF = math.inf
_WAIT_MAX = min(threading.TIMEOUT_MAX, 365 * 86400.0)  # longer waits overflow the lock APIs
_ABANDONED_MEMORY = 10_000  # how many timed-out/cancelled ids we remember to recognise late replies
HANDLER_GRACE = 1.0  # seconds close() waits for running request handlers / callbacks to return


class GuardedFuture(Future):
    """A ``Future`` whose blocking ``result()``/``exception()`` refuse to run on the connection's
    reader or timer thread (it would wait for the very thread it blocks), and whose cancellation
    surfaces as ``RequestCancelled`` (a ``concurrent.futures.CancelledError``)."""

    def __init__(self, session: "Session", method: str) -> None:
        super().__init__()
        self.method = method
        self._session = session

    def result(self, timeout: Optional[float] = None) -> Any:
        self._guard(timeout)
        try:
            return super().result(timeout)
        except CancelledError as exc:
            raise self._cancelled_error() from exc

    def exception(self, timeout: Optional[float] = None) -> Optional[BaseException]:
        self._guard(timeout)
        try:
            return super().exception(timeout)
        except CancelledError as exc:
            raise self._cancelled_error() from exc

    def _guard(self, timeout: Optional[float]) -> None:
        if (timeout is None or timeout > 0) and not self.done():
            self._session.check_not_reader(self.method)

    def _cancelled_error(self) -> RequestCancelled:
        return RequestCancelled(f"{self.method} was cancelled")


class CallFuture(GuardedFuture):
    """The future of one request. ``cancel()`` also tells the server (``notifications/cancelled``).

    Done-callbacks run on the thread that completes the future: usually the connection's reader
    thread, for a timeout the timer thread, else the thread that cancels or closes. They must not
    block; a blocking client call there raises ``ReaderThreadError``.
    """

    def __init__(self, session: "Session", request_id: int, method: str) -> None:
        super().__init__(session, method)
        self.request_id = request_id

    def cancel(self) -> bool:
        if not self._session._abandon(self.request_id, "cancelled by the client"):
            return self.cancelled()  # already answered (or being answered): too late to cancel
        return super().cancel()

    def _cancelled_error(self) -> RequestCancelled:
        return RequestCancelled(f"{self.method} (id {self.request_id}) was cancelled")


class _Call:
    """One outstanding request: its deadline, how to turn the reply into a value, and where the
    value goes — a ``CallFuture``, or (for blocking callers, cheaper) a pre-acquired lock."""

    __slots__ = ("rid", "method", "transform", "on_progress", "progress_queued", "may_defer", "timeout",
                 "reset_on_progress", "started", "last_activity", "hard", "future", "done", "value", "error",
                 "finished", "__weakref__")

    def __init__(self, rid: int, method: str, transform: Optional[Callable[[Any], Any]],
                 on_progress: Optional[ProgressCallback], may_defer: bool, timeout: Optional[float],
                 reset_on_progress: bool, max_total: Optional[float], future: Optional[CallFuture]) -> None:
        self.rid = rid
        self.method = method
        self.transform = transform
        self.on_progress = on_progress
        self.progress_queued = False
        self.may_defer = may_defer
        self.timeout = timeout
        self.reset_on_progress = reset_on_progress
        self.started = self.last_activity = _monotonic()
        self.hard = self.started + max_total if max_total is not None else _INF
        self.future = future
        self.finished = False
        self.value: Any = None
        self.error: Optional[BaseException] = None
        if future is None:
            self.done = _allocate_lock()
            self.done.acquire()

    def deadline(self) -> float:
        """Monotonic time at which this call times out (``inf`` for never)."""
        if self.timeout is None:
            return self.hard
        base = self.last_activity if self.reset_on_progress else self.started
        return min(base + self.timeout, self.hard)

    def finish(self, value: Any, error: Optional[BaseException]) -> None:
        """Deliver the outcome; called exactly once, by whoever popped the call from the table."""
        self.finished = True
        fut = self.future
        if fut is None:
            self.value = value
            self.error = error
            self.done.release()
        elif error is None:
            fut.set_result(value)
        else:
            fut.set_exception(error)


def _live(ref: "weakref.ref[_Call]") -> Optional[_Call]:
    """The referenced call if it still exists and is not finished."""
    call = ref()
    return None if call is None or call.finished else call


def _error_response(rid: Any, code: int, message: str, data: Any = None) -> Dict[str, Any]:
    error: Dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}


class Session:
    """JSON-RPC over one transport. Thread-safe: any thread may start, wait on or cancel calls.

    Args:
        transport: a started-or-not ``Transport``; ``start()`` starts it.
        on_request: ``(method, params) -> result`` for server-initiated requests; runs on a handler
            thread; raise ``RPCError`` to answer with that error.
        on_notification: ``(method, params)`` for server notifications; runs on the single,
            ordered notification thread.
        max_workers: handler threads for server requests.
        max_queued: how many server messages may wait per lane before new ones are refused
            (requests get a JSON-RPC error, notifications are dropped and counted).
    """

    def __init__(self, transport: Transport, *, on_request: Optional[RequestHandler] = None,
                 on_notification: Optional[NotificationHandler] = None, max_workers: int = 4,
                 max_queued: int = 1000) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.transport = transport
        self.on_request = on_request
        self.on_notification = on_notification
        #: ``(rid, method, params) -> bool``, called on the reader thread before a server request
        #: is queued for a handler: True means it took the request and answers through
        #: ``reply()`` (at once or later); it must never block or run user code.
        self.on_quick_request: Optional[Callable[[Any, str, Dict[str, Any]], bool]] = None
        #: ``(error)`` once, on the reader thread, when the connection ends (not after ``close()``).
        self.on_lost: Optional[Callable[[BaseException], None]] = None
        self.instance = transport.instance or next_instance()
        prefix = f"mcpclient-{self.instance}"
        self._handlers = Lane(f"{prefix}-handler", max_workers, max_queued)
        self._notifier = Lane(f"{prefix}-notify", 1, max_queued)
        self._sender = Lane(f"{prefix}-sender", 1, 1024)  # writes for threads that must not block
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: Dict[int, _Call] = {}
        self._deferred: Dict[int, Tuple[_Call, Dict[str, Any]]] = {}  # answered, queued behind progress
        self._abandoned: Dict[int, None] = {}
        self._incoming: Dict[Any, bool] = {}  # id of each server request being handled -> cancelled?
        self._closed_error: Optional[Callable[[], MCPError]] = None
        self._closing = False
        self._closer: Optional[int] = None
        self._closed = threading.Event()
        self._reader: Optional[threading.Thread] = None
        self._io_idents: Set[int] = set()  # reader and timer: a blocking call there would deadlock
        self._timer: Optional[threading.Thread] = None
        self._timer_cond = threading.Condition()
        self._timer_heap: List[Tuple[float, int, "weakref.ref[_Call]"]] = []
        self.late_replies = 0  # replies to calls that had timed out or been cancelled
        self.skipped_messages = 0  # JSON values that are not JSON-RPC messages
        self.unknown_replies = 0
        self.dropped_sends = 0  # cancellations/answers that could not be queued for sending

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the transport and the reader thread (``ClientClosedError`` if closed meanwhile)."""
        self._check_open()
        self.transport.start()
        with self._lock:
            if not self._closing:
                self._reader = start_thread(self._read_loop, f"mcpclient-{self.instance}-reader")
                return
        self.transport.close()  # close() ran while the transport was starting: undo the start
        raise ClientClosedError("the client was closed while connecting")

    @property
    def is_closed(self) -> bool:
        return self._closed_error is not None

    @property
    def dropped_notifications(self) -> int:
        return self._notifier.rejected

    def close(self, timeout: float = 5.0) -> None:
        """Refuse new calls, fail pending ones, close the transport, stop every thread.

        Idempotent and callable from any thread, a callback or handler included; the joins share
        one ``timeout`` budget, of which running handlers and callbacks get at most
        ``HANDLER_GRACE`` seconds. A second caller waits for the first to finish (unless it is one
        of the threads the first is joining, or the first itself, re-entering from a callback).
        """
        deadline = _monotonic() + timeout
        with self._lock:
            already = self._closing
            if not already:
                self._closing = True
                self._closer = _get_ident()
                self._closed_error = lambda: ClientClosedError("the client is closed")
                pending, self._pending = self._pending, {}
                deferred, self._deferred = self._deferred, {}
        if already:
            if self._closer != _get_ident() and not self._owns_current_thread():
                self._closed.wait(timeout)
            return
        for call in pending.values():
            call.finish(None, ClientClosedError(f"{call.method} abandoned: the client was closed"))
        for entry in deferred.values():  # answered already: deliver the answer
            self._finish(*entry)
        try:
            self.transport.close()
        finally:
            with self._timer_cond:
                self._timer_cond.notify()
            join_all([t for t in (self._reader, self._timer) if t is not None], deadline)
            self._sender.shutdown(deadline)
            # User code (handlers, callbacks) gets a short grace: one that ignores close() is left
            # to finish on its own (daemon threads; whatever it answers later is dropped).
            grace = min(deadline, _monotonic() + HANDLER_GRACE)
            for lane in (self._handlers, self._notifier):
                lane.shutdown(grace)
            self._closed.set()

    def _owns_current_thread(self) -> bool:
        ident = _get_ident()
        return (ident in self._io_idents or ident in self._handlers.idents or ident in self._notifier.idents
                or ident in self._sender.idents)

    def threads(self) -> List[threading.Thread]:
        """Every thread this session started that may still be alive (for tests and diagnostics)."""
        found = [t for t in (self._reader, self._timer) if t is not None]
        return found + self._handlers.threads() + self._notifier.threads() + self._sender.threads()

    # --- outgoing -------------------------------------------------------------------------------

    def _check_open(self) -> None:
        factory = self._closed_error
        if factory is not None:
            raise factory()

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                timeout: Optional[float] = None, on_progress: Optional[ProgressCallback] = None,
                reset_timeout_on_progress: bool = False, max_total_timeout: Optional[float] = None,
                transform: Optional[Callable[[Any], Any]] = None) -> Any:
        """Send a request and block until its result (or a typed error).

        ``transform`` turns the raw result into the return value (on this thread). On timeout the
        request is cancelled on the server and ``RequestTimeout`` raised; with
        ``reset_timeout_on_progress`` each progress notification restarts the timeout, up to
        ``max_total_timeout`` seconds in all. The timeout also bounds sending.
        """
        if _get_ident() in self._io_idents:
            self.check_not_reader(method)
        call = self._send_request(method, params, None, on_progress, timeout, reset_timeout_on_progress,
                                  max_total_timeout, None, wait=True)
        done = call.done
        try:
            while True:
                remaining = call.deadline() - _monotonic()
                if remaining <= 0:
                    self._expire(call)
                    done.acquire()  # finished by _expire, or by the thread that beat it
                    break
                if done.acquire(True, min(remaining, _WAIT_MAX)):
                    break
                # else: progress may have moved the deadline; loop and re-check
        except BaseException:  # e.g. KeyboardInterrupt while waiting: stop the server's work too
            if self._abandon(call.rid, "interrupted"):
                call.finished = True
            raise
        if call.error is not None:
            raise call.error
        return call.value if transform is None else transform(call.value)

    def start_request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                      timeout: Optional[float] = None, on_progress: Optional[ProgressCallback] = None,
                      reset_timeout_on_progress: bool = False, max_total_timeout: Optional[float] = None,
                      transform: Optional[Callable[[Any], Any]] = None) -> CallFuture:
        """Send a request and return its future at once (see ``request`` for the options).

        ``transform`` runs on the thread that completes the future (usually the reader). The
        timeout is enforced by a timer thread even if nobody waits on the future.
        """
        fut = CallFuture(self, 0, method)
        call = self._send_request(method, params, transform, on_progress, timeout, reset_timeout_on_progress,
                                  max_total_timeout, fut)
        if call.deadline() != _INF:
            self._watch(call)
        return fut

    def _send_request(self, method: str, params: Optional[Dict[str, Any]], transform: Optional[Callable[[Any], Any]],
                      on_progress: Optional[ProgressCallback], timeout: Optional[float], reset: bool,
                      max_total: Optional[float], fut: Optional[CallFuture], wait: bool = False) -> _Call:
        rid = next(self._ids)
        if fut is not None:
            fut.request_id = rid
        # A call made from the notification thread must not wait for its progress callbacks:
        # they are queued behind the very callback that is waiting.
        may_defer = on_progress is not None and _get_ident() not in self._notifier.idents
        call = _Call(rid, method, transform, on_progress, may_defer, timeout, reset, max_total, fut)
        if on_progress is not None or reset:
            params = dict(params or {})
            meta = dict(params.get("_meta") or {})
            meta["progressToken"] = rid
            params["_meta"] = meta
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        with self._lock:
            if self._closed_error is not None:
                raise self._closed_error()
            self._pending[rid] = call
        remaining = call.deadline() - _monotonic()
        try:
            self._send(message, None if remaining > _WAIT_MAX else max(0.0, remaining), wait)
        except BaseException as exc:  # not sent (closed, broken pipe, unencodable params): forget it
            with self._lock:
                self._pending.pop(rid, None)
                closing = self._closing
            if closing and isinstance(exc, MCPError):  # close() raced with this call: say so
                raise ClientClosedError(f"{method}: the client was closed") from exc
            if isinstance(exc, SendTimeout):
                raise RequestTimeout(f"{method} (id {rid}) could not be sent in time: {exc}",
                                     method=method, request_id=rid) from exc
            raise
        return call

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        """Send a notification (fire and forget; raises if the connection is gone)."""
        self._check_open()
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def _send(self, message: Dict[str, Any], timeout: Optional[float] = None, wait: bool = False) -> None:
        if wire_log.isEnabledFor(logging.DEBUG):
            wire_log.debug("-> %s", format_message(message))
        self.transport.send(message, timeout, wait)

    def _post(self, message: Dict[str, Any]) -> None:
        """Send from a thread that must not block (reader, timer, a canceller): via the sender lane."""
        if not self._sender.try_submit("send", self._send_quietly, message):
            self.dropped_sends += 1
            if rarely(self.dropped_sends):
                log.warning("could not queue %s for sending (%d dropped so far)",
                            message.get("method", "an answer"), self.dropped_sends)

    def _send_quietly(self, message: Dict[str, Any]) -> None:
        try:
            self._send(message)
        except MCPError as exc:
            log.debug("could not send %s: %s", message.get("method", "response"), exc)

    def check_not_reader(self, method: str) -> None:
        """Raise ``ReaderThreadError`` on the reader or timer thread (a blocking call would deadlock)."""
        if _get_ident() in self._io_idents:
            raise ReaderThreadError(
                f"{method} would block the connection's {threading.current_thread().name} thread "
                "(in a future's done-callback?); call it from another thread")

    # --- timeouts and cancellation --------------------------------------------------------------

    def _abandon(self, rid: int, reason: str) -> bool:
        """Pop a pending call and tell the server to stop; False if it was no longer pending."""
        with self._lock:
            p = self._pending.pop(rid, None)
            if p is None:
                return False
            self._abandoned[rid] = None
            if len(self._abandoned) > _ABANDONED_MEMORY:
                del self._abandoned[next(iter(self._abandoned))]
        if p.method != "initialize" and not self.transport.cancel_request(rid):  # never cancel initialize
            self._post({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": rid, "reason": reason}})
        return True

    def _expire(self, call: _Call) -> None:
        if self._abandon(call.rid, "timed out"):
            waited = _monotonic() - call.started
            call.finish(None, RequestTimeout(
                f"{call.method} (id {call.rid}) got no answer in {waited:.3g} s; cancelled it on the server",
                method=call.method, request_id=call.rid))
        else:  # answered in time, but still queued behind slow progress callbacks: deliver it now
            self._finish_deferred(call.rid)

    def _watch(self, call: _Call) -> None:
        # The heap holds weak references: a finished future nobody keeps is freed at once, and
        # finished entries are swept when they outnumber the live ones.
        with self._timer_cond:
            heap = self._timer_heap
            if len(heap) > 1024 and len(heap) > 2 * len(self._pending):
                heap[:] = [e for e in heap if _live(e[2]) is not None]
                heapq.heapify(heap)
            deadline = call.deadline()
            wake = not heap or deadline < heap[0][0]
            heapq.heappush(heap, (deadline, call.rid, weakref.ref(call)))
            if self._timer is None:
                self._timer = start_thread(self._timer_loop, f"mcpclient-{self.instance}-timer")
            elif wake:
                self._timer_cond.notify()

    def _timer_loop(self) -> None:
        """Expire watched futures at their deadlines (re-queueing those that progress extended)."""
        self._io_idents.add(_get_ident())  # done-callbacks of expired futures run here too
        try:
            while not self._closing:
                try:
                    for call in self._due_calls():
                        self._expire(call)
                except Exception:  # the timer must outlive any surprise, or every timeout stops
                    log.exception("timer thread error")
        finally:
            self._io_idents.discard(_get_ident())

    def _due_calls(self) -> List[_Call]:
        heap = self._timer_heap
        with self._timer_cond:
            now = _monotonic()
            while not self._closing:
                now = _monotonic()
                if heap and heap[0][0] <= now:
                    break
                self._timer_cond.wait(min(heap[0][0] - now, _WAIT_MAX) if heap else None)
            due = []
            while heap and heap[0][0] <= now and not self._closing:
                entry = heapq.heappop(heap)
                call = _live(entry[2])
                if call is None:
                    continue
                if call.deadline() > now:  # progress moved it
                    heapq.heappush(heap, (call.deadline(), entry[1], entry[2]))
                else:
                    due.append(call)
            return due

    # --- incoming -------------------------------------------------------------------------------

    def _read_loop(self) -> None:
        self._io_idents.add(_get_ident())
        reason: Optional[BaseException] = None
        receive = self.transport.receive
        try:
            while True:
                message = receive()
                if message is None:
                    break
                if wire_log.isEnabledFor(logging.DEBUG):
                    wire_log.debug("<- %s", format_message(message))
                if type(message) is list:  # a batch (2025-03-26)
                    for item in message:
                        self._dispatch(item)
                elif type(message) is DeliveryFailed:
                    self._delivery_failed(message)
                else:
                    self._dispatch(message)
        except MCPError as exc:
            reason = exc
        except Exception as exc:  # a bug here must still fail the pending calls, never hang them
            log.exception("reader thread failed")
            reason = ConnectionClosed(f"reader thread failed: {exc!r}")
        finally:
            self._io_idents.discard(_get_ident())
            self._connection_lost(reason)

    def _delivery_failed(self, failure: DeliveryFailed) -> None:
        rid = failure.request_id
        with self._lock:
            call = self._pending.pop(rid, None) if type(rid) is int else None
        if call is not None:
            call.finish(None, failure.error)
        else:
            log.debug("delivery failure for a request no longer pending (%r): %s", rid, failure.error)

    def _dispatch(self, msg: Any) -> None:
        try:
            if type(msg) is not dict:
                self.skipped_messages += 1
                if rarely(self.skipped_messages):
                    log.warning("skipped a message that is not a JSON object (%d so far): %.200s",
                                self.skipped_messages, format_message(msg))
            elif "method" in msg:
                self._dispatch_incoming(msg)
            else:
                self._complete(msg)
        except Exception:
            log.exception("failed to dispatch a message; skipped: %.200s", format_message(msg))

    def _complete(self, msg: Dict[str, Any]) -> None:
        rid = msg.get("id")
        p = None
        if type(rid) is int:
            with self._lock:
                p = self._pending.pop(rid, None)
                if p is not None and p.progress_queued:
                    # Its progress callbacks are queued on the notification lane: finish the call
                    # behind them, so the caller never returns before its own progress was reported.
                    self._deferred[rid] = (p, msg)
        if p is None:
            self._unmatched(rid, msg)
        elif not p.progress_queued:
            self._finish(p, msg)
        elif not self._notifier.try_submit("call completion", self._finish_deferred, rid):
            self._finish_deferred(rid)

    def _finish_deferred(self, rid: int) -> None:
        with self._lock:
            entry = self._deferred.pop(rid, None)
        if entry is not None:  # else it was delivered already (close, or its deadline)
            self._finish(*entry)

    @staticmethod
    def _finish(call: _Call, msg: Dict[str, Any]) -> None:
        """Complete a popped call from its reply (the caller owns the pop)."""
        if "result" in msg:
            result = msg["result"]
            transform = call.transform
            if transform is not None:
                try:
                    result = transform(result)
                except Exception as exc:
                    call.finish(None, exc)
                    return
            call.finish(result, None)
        elif "error" in msg:
            error = RPCError.from_wire(msg["error"], call.method)
            error.http_status = msg.get("httpStatus")  # set by HTTP transports for a 4xx/5xx body
            call.finish(None, error)
        else:
            call.finish(None, ProtocolError(f"reply to {call.method} has neither result nor error"))

    def _unmatched(self, rid: Any, msg: Dict[str, Any]) -> None:
        with self._lock:
            late = self._closing or (type(rid) is int and self._abandoned.pop(rid, 0) is None)
        if late:
            self.late_replies += 1
            log.debug("dropped a late reply to abandoned request %s", rid)
        elif rid is None and "error" in msg:
            log.warning("server reported an error not tied to a request: %.300s", format_message(msg["error"]))
        else:
            self.unknown_replies += 1
            if rarely(self.unknown_replies):
                log.warning("dropped a reply to unknown request id %.50r (%d so far)", rid, self.unknown_replies)

    def _dispatch_incoming(self, msg: Dict[str, Any]) -> None:
        method = msg["method"]
        params = msg.get("params")
        if not isinstance(params, dict):
            params = {}
        if "id" in msg:
            rid = msg["id"]
            if type(rid) not in (int, str):
                self.skipped_messages += 1
                log.warning("skipped server request %.100r with an invalid id %.50r", method, rid)
                return
            if method == "ping":  # answered at once, never queued behind slow handlers
                self._post({"jsonrpc": "2.0", "id": rid, "result": {}})
                return
            with self._lock:
                self._incoming[rid] = False
            quick = self.on_quick_request
            if quick is not None:
                try:
                    handled = quick(rid, method, params)
                except RPCError as exc:
                    self.reply(rid, error=exc)
                    return
                except Exception:
                    log.exception("quick handler for server request %s failed", method)
                    self.reply(rid, error=InternalError(-32603, f"client handler for {method} failed"))
                    return
                if handled:
                    return  # it replies through reply(), now or later
            if not self._handlers.try_submit(f"handler for {method}", self._answer, rid, method, params):
                with self._lock:
                    self._incoming.pop(rid, None)
                if rarely(self._handlers.rejected):
                    log.warning("refused server request %.100r: all handlers busy (%d refused so far)",
                                method, self._handlers.rejected)
                self._post(_error_response(rid, -32603, "client busy: too many concurrent requests"))
            return
        if method == "notifications/progress":
            self._progress(params)
        elif method == "notifications/cancelled":
            rid = params.get("requestId")
            with self._lock:
                if type(rid) in (int, str) and rid in self._incoming:
                    self._incoming[rid] = True  # the handler runs on, but its answer is not sent
        handler = self.on_notification
        if handler is not None and not self._notifier.try_submit(f"handler for {method}", handler, method, params):
            if rarely(self._notifier.rejected):
                log.warning("dropped notification %.100r: the notification queue is full (%d dropped so far)",
                            method, self._notifier.rejected)

    def _progress(self, params: Dict[str, Any]) -> None:
        token = params.get("progressToken")
        p = self._pending.get(token) if type(token) is int else None  # dict.get is atomic
        if p is None:
            return
        p.last_activity = _monotonic()
        if p.on_progress is not None and self._notifier.try_submit(
                "on_progress callback", p.on_progress, params.get("progress"), params.get("total"),
                params.get("message")):
            p.progress_queued = p.may_defer

    def _answer(self, rid: Any, method: str, params: Dict[str, Any]) -> None:
        """Run the request handler on a handler thread and send its answer (unless cancelled)."""
        handler = self.on_request
        try:
            if handler is None:
                raise MethodNotFound(-32601, f"client does not handle {method}")
            response: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "result": handler(method, params)}
        except RPCError as exc:
            response = _error_response(rid, exc.code, exc.message, exc.data)
        except Exception:
            log.exception("handler for server request %s failed", method)
            response = _error_response(rid, -32603, f"client handler for {method} failed")
        with self._lock:
            cancelled = self._incoming.pop(rid, False)
        if not cancelled:
            self._send_quietly(response)

    def forget(self, rid: int) -> bool:
        """The server ended request ``rid`` without answering (a listen it cancelled): finish its
        future as cancelled, send nothing. False if it was no longer pending."""
        with self._lock:
            call = self._pending.pop(rid, None)
            if call is None:
                return False
            self._abandoned[rid] = None
        call.finish(None, RequestCancelled(f"{call.method} (id {rid}) was ended by the server"))
        return True

    def reply(self, rid: Any, result: Any = None, error: Optional[RPCError] = None) -> None:
        """Answer the server request ``rid`` from any thread without blocking (unless the server
        cancelled it meanwhile). For ``on_quick_request`` handlers that answer later."""
        with self._lock:
            cancelled = self._incoming.pop(rid, False)
        if cancelled or self._closing:
            return
        if error is not None:
            self._post(_error_response(rid, error.code, error.message, error.data))
        else:
            self._post({"jsonrpc": "2.0", "id": rid, "result": result})

    def _connection_lost(self, reason: Optional[BaseException]) -> None:
        """Reader ended: fail every pending call at once, each with its own error instance."""
        if reason is None:
            reason = ConnectionClosed("the server closed the connection")
        if isinstance(reason, ProcessExited):
            code, tail = reason.returncode, reason.stderr_tail
            factory: Callable[[], MCPError] = lambda: ProcessExited(code, tail)
        else:
            text, kind = str(reason), type(reason) if isinstance(reason, ConnectionClosed) else ConnectionClosed
            factory = lambda: kind(text)
        with self._lock:
            if self._closed_error is None:
                self._closed_error = factory
            pending, self._pending = self._pending, {}
        if pending and not self._closing:
            log.warning("connection lost with %d calls pending: %s", len(pending), reason)
        for call in pending.values():
            exc = factory()
            exc.__cause__ = reason
            call.finish(None, exc)
        if self.on_lost is not None:
            try:
                self.on_lost(factory())
            except Exception:
                log.exception("on_lost callback failed")
