"""``Reader``: a session's reader thread, the only caller of ``transport.receive()``, and where
each message it reads goes.

A reply goes to the session (``ReaderHost.complete``), which finds its call by id; a request of
the server's to ``ServerRequests``; a notification first to ``on_notification_read`` and the
session's rules (``RPCRules.on_notification``: what it says about a request in flight), then to
the single, ordered notification thread (``on_notification``). When the stream ends, the reader
says why, and the session fails every pending call with that (``ReaderHost.connection_lost``).
It never parses a result, runs user code or blocks on anything but the transport.
"""
from __future__ import annotations

import logging
import threading
from _thread import get_ident as _get_ident
from typing import Any, Callable, Dict, Optional, Protocol, Set

from .._util.threads import WorkerPool, reraise_on_main_thread, start_thread
from .._util.wire import format_message, should_log, wire_log
from ..errors import ConnectionClosed, MCPError, ProcessExited
from .rules import InFlight, RPCRules
from .server_requests import ServerRequests
from ..transports.base import DeliveryFailed, SessionRenewed, Transport

__all__ = ["NotificationHandler", "Reader", "ReaderHost"]

log = logging.getLogger("mcpclient.session")

NotificationHandler = Callable[[str, Dict[str, Any]], Any]


class ReaderHost(InFlight, Protocol):
    """What the reader hands to its session (``Session``), on the reader thread."""

    def complete(self, msg: Dict[str, Any]) -> None:
        """A reply (a message with no method): end the round it answers."""

    def fail(self, request_id: Any, error: BaseException) -> None:
        """The transport could not deliver the reply to ``request_id``: that round ends with ``error``."""

    def connection_lost(self, error: Callable[[], MCPError], reason: BaseException) -> None:
        """The stream ended (``reason``): every pending call fails with a fresh ``error()``."""

    def session_renewed(self) -> None:
        """The transport replaced an expired server session with a new one (``SessionRenewed``)."""


class Reader:
    """Reads one transport on its own thread (``name``) until its stream ends.

    Args:
        transport: what it reads.
        host: the session the replies and the end of the stream go to.
        requests: where the server's requests go.
        rules: the protocol's rules, told of each notification first.
        notifier: the single, ordered notification thread's pool.
        name: the thread's name.
        io_idents: holds the thread's ident while it runs (a blocking call there is refused).
        on_notification: ``(method, params)``, on the notification thread.
        on_notification_read: ``(method, params)``, on the reader thread as soon as a
            notification is read, before it is queued for ``on_notification``: for what must
            not wait behind the notification thread. It must never block or run user code.
    """

    def __init__(self, transport: Transport, host: ReaderHost, requests: ServerRequests, rules: RPCRules,
                 notifier: WorkerPool, *, name: str, io_idents: Set[int],
                 on_notification: Optional[NotificationHandler] = None,
                 on_notification_read: Optional[NotificationHandler] = None) -> None:
        self.on_notification = on_notification
        self.on_notification_read = on_notification_read
        self.thread: Optional[threading.Thread] = None
        self.received = 0  # messages read (roughly: a keepalive reads it from another thread)
        self.skipped_messages = 0  # JSON values that are not JSON-RPC messages
        self.dropped_notifications = 0  # notifications the full notification queue refused
        self._transport = transport
        self._host = host
        self._requests = requests
        self._rules = rules
        self._notifier = notifier
        self._name = name
        self._io_idents = io_idents

    def start(self) -> None:
        """Start the reader thread."""
        self.thread = start_thread(self._loop, self._name)

    def _loop(self) -> None:
        self._io_idents.add(_get_ident())
        reason: Optional[BaseException] = None
        receive = self._transport.receive
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
                    self._host.fail(message.request_id, message.error)
                elif type(message) is SessionRenewed:
                    self._host.session_renewed()
                else:
                    self._dispatch(message)
        except MCPError as exc:
            reason = exc
        except BaseException as exc:  # a bug here must still fail the pending calls, never hang them
            log.exception("reader thread failed")
            reason = ConnectionClosed(f"reader thread failed: {exc!r}")
        finally:
            self._io_idents.discard(_get_ident())
            self._lost(reason)

    def _dispatch(self, msg: Any) -> None:
        self.received += 1  # (a keepalive counts these: traffic means the connection lives)
        try:
            if type(msg) is not dict:
                self.skipped_messages += 1
                if should_log(self.skipped_messages):
                    log.warning("skipped a message that is not a JSON object (%d so far): %.200s",
                                self.skipped_messages, format_message(msg, 200))
            elif "method" not in msg:
                self._host.complete(msg)
            elif "id" in msg:
                self._request(msg)
            else:
                self._notification(msg)
        except BaseException as exc:  # SystemExit from user code a dispatch may run (done-callbacks) too,
            reraise_on_main_thread(exc)  # but never a Ctrl-C on the main thread
            log.exception("failed to dispatch a message; skipped: %s", format_message(msg, 200))

    def _request(self, msg: Dict[str, Any]) -> None:
        rid, method = msg["id"], msg["method"]
        if type(rid) not in (int, str):
            self.skipped_messages += 1
            log.warning("skipped server request %.100r with an invalid id %.50r", method, rid)
            return
        params = msg.get("params")
        self._requests.receive(rid, method, params if isinstance(params, dict) else {})

    def _notification(self, msg: Dict[str, Any]) -> None:
        method = msg["method"]
        params = msg.get("params")
        if not isinstance(params, dict):
            params = {}
        first = self.on_notification_read
        if first is not None:
            try:
                first(method, params)
            except BaseException:  # (reader thread) the reader must live on
                log.exception("on_notification_read handler for notification %s failed", method)
        before = self._rules.on_notification(method, params, self._host)
        handler = self.on_notification
        if (handler is not None or before is not None) and not self._notifier.try_submit(
                f"handler for {method}", _notified, before, handler, method, params):
            self.dropped_notifications += 1
            if should_log(self.dropped_notifications):
                log.warning("dropped notification %.100r: the notification queue is full (%d dropped so far)",
                            method, self.dropped_notifications)

    def _lost(self, reason: Optional[BaseException]) -> None:
        """The stream ended: what each pending call is to fail with (a fresh instance each)."""
        if reason is None:
            reason = ConnectionClosed("the server closed the connection")
        if isinstance(reason, ProcessExited):
            code, tail = reason.returncode, reason.stderr_tail
            error: Callable[[], MCPError] = lambda: ProcessExited(code, tail)
        else:
            text, kind = str(reason), type(reason) if isinstance(reason, ConnectionClosed) else ConnectionClosed
            error = lambda: kind(text)
        self._host.connection_lost(error, reason)


def _notified(before: Optional[Callable[[], object]], handler: Optional[NotificationHandler], method: str,
              params: Dict[str, Any]) -> None:
    """The notification thread: one notification's work, in one queue slot (a call's
    ``on_progress`` first, then the session's handler, which runs even if the first raised)."""
    if before is not None:
        try:
            before()
        except Exception:
            log.exception("callback for notification %s failed", method)
    if handler is not None:
        handler(method, params)
