"""What the two HTTP transports (``streamable``, ``sse``) share: ``HTTPBase``, the one loop that
sends a request and applies every policy to its answer, how a failed request is reported and an
event becomes a message (reading bodies and streams: ``_reading``).

``HTTPBase._exchange`` is the only place a request is sent again: after a 401/403 its
``AuthProvider`` resolved (at most ``MAX_AUTH_ROUNDS`` times), after an expired session was
renewed (at most once, and only if the client said the request may be repeated), or as the
``Retry`` value allows (each retry takes ``Retry.increment()``, a new value; nothing is mutated,
so one policy serves every thread). Each bound is its own: a login never eats the retry budget.
Nothing here imports ``requests`` at module level, and nothing here knows an MCP method name.
"""
from __future__ import annotations

import logging
import threading
import time
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, Optional, Tuple, Union

from ..._util import fork as _fork
from ..._util.threads import next_instance
from ..._util.secrets import mapping_secrets, secret_words, url_secrets
from ...auth.base import AuthProvider, Challenge, Observed, TokenSource, as_auth
from ...errors import (
    AuthError, ConnectError, ConnectionClosed, HTTPError, ProtocolError,
    SessionExpired, TransportError,
)
from ..base import CLOSE_BUDGET, DEFAULT_MAX_MESSAGE_SIZE, CredentialsObserver, DeliveryFailed, Endpoint, Transport, decode_frame
from ._reading import Response, Send, SSEEvent, close_pools

if TYPE_CHECKING:
    import requests

    from ...policies.retry import Retry  # (imported where a transport is made: it needs dataclasses)

#: What ``auth=`` accepts: a token, a callable returning one, an ``AuthProvider``, or nothing.
Auth = Union[TokenSource, AuthProvider, None]

SESSION_HEADER = "Mcp-Session-Id"
#: Authorization rounds (first login, step-ups) one request may go through before its refusal stands.
MAX_AUTH_ROUNDS = 3

log = logging.getLogger("mcpclient.transport.http")



