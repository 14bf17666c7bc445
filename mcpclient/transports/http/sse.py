"""The deprecated HTTP+SSE transport (MCP 2024-11-05), on ``requests``.

A ``GET`` on the SSE URL opens one long event stream, read by a thread of its own. Its first
event, ``endpoint``, names the URL every client message is then POSTed to (same origin as the
SSE URL, or the transport refuses it); ``message`` events carry the server's JSON-RPC messages,
the answers to our requests included (the POSTs themselves are only acknowledged, ``202``).
Requests are POSTed on poster threads, notifications and responses on the caller's thread, as in
``streamable``; an HTTP failure fails only the request it belongs to (``DeliveryFailed``). Closing
the GET stream ends the connection, from either side. Every request goes through the same
``Exchange`` as Streamable HTTP's (auth rounds, retries) as a request in flight (``_inflight``):
``close()`` and a POST's deadline end it, however slowly the server acknowledges it.

Use it only for servers that predate Streamable HTTP; ``Client("http://…")`` falls back to it by
itself when the server refuses the Streamable HTTP ``initialize`` POST the way such servers do.
"""
from __future__ import annotations

import logging
import threading
import time
from functools import partial
from typing import TYPE_CHECKING, Any, Dict, Optional, Union
from urllib.parse import urljoin, urlsplit

from ..._util.threads import Once, WorkerPool, join_all, next_instance, start_thread
from ...errors import AuthError, ConnectError, ConnectionClosed, ProtocolError
from ...policies.retry import Retry
from ..base import DEFAULT_MAX_MESSAGE_SIZE, Endpoint, RemakeKind, Transport, TransportInfo, encode_frame
from ._connections import Connections
from ._exchange import Auth, Credentials, Exchange
from ._inflight import Closing, Inbox, InFlight, Request
from ._reading import (
    JSON, SSE, Response, body_socket, chunks, event_message, media_type, parse_sse, read_body, status_error,
)

if TYPE_CHECKING:
    from ..base import Message, Received
    import requests

__all__ = ["SSETransport"]

log = logging.getLogger("mcpclient.transport.sse")

