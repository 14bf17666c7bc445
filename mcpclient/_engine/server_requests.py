"""Requests the server sends us: which are being handled, which the server cancelled, how each
is answered.

A server request is answered at once by the session's rules (``RPCRules.answer_at_once``: a
liveness check), or taken by ``on_request_read`` on the reader thread (it may answer later
through ``reply()``), or queued on the bounded ``handler`` pool, whose thread runs ``on_request``
and sends the answer; a full pool answers "busy" at once. A request the server cancelled
(``cancelled()``) is never answered. Kept apart from ``session`` (which owns our requests)
because the two share nothing but the ways to send.

Locking: one lock guards the table of requests in flight; nothing is sent or called under it.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Dict, Optional

from .._util.threads import WorkerPool
from .._util.wire import should_log
from ..errors import InternalError, MethodNotFound, RPCError

__all__ = ["RequestHandler", "ServerRequests", "error_response"]

log = logging.getLogger("mcpclient.session")

RequestHandler = Callable[[str, Dict[str, Any]], Any]
RequestTaker = Callable[[Any, str, Dict[str, Any]], bool]
#: ``(method, params) -> result or None``: ``RPCRules.answer_at_once``
AnswerAtOnce = Callable[[str, Dict[str, Any]], Optional[Dict[str, Any]]]
Send = Callable[[Dict[str, Any]], None]


def error_response(rid: Any, code: int, message: str, data: Any = None) -> Dict[str, Any]:
    """A JSON-RPC error answer to request ``rid``."""
    error: Dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}


class ServerRequests:
    """The server's requests to one session.

    Args:
        pool: the ``handler`` pool that runs ``on_request``.
        post: sends without blocking (from the reader or any thread); may drop when swamped.
        send: sends from a handler thread (may block; failures are logged, not raised).
        answer_at_once: the result of a request answered on the reader thread, before and
            without any handler, or None (``RPCRules.answer_at_once``).
        on_request: ``(method, params) -> result``; raise ``RPCError`` to answer with that error.
    """

    def __init__(self, pool: WorkerPool, post: Send, send: Send, answer_at_once: AnswerAtOnce, *,
                 on_request: Optional[RequestHandler] = None) -> None:
        self.on_request = on_request
        #: ``(rid, method, params) -> bool``, called on the reader thread before a request is
        #: queued for a handler: True means it took the request and answers through ``reply()``
        #: (at once or later); it must never block or run user code.
        self.on_request_read: Optional[RequestTaker] = None
        self.closing = False  # set by the session's close(): answers are no longer sent
        self._pool = pool
        self._answer_at_once = answer_at_once
        self._post = post
        self._send = send
        self._lock = threading.Lock()
        self._in_flight: Dict[Any, bool] = {}  # id of each request being handled -> cancelled?

    def receive(self, rid: Any, method: str, params: Dict[str, Any]) -> None:
        """A request from the server (reader thread; ``rid`` is an int or a str)."""
        result = self._answer_at_once(method, params)
        if result is not None:  # never queued behind slow handlers
            self._post({"jsonrpc": "2.0", "id": rid, "result": result})
            return
        with self._lock:
            self._in_flight[rid] = False
        take = self.on_request_read
        if take is not None:
            try:
                if take(rid, method, params):
                    return  # it replies through reply(), now or later
            except RPCError as exc:
                self.reply(rid, error=exc)
                return
            except BaseException:  # (reader thread) SystemExit included: the reader must live on
                log.exception("on_request_read handler for server request %s failed", method)
                self.reply(rid, error=InternalError(-32603, f"client handler for {method} failed"))
                return
        if not self._pool.try_submit(f"handler for {method}", self._answer, rid, method, params):
            with self._lock:
                self._in_flight.pop(rid, None)
            if should_log(self._pool.rejected):
                log.warning("refused server request %.100r: all handlers busy (%d refused so far)",
                            method, self._pool.rejected)
            self._post(error_response(rid, -32603, "client busy: too many concurrent requests"))

    def cancelled(self, rid: Any) -> None:
        """The server cancelled request ``rid``: its handler runs on, but its answer is not sent."""
        with self._lock:
            if type(rid) in (int, str) and rid in self._in_flight:
                self._in_flight[rid] = True

    def _answer(self, rid: Any, method: str, params: Dict[str, Any]) -> None:
        """Run the request handler on a handler thread and send its answer (unless cancelled)."""
        handler = self.on_request
        result: Any = None
        error: Optional[RPCError] = None
        try:
            if handler is None:
                raise MethodNotFound(-32601, f"client does not handle {method}")
            result = handler(method, params)
        except RPCError as exc:
            error = exc
        except BaseException:  # SystemExit, KeyboardInterrupt raised by the handler: answered all the same
            # (a handler thread is never the main thread, where a real Ctrl-C lands). The server
            # gets a fixed message: what was raised may hold secrets; the details go to the log.
            log.exception("handler for server request %s failed", method)
            error = InternalError(-32603, f"client handler for {method} failed")
        self._send_answer(rid, result, error, self._send)

    def reply(self, rid: Any, result: Any = None, error: Optional[RPCError] = None) -> None:
        """Answer request ``rid`` from any thread without blocking (unless the server cancelled
        it meanwhile). For ``on_request_read`` handlers that answer later."""
        self._send_answer(rid, result, error, self._post)

    def _send_answer(self, rid: Any, result: Any, error: Optional[RPCError], send: Send) -> None:
        with self._lock:
            cancelled = self._in_flight.pop(rid, False)
        if cancelled or self.closing:
            return
        if error is not None:
            send(error_response(rid, error.code, error.message, error.data))
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": result})