class HTTPBase(Transport):
    """State and policy shared by the HTTP transports: the URL, static headers, the auth
    provider (``auth=`` as given becomes one at this edge, ``as_auth``), the ``requests``
    session, the retry policy, the inbox the reader drains, and ``_exchange``.

    Subclasses add their own framing: ``_headers`` (session headers) and ``_renew_session``
    (Streamable HTTP renews an expired session; the legacy transport has none).
    """

    remote = True

    def __init__(self, url: str, *, kind: str, headers: Optional[Dict[str, str]], auth: Auth, auth_header: str,
                 session: Optional["requests.Session"], connect_timeout: float, retry: Retry,
                 name: Optional[str], max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
            raise ValueError(f"an {kind} transport needs an http(s) URL, not {url!r}")
        self.url = url
        self.headers = dict(headers or {})
        self.auth: Optional[AuthProvider] = as_auth(auth, auth_header)
        if not isinstance(max_message_size, int) or max_message_size < 1:
            raise ValueError(f"max_message_size must be a positive number of bytes, not {max_message_size!r}")
        self.connect_timeout = connect_timeout
        self.retry = retry
        self.max_message_size = max_message_size
        self.name = name or self.endpoint().address or kind.lower()  # errors name the server: 127.0.0.1:8080
        self.instance = next_instance()
        self._http = session
        self._owns_http = session is None
        self._pid = _fork.pid  # the process this transport was made in
        self._inbox: "SimpleQueue[Any]" = SimpleQueue()
        self._closing = threading.Event()  # set first thing in close(): every loop and wait checks it
        self._closed = threading.Event()  # close() finished: a second caller waits for this
        self._close_lock = threading.Lock()

    # --- what the client asks of every transport ----------------------------------------------

    def identity(self) -> Optional[str]:
        return self.url

    def credentials(self) -> Optional[str]:
        """A hash of who the requests act as: the auth provider's fingerprint and the static
        headers (an API key may travel in one); ``None`` when requests carry neither."""
        token = self.auth.fingerprint() if self.auth is not None else None
        if token is None and not self.headers:
            return None
        material = repr((token, sorted((str(k).lower(), str(v)) for k, v in self.headers.items())))
        import hashlib  # deferred: import time (only a client with credentials asks)

        return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]

    def endpoint(self) -> Endpoint:
        """TCP to the URL's host and port, speaking HTTP."""
        return Endpoint.of_url(self.url)

    def secrets(self) -> FrozenSet[str]:
        """The static headers' secret values, a fixed token, the URL's credentials."""
        found = mapping_secrets(self.headers) | set(url_secrets(self.url))
        if self.auth is not None:
            found.update(w for value in self.auth.secrets() for w in secret_words(value))
        return frozenset(found)

    def observe_credentials(self, observer: CredentialsObserver) -> None:
        if self.auth is not None and not isinstance(self.auth, Observed):
            self.auth = Observed(self.auth, observer)

    def receive(self) -> Optional[Any]:
        return self._inbox.get()

    def _session_to_share(self) -> Optional["requests.Session"]:
        """For ``reopen()``: the user's ``requests`` session (None if the transport made its own).
        In a forked child its pooled connections are the parent's sockets: they are dropped (the
        child's copies closed; the parent's connections stay open) so that none is ever used here."""
        if self._owns_http:
            return None
        if _fork.pid != self._pid and self._http is not None:
            for adapter in list(self._http.adapters.values()):
                adapter.close()
        return self._http

    # --- what both do with what comes back ------------------------------------------------------

    def _fail(self, rid: Any, exc: BaseException, deadline: Optional[float] = None) -> None:
        """Fail the call ``rid`` with ``exc`` (the reader lands it: ``DeliveryFailed``), unless the
        transport is closing or ``deadline`` passed (the session reports that call's timeout).
        mcpclient's own errors keep their type (``ConnectError``: it never reached the server);
        anything else becomes ``ConnectionClosed`` naming only its type."""
        if self._closing.is_set() or (deadline is not None and time.monotonic() >= deadline):
            return
        error = exc
        if not isinstance(exc, (TransportError, AuthError, ProtocolError)):
            error = ConnectionClosed(f"a request to {self.name} failed: {type(exc).__name__}")
            error.__cause__ = exc
        self._inbox.put(DeliveryFailed(rid, error))

    def _event_message(self, event: "SSEEvent") -> Any:
        """The JSON-RPC message a ``message`` event carries, or None (no data, another event type,
        not JSON)."""
        if not event.data or event.event != "message":  # no data, or "" (a priming event)
            return None
        try:
            return decode_frame(event.data)
        except Exception as exc:  # ProtocolError (not a message, too deep); never end the stream for it
            log.warning("%s sent an SSE message event that is not a JSON-RPC message; skipped: %s",
                        self.name, str(exc)[:200])
            return None

    # --- plumbing -------------------------------------------------------------------------------

    def _open_http(self, pool_size: int) -> None:
        """Make the ``requests`` session (unless the user gave one) and bind the credentials."""
        import requests  # deferred: import cost (requests); stdio-only programs never load it
        from requests.adapters import HTTPAdapter

        if self._closing.is_set():
            raise ConnectionClosed("the transport is closed")
        if self._http is None:
            self._http = http = requests.Session()
            adapter = HTTPAdapter(pool_connections=1, pool_maxsize=pool_size, max_retries=0)
            http.mount("http://", adapter)
            http.mount("https://", adapter)
            # Read the environment (proxies, CA bundle) once, not on every request as requests
            # would (a fifth of a call's CPU); one endpoint means one answer for the whole session.
            env = http.merge_environment_settings(self.url, {}, None, None, None)
            http.proxies, http.verify, http.trust_env = env["proxies"], env["verify"], False
        if self.auth is not None:
            self.auth.bind(self.url)  # OAuth: its tokens belong to this URL

    def _begin_close(self, deadline: Optional[float]) -> Optional[float]:
        """The shared deadline of this close, or ``None`` if another close ran or is running
        (then this waits for it, until ``deadline``)."""
        deadline = time.monotonic() + CLOSE_BUDGET if deadline is None else deadline
        with self._close_lock:
            first = not self._closing.is_set()
            self._closing.set()
        if not first:
            self._closed.wait(max(0.0, deadline - time.monotonic()))
            return None
        return deadline

    def _end_close(self) -> None:
        if self._owns_http and self._http is not None:
            close_pools(self._http)
            self._http.close()
        self._inbox.put(None)
        self._closed.set()

    def _headers(self, verb: str, url: str, authorization: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        """The headers of one request: the static ones and the credentials' (``authorization``:
        those of this try, from ``request_credentials``; else they are asked for here)."""
        headers = dict(self.headers)
        if authorization is not None:
            headers.update(authorization)
        elif self.auth is not None:
            headers.update(self.auth.headers(verb, url))
        return headers

    def _renew_session(self, expired: str, deadline: Optional[float]) -> None:
        """Replace the session ``expired`` (the server answered 404 to a request carrying it)."""
        raise SessionExpired(f"{self.name} no longer knows our session")

    def _exchange(self, send: Send, *, verb: str, url: str, deadline: Optional[float],
                  idempotent: Optional[bool], extra: Optional[Dict[str, str]] = None) -> Response:
        """Send one request (``send``) until its answer is one the caller must handle itself.

        Returns the response (200/202, or an error status no policy resolved: the caller maps
        it, the body still readable unless it was a 401/403). Raises ``ConnectError`` /
        ``ConnectionClosed`` when it could not be delivered and may not be tried again,
        ``SessionExpired`` when the server forgot our session and the request may not be
        repeated in a new one, ``AuthError`` from the auth provider.

        Args:
            send: one try, given its headers and read timeout.
            verb, url: what the auth provider signs (DPoP proofs name both); a challenge names
                ``self.url``, the server the credentials are for.
            deadline: monotonic seconds by which the whole exchange must be over (``None``:
                no bound but the retry policy's): no retry or backoff is started past it.
            idempotent: may the request be repeated after it may have reached the server
                (``Retry.repeatable``).
            extra: per-request headers (the client's routing headers).
        """
        retry = self.retry
        auth = self.auth
        challenges = 0
        renewed = False
        while True:
            # One look-up of the token per try: the headers carry the very token a refusal names.
            sent_token, authorization = auth.request_credentials(verb, url, deadline) if auth is not None \
                else (None, None)
            headers = self._headers(verb, url, authorization)
            if extra:
                headers.update(extra)
            read = None if deadline is None else max(deadline - time.monotonic(), 0.001)
            try:
                response = send(headers, read)
            except (ConnectError, ConnectionClosed) as exc:
                # A refused connection delivered nothing; a broken one may have delivered it all.
                following, wait = self._next_try(retry, idempotent, not isinstance(exc, ConnectError), None,
                                                 deadline, type(exc).__name__)
                if following is None:
                    raise
                self._pause(wait, exc)
                retry = following
                continue
            status = response.status_code
            if status == 200 or status == 202:
                return response
            if status in (401, 403) and auth is not None and challenges < MAX_AUTH_ROUNDS:
                # The server's URL, not ``url`` (an SSE message endpoint): tokens are kept per server.
                challenge = Challenge(self.url, status, response.headers.get("WWW-Authenticate"), sent_token,
                                      response.headers.get("DPoP-Nonce"), deadline)
                response.close()  # a login may take minutes: never hold a pooled connection meanwhile
                if auth.on_challenge(challenge):
                    challenges += 1
                    continue  # credentials changed: the same request again
                return response  # the refusal stands (its headers still say why)
            sent_session = headers.get(SESSION_HEADER)
            if status == 404 and sent_session is not None:
                response.close()
                if renewed:
                    raise SessionExpired(f"{self.name} no longer knows our session (renewed once already)")
                self._renew_session(sent_session, deadline)
                renewed = True
                if not self.retry.repeatable(idempotent):
                    raise SessionExpired(f"{self.name} lost our session before the request ran; a new session was "
                                         "started, but the request is not safe to repeat")
                continue
            if status in retry.statuses:
                retry_after = response.headers.get("Retry-After")
                following, wait = self._next_try(retry, idempotent, True, retry_after, deadline, f"HTTP {status}")
                if following is not None:
                    response.close()
                    self._pause(wait, HTTPError(status))
                    retry = following
                    continue
            return response

    def _next_try(self, retry: Retry, idempotent: Optional[bool], reached: bool, retry_after: Optional[str],
                  deadline: Optional[float], reason: str) -> Tuple[Optional[Retry], float]:
        """The policy for one more try and the wait before it, or ``(None, 0)``: no more tries."""
        if self._closing.is_set() or not retry.may_repeat(idempotent, reached_server=reached):
            return None, 0.0
        following = retry.increment(reason)
        wait = following.delay(retry_after)
        if wait is None or (deadline is not None and time.monotonic() + wait >= deadline):
            return None, 0.0
        log.debug("retrying a request to %s in %.2f s after %s (%d retries left)", self.name, wait, reason,
                  following.total)
        return following, wait

    def _pause(self, wait: float, cause: BaseException) -> None:
        """Wait ``wait`` seconds before a retry; a close meanwhile ends the request at once."""
        if self._closing.wait(wait):
            raise ConnectionClosed("the transport was closed before the request could be sent again") from cause