_POST_WORKERS = 32  # requests being POSTed at once (each POST only waits for the server's 202)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> str:
    """``scheme://host:port`` of ``url`` (default port filled in, no user info), for comparison."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port: Any
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:  # a port that is not a number
        port = "?"
    return f"{scheme}://{parts.hostname or ''}:{port}"


class SSETransport(Transport):
    """Talk to an MCP server over the deprecated HTTP+SSE transport (2024-11-05).

    Example::

        transport = SSETransport("http://127.0.0.1:8000/sse", auth="my-token")
        with Client(transport) as client:
            print(client.list_tools())

    Args:
        url: the server's SSE endpoint (the one that answers ``GET`` with an event stream).
        headers: extra headers sent with every request (the GET and every POST).
        auth: a bearer token, a callable returning one (called for every request), or an
            ``AuthProvider`` such as ``mcpclient.auth.OAuth``. A token is sent as
            ``Authorization: Bearer <token>`` (see ``auth_header``).
        auth_header: the header that carries a token; with a name other than
            ``Authorization`` the raw token is sent, without ``Bearer``.
        session: a ``requests.Session`` to use (proxies, certificates, mTLS). By default the
            transport makes and owns one.
        connect_timeout: seconds to wait for a TCP/TLS connection, and for the ``endpoint`` event.
        name: a label for logs, errors and thread names (default: the server's ``host:port``).
        retry: when a POST is sent again (``Retry``); by default never (``Retry(total=0)``): the
            POSTs of this transport are only acknowledged, their answers come on the stream.
        max_message_size: the largest event (its data, in bytes) read from the stream; a bigger
            one is never buffered whole: it is logged and skipped (the call it answered then
            times out), and the stream lives on.

    Redirects are never followed: the token must not travel to a URL the user did not give.
    """

    def __init__(self, url: str, *, headers: Optional[Dict[str, str]] = None,
                 auth: Auth = None, auth_header: str = "Authorization",
                 session: Optional["requests.Session"] = None, connect_timeout: float = 10.0,
                 name: Optional[str] = None, retry: Optional[Retry] = None,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, _instance: int = 0) -> None:
        if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
            raise ValueError(f"an SSE transport needs an http(s) URL, not {url!r}")
        if not isinstance(max_message_size, int) or max_message_size < 1:
            raise ValueError(f"max_message_size must be a positive number of bytes, not {max_message_size!r}")
        self.url = url
        self.connect_timeout = connect_timeout
        self.max_message_size = max_message_size
        self.name = name or Endpoint.of_url(url).address or "sse"  # errors name the server: 127.0.0.1:8080
        self._instance = _instance or next_instance()
        self._closing = Closing()
        closing = self._closing.event
        self._credentials = Credentials(url, headers, auth, auth_header)
        self._connections = Connections(session, name=self.name, connect_timeout=connect_timeout)
        self._inflight = InFlight(self.name, lambda: f"mcpclient-{self._instance}-sse-deadline")
        self._inbox = Inbox(self.name, closing)
        self._exchange = Exchange(self._credentials, retry if retry is not None else Retry(total=0), closing,
                                  name=self.name)
        #: The URL messages are POSTed to, from the server's ``endpoint`` event.
        self.endpoint: Optional[str] = None
        self._posts: Optional[WorkerPool] = None
        self._reader: Optional[threading.Thread] = None
        self._ready = threading.Event()  # the endpoint is known, or the stream failed before it came
        self._start_error: Optional[Exception] = None
        self._started = Once()
        # The 2024-11-05 transport: no 2026 probe. Made again with the same settings (``remake``).
        self._described = TransportInfo(
            self.name, Endpoint.of_url(url), url, remote=True, handshake_only=True, instance=self._instance,
            remake=partial(_remake, url, dict(headers=self._credentials.headers, auth=self._credentials.provider,
                                              connect_timeout=connect_timeout, name=self.name, retry=retry,
                                              max_message_size=max_message_size, _instance=self._instance),
                           self._connections))

    # --- what the parts hold ------------------------------------------------------------------------

    @property
    def retry(self) -> Retry:
        """When a POST is sent again."""
        return self._exchange.retry

    @property
    def info(self) -> TransportInfo:
        """TCP to the URL's host, remote, handshake era only; who requests act as, and the
        secrets they carry (``Credentials.describe``)."""
        return self._credentials.describe(self._described, None)

    def receive(self) -> Optional[Received]:
        item: Union[Received, Exception] = self._inbox.get()
        if isinstance(item, Exception):  # the event stream ended or broke
            raise item
        return item

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Open the event stream and wait (up to ``connect_timeout``) for its ``endpoint`` event
        (once: see ``Transport.start``)."""
        self._started.run(self._start)

    def _start(self) -> None:
        self._connections.open(self.url, _POST_WORKERS + 1)
        if self._closing.event.is_set():
            raise ConnectionClosed("the transport is closed")
        self._credentials.bind()
        self._posts = WorkerPool(f"mcpclient-{self._instance}-sse-post", _POST_WORKERS, -1)
        self._reader = start_thread(self._read, f"mcpclient-{self._instance}-sse")
        if self._ready.wait(self.connect_timeout):
            error = self._start_error
        else:
            error = ConnectError(f"{self.name} sent no endpoint event within {self.connect_timeout:g} s")
        if error is not None:
            self.close()
            raise error

    def close(self, deadline: Optional[float] = None) -> None:
        """End the event stream and every POST in flight (a blocked read returns at once, however
        the server paces its answer), stop the workers and the reader, all by ``deadline``
        (default ``CLOSE_BUDGET`` seconds from now)."""
        deadline = self._closing.begin(deadline)
        if deadline is None:
            return
        try:
            self._inflight.end_all()  # unblocks the reader and the posters (they close the responses)
            if self._posts is not None:
                self._posts.shutdown(deadline)
            if self._reader is not None:
                join_all([self._reader], deadline)  # (skipped when close() runs on the reader)
            self._inflight.stop(deadline)
        finally:
            self._connections.close()
            self._inbox.put(None)
            self._closing.done()

    # --- sending --------------------------------------------------------------------------------

    def send(self, message: Message, *, deadline: Optional[float] = None,
             headers: Optional[Dict[str, str]] = None, idempotent: Optional[bool] = False,
             setup: bool = False) -> None:
        """Send one message (see ``Transport.send``): a request is POSTed on a poster thread (its
        answer comes on the event stream), a notification or a response
        on this thread, before this returns."""
        posts = self._posts
        if posts is None or self._closing.event.is_set() or self.endpoint is None:
            raise ConnectionClosed("the transport is closed" if posts else "transport not started")
        rid = message.get("id") if isinstance(message, dict) and "method" in message else None
        request = Request(rid, encode_frame(message), deadline=deadline, idempotent=idempotent)
        self._inflight.add(request)
        if rid is None:  # a notification or a response: send it now, in order
            try:
                self._post(request)
            finally:
                self._inflight.remove(request)
            return
        if not posts.try_submit("POST", self._request, request):
            self._inflight.remove(request)  # the lane stopped: the transport is closing

    def _request(self, request: Request) -> None:
        """Poster thread: POST one request; its answer comes on the event stream, a failure goes to the reader."""
        try:
            self._post(request)
        except BaseException as exc:  # a token callable's sys.exit() too: the call fails now, not at its timeout
            self._inbox.fail(request, exc)
        finally:
            self._inflight.remove(request)

    def _post(self, request: Request) -> None:
        """POST one message to the endpoint (through the exchange: auth rounds, retries)."""
        endpoint = self.endpoint or self.url  # (send() refuses to run before the endpoint is known)
        connections, inflight, body, deadline = self._connections, self._inflight, request.body, request.deadline

        def post(headers: Dict[str, str], read: Optional[float]) -> Response:
            headers["Content-Type"] = JSON
            return inflight.send(request, connections.post, endpoint, body, headers, read)

        response = self._exchange.send(post, verb="POST", url=endpoint, deadline=deadline,
                                       idempotent=request.idempotent)
        try:
            if response.status_code not in (200, 202):  # the answer itself comes on the event stream
                raise status_error(self.name, response, deadline)
            read_body(response, self.name, self.max_message_size, deadline)  # ("Accepted"): the connection is reused
        finally:
            response.close()

    # --- receiving ------------------------------------------------------------------------------

    def _read(self) -> None:
        """Reader thread: open the GET, then turn its events into messages until it ends."""
        connections, request = self._connections, Request()

        def get(headers: Dict[str, str], read: Optional[float]) -> Response:
            headers["Accept"] = SSE
            # (the read timeout bounds the wait for the answer's headers only: then it is lifted)
            return self._inflight.send(request, connections.get, self.url, headers, self.connect_timeout)

        error: Exception = ConnectionClosed(f"{self.name} closed the event stream")
        self._inflight.add(request)
        try:
            response = self._exchange.send(get, verb="GET", url=self.url, deadline=None, idempotent=True)
        except (AuthError, ConnectError) as exc:
            error = exc
        except BaseException as exc:  # no answer in time, or the token provider failed (sys.exit() too)
            error = ConnectError(f"could not open the event stream of {self.name}: {type(exc).__name__}")
            error.__cause__ = exc
        else:
            try:
                error = self._consume(response) or error
            except Exception as exc:  # the stream broke (or close() ended it)
                error = ConnectionClosed(f"the event stream from {self.name} broke: {type(exc).__name__}")
                error.__cause__ = exc
            finally:
                response.close()
        finally:
            self._inflight.remove(request)
        if not self._ready.is_set():
            self._start_error = error
            self._ready.set()
        elif not self._closing.event.is_set():
            self._inbox.put(error)

    def _consume(self, response: Response) -> Optional[Exception]:
        """Read the event stream; returns the error that ended it early (else ``None``)."""
        if response.status_code != 200:  # (its page quoted as it comes by then: start() waits no longer)
            return status_error(self.name, response, time.monotonic() + self.connect_timeout)
        if media_type(response) != SSE:
            return ProtocolError(f"{self.name} answered the SSE GET with Content-Type "
                                 f"{media_type(response) or 'none'!r}, not an event stream")
        try:  # no read timeout on the stream itself: a server may stay silent for long
            body_socket(response).settimeout(None)
        except Exception:
            log.debug("could not lift the read timeout of the event stream from %s", self.name)
        for event in parse_sse(chunks(response), self.max_message_size):
            if event.oversized:
                log.warning("%s sent an event over max_message_size=%d bytes; skipped", self.name, self.max_message_size)
                continue
            if not event.data:
                continue
            if event.event == "message":
                message = event_message(event, self.name)
                if message is not None:
                    self._inbox.put(message)
            elif event.event == "endpoint":
                if self.endpoint is not None:
                    log.debug("%s sent another endpoint event; ignored", self.name)
                    continue
                endpoint = urljoin(self.url, event.data.strip())
                if _origin(endpoint) != _origin(self.url):
                    return ProtocolError(f"endpoint origin does not match the SSE URL's origin: {self.name} "
                                         f"named {_origin(endpoint)}, the stream is on {_origin(self.url)}")
                self.endpoint = endpoint
                self._ready.set()
        return None


def _remake(url: str, settings: Dict[str, Any], connections: Connections, how: RemakeKind) -> Optional[SSETransport]:
    """``TransportInfo.remake`` of an SSE transport: the same URL and settings (and the user's
    ``requests`` session, if one was given), reopened; nothing else."""
    if how != "reopen":
        return None
    return SSETransport(url, session=connections.to_share(), **settings)
