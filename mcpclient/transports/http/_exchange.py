"""The policy loops around one HTTP request (``Exchange``), and who requests act as (``Credentials``).

``Exchange.send`` is the only place a request is sent again. Its loops nest one per concern, as
httpx's ``_send_handling_auth`` / ``_send_handling_redirects`` do, each with its own bound (a
login never eats the retry budget):

* retries (outermost): after a broken or refused connection or a status the ``Retry`` value
  names, as it allows (each retry takes ``Retry.increment()``, a new value; nothing is mutated,
  so one policy serves every thread), never past the request's deadline;
* the MCP session: after a 404 to a request carrying our session id, the session is renewed
  (``Renewable``: Streamable HTTP's ``_sessions.SessionLife``) and the request sent again, at
  most once, and only if it may be repeated;
* authorization: after a 401/403 its ``AuthProvider`` resolved, at most ``MAX_AUTH_ROUNDS`` times;
* redirects (innermost, only with a ``Redirects`` policy and a way to hop): each 3xx is judged
  before anything goes to its ``Location``: the hop count, the status (307/308 only: they keep
  the POST and its body), the scheme (never HTTPS to HTTP), the origin (another one only with
  ``cross_origin=True``, and then with only the headers ``Redirects.keeps`` allows). ``requests``
  follows redirects itself but strips only ``Authorization`` when the host changes: an API key
  in another header, the ``Mcp-Session-Id`` or a ``DPoP`` proof would reach whatever host a
  server names. A refusal is an ``HTTPError`` naming the status and the reason, the URL shown
  without its query.

A request ended by ``close()``, a cancel or its deadline (``_inflight.Aborted``) is never sent
again. Nothing here imports ``requests``, and nothing here knows an MCP method name.
"""
from __future__ import annotations

import hashlib
import logging
import threading
import time
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, Optional, Protocol, Set, Tuple, Union
from urllib.parse import urljoin, urlsplit

from ..._util.secrets import mapping_secrets, secret_words, url_secrets
from ...auth.base import AuthProvider, Challenge, Observed, TokenSource, as_auth
from ...errors import AuthError, ConnectError, ConnectionClosed, HTTPError, SessionExpired, TransportError
from ...policies.redirects import Redirects
from ..base import TransportInfo
from ._inflight import Aborted
from ._reading import Response, Send, answer_headers

if TYPE_CHECKING:
    from ...policies.retry import Retry  # (imported where a transport is made: it needs dataclasses)

__all__ = ["Auth", "Credentials", "Exchange", "Hop", "MAX_AUTH_ROUNDS", "Renewable", "SESSION_HEADER", "origin"]

#: What ``auth=`` accepts: a token, a callable returning one, an ``AuthProvider``, or nothing.
Auth = Union[TokenSource, AuthProvider, None]

#: ``hop(url, headers, read_timeout, keep)``: the request sent again to a redirect's ``url``;
#: ``keep`` None: to our own origin, with every header, cookie and the session's auth; else only
#: the headers ``keep`` allows (another origin).
Hop = Callable[[str, Dict[str, str], Optional[float], Optional[Callable[[str], bool]]], Response]

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
#: Authorization rounds (first login, step-ups) one request may go through before its refusal stands.
MAX_AUTH_ROUNDS = 3

_REDIRECTS = (301, 302, 303, 307, 308)
_KEEP_POST = (307, 308)
_DEFAULT_PORTS = {"http": 80, "https": 443}

log = logging.getLogger("mcpclient.transport.http")


class _Unsent(Exception):
    """A try that failed on the wire (``failure``: ``ConnectError`` or ``ConnectionClosed``), on
    its way to the retry loop: only such failures are sent again, never one raised between the
    loops (a renewal that failed, ``SessionExpired``: both are ``ConnectionClosed`` too)."""

    def __init__(self, failure: TransportError) -> None:
        super().__init__(failure)
        self.failure = failure


_UNSENDABLE = ("the value holds a line break, a NUL, leading whitespace or a character outside Latin-1, "
               "which HTTP headers cannot carry (the value is not shown: it may be a secret)")


def sendable(value: object) -> bool:
    """Whether ``value`` can be an HTTP header's value as it is (http.client and requests refuse
    the others, quoting the value: maybe a token, into an exception)."""
    if not isinstance(value, str):
        return False
    if "\r" in value or "\n" in value or "\0" in value or value[:1].isspace():
        return False
    if value.isascii():
        return True
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


