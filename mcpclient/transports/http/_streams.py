"""The GET side of Streamable HTTP: the server's own event stream (handshake era), read on a
thread of its own and reopened until close, and what a request's answer stream that ends before
its answer becomes.

Handshake era (2025-11-25 polling): the stream is resumed with a GET carrying ``Last-Event-ID``,
after the server's ``retry:`` delay, in the session that stream belongs to. 2026-07-28: there is
no GET and no resumption; the spec says to send the request again as a new request, with a new
id. Only a request safe to repeat is (``idempotent``; a tool call only with
``Retry(retry_tool_calls=True)``), as the retry policy bounds and spaces its tries, and its answer
is delivered as the answer to the original id, so the engine's call completes as if nothing broke.
Any other request fails with ``ConnectionClosed``: it may have run.

``GetStreams`` is a base of ``HTTPTransport``, which supplies the stream reading and the POSTs
these use (the methods declared at the end); its own base, ``_sessions.HTTPSessions``, keeps the
session id these streams belong to.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Dict, List, Optional, Set, Tuple

from ...errors import ConnectionClosed, SessionExpired, TransportError
from ._exchange import SESSION_HEADER
from ._sessions import HTTPSessions
from ._reading import SSE, Response, Send, media_type, request_error, rpc_error_body, status_error
from ..base import decode_frame, encode_frame

log = logging.getLogger("mcpclient.transport.http")

_RETRY_DEFAULT = 0.5  # seconds to wait before resuming a stream whose server named no retry: delay
_MAX_RESUMES = 10  # resumptions of one request's stream before giving up


class StreamBroken(ConnectionClosed):
    """2026-07-28: a request's answer stream ended before its answer (``_reissue`` decides)."""


class GetStreams(HTTPSessions):
    """The server's GET stream, and resuming (handshake era) or re-issuing (2026) a request whose
    answer stream broke."""

    _cancelled: Set[Any]  # (see HTTPTransport._track)
    _get_answered: Any  # (see HTTPTransport.__init__; the session's attributes: HTTPSessions)

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

    # --- the server's GET stream -------------------------------------------------------------------

    def _get_stream(self, last_event_id: Optional[str] = None) -> Tuple[Response, Optional[str]]:
        """A GET for an event stream (resumed after ``last_event_id``), through ``_exchange`` like
        every request: auth rounds on 401/403, a new session on 404, the retry policy. Returns
        the answer whatever its status, and the session id it was sent with (``Last-Event-ID``
        only goes to the session whose stream it names, not to one a 404 renewed on the way);
        raises what ``_exchange`` raises."""
        import requests  # deferred: import cost (requests); stdio-only programs never load it

        origin = self.session_id
        sent: List[Optional[str]] = [origin]

        def get(headers: Dict[str, str], read: Optional[float]) -> Response:
            headers["Accept"] = SSE
            sent[0] = headers.get(SESSION_HEADER)
            if last_event_id is not None and sent[0] == origin:
                headers["Last-Event-ID"] = last_event_id
            try:  # the read timeout is the idle bound: a silent stream is reopened (_listen)
                return self._http.get(self.url, headers=headers, stream=True,  # type: ignore[union-attr]
                                      timeout=(self.connect_timeout, self.stream_idle_timeout),
                                      allow_redirects=False)
            except requests.exceptions.RequestException as exc:
                raise request_error(self.name, exc, self.connect_timeout) from exc

        response = self._exchange(get, verb="GET", url=self.url, deadline=None, idempotent=True)
        return response, sent[0]

    def _hold_get(self, response: Optional[Response], session: Optional[str]) -> bool:
        """Register (``None``: unregister) the GET stream of ``session`` for ``_renew`` to end;
        False if a renewal replaced that session already (the stream is then not read)."""
        with self._open_lock:
            current = response is None or session == self.session_id
            self._get_open = (response, session) if response is not None and current else None
        return current

    def _listen(self) -> None:
        """The GET stream for server-initiated messages, reopened until close: after the server's
        ``retry:`` delay with ``Last-Event-ID`` when it gave ids, else with capped backoff; at
        once, from its start, when a new session replaced ours (``_renew`` ends the old stream)."""
        import random  # deferred: import cost (random); only backoff needs it

        delay = 0.5
        last_id: Optional[str] = None
        retry: Optional[float] = None
        session = self.session_id
        while not self._closing.is_set():
            response: Optional[Response] = None
            ended: Optional[BaseException] = None
            self._get_wake.clear()
            try:
                response, session = self._get_stream(last_id if session == self.session_id else None)
            except SessionExpired as exc:  # our session is gone and no new one came
                ended = exc
            except TransportError as exc:  # no connection, or it broke: try again later
                log.debug("%s", exc)
            except BaseException as exc:  # the credentials could not be had (AuthError), a bug, or
                ended = exc  # user code (a token callable) that exited: never a silently dead listener
            self._get_answered.set()
            if ended is not None:
                if not self._closing.is_set():
                    log.warning("the GET stream of %s ended; server-initiated messages stop: %s", self.name,
                                ended if isinstance(ended, Exception) else f"{type(ended).__name__} raised")
                return
            if response is not None:
                try:
                    status = response.status_code
                    if status in (401, 403):  # (after what the credentials could do)
                        log.warning("%s refused the GET stream (HTTP %s); server-initiated messages stop",
                                    self.name, status)
                        return
                    if 400 <= status < 500 and status != 429:  # 405 and friends: no GET stream here
                        log.debug("%s offers no GET stream (HTTP %s)", self.name, status)
                        return
                    if status == 200 and media_type(response) == SSE:
                        delay = 0.5
                        if self._hold_get(response, session):  # (not if a renewal replaced its session)
                            _, last_id, retry = self._read_events(response, None, last_id, retry)
                    else:
                        log.debug("GET stream to %s answered %s", self.name, status)
                except ConnectionClosed as exc:
                    log.debug("%s", exc)
                except Exception as exc:  # whatever one message did, the listener lives on (reopens)
                    log.warning("the GET stream of %s failed (%s); reopening it", self.name, type(exc).__name__,
                                exc_info=True)
                finally:
                    self._hold_get(None, None)
                    response.close()
                if session != self.session_id:  # renewed: the new session's stream opens now, from its start
                    last_id, retry, delay = None, None, 0.5
                    continue
            wait = retry if retry is not None else delay * (0.5 + random.random())
            if self._get_wake.wait(wait) and self._closing.is_set():
                return
            delay = min(delay * 2, 30.0)

    # --- supplied by HTTPTransport ----------------------------------------------------------------

    def _sender(self, body: bytes, setup: bool) -> Send:
        raise NotImplementedError

    def _read_events(self, response: Response, rid: Any, last_id: Optional[str], retry: Optional[float],
                     wire: Any = None, deadline: Optional[float] = None) -> Tuple[bool, Optional[str], Optional[float]]:
        raise NotImplementedError

    def _deliver_body(self, response: Response, rid: Any = None, inline: bool = False,
                      wire: Any = None, deadline: Optional[float] = None) -> Optional[Any]:
        raise NotImplementedError
