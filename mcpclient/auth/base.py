"""``AuthProvider``: what an HTTP transport asks of the credentials it sends.

A transport calls exactly these methods and nothing else: ``bind`` once at start,
``request_credentials`` for every try of a request (the token it carries and its headers, from one
look-up of the token), ``headers`` for a request whose refusal changes nothing (the session's
``DELETE``), ``on_challenge`` when the server refuses one (401/403), ``fingerprint`` for cache
keys, ``secrets`` for what a recording must scrub. ``BearerToken`` covers a fixed token or a
callable returning one; ``Observed`` tells an observer every credential another provider hands
out; ``OAuth`` (``auth.oauth``) runs the whole OAuth 2.1 flow. A plain
string or callable given as ``auth=`` becomes a ``BearerToken`` (``as_auth``).
"""
from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, Optional, Tuple, Union

__all__ = ["AuthProvider", "BearerToken", "Challenge", "Observed", "as_auth"]

TokenSource = Union[str, Callable[[], Optional[str]]]


@dataclass(frozen=True)
class Challenge:
    """A refusal the server answered a request with: ``status`` (401 or 403), its
    ``WWW-Authenticate`` header, the token the request carried, a ``DPoP-Nonce`` header, and the
    request's ``deadline`` (monotonic seconds, or ``None``) by which an answer is still useful."""

    url: str
    status: int
    www_authenticate: Optional[str]
    sent_token: Optional[str] = field(repr=False)
    dpop_nonce: Optional[str] = None
    deadline: Optional[float] = None


class AuthProvider(ABC):
    """Credentials for one MCP server. Methods are called from many threads at once; none may
    hold a lock across a network round trip or a user's interaction (another thread's request
    would wait behind it past its own timeout)."""

    def bind(self, server_url: str) -> None:
        """Called once by the transport at start: the server these credentials are for."""

    @abstractmethod
    def headers(self, method: str, url: str) -> Dict[str, str]:
        """The headers that authorize one ``method`` (HTTP verb) request to ``url``."""

    def token(self) -> Optional[str]:
        """The token the next request carries (so a refusal can say which one was refused)."""
        return None

    def request_credentials(self, method: str, url: str,
                            deadline: Optional[float] = None) -> Tuple[Optional[str], Dict[str, str]]:
        """The token one try of a ``method`` request to ``url`` carries, and the headers that
        authorize it: what the transport asks for each try (so a refusal names the token that
        was refused). ``deadline`` (monotonic seconds, or ``None``): past it the request is of no
        use, so a provider that must wait (for another thread's refresh) waits no longer.

        The default calls ``token()``, then ``headers()``. Override it when ``headers()`` looks
        the token up again (a token source would run twice per request) or may have to wait.
        """
        return self.token(), self.headers(method, url)

    def on_challenge(self, challenge: Challenge) -> bool:
        """The server refused a request. True: credentials changed, send the request again;
        False: the refusal stands. May raise ``AuthError`` with a reason."""
        return False

    def fingerprint(self) -> Optional[str]:
        """Who the requests act as, hashed (cache entries private to one identity are keyed by it)."""
        token = self.token()
        if token is None:
            return None
        return hashlib.sha256(token.encode("utf-8")).hexdigest()[:32]

    def secrets(self) -> FrozenSet[str]:
        """The secret values known before any request (a fixed token), for a recording to scrub
        (what it hands out later joins the transport's ``TransportInfo.secrets``)."""
        return frozenset()


class BearerToken(AuthProvider):
    """A bearer token, fixed or fetched per request from ``source()`` (called from many threads).

    Sent as ``Authorization: Bearer <token>``; with another ``header`` the bare token is sent.
    A request refused with 401 asks ``source()`` once more and, if it gives another token (the
    one sent expired between fetch and use), is sent again with it (401 means the server did
    not act on it).
    """

    def __init__(self, source: TokenSource, header: str = "Authorization") -> None:
        if not isinstance(source, str) and not callable(source):
            raise TypeError("auth must be a token string, a callable returning one, or an AuthProvider")
        self._source = source
        self.header = header
        self._bearer = header.lower() == "authorization"

    def token(self) -> Optional[str]:
        source = self._source
        return source() if callable(source) else source

    def headers(self, method: str, url: str) -> Dict[str, str]:
        return self._headers_for(self.token())

    def request_credentials(self, method: str, url: str,
                            deadline: Optional[float] = None) -> Tuple[Optional[str], Dict[str, str]]:
        token = self.token()  # once: the source may be a vault round trip
        return token, self._headers_for(token)

    def on_challenge(self, challenge: Challenge) -> bool:
        """A 401 to a token from ``source()``: True (send again) if ``source()`` now gives another."""
        source = self._source
        if challenge.status != 401 or not callable(source):
            return False
        fresh = source()
        return fresh is not None and fresh != challenge.sent_token

    def _headers_for(self, token: Optional[str]) -> Dict[str, str]:
        if token is None:
            return {}
        return {self.header: f"Bearer {token}" if self._bearer else token}

    def secrets(self) -> FrozenSet[str]:
        return frozenset((self._source,)) if isinstance(self._source, str) else frozenset()

    def __repr__(self) -> str:  # never the token
        return f"<BearerToken header={self.header!r}>"


class Observed(AuthProvider):
    """``inner``'s credentials, unchanged, with every token and header it hands out (refreshed
    ones too) told to ``observer(token, headers)`` (an HTTP transport learns the secrets its
    requests carry this way: ``TransportInfo.secrets``)."""

    def __init__(self, inner: AuthProvider, observer: Callable[[Optional[str], Dict[str, str]], None]) -> None:
        self.inner = inner
        self._observer = observer

    def bind(self, server_url: str) -> None:
        self.inner.bind(server_url)

    def headers(self, method: str, url: str) -> Dict[str, str]:
        headers = self.inner.headers(method, url)
        self._observer(None, headers)
        return headers

    def token(self) -> Optional[str]:
        token = self.inner.token()
        self._observer(token, {})
        return token

    def request_credentials(self, method: str, url: str,
                            deadline: Optional[float] = None) -> Tuple[Optional[str], Dict[str, str]]:
        token, headers = self.inner.request_credentials(method, url, deadline)
        self._observer(token, headers)
        return token, headers

    def on_challenge(self, challenge: Challenge) -> bool:
        return self.inner.on_challenge(challenge)

    def fingerprint(self) -> Optional[str]:
        return self.inner.fingerprint()

    def secrets(self) -> FrozenSet[str]:
        return self.inner.secrets()

    def __repr__(self) -> str:
        return repr(self.inner)


def as_auth(auth: Union[TokenSource, AuthProvider, None], header: str = "Authorization") -> Optional[AuthProvider]:
    """``auth=`` as given by a user: ``None``, an ``AuthProvider``, or a token / token callable."""
    if auth is None or isinstance(auth, AuthProvider):
        return auth
    return BearerToken(auth, header)