class Credentials:
    """Who the requests of one transport act as: the static headers (an API key may travel in
    one) and the auth provider (``auth=`` as given becomes one here, ``as_auth``), for the server
    at ``url`` (its tokens belong to it). Every token and secret-looking header a request carries
    (renewed ones too) joins the secrets the transport's ``info`` names (``describe``)."""

    def __init__(self, url: str, headers: Optional[Dict[str, str]], auth: Auth, auth_header: str) -> None:
        self.url = url
        self.headers = dict(headers or {})
        for name, value in self.headers.items():
            if not sendable(value):
                raise ValueError(f"headers[{name!r}]: {_UNSENDABLE}") from None
        #: The provider as the user gave it (``auth=`` turned into one).
        self.provider: Optional[AuthProvider] = as_auth(auth, auth_header)
        #: What requests ask for credentials: the provider, watched (``_learn``).
        self.auth: Optional[AuthProvider] = None if self.provider is None else Observed(self.provider, self._learn)
        self._sent: Set[str] = set()  # secrets requests carried
        self._seen: Set[object] = set()  # the credentials (token, headers) learned from already
        self._lock = threading.Lock()
        self._described: Optional[Tuple[TransportInfo, Tuple[Optional[str], int, Optional[str]], TransportInfo]] = None

    def for_request(self, verb: str, url: str, authorization: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        """The headers of one request: the static ones and the credentials' (``authorization``:
        those of this try, from ``AuthProvider.request_credentials``; else they are asked for here)."""
        headers = dict(self.headers)
        if authorization is None and self.auth is not None:
            authorization = self.auth.headers(verb, url)
        if authorization:
            for name, value in authorization.items():
                if not sendable(value):  # (caught here: http.client's error would quote the token)
                    raise AuthError(f"the credentials for the {name!r} header cannot be sent: {_UNSENDABLE}; "
                                    "a token read from a file keeps its line break: strip() it")
            headers.update(authorization)
        return headers

    def bind(self) -> None:
        """Before the first request: an OAuth provider's tokens belong to this URL."""
        if self.provider is not None:
            self.provider.bind(self.url)

    def fingerprint(self) -> Optional[str]:
        """A hash of who the requests act as: the auth provider's fingerprint and the static
        headers; ``None`` when requests carry neither."""
        token = self.provider.fingerprint() if self.provider is not None else None
        if token is None and not self.headers:
            return None
        material = repr((token, sorted((str(k).lower(), str(v)) for k, v in self.headers.items())))
        return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]

    def secrets(self) -> FrozenSet[str]:
        """The static headers' secret values, a fixed token, the URL's credentials, and every
        token and secret header a request carried so far."""
        found = mapping_secrets(self.headers) | set(url_secrets(self.url)) | self._sent
        if self.provider is not None:
            found.update(w for value in self.provider.secrets() for w in secret_words(value))
        return frozenset(found)

    def _learn(self, token: Optional[str], headers: Dict[str, str]) -> None:
        seen = (token, tuple(headers.items())) if headers else token
        if seen in self._seen:  # (every request: the same credentials, most of the time)
            return
        found = set(secret_words(token)) if isinstance(token, str) else set()
        found.update(mapping_secrets(headers))
        with self._lock:
            if len(self._seen) < 1024:
                self._seen.add(seen)
            if not found <= self._sent:
                self._sent = self._sent | found  # (a new set: readers never see one change)

    def describe(self, base: TransportInfo, session_id: Optional[str]) -> TransportInfo:
        """``base`` (what the transport says of itself) with who its requests act as now, the
        secrets they carried and the server session ``session_id``: the transport's ``info``,
        made again only when one of those changed."""
        # The fingerprint is asked for every time: a token callable may act as someone else now.
        state = (session_id, len(self._sent), self.fingerprint())
        described = self._described
        if described is not None and described[0] is base and described[1] == state:
            return described[2]
        info = base.replace(credentials=state[2], secrets=self.secrets(), session_id=session_id)
        self._described = (base, state, info)
        return info


class Renewable(Protocol):
    """What the exchange asks of the MCP session its requests belong to (``_sessions.SessionLife``)."""

    #: The session id in use, or None.
    id: Optional[str]

    def stamp(self, headers: Dict[str, str], session_id: Optional[str]) -> None:
        """Add the session's headers (``session_id``, the protocol version) to ``headers``."""

    def renew(self, expired: str, deadline: Optional[float]) -> None:
        """Replace the session ``expired`` the server forgot; raises ``SessionExpired`` if it cannot."""


