"""What Streamable HTTP does when a request's answer stream ends before its answer.

Handshake era (2025-11-25 polling): the stream is resumed with a GET carrying ``Last-Event-ID``,
after the server's ``retry:`` delay, in the session that stream belongs to. 2026-07-28: there is
no GET and no resumption; the spec says to send the request again as a new request, with a new
id. Only a request safe to repeat is (``idempotent``; a tool call only with
``Retry(retry_tool_calls=True)``), as the retry policy bounds and spaces its tries, and its answer
is delivered as the answer to the original id, so the engine's call completes as if nothing broke.
Any other request fails with ``ConnectionClosed``: it may have run.

``AnswerRecovery`` is a base of ``HTTPTransport``, which supplies the stream reading and the
POSTs these use (the methods declared at the end).
"""
from __future__ import annotations

import time
from typing import Any, Dict, Optional, Set, Tuple

from ...errors import ConnectionClosed, SessionExpired
from ._exchange import HTTPBase
from ._reading import SSE, Response, Send, media_type, rpc_error_body, status_error
from ..base import decode_frame, encode_frame

_RETRY_DEFAULT = 0.5  # seconds to wait before resuming a stream whose server named no retry: delay
_MAX_RESUMES = 10  # resumptions of one request's stream before giving up


class StreamBroken(ConnectionClosed):
    """2026-07-28: a request's answer stream ended before its answer (``_reissue`` decides)."""


class AnswerRecovery(HTTPBase):
    """Resuming (handshake era) or re-issuing (2026) a request whose answer stream broke."""

    session_id: Optional[str]
    _cancelled: Set[Any]  # (see HTTPTransport._track)

    def _resume(self, rid: Any, last_id: Optional[str], retry: Optional[float]) -> None:
        """2025-11-25 polling: after the server's retry delay, GET with ``Last-Event-ID`` and read
        on, until the answer to ``rid`` came."""
        for _ in range(_MAX_RESUMES):
            if self._closing.wait(retry if retry is not None else _RETRY_DEFAULT) or rid in self._cancelled:
                return
            origin = self.session_id
            response, session = self._get_stream(last_id)
            try:
                if session != origin:  # renewed on the way: the new session never had this stream
                    raise SessionExpired(f"{self.name} lost our session before the answer stream was resumed")
                if response.status_code != 200 or media_type(response) != SSE:  # (its page is quoted
                    # by the connect timeout: a trickled one must not hold this worker for ever)
                    raise status_error(self.name, response, time.monotonic() + self.connect_timeout)
                answered, last_id, retry = self._read_events(response, rid, last_id, retry)
            finally:
                response.close()
            if answered or self._closing.is_set():
                return
        raise ConnectionClosed(f"gave up resuming the answer stream from {self.name} after {_MAX_RESUMES} tries")

    def _reissue(self, rid: Any, body: bytes, deadline: Optional[float], extra: Optional[Dict[str, str]],
                 idempotent: Optional[bool], broke: ConnectionClosed) -> None:
        """2026-07-28: the answer stream of ``rid`` (sent as ``body``) broke before its answer.
        Send it again under a new id if it is safe to repeat, as the retry policy allows, and
        deliver its answer as the answer to ``rid``; else fail the call. Never raises."""
        retry, message, tries = self.retry, None, 0
        try:
            while True:
                if not retry.repeatable(idempotent):
                    raise ConnectionClosed(f"{broke}; the request may have run, so it was not sent again "
                                           "(only idempotent requests are, or tool calls with Retry(retry_tool_calls=True))")
                following, wait = self._next_try(retry, idempotent, True, None, deadline, "a broken answer stream")
                if following is None:
                    raise ConnectionClosed(f"{broke}; gave up after sending the request {tries + 1} time(s)")
                self._pause(wait, broke)
                if rid in self._cancelled:
                    return
                retry, tries = following, tries + 1
                message = decode_frame(body) if message is None else message
                wire = f"{rid}-retry-{tries}"  # a new id (the engine's are integers: no clash)
                response = self._exchange(self._sender(encode_frame(dict(message, id=wire)), False), verb="POST",
                                          url=self.url, deadline=deadline, idempotent=idempotent, extra=extra)
                try:
                    if response.status_code == 200:
                        self._deliver_body(response, rid, wire=wire, deadline=deadline)
                        return
                    answer = rpc_error_body(response, rid, deadline)  # (a JSON-RPC error: the call's answer)
                    if answer is None:
                        raise status_error(self.name, response, deadline)
                    self._inbox.put(answer)
                    return
                except StreamBroken as again:
                    broke = again
                finally:
                    response.close()
        except BaseException as exc:  # (a lane thread) a token callable's sys.exit() too: the call fails now
            if rid not in self._cancelled:
                self._fail(rid, exc, deadline)

    # --- supplied by HTTPTransport ----------------------------------------------------------------

    def _sender(self, body: bytes, setup: bool) -> Send:
        raise NotImplementedError

    def _get_stream(self, last_event_id: Optional[str] = None) -> Tuple[Response, Optional[str]]:
        raise NotImplementedError

    def _read_events(self, response: Response, rid: Any, last_id: Optional[str], retry: Optional[float],
                     wire: Any = None, deadline: Optional[float] = None) -> Tuple[bool, Optional[str], Optional[float]]:
        raise NotImplementedError

    def _deliver_body(self, response: Response, rid: Any = None, inline: bool = False,
                      wire: Any = None, deadline: Optional[float] = None) -> Optional[Any]:
        raise NotImplementedError
