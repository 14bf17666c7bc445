"""The reader's side of a ``Session``: the read loop, and where each message it reads goes.

The reader thread is the only caller of ``transport.receive()``. It pops the call of each reply by
id and delivers it (``_complete``); server requests go to ``Session.requests``, notifications to the
ordered notification lane (progress first moves its call's deadline); when the stream ends it
fails every pending call (``_connection_lost``). It never parses a result, runs user code or
blocks on anything but the transport. ``Session`` (``session``) owns the state this reads: the
pending table under ``_lock``, the lanes, the counters; the locking rules are in its docstring.
"""
from __future__ import annotations

import logging
import threading
from _thread import get_ident as _get_ident
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Set, Tuple

from .._util.threads import WorkerPool, reraise_on_main_thread
from .._util.wire import format_message, should_log, wire_log
from ..errors import ConnectionClosed, MCPError, ProcessExited
from .abandoned import NOT_ABANDONED, AbandonedRequests
from ..transports.base import DeliveryFailed, Transport

if TYPE_CHECKING:
    from .futures import CallFuture
    from .server_requests import ServerRequests

__all__ = ["Incoming", "NotificationHandler"]

log = logging.getLogger("mcpclient.session")

NotificationHandler = Callable[[str, Dict[str, Any]], Any]


class Incoming:
    """What the reader thread runs, as a part of ``Session`` (which sets every attribute below)."""

    transport: Transport
    requests: "ServerRequests"
    on_notification: Optional[NotificationHandler]
    on_notification_read: Optional[NotificationHandler]
    on_lost: Optional[Callable[[BaseException], None]]
    received: int
    late_replies: int
    skipped_messages: int
    unknown_replies: int
    _lock: threading.Lock
    _pending: Dict[int, "CallFuture[Any]"]
    _deferred: Dict[int, Tuple["CallFuture[Any]", Dict[str, Any]]]
    _abandoned: AbandonedRequests
    _closing: bool
    _closed_error: Optional[Callable[[], MCPError]]
    _io_idents: Set[int]
    _notifier: WorkerPool
    _workers: WorkerPool

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
        except BaseException as exc:  # a bug here must still fail the pending calls, never hang them
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
            call.deliver(None, failure.error)
        else:
            log.debug("delivery failure for a request no longer pending (%r): %s", rid, failure.error)

    def _dispatch(self, msg: Any) -> None:
        self.received += 1  # (a keepalive counts these: traffic means the connection lives)
        try:
            if type(msg) is not dict:
                self.skipped_messages += 1
                if should_log(self.skipped_messages):
                    log.warning("skipped a message that is not a JSON object (%d so far): %.200s",
                                self.skipped_messages, format_message(msg, 200))
            elif "method" in msg:
                self._dispatch_incoming(msg)
            else:
                self._complete(msg)
        except BaseException as exc:  # SystemExit from user code a dispatch may run (done-callbacks) too,
            reraise_on_main_thread(exc)  # but not a Ctrl-C on the main thread (a blocking HTTP call's answer is dispatched there)
            log.exception("failed to dispatch a message; skipped: %s", format_message(msg, 200))

    def _complete(self, msg: Dict[str, Any]) -> None:
        rid: Any = msg.get("id")
        call: Optional["CallFuture[Any]"] = None
        defer = False
        if type(rid) is int:
            with self._lock:  # decided once, here: waiting_for() clears may_defer under this lock
                call = self._pending.pop(rid, None)
                if call is not None and call.progress_queued and call.may_defer:
                    # Its progress callbacks are queued on the notification lane: finish the
                    # call behind them, so the caller never returns before its own progress.
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

    def _dispatch_incoming(self, msg: Dict[str, Any]) -> None:
        method = msg["method"]
        params = msg.get("params")
        if not isinstance(params, dict):
            params = {}
        if "id" in msg:
            rid = msg["id"]
            if type(rid) in (int, str):
                self.requests.receive(rid, method, params)
            else:
                self.skipped_messages += 1
                log.warning("skipped server request %.100r with an invalid id %.50r", method, rid)
            return
        quick = self.on_notification_read
        if quick is not None:
            try:
                quick(method, params)
            except BaseException:  # (reader thread) the reader must live on
                log.exception("quick handler for notification %s failed", method)
        if method == "notifications/progress":
            self._progress(params)
        elif method == "notifications/cancelled":
            self.requests.cancelled(params.get("requestId"))
        handler = self.on_notification
        if handler is not None and not self._notifier.try_submit(f"handler for {method}", handler, method, params):
            if should_log(self._notifier.rejected):
                log.warning("dropped notification %.100r: the notification queue is full (%d dropped so far)",
                            method, self._notifier.rejected)

    def _progress(self, params: Dict[str, Any]) -> None:
        token = params.get("progressToken")
        call = self._pending.get(token) if type(token) is int else None  # dict.get is atomic
        if call is None:
            return
        call.deadline.progressed()
        if call.on_progress is not None and self._notifier.try_submit(
                "on_progress callback", call.on_progress, params.get("progress"), params.get("total"),
                params.get("message")):
            call.progress_queued = call.may_defer

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
        if self.on_lost is not None:  # first: a caller woken below finds the connection known lost
            try:
                self.on_lost(factory())
            except BaseException:  # the pending calls below must fail all the same
                log.exception("on_lost callback failed")
        for call in pending.values():
            exc = factory()
            exc.__cause__ = reason
            call.deliver(None, exc)