class Exchange:
    """The policy loops around one request, for one transport (see the module doc).

    Args:
        credentials: who the requests act as.
        retry: when a request is sent again.
        closing: set when the transport closes: no retry starts after it.
        name: the server, as errors name it.
        session: the MCP session requests carry (None: none; a 404 is then the caller's).
        redirects: the redirect policy (None: a 3xx is the caller's).
    """

    def __init__(self, credentials: Credentials, retry: Retry, closing: threading.Event, *, name: str,
                 session: Optional[Renewable] = None, redirects: Optional[Redirects] = None) -> None:
        self.credentials = credentials
        self.retry = retry
        self.redirects = redirects
        self._closing = closing
        self._name = name
        self._session = session
        self._origin = origin(credentials.url)

    def send(self, send: Send, *, verb: str, url: str, deadline: Optional[float], idempotent: Optional[bool],
             extra: Optional[Dict[str, str]] = None, hop: Optional[Hop] = None) -> Response:
        """Send one request (``send``) until its answer is one the caller must handle itself.

        Returns the response (200/202, or an error status no policy resolved: the caller maps
        it, the body still readable unless it was a 401/403). Raises ``ConnectError`` /
        ``ConnectionClosed`` when it could not be delivered and may not be tried again,
        ``SessionExpired`` when the server forgot our session and the request may not be
        repeated in a new one, ``AuthError`` from the auth provider, ``HTTPError`` for a
        redirect refused.

        Args:
            send: one try, given its headers and read timeout.
            verb, url: what the auth provider signs (DPoP proofs name both); a challenge names
                the credentials' URL, the server they are for.
            deadline: monotonic seconds by which the whole exchange must be over (``None``:
                no bound but the retry policy's): no retry or backoff is started past it.
            idempotent: may the request be repeated after it may have reached the server
                (``Retry.repeatable``).
            extra: per-request headers (the client's routing headers).
            hop: how to follow a redirect (with a ``redirects`` policy).
        """
        retry = self.retry
        while True:
            try:
                response = self._send_handling_session(send, hop, verb, url, deadline, idempotent, extra)
            except _Unsent as unsent:
                exc = unsent.failure
                # A refused connection delivered nothing; a broken one may have delivered it all.
                following, wait = self.next_try(retry, idempotent, reached=not isinstance(exc, ConnectError),
                                                deadline=deadline, reason=type(exc).__name__)
                if following is None:
                    raise exc from exc.__cause__  # (as it came from the try: not the wrapper)
                self.pause(wait, exc)
                retry = following
                continue
            status = response.status_code
            if status in retry.statuses:
                retry_after = response.headers.get("Retry-After")
                following, wait = self.next_try(retry, idempotent, reached=True, retry_after=retry_after,
                                                deadline=deadline, reason=f"HTTP {status}")
                if following is not None:
                    response.close()
                    headers, retry_after = answer_headers(response)
                    self.pause(wait, HTTPError(status, headers=headers, retry_after=retry_after))
                    retry = following
                    continue
            return response

    def _send_handling_session(self, send: Send, hop: Optional[Hop], verb: str, url: str, deadline: Optional[float],
                               idempotent: Optional[bool], extra: Optional[Dict[str, str]]) -> Response:
        session = self._session
        renewed = False
        while True:
            sent = session.id if session is not None else None  # (the very id this try carries)
            response = self._send_handling_auth(send, hop, verb, url, deadline, extra, sent)
            if response.status_code != 404:
                return response
            if sent is None:
                sent = extra.get(SESSION_HEADER) if extra else self.credentials.headers.get(SESSION_HEADER)
                if sent is None:
                    return response
            response.close()
            if renewed:
                raise SessionExpired(f"{self._name} no longer knows our session (renewed once already)")
            if session is None:
                raise SessionExpired(f"{self._name} no longer knows our session")
            session.renew(sent, deadline)
            renewed = True
            if not self.retry.repeatable(idempotent):
                raise SessionExpired(f"{self._name} lost our session before the request ran; a new session was "
                                     "started, but the request is not safe to repeat")

    def _send_handling_auth(self, send: Send, hop: Optional[Hop], verb: str, url: str, deadline: Optional[float],
                            extra: Optional[Dict[str, str]], session_id: Optional[str]) -> Response:
        credentials = self.credentials
        challenges = 0
        while True:
            auth = credentials.auth
            # One look-up of the token per try: the headers carry the very token a refusal names.
            sent_token, authorization = auth.request_credentials(verb, url, deadline) if auth is not None \
                else (None, None)
            headers = credentials.for_request(verb, url, authorization)
            if self._session is not None:
                self._session.stamp(headers, session_id)
            if extra:
                headers.update(extra)
            read = None if deadline is None else max(deadline - time.monotonic(), 0.001)
            response = self._send_handling_redirects(send, hop, url, headers, read)
            status = response.status_code
            if status not in (401, 403) or auth is None or challenges >= MAX_AUTH_ROUNDS:
                return response
            # The server's URL, not ``url`` (an SSE message endpoint): tokens are kept per server.
            challenge = Challenge(credentials.url, status, response.headers.get("WWW-Authenticate"), sent_token,
                                  response.headers.get("DPoP-Nonce"), deadline)
            response.close()  # a login may take minutes: never hold a pooled connection meanwhile
            if not auth.on_challenge(challenge):
                return response  # the refusal stands (its headers still say why)
            challenges += 1  # credentials changed: the same request again

    def _send_handling_redirects(self, send: Send, hop: Optional[Hop], url: str, headers: Dict[str, str],
                                 read: Optional[float]) -> Response:
        try:
            response = send(headers, read)
        except Aborted:
            raise
        except (ConnectError, ConnectionClosed) as exc:  # the retry loop judges it (nothing in between)
            raise _Unsent(exc) from None
        policy = self.redirects
        if policy is None or hop is None:
            return response
        here, hops = url, 0
        keep: Optional[Callable[[str], bool]] = None  # (set once a hop left our origin: never reset)
        while response.status_code in _REDIRECTS and response.headers.get("Location"):
            status = response.status_code
            try:
                target = _judge(policy, status, here, response.headers["Location"], hops)
                if origin(target) != self._origin:
                    if not policy.cross_origin:
                        raise HTTPError(status, f"redirect to {_shown(target)} refused: another origin "
                                                "(Redirects(cross_origin=True) allows it, without credentials)")
                    keep = policy.keeps
            except HTTPError:
                response.close()
                raise
            response.close()
            auth = self.credentials.auth
            if keep is None and auth is not None and "DPoP" in headers:  # a proof is bound to its URL: a new one
                headers = dict(headers)
                headers.update(auth.headers("POST", target))
            try:
                response = hop(target, headers, read, keep)
            except Aborted:
                raise
            except (ConnectError, ConnectionClosed) as exc:
                raise _Unsent(exc) from None
            here, hops = target, hops + 1
        return response

    def next_try(self, retry: Retry, idempotent: Optional[bool], *, reached: bool, deadline: Optional[float],
                 reason: str, retry_after: Optional[str] = None) -> Tuple[Optional[Retry], float]:
        """The policy for one more try of a request (``reached``: the last one may have reached
        the server) and the wait before it, or ``(None, 0)``: no more tries (the transport is
        closing, the policy says no, or the wait would end past ``deadline``)."""
        if self._closing.is_set() or not retry.may_repeat(idempotent, reached_server=reached):
            return None, 0.0
        following = retry.increment(reason)
        wait = following.delay(retry_after)
        if wait is None or (deadline is not None and time.monotonic() + wait >= deadline):
            return None, 0.0
        log.debug("retrying a request to %s in %.2f s after %s (%d retries left)", self._name, wait, reason,
                  following.total)
        return following, wait

    def pause(self, wait: float, cause: BaseException) -> None:
        """Wait ``wait`` seconds before a retry; a close meanwhile ends the request at once."""
        if self._closing.wait(wait):
            raise ConnectionClosed("the transport was closed before the request could be sent again") from cause


