"""The GET side of Streamable HTTP (``GetStream``): the server's own event stream (handshake era),
read on a thread of its own (``mcpclient-<n>-http-get``) and reopened until close, and the
resumption of a request's answer stream that ended before its answer.

The server's stream is reopened after the server's ``retry:`` delay with ``Last-Event-ID`` when
it gave event ids, else with capped, jittered backoff; at once, from its start, when a new
session replaced ours (``follow``: the old session's stream is ended). A request's answer stream
(2025-11-25 polling) is resumed with a GET carrying ``Last-Event-ID``, after the server's
``retry:`` delay, in the session that stream belongs to, until the answer came.

Every GET goes through the transport's ``Exchange`` (auth rounds on 401/403, a new session on
404, the retry policy) as a request in flight (``_inflight``): ``close()`` ends it.
"""
from __future__ import annotations

import logging
import random
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

from ..._util.threads import join_all, start_thread
from ...errors import ConnectionClosed, SessionExpired, TransportError
from ._exchange import SESSION_HEADER, Exchange
from ._inflight import InFlight, Request
from ._reading import SSE, Response, abort, media_type, status_error

__all__ = ["GetStream", "ReadEvents"]

log = logging.getLogger("mcpclient.transport.http")

_RETRY_DEFAULT = 0.5  # seconds to wait before resuming a stream whose server named no retry: delay
_STEADY = 2.0  # seconds a GET stream must stay open for its end not to count as a failure
_MAX_RESUMES = 10  # resumptions of one request's stream before giving up

#: ``read_events(response, request, last_id, retry)``: queue one stream's messages; returns (the
#: answer to ``request`` came, or it was ended: nothing more to read; the last event id; the
#: retry delay). ``request`` None: the server's own stream.
ReadEvents = Callable[[Response, Optional[Request], Optional[str], Optional[float]],
                      Tuple[bool, Optional[str], Optional[float]]]


