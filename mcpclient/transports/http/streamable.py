"""Streamable HTTP transport (MCP 2025-03-26 … 2026-07-28), on ``requests``.

Every client message is one POST. A request is POSTed on a poster thread
(``mcpclient-<n>-http-<k>``), whatever the caller does meanwhile (it waits on its future, which
its deadline and ``close()`` end), so a slow or streaming answer never holds up other calls; its
answer — one JSON message, or an SSE stream of messages ending with the response — is fed to the
session's reader through a queue. Notifications and responses are POSTed on the caller's thread,
which keeps them in order with what the caller sends next. In the handshake era a GET stream
(``mcpclient-<n>-http-get``) carries server-initiated messages. An HTTP failure fails only the
request it belongs to (``DeliveryFailed``). A request's SSE stream that ends before its answer is
resumed with a GET carrying ``Last-Event-ID`` (2025-11-25 polling), or in the 2026 era sent again
under a new id if it is safe to repeat.

The transport knows no MCP method: what it must know about a message comes with it from the
client (``send``'s ``headers``, ``idempotent``, ``setup``). It is made of parts that each keep
their own state: ``Exchange`` (``_exchange``: retries, session renewal, auth rounds, redirects
around one request), ``SessionLife`` (``_sessions``: the session id, its headers, renewal,
DELETE), ``GetStream`` (``_streams``: the server's stream and resumption), ``InFlight``
(``_inflight``: what ``close()``, a cancel and a deadline end, even while a server trickles its
status line), and the poster (``_posters``: straight to ``requests``' connection pool unless a
user's session, a proxy or ``follow_redirects`` needs ``requests``' own machinery).
"""
from __future__ import annotations

import logging
from _thread import allocate_lock as _allocate_lock
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Union, cast

from ..._util.threads import Once, WorkerPool, next_instance, reraise_on_main_thread
from ...auth.base import AuthProvider
from ...errors import ConnectionClosed, ProtocolError
from ...policies.redirects import Redirects
from ...policies.retry import Retry
from ..base import (
    DEFAULT_MAX_MESSAGE_SIZE, LATE_ANSWER, Endpoint, PendingExchange, RemakeKind, SessionRenewed, Transport,
    TransportInfo, decode_frame, encode_frame,
)
from ._answers import Answers, StreamBroken
from ._connections import Connections
from ._exchange import Auth, Credentials, Exchange, Hop
from ._inflight import Closing, Inbox, InFlight, Request
from ._reading import JSON, SSE, Response, Send, media_type, read_body, rpc_error_body, status_error
from ._sessions import SessionLife
from ._streams import GetStream
from .sse import SSETransport

if TYPE_CHECKING:
    from ..base import Message, Received
    import requests

    from ._posters import FastPoster, SessionPoster

__all__ = ["HTTPTransport"]

log = logging.getLogger("mcpclient.transport.http")

_LEGACY_REFUSALS = (400, 404, 405)  # how an HTTP+SSE server refuses the Streamable HTTP setup POST


