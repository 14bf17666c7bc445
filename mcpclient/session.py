"""The JSON-RPC engine: ids, the pending table, the reader thread, dispatch, timeouts, cancellation.

One ``Session`` per connection. The reader thread is the only caller of ``transport.receive()``;
it completes the future of each response by id and hands every server-initiated message to a
bounded lane (``_threads.Lane``), so it never runs user code and never blocks on anything but the
transport. Methods and params are opaque here: MCP meaning lives in ``client.py``.

Locking: one lock (``_lock``) guards the pending table and the closed state. Completion of a
future is owned by whoever pops its id (the reader on a reply, a canceller on cancel/timeout, the
closer on shutdown), always after releasing the lock, so no future is completed twice.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import math
import threading
import time
import weakref
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._wire import format_message, wire_log
from ._threads import Lane, next_instance, start_thread
from .errors import (
    ClientClosedError, ConnectionClosed, MCPError, MethodNotFound, ProcessExited, ProtocolError,
    ReaderThreadError, RequestTimeout, RPCError,
)
from .transports.base import Transport

__all__ = ["CallFuture", "Session"]

log = logging.getLogger("mcpclient.session")

ProgressCallback = Callable[[float, Optional[float], Optional[str]], Any]
RequestHandler = Callable[[str, Dict[str, Any]], Any]
NotificationHandler = Callable[[str, Dict[str, Any]], Any]

_INF = math.inf
_ABANDONED_MEMORY = 10_000  # how many timed-out/cancelled ids we remember to recognise late replies


class CallFuture(Future):
    """The future of one request. ``cancel()`` also tells the server (``notifications/cancelled``).

    Done-callbacks run on the thread that completes the future — usually the connection's reader
    thread, which must not block: hand real work to another thread.
    """

    def __init__(self, session: "Session", request_id: int, method: str, timeout: Optional[float],
                 reset_on_progress: bool, max_total: Optional[float]) -> None:
        super().__init__()
        self.request_id = request_id
        self.method = method
        self._session = session
        self._timeout = timeout
        self._reset_on_progress = reset_on_progress
        self._started = self.last_activity = time.monotonic()
        self._hard = self._started + max_total if max_total is not None else _INF

    def deadline(self) -> float:
        """Monotonic time at which this call times out (``inf`` for never)."""
        if self._timeout is None:
            return self._hard
        base = self.last_activity if self._reset_on_progress else self._started
        return min(base + self._timeout, self._hard)

    def cancel(self) -> bool:
        if not self._session._abandon(self.request_id, "cancelled by the client"):
            return self.cancelled()  # already answered (or being answered): too late to cancel
        return super().cancel()


class _Pending:
    __slots__ = ("future", "transform", "on_progress")

    def __init__(self, future: CallFuture, transform: Optional[Callable[[Any], Any]],
                 on_progress: Optional[ProgressCallback]) -> None:
        self.future = future
        self.transform = transform
        self.on_progress = on_progress


def _live(ref: "weakref.ref[CallFuture]") -> Optional[CallFuture]:
    """The referenced future if it still exists and is not finished."""
    fut = ref()
    return None if fut is None or fut.done() else fut


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
        self.instance = transport.instance or next_instance()
        prefix = f"mcpclient-{self.instance}"
        self._handlers = Lane(f"{prefix}-handler", max_workers, max_queued)
        self._notifier = Lane(f"{prefix}-notify", 1, max_queued)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: Dict[int, _Pending] = {}
        self._abandoned: Dict[int, None] = {}
        self._cancelled_incoming: Dict[Any, None] = {}
        self._closed_error: Optional[Callable[[], MCPError]] = None
        self._closing = False
        self._closed = threading.Event()
        self._reader: Optional[threading.Thread] = None
        self._reader_ident: Optional[int] = None
        self._timer: Optional[threading.Thread] = None
        self._timer_cond = threading.Condition()
        self._timer_heap: List[Tuple[float, int, "weakref.ref[CallFuture]"]] = []
        self.late_replies = 0
        self.unknown_replies = 0

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the transport and the reader thread."""
        self.transport.start()
        self._reader = start_thread(self._read_loop, f"mcpclient-{self.instance}-reader")

    @property
    def is_closed(self) -> bool:
        return self._closed_error is not None

    @property
    def dropped_notifications(self) -> int:
        return self._notifier.rejected

    def close(self, timeout: float = 5.0) -> None:
        """Refuse new calls, fail pending ones, close the transport, stop every thread. Idempotent."""
        with self._lock:
            already = self._closing
            self._closing = True
            if not already:
                self._closed_error = lambda: ClientClosedError("the client is closed")
                pending, self._pending = self._pending, {}
        if already:
            if threading.current_thread() is not self._reader:
                self._closed.wait(timeout)
            return
        for p in pending.values():
            p.future.set_exception(ClientClosedError(f"{p.future.method} abandoned: the client was closed"))
        try:
            self.transport.close()
        finally:
            me = threading.current_thread()
            if self._reader is not None and self._reader is not me:
                self._reader.join(timeout)
            with self._timer_cond:
                self._timer_cond.notify()
            if self._timer is not None and self._timer is not me:
                self._timer.join(timeout)
            self._handlers.shutdown(timeout)
            self._notifier.shutdown(timeout)
            self._closed.set()

    def threads(self) -> List[threading.Thread]:
        """Every thread this session started that may still be alive (for tests and diagnostics)."""
        found = [t for t in (self._reader, self._timer) if t is not None]
        return found + self._handlers.threads() + self._notifier.threads()

    # --- outgoing -------------------------------------------------------------------------------

    def _check_open(self) -> None:
        factory = self._closed_error
        if factory is not None:
            raise factory()

    def start_request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                      timeout: Optional[float] = None, on_progress: Optional[ProgressCallback] = None,
                      reset_timeout_on_progress: bool = False, max_total_timeout: Optional[float] = None,
                      transform: Optional[Callable[[Any], Any]] = None, watch: bool = True) -> CallFuture:
        """Send a request and return its future at once.

        ``transform`` turns the raw result into the future's value (it runs on the reader thread).
        With ``watch`` the timeout is enforced by a timer thread even if nobody waits; the blocking
        ``request()`` enforces it itself and passes ``watch=False``.
        """
        self._check_open()
        rid = next(self._ids)
        fut = CallFuture(self, rid, method, timeout, reset_timeout_on_progress, max_total_timeout)
        if on_progress is not None or reset_timeout_on_progress:
            params = dict(params or {})
            meta = dict(params.get("_meta") or {})
            meta["progressToken"] = rid
            params["_meta"] = meta
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        with self._lock:
            self._check_open()
            self._pending[rid] = _Pending(fut, transform, on_progress)
        try:
            self._send(message)
        except MCPError:
            with self._lock:
                self._pending.pop(rid, None)
            raise
        if watch and fut.deadline() != _INF:
            self._watch(fut)
        return fut

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                timeout: Optional[float] = None, **options: Any) -> Any:
        """Send a request and block until its result (or a typed error). See ``start_request``."""
        self.check_not_reader(method)
        return self.wait(self.start_request(method, params, timeout=timeout, watch=False, **options))

    def wait(self, fut: CallFuture) -> Any:
        """Block until ``fut`` completes or its deadline passes (then cancel it on the server)."""
        self.check_not_reader(fut.method)
        while True:
            deadline = fut.deadline()
            if deadline == _INF:
                return fut.result()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._expire(fut)
                return fut.result()
            try:
                return fut.result(remaining)
            except FutureTimeout:
                if fut.done():  # the future's own error (RequestTimeout is a TimeoutError too)
                    raise
                # else: progress may have moved the deadline; loop and re-check

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        """Send a notification (fire and forget; raises if the connection is gone)."""
        self._check_open()
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def _send(self, message: Dict[str, Any]) -> None:
        if wire_log.isEnabledFor(logging.DEBUG):
            wire_log.debug("-> %s", format_message(message))
        self.transport.send(message)

    def check_not_reader(self, method: str) -> None:
        """Raise ``ReaderThreadError`` when called on the reader thread (a blocking call would deadlock)."""
        if threading.get_ident() == self._reader_ident:
            raise ReaderThreadError(
                f"{method} would block the connection's reader thread (a future done-callback?); "
                "call it from another thread")

    def _send_quietly(self, message: Dict[str, Any]) -> None:
        try:
            self._send(message)
        except MCPError as exc:
            log.debug("could not send %s: %s", message.get("method", "response"), exc)

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
        if p.future.method != "initialize":  # the spec forbids cancelling initialize
            self._send_quietly({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": rid, "reason": reason}})
        return True

    def _expire(self, fut: CallFuture) -> None:
        if self._abandon(fut.request_id, "timed out"):
            waited = time.monotonic() - fut._started
            fut.set_exception(RequestTimeout(
                f"{fut.method} (id {fut.request_id}) got no answer in {waited:.3g} s; "
                "cancelled it on the server"))

    def _watch(self, fut: CallFuture) -> None:
        # The heap holds weak references: a finished future nobody keeps is freed at once, and
        # finished entries are swept when they outnumber the live ones.
        with self._timer_cond:
            heap = self._timer_heap
            if len(heap) > 1024 and len(heap) > 2 * len(self._pending):
                heap[:] = [e for e in heap if _live(e[2]) is not None]
                heapq.heapify(heap)
            wake = not heap or fut.deadline() < heap[0][0]
            heapq.heappush(heap, (fut.deadline(), fut.request_id, weakref.ref(fut)))
            if self._timer is None:
                self._timer = start_thread(self._timer_loop, f"mcpclient-{self.instance}-timer")
            elif wake:
                self._timer_cond.notify()

    def _timer_loop(self) -> None:
        """Expire watched futures at their deadlines (re-queueing those that progress extended)."""
        heap = self._timer_heap
        while True:
            with self._timer_cond:
                while not self._closing:
                    now = time.monotonic()
                    if heap and heap[0][0] <= now:
                        break
                    self._timer_cond.wait(heap[0][0] - now if heap else None)
                if self._closing:
                    return
                due = []
                while heap and heap[0][0] <= now:
                    entry = heapq.heappop(heap)
                    fut = _live(entry[2])
                    if fut is None:
                        continue
                    if fut.deadline() > now:  # progress moved it
                        heapq.heappush(heap, (fut.deadline(), entry[1], entry[2]))
                    else:
                        due.append(fut)
            for fut in due:
                self._expire(fut)

    # --- incoming -------------------------------------------------------------------------------

    def _read_loop(self) -> None:
        self._reader_ident = threading.get_ident()
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
                else:
                    self._dispatch(message)
        except MCPError as exc:
            reason = exc
        except Exception as exc:  # a bug here must still fail the pending calls, never hang them
            log.exception("reader thread failed")
            reason = ConnectionClosed(f"reader thread failed: {exc!r}")
        finally:
            self._connection_lost(reason)

    def _dispatch(self, msg: Any) -> None:
        try:
            if type(msg) is not dict:
                log.warning("skipped a message that is not a JSON object: %.200r", msg)
            elif "method" in msg:
                self._dispatch_incoming(msg)
            else:
                self._complete(msg)
        except Exception:
            log.exception("failed to dispatch a message; skipped: %.200r", msg)

    def _complete(self, msg: Dict[str, Any]) -> None:
        rid = msg.get("id")
        p = None
        if type(rid) is int:
            with self._lock:
                p = self._pending.pop(rid, None)
        if p is None:
            self._unmatched(rid, msg)
            return
        fut = p.future
        if "result" in msg:
            result = msg["result"]
            if p.transform is not None:
                try:
                    result = p.transform(result)
                except Exception as exc:
                    fut.set_exception(exc)
                    return
            fut.set_result(result)
        elif "error" in msg:
            fut.set_exception(RPCError.from_wire(msg["error"], fut.method))
        else:
            fut.set_exception(ProtocolError(f"reply to {fut.method} has neither result nor error"))

    def _unmatched(self, rid: Any, msg: Dict[str, Any]) -> None:
        with self._lock:
            late = type(rid) is int and self._abandoned.pop(rid, 0) is None
        if late:
            self.late_replies += 1
            log.debug("dropped a late reply to timed-out/cancelled request %s", rid)
        elif rid is None and "error" in msg:
            log.warning("server reported an error not tied to a request: %.300r", msg["error"])
        else:
            self.unknown_replies += 1
            log.warning("dropped a reply to unknown request id %.50r", rid)

    def _dispatch_incoming(self, msg: Dict[str, Any]) -> None:
        method = msg["method"]
        params = msg.get("params")
        if not isinstance(params, dict):
            params = {}
        if "id" in msg:
            rid = msg["id"]
            if not self._handlers.try_submit(f"handler for {method}", self._answer, rid, method, params):
                log.warning("refused server request %s: %d handlers busy", method, self._handlers.rejected)
                self._send_quietly(_error_response(rid, -32603, "client busy: too many concurrent requests"))
            return
        if method == "notifications/progress":
            self._progress(params)
        elif method == "notifications/cancelled":
            with self._lock:
                self._cancelled_incoming[params.get("requestId")] = None
        handler = self.on_notification
        if handler is not None and not self._notifier.try_submit(f"handler for {method}", handler, method, params):
            log.warning("dropped notification %s: the notification queue is full", method)

    def _progress(self, params: Dict[str, Any]) -> None:
        token = params.get("progressToken")
        p = self._pending.get(token) if type(token) is int else None  # dict.get is atomic
        if p is None:
            return
        p.future.last_activity = time.monotonic()
        if p.on_progress is not None:
            self._notifier.try_submit("on_progress callback", p.on_progress, params.get("progress"),
                                      params.get("total"), params.get("message"))

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
            cancelled = self._cancelled_incoming.pop(rid, 0) is None
        if not cancelled:
            self._send_quietly(response)

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
        for p in pending.values():
            exc = factory()
            exc.__cause__ = reason
            p.future.set_exception(exc)