class GetStream:
    """The server's GET stream and the resumption of answer streams, for one transport.

    Args:
        exchange: the policy loops every GET goes through.
        inflight: where each GET is registered while it is open.
        get: one GET of the stream (``Accept`` set by the caller), given its headers; failures
            mapped (``request_error``); its read timeout is the stream's idle bound.
        session_id: the session id in use.
        read_events: how a stream's events reach the session.
        closing: set when the transport closes.
        url, name, connect_timeout: the endpoint, the server as errors name it, the wait for
            the first answer (``start``) and for a refused GET's error page.
    """

    def __init__(self, exchange: Exchange, inflight: InFlight, *, get: Callable[[Dict[str, str]], Response],
                 session_id: Callable[[], Optional[str]], read_events: ReadEvents, closing: threading.Event,
                 url: str, name: str, connect_timeout: float) -> None:
        self._exchange = exchange
        self._inflight = inflight
        self._get = get
        self._session_id = session_id
        self._read_events = read_events
        self._closing = closing
        self._url = url
        self._name = name
        self._connect_timeout = connect_timeout
        self._thread: Optional[threading.Thread] = None
        self._answered = threading.Event()  # the first GET was answered (or failed)
        self._wake = threading.Event()  # a renewal (or close) ends the wait to reopen
        self._lock = threading.Lock()  # guards _held
        self._held: Optional[Tuple[Request, Optional[str]]] = None  # the stream being read, its session

    # --- the server's stream ----------------------------------------------------------------------

    def start(self, thread_name: str) -> None:
        """Open the stream on its own thread; return once the server answered the GET (or
        ``connect_timeout`` passed), so nothing it sends there after connect is lost."""
        self._thread = start_thread(self._listen, thread_name)
        self._answered.wait(self._connect_timeout)

    def follow(self, session_id: str) -> None:
        """A new session replaced ours: end the old session's stream; the new one opens now."""
        with self._lock:  # (after the new id was published: _hold registers or refuses a stream by it)
            held = self._held
        if held is not None and held[1] != session_id:
            request = held[0]
            if request.response is not None:
                abort(request.response)  # _listen reopens the stream on the new session
        self._wake.set()

    def wake(self) -> None:
        """``close()``: end the wait to reopen the stream (the loop then sees the transport closing)."""
        self._wake.set()

    def join(self, deadline: float) -> None:
        if self._thread is not None:
            join_all([self._thread], deadline)

    def _listen(self) -> None:
        """The GET stream for server-initiated messages, reopened until close."""
        delay = 0.5
        last_id: Optional[str] = None
        retry: Optional[float] = None
        session = self._session_id()
        while not self._closing.is_set():
            request = Request()
            response: Optional[Response] = None
            ended: Optional[BaseException] = None
            steady = False  # a stream that lived _STEADY seconds: the backoff starts again
            self._wake.clear()
            if self._closing.is_set():  # (close() may have set the wake just before it was cleared)
                return
            self._inflight.add(request)
            try:
                response, session = self._open(request, last_id if session == self._session_id() else None)
            except SessionExpired as exc:  # our session is gone and no new one came
                ended = exc
            except TransportError as exc:  # no connection, or it broke: try again later
                log.debug("%s", exc)
            except BaseException as exc:  # the credentials could not be had (AuthError), a bug, or
                ended = exc  # user code (a token callable) that exited: never a silently dead listener
            self._answered.set()
            try:
                if ended is not None:
                    if not self._closing.is_set():
                        log.warning("the GET stream of %s ended; server-initiated messages stop: %s", self._name,
                                    ended if isinstance(ended, Exception) else f"{type(ended).__name__} raised")
                    return
                if response is not None:
                    try:
                        status = response.status_code
                        if status in (401, 403):  # (after what the credentials could do)
                            log.warning("%s refused the GET stream (HTTP %s); server-initiated messages stop",
                                        self._name, status)
                            return
                        if 400 <= status < 500 and status != 429:  # 405 and friends: no GET stream here
                            log.debug("%s offers no GET stream (HTTP %s)", self._name, status)
                            return
                        if status == 200 and media_type(response) == SSE:
                            opened = time.monotonic()
                            if self._hold(request, session):  # (not if a renewal replaced its session)
                                try:
                                    _, last_id, retry = self._read_events(response, None, last_id, retry)
                                finally:
                                    steady = time.monotonic() - opened >= _STEADY
                        else:
                            log.debug("GET stream to %s answered %s", self._name, status)
                    except ConnectionClosed as exc:
                        log.debug("%s", exc)
                    except Exception as exc:  # whatever one message did, the listener lives on (reopens)
                        log.warning("the GET stream of %s failed (%s); reopening it", self._name, type(exc).__name__,
                                    exc_info=True)
                    finally:
                        self._hold(None, None)
                        response.close()
                    if session != self._session_id():  # renewed: the new session's stream opens now, from its start
                        last_id, retry, delay = None, None, 0.5
                        continue
            finally:
                self._inflight.remove(request)
            # A stream that ends soon after it opened (or none) backs off as a failed connection
            # does, whatever retry: the server named: a server that closes each stream at once
            # must not have the client reopen it in a loop.
            backoff = delay * (0.5 + random.random())
            wait = backoff if retry is None else (retry if steady else max(retry, backoff))
            if self._wake.wait(wait) and self._closing.is_set():
                return
            delay = 0.5 if steady else min(delay * 2, 30.0)

    def _hold(self, request: Optional[Request], session: Optional[str]) -> bool:
        """Register (``None``: unregister) the stream of ``session`` for ``follow`` to end; False
        if a renewal replaced that session already (the stream is then not read)."""
        with self._lock:
            current = request is None or session == self._session_id()
            self._held = (request, session) if request is not None and current else None
        return current

    # --- a request's answer stream -----------------------------------------------------------------

    def resume(self, request: Request, last_id: Optional[str], retry: Optional[float]) -> None:
        """2025-11-25 polling: after the server's retry delay, GET with ``Last-Event-ID`` and read
        on, until the answer to ``request`` came (raises ``ConnectionClosed`` after
        ``_MAX_RESUMES`` tries, ``SessionExpired`` if the session was renewed meanwhile)."""
        self._inflight.unbound(request)
        for _ in range(_MAX_RESUMES):
            if self._closing.wait(retry if retry is not None else _RETRY_DEFAULT) or request.cancelled \
                    or request.ended is not None:
                return
            origin = self._session_id()
            response, session = self._open(request, last_id)
            try:
                if session != origin:  # renewed on the way: the new session never had this stream
                    raise SessionExpired(f"{self._name} lost our session before the answer stream was resumed")
                if response.status_code != 200 or media_type(response) != SSE:  # (its page is quoted
                    # by the connect timeout: a trickled one must not hold this worker for ever)
                    raise status_error(self._name, response, time.monotonic() + self._connect_timeout)
                answered, last_id, retry = self._read_events(response, request, last_id, retry)
            finally:
                response.close()
            if answered or self._closing.is_set():
                return
        raise ConnectionClosed(f"gave up resuming the answer stream from {self._name} after {_MAX_RESUMES} tries")

    def _open(self, request: Request, last_event_id: Optional[str]) -> Tuple[Response, Optional[str]]:
        """A GET for an event stream (resumed after ``last_event_id``), through the exchange like
        every request: auth rounds on 401/403, a new session on 404, the retry policy. Returns
        the answer whatever its status, and the session id it was sent with (``Last-Event-ID``
        only goes to the session whose stream it names, not to one a 404 renewed on the way);
        raises what ``Exchange.send`` raises."""
        origin = self._session_id()
        sent: List[Optional[str]] = [origin]
        inflight, get = self._inflight, self._get

        def send(headers: Dict[str, str], read: Optional[float]) -> Response:
            headers["Accept"] = SSE
            sent[0] = headers.get(SESSION_HEADER)
            if last_event_id is not None and sent[0] == origin:
                headers["Last-Event-ID"] = last_event_id
            return inflight.send(request, get, headers)

        response = self._exchange.send(send, verb="GET", url=self._url, deadline=None, idempotent=True)
        return response, sent[0]