class HTTPTransport(Transport):
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
        pool_size: the most requests being sent at once (connections and poster threads); an
            event stream being read for a call does not hold up other requests.
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
            server does, the client tries an ``SSETransport`` to the same URL
            (``info.remake("fallback")``). ``Client`` sets it when it builds the transport from
            a URL string.
    """

    def __init__(self, url: str, *, headers: Optional[Dict[str, str]] = None,
                 auth: Auth = None, auth_header: str = "Authorization",
                 session: Optional["requests.Session"] = None, connect_timeout: float = 10.0,
                 follow_redirects: Union[bool, Redirects] = False, pool_size: int = 32, retry: Optional[Retry] = None,
                 reconnect: bool = True, on_session_change: Optional[Callable[[Optional[str], Optional[str]], object]] = None,
                 name: Optional[str] = None, sse_fallback: bool = False,
                 stream_idle_timeout: Optional[float] = 300.0,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, _instance: int = 0) -> None:
        if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
            raise ValueError(f"an HTTP transport needs an http(s) URL, not {url!r}")
        if not isinstance(max_message_size, int) or max_message_size < 1:
            raise ValueError(f"max_message_size must be a positive number of bytes, not {max_message_size!r}")
        if not isinstance(follow_redirects, (bool, Redirects)):
            raise TypeError("follow_redirects must be a Redirects, True or False")
        self.url = url
        self.connect_timeout = connect_timeout
        self.max_message_size = max_message_size
        self.name = name or Endpoint.of_url(url).address or "http"  # errors name the server: 127.0.0.1:8080
        self._instance = _instance or next_instance()
        self.follow_redirects = follow_redirects
        #: The redirect policy applied (``None``: no redirect is followed).
        self.redirects: Optional[Redirects] = Redirects() if follow_redirects is True else follow_redirects or None
        self.pool_size = pool_size
        self.on_session_change = on_session_change
        self.sse_fallback = sse_fallback
        self.stream_idle_timeout = stream_idle_timeout
        self._stateless = False  # 2026-07-28: no GET stream; cancel = close the response stream
        self._started = Once()
        self._closing = Closing()
        closing = self._closing.event
        self._credentials = Credentials(url, headers, auth, auth_header)
        self._connections = Connections(session, name=self.name, connect_timeout=connect_timeout)
        self._inflight = InFlight(self.name, lambda: f"mcpclient-{self._instance}-http-deadline")
        self._inbox = Inbox(self.name, closing)
        self._session = SessionLife(self._credentials, self._inflight, name=self.name, reconnect=reconnect,
                                    max_message_size=max_message_size, post=self._post, delete=self._delete,
                                    moved=self._session_moved, renewed=self._session_renewed)
        self._exchange = Exchange(self._credentials, retry if retry is not None else Retry(), closing,
                                  name=self.name, session=self._session, redirects=self.redirects)
        self._answers = Answers(self._inbox, closing, name=self.name, max_message_size=max_message_size,
                                stream_idle_timeout=stream_idle_timeout)
        self._get = GetStream(self._exchange, self._inflight, get=self._get_once, session_id=self._session_id,
                              read_events=self._answers.read_events, closing=closing, url=url, name=self.name,
                              connect_timeout=connect_timeout)
        self._answers.resume = self._get.resume
        self._poster: Optional[Union[FastPoster, SessionPoster]] = None  # set by start()
        self._hopper: Optional[SessionPoster] = None  # the poster that follows redirects (follow_redirects)
        self._posts: Optional[WorkerPool] = None
        # Made again with the same settings (and the user's requests session): a new session on
        # the server; or, with sse_fallback, the HTTP+SSE transport to the same URL (``_remake``).
        settings = dict(headers=self._credentials.headers, auth=self._credentials.provider,
                        connect_timeout=connect_timeout, retry=retry, name=self.name,
                        max_message_size=max_message_size, _instance=self._instance)
        self._described = TransportInfo(
            self.name, Endpoint.of_url(url), url, remote=True, sends_headers=True, instance=self._instance,
            remake=partial(_remake, url, settings, dict(
                follow_redirects=follow_redirects, pool_size=pool_size, reconnect=reconnect,
                on_session_change=on_session_change, sse_fallback=sse_fallback,
                stream_idle_timeout=stream_idle_timeout), self._connections, self._session))

    # --- what the parts hold ------------------------------------------------------------------------

    @property
    def headers(self) -> Dict[str, str]:
        """The static headers sent with every request."""
        return self._credentials.headers

    @property
    def auth(self) -> Optional[AuthProvider]:
        """The ``AuthProvider`` requests are sent with (``auth=`` as given became one, watched
        for the secrets it hands out: ``info.secrets``), or None."""
        return self._credentials.auth

    @property
    def retry(self) -> Retry:
        """When a request is sent again."""
        return self._exchange.retry

    @property
    def session_id(self) -> Optional[str]:
        """The server's session id, from the answer to the setup request (None: no session)."""
        return self._session.id

    @property
    def protocol_version(self) -> Optional[str]:
        """The negotiated protocol version, sent with every request once known."""
        return self._session.version

    @property
    def reconnect(self) -> bool:
        """Renew a session the server forgot (see the class doc)."""
        return self._session.reconnect

    def _session_id(self) -> Optional[str]:
        return self._session.id

    @property
    def info(self) -> TransportInfo:
        """TCP to the URL's host, remote, sending per-request headers; who requests act as, the
        secrets they carry (``Credentials.describe``) and the session in use."""
        return self._credentials.describe(self._described, self._session.id)

    def receive(self) -> Optional[Received]:
        received: Optional[Received] = self._inbox.get()
        return received

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Open the connection pool and the posters (once: see ``Transport.start``)."""
        self._started.run(self._start)

    def _start(self) -> None:
        # The requests stack loads here, at the first start: naming the transport loads none of
        # it (urllib3 binds a socket at import, which a replay or a type hint must not do).
        from ._posters import FastPoster, SessionPoster

        http = self._connections.open(self.url, self.pool_size)
        if self._closing.event.is_set():
            raise ConnectionClosed("the transport is closed")
        self._credentials.bind()
        headers = self._credentials.headers
        if self.redirects is not None:  # each 3xx judged by the exchange before a hop follows it
            self._poster = self._hopper = SessionPoster(http, self.url, headers, self.name, self.connect_timeout)
        else:  # straight to the pool when nothing of requests' own is needed
            fast = FastPoster.open(http, self.url, headers, self.name, self.connect_timeout) \
                if self._connections.owned else None
            self._poster = fast or SessionPoster(http, self.url, headers, self.name, self.connect_timeout)
        self._posts = WorkerPool(f"mcpclient-{self._instance}-http", self.pool_size, -1)

    def negotiated(self, protocol_version: str, stateless: bool) -> None:
        """Add the version header from now on; in the handshake era open the GET stream and
        return once the server answered it (or ``connect_timeout`` passed), so nothing it sends
        there after connect is lost."""
        self._session.version = protocol_version
        self._stateless = self._answers.stateless = stateless
        if stateless:
            return  # 2026-07-28: no GET stream (server messages come with each request)
        self._get.start(f"mcpclient-{self._instance}-http-get")

    def close(self, deadline: Optional[float] = None) -> None:
        """End every request in flight (a blocked read returns at once, however the server paces
        its answer), DELETE the session, stop the workers: all by one ``deadline`` (default
        ``CLOSE_BUDGET`` seconds from now), the DELETE included (it gets at most 2 s of it)."""
        # The DELETE's share is _sessions._DELETE_TIMEOUT.
        deadline = self._closing.begin(deadline)
        if deadline is None:
            return
        try:
            self._get.wake()
            self._inflight.end_all()  # the threads reading answers close them
            if self._connections.http is not None:
                self._session.delete(deadline)
            if self._posts is not None:
                self._posts.shutdown(deadline)
            self._get.join(deadline)
            self._inflight.stop(deadline)
        finally:
            self._connections.close()
            self._inbox.put(None)
            self._closing.done()

    # --- sending --------------------------------------------------------------------------------

    def send(self, message: Message, *, deadline: Optional[float] = None,
             headers: Optional[Dict[str, str]] = None, idempotent: Optional[bool] = False,
             setup: bool = False) -> Optional[PendingExchange]:
        """Send one message (see ``Transport.send``). A request's exchange is returned, for a
        thread that waits for the answer to run (it gets a JSON answer back; an event stream's
        messages, and a failure, come through ``receive()``) or to hand to a poster thread.
        Either way its deadline, a cancel and ``close()`` end it, whatever the server does byte
        by byte. A notification
        or a response is POSTed on this thread, before this returns."""
        posts = self._posts
        if posts is None or self._closing.event.is_set():
            raise ConnectionClosed("the transport is closed" if posts else "transport not started")
        body = encode_frame(message)
        rid = message.get("id") if isinstance(message, dict) and "method" in message else None
        if setup:
            self._session.record(message, body, rid)
        # (a setup notification's answer never sets the session id: only the request's does)
        request = Request(rid, body, deadline=deadline, headers=headers, idempotent=idempotent,
                          setup=setup and rid is not None)
        self._inflight.add(request)
        if rid is None:  # a notification or a response: send it now, in order
            try:
                self._notify(request)
            finally:
                self._inflight.remove(request)
            return None
        return _Exchange(self, request)

    def _notify(self, request: Request) -> None:
        """POST a notification or a response (this thread); what the answer carries goes to the reader."""
        deadline = request.deadline
        response = self._exchange.send(self._sender(request), verb="POST", url=self.url, deadline=deadline,
                                       idempotent=request.idempotent, extra=request.headers, hop=self._hop(request))
        try:
            if response.status_code not in (200, 202):
                raise status_error(self.name, response, deadline)
            if response.status_code == 200 and response.headers.get("Content-Length") != "0":
                if media_type(response) in (JSON, SSE):  # some servers answer a response with messages
                    self._answers.deliver(response, request)
                elif read_body(response, self.name, self.max_message_size, deadline):
                    raise ProtocolError(f"{self.name} answered with Content-Type "
                                        f"{media_type(response) or 'none'!r}, not JSON or SSE")
        finally:
            response.close()

    def _request(self, request: Request, here: bool = False) -> Optional[Any]:
        """POST one request (again, as the policies allow) and feed what comes back to the
        reader, or its failure; on a poster thread, or (``here``) on a thread that waits for the
        answer: then a JSON answer is returned to it instead, an event stream is read by a
        poster (the caller waits for its answer in the engine, which ends the wait at the
        deadline or on ``close()`` however the stream goes on), and an interrupt there (Ctrl-C)
        goes on up."""
        streaming = False
        try:
            if request.ended is not None or request.cancelled:
                return None  # given up, or closed, before it was sent: nothing to tell the server
            response = self._exchange.send(self._sender(request), verb="POST", url=self.url, deadline=request.deadline,
                                           idempotent=request.idempotent, extra=request.headers,
                                           hop=self._hop(request))
            try:
                if response.status_code == 200:
                    if here:
                        if media_type(response) == JSON:
                            return self._answers.json_answer(response, request)
                        streaming = self._posts is not None and self._posts.try_submit(
                            "stream", self._stream_answer, response, request)
                        if streaming:
                            return None
                    self._read_answer(response, request)
                    return None
                answer = rpc_error_body(response, request.id, request.deadline)
                if answer is not None:  # a JSON-RPC error sent with a 4xx/5xx: the call's answer
                    if here:
                        return answer
                    self._inbox.put(answer)
                    return None
                error = status_error(self.name, response, request.deadline)
                if request.setup and not self._session.opened and response.status_code in _LEGACY_REFUSALS:
                    self._session.refused = True  # maybe an HTTP+SSE server: see _remake
                raise error
            finally:
                if not streaming:
                    response.close()
        except StreamBroken as broke:  # 2026-07-28
            self._reissue(request, broke)
        except BaseException as exc:  # a token callable's sys.exit() too: the call fails now, not at its timeout
            if here and not isinstance(exc, Exception):
                raise  # the waiting caller's own thread: its Ctrl-C is its own (the call is cancelled)
            self._inbox.fail(request, exc)
        finally:
            if not streaming:
                self._inflight.remove(request)
        return None

    def _stream_answer(self, response: Response, request: Request) -> None:
        """Poster thread: the event stream of a request a waiting caller sent (``_request``)."""
        try:
            try:
                self._read_answer(response, request)
            finally:
                response.close()
        except StreamBroken as broke:  # 2026-07-28
            self._reissue(request, broke)
        except BaseException as exc:  # (a poster thread) a token callable's sys.exit() too
            self._inbox.fail(request, exc)
        finally:
            self._inflight.remove(request)

    def _reissue(self, request: Request, broke: ConnectionClosed) -> None:
        """2026-07-28: the answer stream of ``request`` broke before its answer. Send it again
        under a new id if it is safe to repeat, as the retry policy allows, and deliver its answer
        as the answer to the original id; else fail the call. Never raises."""
        rid, deadline, idempotent = request.id, request.deadline, request.idempotent
        exchange = self._exchange
        retry, message, tries = exchange.retry, None, 0
        try:
            while True:
                if not retry.repeatable(idempotent):
                    raise ConnectionClosed(f"{broke}; the request may have run, so it was not sent again "
                                           "(only idempotent requests are, or tool calls with Retry(retry_tool_calls=True))")
                following, wait = exchange.next_try(retry, idempotent, reached=True, deadline=deadline,
                                                     reason="a broken answer stream")
                if following is None:
                    raise ConnectionClosed(f"{broke}; gave up after sending the request {tries + 1} time(s)")
                exchange.pause(wait, broke)
                if request.ended is not None:
                    return
                retry, tries = following, tries + 1
                message = decode_frame(request.body) if message is None else message
                wire = f"{rid}-retry-{tries}"  # a new id (the engine's are integers: no clash)
                body = encode_frame(dict(cast("Dict[str, Any]", message), id=wire))  # (a request: one object)
                response = exchange.send(self._sender(request, body), verb="POST", url=self.url, deadline=deadline,
                                         idempotent=idempotent, extra=request.headers, hop=self._hop(request, body))
                try:
                    if response.status_code == 200:
                        self._read_answer(response, request, wire)
                        return
                    answer = rpc_error_body(response, rid, deadline)  # (a JSON-RPC error: the call's answer)
                    if answer is None:
                        raise status_error(self.name, response, deadline)
                    self._inbox.put(answer)
                    return
                except StreamBroken as again_broke:
                    broke = again_broke
                finally:
                    response.close()
        except BaseException as exc:  # (a poster thread) a token callable's sys.exit() too: the call fails now
            self._inbox.fail(request, exc)

    def _read_answer(self, response: Response, request: Request, wire: Any = None) -> None:
        """Poster thread: ``Answers.deliver``. An event stream may be read for long (a tool that
        reports progress for minutes): meanwhile the lane may run one more poster, so streams
        being read never hold up the POSTs of other requests (``pool_size`` bounds those)."""
        if media_type(response) != SSE:
            self._answers.deliver(response, request, wire)
            return
        with self._posts.waiting():  # type: ignore[union-attr]  # (started: this runs on it)
            self._answers.deliver(response, request, wire)

    def _sender(self, request: Request, body: Optional[bytes] = None) -> Send:
        """One POST of ``request`` (of ``body`` in its place: a re-issue) for the exchange, as a
        request in flight; a setup request's 200 answer sets the session id."""
        inflight, post = self._inflight, self._post
        session = self._session if request.setup else None
        data = request.body if body is None else body

        def send(headers: Dict[str, str], read: Optional[float]) -> Response:
            response = inflight.send(request, post, data, headers, read)
            if session is not None and response.status_code == 200:
                session.took(response)
            return response
        return send

    def _hop(self, request: Request, body: Optional[bytes] = None) -> Optional[Hop]:
        """How the exchange follows a redirect of ``request`` (None without ``follow_redirects``)."""
        hopper = self._hopper
        if hopper is None:
            return None
        inflight = self._inflight
        data = request.body if body is None else body

        def hop(target: str, headers: Dict[str, str], read: Optional[float],
                keep: Optional[Callable[[str], bool]]) -> Response:
            return inflight.send(request, hopper.hop, target, data, headers, read, keep)
        return hop

    def _post(self, body: bytes, headers: Dict[str, str], read: Optional[float]) -> Response:
        """One POST, its failures mapped (``request_error``)."""
        poster = self._poster
        if poster is None:
            raise ConnectionClosed("the transport was not started")
        return poster.post(body, headers, read)

    def _get_once(self, headers: Dict[str, str]) -> Response:
        """One GET of the event stream; the read timeout is its idle bound (``GetStream`` reopens
        a silent one)."""
        return self._connections.get(self.url, headers, self.stream_idle_timeout)

    def _delete(self, headers: Dict[str, str], budget: float) -> Response:
        return self._connections.delete(self.url, headers, budget)

    # --- the session's renewal ----------------------------------------------------------------

    def _session_moved(self, session_id: str) -> None:
        self._get.follow(session_id)

    def _session_renewed(self, old: str, new: str) -> None:
        """Tell the user (``on_session_change``, once per renewal, on a thread that met the
        expiry, no lock held) and the client (``SessionRenewed``, through ``receive()``)."""
        callback = self.on_session_change
        if callback is not None:
            try:
                callback(old, new)
            except BaseException as exc:  # (user code) sys.exit() too: the request, or the GET
                reraise_on_main_thread(exc)  # listener, that met the 404 goes on in the new session
                log.exception("on_session_change callback failed")
        self._inbox.put(SessionRenewed(new))

    # --- receiving ------------------------------------------------------------------------------

    def cancel_request(self, request_id: Union[int, str]) -> bool:
        """The session gave up on ``request_id`` (its timeout, a cancel, an interrupt): end its
        exchange now, or as soon as it starts, so no poster thread waits or reads on for an
        answer nobody waits for. 2026-07-28: that is the cancel (no notification; True). Before
        (False: the notification follows), an answer whose headers are still to come is read
        within ``LATE_ANSWER`` s (it may name what the request made: a task to cancel)."""
        self._inflight.cancel(request_id, None if self._stateless else LATE_ANSWER)
        return self._stateless