# --- redirects ------------------------------------------------------------------------------

def origin(url: str) -> Tuple[str, str, Optional[int]]:
    """``(scheme, host, port)`` of ``url``, lower-cased, the default port filled in."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: no origin matches it
        port = -1
    return scheme, (parts.hostname or "").lower(), port if port is not None else _DEFAULT_PORTS.get(scheme)


def _shown(url: str) -> str:
    """``url`` for an error message: no query, fragment or user info (they may hold secrets)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _judge(policy: Redirects, status: int, url: str, location: str, hops: int) -> str:
    """The URL a redirect from ``url`` leads to, or ``HTTPError`` if it may not be followed
    (the origin is judged by the caller)."""
    try:
        target = urljoin(url, location)
        urlsplit(target).port  # noqa: B018  (a port that is no port, a broken [IPv6]: ValueError)
    except ValueError:
        raise HTTPError(status, "redirect to a malformed URL refused (its host or port is invalid)") from None
    if hops >= policy.max_redirects:
        raise HTTPError(status, f"redirect to {_shown(target)} refused: more than "
                                f"{policy.max_redirects} redirects")
    if status not in _KEEP_POST:
        raise HTTPError(status, f"redirect to {_shown(target)} refused: a {status} turns the POST into a GET "
                                "(an MCP server redirects with 307 or 308)")
    scheme = urlsplit(target).scheme.lower()
    if scheme not in ("http", "https"):
        raise HTTPError(status, f"redirect to a {scheme or 'relative'}: URL refused")
    if scheme == "http" and urlsplit(url).scheme.lower() == "https":
        raise HTTPError(status, f"redirect to {_shown(target)} refused: HTTPS is never downgraded to HTTP")
    return target
