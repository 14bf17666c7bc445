"""The deprecated HTTP+SSE transport (MCP 2024-11-05), on ``requests``.

A ``GET`` on the SSE URL opens one long event stream, read by a thread of its own. Its first
event, ``endpoint``, names the URL every client message is then POSTed to (same origin as the
SSE URL, or the transport refuses it); ``message`` events carry the server's JSON-RPC messages,
the answers to our requests included (the POSTs themselves are only acknowledged, ``202``).
Requests are POSTed on worker threads, notifications and responses on the caller's thread, as in
``http.py``; an HTTP error fails only the request it belongs to (``DeliveryFailed``). Closing the
GET stream ends the connection, from either side.

Use it only for servers that predate Streamable HTTP; ``Client("http://…")`` falls back to it by
itself when the server refuses the Streamable HTTP ``initialize`` POST the way such servers do.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, Optional
from urllib.parse import urljoin, urlsplit

from ..._util.threads import WorkerPool, join_all, start_thread
from ...errors import AuthError, ConnectError, ConnectionClosed, ProtocolError
from ._exchange import Auth, HTTPBase
from ._reading import JSON, SSE, Response, abort, body_socket, chunks, media_type, parse_sse, read_body, request_error, status_error
from ..base import DEFAULT_MAX_MESSAGE_SIZE, encode_frame

if TYPE_CHECKING:
    import requests

    from ...policies.retry import Retry

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


class SSETransport(HTTPBase):
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

    handshake_only = True  # the 2024-11-05 transport: no 2026 probe

    def __init__(self, url: str, *, headers: Optional[Dict[str, str]] = None,
                 auth: Auth = None, auth_header: str = "Authorization",
                 session: Optional["requests.Session"] = None, connect_timeout: float = 10.0,
                 name: Optional[str] = None, retry: Optional[Retry] = None,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        from ...policies.retry import Retry  # here, not at import: mcpclient's import stays cheap

        super().__init__(url, kind="SSE", headers=headers, auth=auth, auth_header=auth_header, session=session,
                         connect_timeout=connect_timeout, retry=retry if retry is not None else Retry(total=0),
                         name=name, max_message_size=max_message_size)
        self._retry_given = retry
        #: The URL messages are POSTed to, from the server's ``endpoint`` event.
        self.endpoint: Optional[str] = None
        self._posts: Optional[WorkerPool] = None
        self._reader: Optional[threading.Thread] = None
        self._stream: Optional[Response] = None  # the GET, while it is being read
        self._stream_lock = threading.Lock()
        self._ready = threading.Event()  # the endpoint is known, or the stream failed before it came
        self._start_error: Optional[Exception] = None

    # --- lifecycle ------------------------------------------------------------------------------

    def reopen(self) -> "SSETransport":
        """A new transport to the same URL with the same settings and instance number."""
        fresh = SSETransport(self.url, headers=self.headers, auth=self.auth, session=self._session_to_share(),
                             connect_timeout=self.connect_timeout, name=self.name, retry=self._retry_given,
                             max_message_size=self.max_message_size)
        fresh.instance = self.instance
        return fresh

    def start(self) -> None:
        """Open the event stream and wait (up to ``connect_timeout``) for its ``endpoint`` event."""
        self._open_http(_POST_WORKERS + 1)
        self._posts = WorkerPool(f"mcpclient-{self.instance}-sse-post", _POST_WORKERS, -1)
        self._reader = start_thread(self._read, f"mcpclient-{self.instance}-sse")
        if self._ready.wait(self.connect_timeout):
            error = self._start_error
        else:
            error = ConnectError(f"{self.name} sent no endpoint event within {self.connect_timeout:g} s")
        if error is not None:
            self.close()
            raise error

    def close(self, deadline: Optional[float] = None) -> None:
        """Abort the event stream and stop the workers and the reader, all by ``deadline``
        (default ``CLOSE_BUDGET`` seconds from now)."""
        deadline = self._begin_close(deadline)
        if deadline is None:
            return
        try:
            with self._stream_lock:
                stream = self._stream
            if stream is not None:  # unblocks the reader thread (which then closes the response)
                abort(stream)
            if self._posts is not None:
                self._posts.shutdown(deadline)
            if self._reader is not None:
                join_all([self._reader], deadline)  # (skipped when close() runs on the reader)
        finally:
            self._end_close()

    # --- sending --------------------------------------------------------------------------------

    def send(self, message: Any, *, deadline: Optional[float] = None, wait: bool = False,
             headers: Optional[Dict[str, str]] = None, idempotent: Optional[bool] = False,
             setup: bool = False) -> None:
        if self._closing.is_set() or self._posts is None or self.endpoint is None:
            raise ConnectionClosed("the transport is closed" if self._posts else "transport not started")
        body = encode_frame(message)
        rid = message.get("id") if isinstance(message, dict) and "method" in message else None
        if rid is None:  # a notification or a response: send it now, in order
            self._post(body, deadline, idempotent)
            return
        self._posts.try_submit("POST", self._request, rid, body, deadline, idempotent)

    def _request(self, rid: Any, body: bytes, deadline: Optional[float], idempotent: Optional[bool]) -> None:
        """Worker: POST one request; its answer comes on the event stream, a failure goes to the reader."""
        try:
            self._post(body, deadline, idempotent)
        except BaseException as exc:  # a token callable's sys.exit() too: the call fails now, not at its timeout
            self._fail(rid, exc, deadline)

    def _post(self, body: bytes, deadline: Optional[float], idempotent: Optional[bool]) -> None:
        """POST one message to the endpoint (through ``_exchange``: auth rounds, retries)."""
        import requests  # deferred: import cost (requests); stdio-only programs never load it

        endpoint = self.endpoint or self.url  # (send() refuses to run before the endpoint is known)

        def post(headers: Dict[str, str], read: Optional[float]) -> "requests.Response":
            headers["Content-Type"] = JSON
            try:
                return self._http.post(  # type: ignore[union-attr]  # (stream: the body is not wanted, or bounded)
                    endpoint, data=body, headers=headers, timeout=(self.connect_timeout, read), allow_redirects=False,
                    stream=True)
            except requests.exceptions.RequestException as exc:
                raise request_error(self.name, exc, self.connect_timeout) from exc

        response = self._exchange(post, verb="POST", url=endpoint, deadline=deadline,
                                  idempotent=idempotent)
        try:
            if response.status_code not in (200, 202):  # the answer itself comes on the event stream
                raise status_error(self.name, response, deadline)
            read_body(response, self.name, self.max_message_size, deadline)  # ("Accepted"): the connection is reused
        finally:
            response.close()

    # --- receiving ------------------------------------------------------------------------------

    def receive(self) -> Optional[Any]:
        item = self._inbox.get()
        if isinstance(item, Exception):  # the event stream ended or broke
            raise item
        return item

    def _read(self) -> None:
        """Reader thread: open the GET, then turn its events into messages until it ends."""
        import requests  # deferred: import cost (requests); stdio-only programs never load it

        def get(headers: Dict[str, str], read: Optional[float]) -> "requests.Response":
            headers["Accept"] = SSE
            try:  # the read timeout bounds the wait for the answer's headers only (then it is lifted)
                return self._http.get(self.url, headers=headers, stream=True,  # type: ignore[union-attr]
                                      timeout=(self.connect_timeout, self.connect_timeout), allow_redirects=False)
            except requests.exceptions.RequestException as exc:
                raise request_error(self.name, exc, self.connect_timeout) from exc

        error: Exception = ConnectionClosed(f"{self.name} closed the event stream")
        try:
            response = self._exchange(get, verb="GET", url=self.url, deadline=None, idempotent=True)
        except (AuthError, ConnectError) as exc:
            error = exc
        except BaseException as exc:  # no answer in time, or the token provider failed (sys.exit() too)
            error = ConnectError(f"could not open the event stream of {self.name}: {type(exc).__name__}")
            error.__cause__ = exc
        else:
            try:
                error = self._consume(response) or error
            except Exception as exc:  # the stream broke (or close() aborted it)
                error = ConnectionClosed(f"the event stream from {self.name} broke: {type(exc).__name__}")
                error.__cause__ = exc
            finally:
                with self._stream_lock:
                    self._stream = None
                response.close()
        if not self._ready.is_set():
            self._start_error = error
            self._ready.set()
        elif not self._closing.is_set():
            self._inbox.put(error)

    def _consume(self, response: Response) -> Optional[Exception]:
        """Read the event stream; returns the error that ended it early (else ``None``)."""
        if response.status_code != 200:  # (its page quoted as it comes by then: start() waits no longer)
            return status_error(self.name, response, time.monotonic() + self.connect_timeout)
        if media_type(response) != SSE:
            return ProtocolError(f"{self.name} answered the SSE GET with Content-Type "
                                 f"{media_type(response) or 'none'!r}, not an event stream")
        with self._stream_lock:
            if self._closing.is_set():
                return ConnectionClosed("the transport is closed")
            self._stream = response
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
                message = self._event_message(event)
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