class _Exchange:
    """One request's ``PendingExchange``, run once: by a poster thread (``post``) or by a thread that
    waits for its answer (``run``), whichever claims it first."""

    __slots__ = ("_transport", "_request", "_claim")

    def __init__(self, transport: HTTPTransport, request: Request) -> None:
        self._transport = transport
        self._request = request
        self._claim = _allocate_lock()

    def post(self) -> None:
        posts = self._transport._posts
        if posts is None or not posts.try_submit("POST", self._on_poster):
            self._transport._inflight.remove(self._request)  # the lane stopped: the transport is closing

    def _on_poster(self) -> None:
        if self._claim.acquire(False):
            self._transport._request(self._request)

    def run(self) -> Optional[Any]:
        if self._claim.acquire(False):
            return self._transport._request(self._request, here=True)
        return None


def _remake(url: str, settings: Dict[str, Any], own: Dict[str, Any], connections: Connections,
            session: SessionLife, how: RemakeKind) -> Optional[Transport]:
    """``TransportInfo.remake`` of an HTTP transport: reopened or relaunched, the same URL and
    settings (and the user's ``requests`` session, if one was given); as a fallback, an
    ``SSETransport`` with the same headers, credentials, retry, connect timeout, name and
    connection number, if ``sse_fallback`` is set and the server refused the first setup POST
    with 400/404/405 and no JSON-RPC body (an HTTP+SSE server)."""
    if how == "fallback":
        if not own["sse_fallback"] or session.opened or not session.refused:
            return None
        return SSETransport(url, session=connections.to_share(), **settings)
    if how != "reopen":
        return None
    return HTTPTransport(url, session=connections.to_share(), **settings, **own)
