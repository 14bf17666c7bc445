"""Streamable HTTP transport (MCP 2025-03-26 … 2026-07-28), on ``requests``.

Every client message is one POST. A blocking call POSTs on its own thread (it waits anyway);
a future's request is POSTed on a worker thread (``mcpclient-<n>-http-<k>``), so a slow or
streaming response never holds up other calls. Either way the body — one JSON message, or an SSE
stream of messages ending with the response — is fed to the session's reader through a queue.
Notifications and responses are POSTed on the caller's thread, which keeps them in order with
what the caller sends next. In the handshake era a GET stream (``mcpclient-<n>-http-get``)
carries server-initiated messages. An HTTP failure fails only the request it belongs to
(``DeliveryFailed``). A request's SSE stream that ends before its answer is resumed with a GET
carrying ``Last-Event-ID`` (2025-11-25 polling), or in the 2026 era sent again under a new id if
it is safe to repeat (``_streams``, which holds the GET streams).

The transport knows no MCP method: what it must know about a message comes with it from the
client (``send``'s ``headers``, ``idempotent``, ``setup``). The session id is taken from the
answer to a ``setup`` request only, and an expired session is renewed by replaying the recorded
setup messages, once, however many threads meet the 404 (``_threads.SingleFlight``); the old id
stays in use until the new session is ready. Then the GET stream moves to the new session and the
client hears of it (``on_session_renewed``: it subscribes again): ``_sessions``. Retries and auth
rounds, and when a renewal is called for: ``_exchange.HTTPBase``. POSTs go straight to
``requests``' connection pool (``_posters.FastPoster``) unless a user's session, a proxy or
``follow_redirects`` needs ``requests``' own machinery (``_posters.SessionPoster``; redirects:
``_posters.RedirectPoster``, which judges each 3xx against the ``Redirects`` policy).

``requests`` is imported when a transport starts, not when mcpclient is imported.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Optional, Set, Tuple, Union

from ..._util.threads import WorkerPool, SingleFlight, join_all, start_thread
from ...policies.redirects import Redirects
from ...errors import ConnectionClosed, HTTPError, MessageTooLarge, ProtocolError
from ._exchange import SESSION_HEADER, Auth
from ._reading import JSON, SSE, body_socket, Response, Send, SSEEvent, abort, chunks, media_type, parse_sse, read_body, rpc_error_body, status_error, timed_chunks
from ._posters import FastPoster, RedirectPoster, SessionPoster
from ._streams import GetStreams, StreamBroken
from ..base import DEFAULT_MAX_MESSAGE_SIZE, LATE_ANSWER, Transport, decode_frame, encode_frame

if TYPE_CHECKING:
    import requests

    from ...policies.retry import Retry

__all__ = ["HTTPTransport"]

log = logging.getLogger("mcpclient.transport.http")

_RETRY_MAX = 30.0  # a server's retry: delay is honoured up to this many seconds
_LEGACY_REFUSALS = (400, 404, 405)  # how an HTTP+SSE server refuses the Streamable HTTP setup POST


def _answers(message: Any, rid: Any) -> bool:
    """Whether a JSON body (a message or a batch) holds the response to request ``rid``."""
    for item in message if type(message) is list else (message,):
        if type(item) is dict and item.get("id") == rid and ("result" in item or "error" in item):
            return True
    return False


class HTTPTransport(GetStreams):
    """Talk to an MCP server over Streamable HTTP.

    Example::

        transport = HTTPTransport("https://mcp.example.com/mcp",
                                  auth=lambda: vault.token())
        with Client(transport) as client:
            print(client.list_tools())

    Args:
        url: the server's MCP endpoint.
        headers: extra headers sent with every request.
        auth: a bearer token, a callable returning one (called for every request, from many
            threads at once), or an ``AuthProvider`` such as ``mcpclient.auth.OAuth``. A token
            is sent as ``Authorization: Bearer <token>`` (see ``auth_header``).
        auth_header: the header that carries a token; with a name other than
            ``Authorization`` the raw token is sent, without ``Bearer``.
        session: a ``requests.Session`` to use (proxies, certificates, mTLS); its headers,
            proxies and certificate settings are read once at start, its cookies, auth, hooks
            and mounted adapters used on every request; the transport never changes it (nor
            closes it). By default the transport makes and owns one.
        connect_timeout: seconds to wait for a TCP/TLS connection.
        follow_redirects: a ``Redirects`` policy, ``True`` (``Redirects()``: 307/308 to the same
            origin only) or ``False`` (default: a redirect is an ``HTTPError``). A redirect to
            another origin is followed only with ``Redirects(cross_origin=True)``, and then
            without the token, the session id, cookies or any header of ``headers=`` not marked
            safe; HTTPS is never downgraded to HTTP.
        pool_size: the most requests in flight at once (connections and worker threads).
        retry: when a request is sent again (``Retry``); by default safe requests get two more
            tries after a 429/503 or a broken connection, ``tools/call`` only when the connection
            was never made.
        reconnect: when the server forgets our session (404 to a request carrying its id),
            initialize a new one transparently and repeat the request once if it is safe to
            repeat (``tools/call`` only with ``Retry(retry_tool_calls=True)``); otherwise, or
            with ``reconnect=False``, the request fails with ``SessionExpired``.
        on_session_change: ``(old_id, new_id)`` after a new session replaced an expired one
            (called on the thread of a request that met the expiry).
        stream_idle_timeout: an event stream read without a deadline (the GET stream, a 2026
            ``subscriptions/listen``, a call with ``timeout=None``) that brings no byte, not even
            a keep-alive comment, for this many seconds counts as broken, so a connection that
            died without a FIN (a NAT or proxy dropped it) is found: the GET stream is reopened
            (with ``Last-Event-ID``), a listen is sent again; ``None``: wait forever.
        max_message_size: the largest message read, in bytes: a JSON body (checked on its
            ``Content-Length``, then as it arrives) or one SSE event's data. A bigger one is
            never buffered whole: the call it answers fails with ``MessageTooLarge`` (on the GET
            stream it is logged and skipped); the connection lives on.
        name: a label for logs, errors and thread names (default: the server's ``host:port``).
        sse_fallback: when the server refuses the first setup POST as an HTTP+SSE (2024-11-05)
            server does, ``fallback()`` offers an ``SSETransport`` to the same URL. ``Client``
            sets it when it builds the transport from a URL string.
    """

    sends_headers = True

    def __init__(self, url: str, *, headers: Optional[Dict[str, str]] = None,
                 auth: Auth = None, auth_header: str = "Authorization",
                 session: Optional["requests.Session"] = None, connect_timeout: float = 10.0,
                 follow_redirects: Union[bool, Redirects] = False, pool_size: int = 32, retry: Optional[Retry] = None,
                 reconnect: bool = True, on_session_change: Optional[Callable[[Optional[str], Optional[str]], Any]] = None,
                 name: Optional[str] = None, sse_fallback: bool = False,
                 stream_idle_timeout: Optional[float] = 300.0,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        from ...policies.retry import Retry  # here, not at import: mcpclient's import stays cheap

        super().__init__(url, kind="HTTP", headers=headers, auth=auth, auth_header=auth_header, session=session,
                         connect_timeout=connect_timeout, retry=retry if retry is not None else Retry(), name=name,
                         max_message_size=max_message_size)
        if not isinstance(follow_redirects, (bool, Redirects)):
            raise TypeError("follow_redirects must be a Redirects, True or False")
        self.follow_redirects = follow_redirects
        #: The redirect policy applied (``None``: no redirect is followed).
        self.redirects: Optional[Redirects] = Redirects() if follow_redirects is True else follow_redirects or None
        self.pool_size = pool_size
        self.reconnect = reconnect
        self.on_session_change = on_session_change
        self.sse_fallback = sse_fallback
        self.stream_idle_timeout = stream_idle_timeout
        self._retry_given = retry  # what fallback() passes on (None: the SSE transport's own default)
        #: The server's session id, from the answer to the setup request (None: no session).
        self.session_id: Optional[str] = None
        self.protocol_version: Optional[str] = None
        self._stateless = False  # 2026-07-28: no GET stream; cancel = close the response stream
        self._setup: Tuple[bytes, ...] = ()  # the setup request (re-numbered) and notification, for renewal
        self._opened = False  # a setup request was answered 200: no fallback after that
        self._refused = False  # the first setup POST was refused as an HTTP+SSE server does (fallback())
        self._fell_back = False
        self._renewals = SingleFlight()  # keyed by the expired session id
        self._change: Optional[Tuple[str, str]] = None  # (old, new) session ids for on_session_change
        self._posts: Optional[WorkerPool] = None
        self._poster: Optional[Union[FastPoster, SessionPoster]] = None  # set by start()
        self._open: Set[Any] = set()  # responses being read, closed on close() to unblock readers
        self._streams: Dict[Any, Any] = {}  # id of a request in flight -> its response being read, or None
        self._cancelled: Set[Any] = set()  # requests in flight the session gave up on (see _track)
        self._get_open: Optional[Tuple[Response, Optional[str]]] = None  # the GET stream read, its session
        # Guards _open/_streams/_cancelled/_change/_get_open only; never held across I/O, a callback
        # or another lock (renewals and auth flows are single flights: no lock while they run).
        self._open_lock = threading.Lock()
        self._get_thread: Optional[threading.Thread] = None
        self._get_answered = threading.Event()
        self._get_wake = threading.Event()  # a renewal (or close) ends the GET stream's wait to reopen

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        self._open_http(self.pool_size)
        http = self._http
        assert http is not None  # (made by _open_http)
        if self.redirects is not None:  # each 3xx judged before anything follows it (_redirects)
            self._poster = RedirectPoster(http, self.url, self.headers, self.name, self.connect_timeout,
                                          self.redirects, self.auth)
        else:  # straight to the pool when nothing of requests' own is needed
            fast = FastPoster.open(http, self.url, self.headers, self.name, self.connect_timeout) \
                if self._owns_http else None
            self._poster = fast or SessionPoster(http, self.url, self.headers, self.name, self.connect_timeout)
        self._posts = WorkerPool(f"mcpclient-{self.instance}-http", self.pool_size, -1)

    def negotiated(self, protocol_version: str, stateless: bool) -> None:
        """Add the version header from now on; in the handshake era open the GET stream and
        return once the server answered it (or ``connect_timeout`` passed), so nothing it sends
        there after connect is lost."""
        self.protocol_version = protocol_version
        self._stateless = stateless
        if stateless:
            return  # 2026-07-28: no GET stream (server messages come with each request)
        self._get_thread = start_thread(self._listen, f"mcpclient-{self.instance}-http-get")
        self._get_answered.wait(self.connect_timeout)

    def close(self, deadline: Optional[float] = None) -> None:
        """Abort the streams being read, DELETE the session, stop the workers: all by one
        ``deadline`` (default ``CLOSE_BUDGET`` seconds from now), the DELETE's connect and read
        included (it gets at most 2 s of it)."""
        # The DELETE's share is _sessions._DELETE_TIMEOUT.
        deadline = self._begin_close(deadline)
        if deadline is None:
            return
        self._get_wake.set()
        try:
            with self._open_lock:
                streams, self._open = list(self._open), set()
            for response in streams:  # unblocks the threads reading them (they close the responses)
                abort(response)
            if self.session_id is not None and self._http is not None:
                self._delete(self.session_id, deadline)
            if self._posts is not None:
                self._posts.shutdown(deadline)
            if self._get_thread is not None:
                join_all([self._get_thread], deadline)
        finally:
            self._end_close()

    def reopen(self) -> "HTTPTransport":
        """A new transport to the same URL with the same settings and instance number: a new
        session on the server (after the connection was lost, or in a forked child)."""
        fresh = HTTPTransport(self.url, headers=self.headers, auth=self.auth, session=self._session_to_share(),
                              connect_timeout=self.connect_timeout, follow_redirects=self.follow_redirects,
                              pool_size=self.pool_size, retry=self._retry_given, reconnect=self.reconnect,
                              on_session_change=self.on_session_change, name=self.name,
                              sse_fallback=self.sse_fallback, stream_idle_timeout=self.stream_idle_timeout,
                              max_message_size=self.max_message_size)
        fresh.instance = self.instance
        return fresh

    def fallback(self, error: BaseException) -> Optional[Transport]:
        """An ``SSETransport`` to the same URL, with the same headers, credentials, ``requests``
        session (a user's), ``retry`` (if one was given), connect timeout, name and instance
        number, if this transport was made with ``sse_fallback`` and the server refused the
        first setup POST with 400/404/405 and no JSON-RPC body (an HTTP+SSE server); once."""
        if not self.sse_fallback or self._fell_back or self._opened or not self._refused \
                or not isinstance(error, HTTPError) or error.status not in _LEGACY_REFUSALS:
            return None
        from .sse import SSETransport  # deferred: import cost (transports.sse); only a fallback needs it

        self._fell_back = True
        sse = SSETransport(self.url, headers=self.headers, auth=self.auth, connect_timeout=self.connect_timeout,
                           session=None if self._owns_http else self._http, retry=self._retry_given, name=self.name,
                           max_message_size=self.max_message_size)
        sse.instance = self.instance  # the same connection in thread names and logs
        log.info("%s refused the Streamable HTTP setup (%s); trying the HTTP+SSE transport", self.name, error)
        return sse

    # --- sending --------------------------------------------------------------------------------

    def send(self, message: Any, *, deadline: Optional[float] = None, wait: bool = False,
             headers: Optional[Dict[str, str]] = None, idempotent: Optional[bool] = False,
             setup: bool = False) -> Optional[Any]:
        if self._closing.is_set() or self._posts is None:
            raise ConnectionClosed("the transport is closed" if self._posts else "transport not started")
        body = encode_frame(message)
        rid = message.get("id") if isinstance(message, dict) and "method" in message else None
        if setup:
            self._record_setup(message, body, rid)
        if rid is None:  # a notification or a response: send it now, in order
            # (a setup notification's answer never sets the session id: only the request's does)
            response = self._exchange(self._sender(body, False), verb="POST", url=self.url, deadline=deadline,
                                      idempotent=idempotent, extra=headers)
            try:
                if response.status_code not in (200, 202):
                    raise status_error(self.name, response, deadline)
                if response.status_code == 200 and response.headers.get("Content-Length") != "0":
                    if media_type(response) in (JSON, SSE):  # some servers answer a response with messages
                        self._deliver_body(response, deadline=deadline)
                    elif read_body(response, self.name, self.max_message_size, deadline):
                        raise ProtocolError(f"{self.name} answered with Content-Type "
                                            f"{media_type(response) or 'none'!r}, not JSON or SSE")
            finally:
                response.close()
            return None
        with self._open_lock:
            self._streams[rid] = None  # in flight from now on: a cancel is noted (cancel_request)
        if wait and deadline is not None:
            # The caller blocks for the answer anyway: POST on its thread, no hand-off. (Not
            # without a deadline: a server that never answers would hold it where close() cannot
            # reach; on a worker, the caller waits in the engine, which close() wakes.)
            return self._request(rid, body, deadline, headers, idempotent, setup, True)
        if not self._posts.try_submit("POST", self._request, rid, body, deadline, headers, idempotent, setup, False):
            self._end(rid)  # the lane stopped: the transport is closing
        return None

    def _request(self, rid: Any, body: bytes, deadline: Optional[float], extra: Optional[Dict[str, str]],
                 idempotent: Optional[bool], setup: bool, inline: bool) -> Optional[Any]:
        """POST one request (again, as the policies allow) and feed what comes back to the
        reader, or its failure. Runs on the caller's thread (``inline``: a lone JSON answer is
        returned to it instead) or a worker."""
        streaming = False
        try:
            if self._cancelled and rid in self._cancelled:
                return None  # cancelled (2026) before it was sent: nothing to tell the server
            response = self._exchange(self._sender(body, setup), verb="POST", url=self.url, deadline=deadline,
                                      idempotent=idempotent, extra=extra)
            try:
                if response.status_code == 200:
                    if inline and media_type(response) == SSE:
                        # A stream is read by a worker: the caller waits for its answer in the
                        # engine, whose deadline a stream that trickles or never ends cannot stretch.
                        streaming = self._posts.try_submit(  # type: ignore[union-attr]
                            "stream", self._read_answer, rid, response, deadline, body, extra, idempotent)
                        if streaming:
                            return None
                    return self._deliver_body(response, rid, inline, deadline=deadline)
                answer = rpc_error_body(response, rid, deadline)
                if answer is not None:  # a JSON-RPC error sent with a 4xx/5xx: the call's answer
                    if inline:
                        return answer
                    self._inbox.put(answer)
                    return None
                error = status_error(self.name, response, deadline)
                if setup and not self._opened and response.status_code in _LEGACY_REFUSALS:
                    self._refused = True  # maybe an HTTP+SSE server: see fallback()
                raise error
            finally:
                if not streaming:
                    response.close()
        except StreamBroken as broke:  # 2026-07-28
            self._reissue(rid, body, deadline, extra, idempotent, broke)
        except BaseException as exc:
            if inline and not isinstance(exc, Exception):
                raise  # the caller's own thread: a Ctrl-C or sys.exit() there is the caller's
            # On the lane, a token callable's sys.exit() too: the call fails now, not at its timeout.
            if rid not in self._cancelled:
                self._fail(rid, exc, deadline)
        finally:
            if not streaming:
                self._end(rid)
        return None

    def _read_answer(self, rid: Any, response: Response, deadline: Optional[float], body: bytes,
                     extra: Optional[Dict[str, str]], idempotent: Optional[bool]) -> None:
        """Worker: a blocking call's SSE answer (see ``_request``). It may be read for long: the
        lane may have one more worker meanwhile, so ``pool_size`` such streams never hold up
        the POSTs of futures (which the lane's size is for)."""
        try:
            with self._posts.waiting():  # type: ignore[union-attr]
                try:
                    self._deliver_body(response, rid, deadline=deadline)
                except StreamBroken as broke:  # 2026-07-28
                    response.close()
                    self._reissue(rid, body, deadline, extra, idempotent, broke)
        except BaseException as exc:  # (a lane thread) a token callable's sys.exit() too
            if rid not in self._cancelled:
                self._fail(rid, exc, deadline)
        finally:
            response.close()
            self._end(rid)

    def _sender(self, body: bytes, setup: bool) -> Send:
        """One POST of ``body`` for ``_exchange``; a setup request's 200 answer sets the session id."""
        def send(headers: Dict[str, str], read: Optional[float]) -> Response:
            response = self._post(body, headers, read)
            if setup and response.status_code == 200:
                self._opened = True
                session_id = response.headers.get(SESSION_HEADER)
                if session_id:
                    # Only a setup answer may set it: other answers echo it, and a late one from an
                    # expired session must not bring that session back.
                    self.session_id = session_id
            return response
        return send

    def _post(self, body: bytes, headers: Dict[str, str], read: Optional[float]) -> Response:
        """One POST, its failures mapped (``request_error``)."""
        if self._poster is None:
            raise ConnectionClosed("the transport was not started")
        return self._poster.post(body, headers, read)

    # --- receiving ------------------------------------------------------------------------------

    def _bound_idle(self, response: Response) -> None:
        """An answer stream read without a deadline (a 2026 listen, a call with ``timeout=None``)
        gets the idle bound: servers keep such streams alive with SSE comments, so silence for
        ``stream_idle_timeout`` means the connection is dead (the stream then counts as broken)."""
        sock = body_socket(response)
        if self.stream_idle_timeout is not None and sock is not None and sock.gettimeout() is None:
            sock.settimeout(self.stream_idle_timeout)

    def _deliver_body(self, response: Response, rid: Any = None, inline: bool = False,
                      wire: Any = None, deadline: Optional[float] = None) -> Optional[Any]:
        """Queue the messages of a 200 answer: one JSON body, or every event of an SSE stream
        (resumed until the answer to ``rid`` came, if the server lets it be resumed; 2026: raises
        ``StreamBroken`` instead). ``inline``: this is the caller's own thread, which gets a JSON answer
        back instead (see ``send``). ``wire``: the id ``rid`` was re-issued under (``_reissue``).
        ``deadline``: a JSON body must be read whole by then (``read_body``); an event stream is
        read until the session gives up on the call (``cancel_request`` ends it)."""
        kind = media_type(response)
        if kind == JSON:
            if not self._track(response, rid):
                return None  # cancelled (2026): the response is closed unread
            try:
                body = read_body(response, self.name, self.max_message_size, self._read_until(rid, deadline))
                if not body and rid is None:
                    return None  # an empty answer to a notification
                message = decode_frame(body)
            finally:
                self._untrack(response, rid)
            if wire is not None and type(message) is dict and message.get("id") == wire:
                message["id"] = rid
            if inline and type(message) is dict and message.get("id") == rid and (
                    "result" in message or "error" in message):
                return message
            self._inbox.put(message)
            # A body without the answer (null, [1], another id) fails the call now, not at its timeout.
            if rid is not None and not _answers(message, rid) and (wire is None or not _answers(message, wire)):
                raise ProtocolError(f"{self.name} answered request {rid!r} with a JSON body that is not its response")
            return None
        if kind != SSE:
            raise ProtocolError(f"{self.name} answered with Content-Type {kind or 'none'!r}, not JSON or SSE")
        self._bound_idle(response)
        # A stream answering no request (a notification's, a response's) ends by the send's
        # deadline: no call's timeout or cancel would end it (a server keeping it open for ever).
        answered, last_id, retry = self._read_events(response, rid, None, None, wire,
                                                     deadline if rid is None else None)
        if answered or rid is None or self._closing.is_set() or rid in self._cancelled:
            return None
        if self._stateless:  # no GET, no resumption: the caller may send the request again
            raise StreamBroken(f"{self.name} ended the answer stream before the answer")
        if last_id is None:
            raise ConnectionClosed(f"{self.name} ended the stream before the answer, with no event id "
                                   "to resume from")
        self._resume(rid, last_id, retry)
        return None

    def _read_events(self, response: Response, rid: Any, last_id: Optional[str], retry: Optional[float],
                     wire: Any = None, deadline: Optional[float] = None) -> Tuple[bool, Optional[str], Optional[float]]:
        """Queue one stream's messages; return (the answer to ``rid`` came, or ``rid`` was cancelled:
        nothing more to read; the last event id; the retry delay). ``wire``: as in ``_deliver_body``;
        ``deadline``: the stream is read until then at most (``timed_chunks``)."""
        if not self._track(response, rid):
            return True, last_id, retry  # cancelled (2026): the response is closed unread
        answered = False
        expected = rid if wire is None else wire
        try:
            for event in self._events(response, self._read_until(rid, deadline)):
                last_id = event.id if event.id is not None else last_id
                retry = min(event.retry / 1000, _RETRY_MAX) if event.retry is not None else retry
                if event.oversized:
                    error = MessageTooLarge(f"{self.name} sent an event over max_message_size="
                                            f"{self.max_message_size} bytes", limit=self.max_message_size)
                    if rid is not None:  # it may have been the answer: the call fails with it
                        raise error
                    log.warning("%s; skipped", error)
                    continue
                message = self._event_message(event)
                if message is None:
                    continue
                if rid is not None and isinstance(message, dict) and message.get("id") == expected \
                        and ("result" in message or "error" in message):
                    answered = True
                    if wire is not None:
                        message["id"] = rid  # the answer to the re-issued request is the original's
                self._inbox.put(message)
        finally:
            self._untrack(response, rid)
        return answered, last_id, retry

    def _track(self, response: Response, rid: Any) -> bool:
        """Before reading ``response`` (of request ``rid``, or of no request): let ``close()``
        and ``cancel_request(rid)`` abort it. False: ``rid`` was cancelled (2026) before its
        answer came (the check is made here, under the lock, so no cancel is missed): the
        response is aborted, which tells the server; the caller reads none of it. In the
        handshake era such an answer is still read, for ``LATE_ANSWER`` s (``_read_until``): the
        session hands what it made to whoever gave up on it (a task to cancel)."""
        with self._open_lock:
            if self._closing.is_set():
                raise ConnectionClosed("the transport is closed")
            refused = self._stateless and rid in self._cancelled
            if not refused:
                self._open.add(response)
                if rid is not None:
                    self._streams[rid] = response
        if refused:
            abort(response)
        return not refused

    def _read_until(self, rid: Any, deadline: Optional[float]) -> Optional[float]:
        """How long to read the answer to ``rid``: ``deadline``, or ``LATE_ANSWER`` s at most
        once the session gave up on it (handshake era: see ``_track``)."""
        if rid is None or rid not in self._cancelled:
            return deadline
        late = time.monotonic() + LATE_ANSWER
        return late if deadline is None else min(deadline, late)

    def _untrack(self, response: Response, rid: Any) -> None:
        with self._open_lock:
            self._open.discard(response)
            if rid is not None and self._streams.get(rid) is response:
                self._streams[rid] = None  # still in flight until _end (a resumption may follow)

    def _end(self, rid: Any) -> None:
        """The request ``rid`` is over (answered, failed or cancelled): forget it."""
        with self._open_lock:
            self._streams.pop(rid, None)
            self._cancelled.discard(rid)

    def cancel_request(self, rid: Any) -> bool:
        """The session gave up on ``rid`` (its timeout, a cancel, an interrupt): close its answer
        stream now if one is being read, else as soon as one comes, so no worker reads on for an
        answer nobody waits for (a server keeping the stream alive with comments). 2026-07-28:
        that is the cancel (no notification; True); before, the notification follows (False). A
        request no longer in flight needs nothing."""
        # A stream that comes later is closed by _track.
        with self._open_lock:
            if rid not in self._streams:
                return self._stateless
            self._cancelled.add(rid)
            response = self._streams[rid]
        if response is not None:
            abort(response)
        return self._stateless

    def _events(self, response: Response, deadline: Optional[float] = None) -> Iterator[SSEEvent]:
        """The events of an SSE response (until ``deadline`` at most); a broken connection just
        ends them (the caller resumes)."""
        try:
            source = chunks(response) if deadline is None else timed_chunks(response, deadline)
            yield from parse_sse(source, self.max_message_size)
        except Exception as exc:  # the stream broke (or close() aborted it, or its deadline came)
            log.debug("event stream from %s ended: %s", self.name, type(exc).__name__)

