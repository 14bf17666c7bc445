"""``AuthProvider``: what an HTTP transport asks of the credentials it sends.

A transport calls exactly these methods and nothing else: ``bind`` once at start, ``headers``
for every request, ``token`` to note which token a request carried, ``on_challenge`` when the
server refuses it (401/403), ``fingerprint`` for cache keys. ``BearerToken`` covers a fixed token
or a callable returning one; ``OAuth`` (``auth.oauth``) runs the whole OAuth 2.1 flow. A plain
string or callable given as ``auth=`` becomes a ``BearerToken`` (``as_auth``).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Union

__all__ = ["AuthProvider", "BearerToken", "Challenge", "as_auth"]

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

    def on_challenge(self, challenge: Challenge) -> bool:
        """The server refused a request. True: credentials changed, send the request again;
        False: the refusal stands. May raise ``AuthError`` with a reason."""
        return False

    def fingerprint(self) -> Optional[str]:
        """Who the requests act as, hashed (cache entries private to one identity are keyed by it)."""
        token = self.token()
        if token is None:
            return None
        import hashlib  # deferred: import time (~3 ms; only HTTP clients with credentials need it)

        return hashlib.sha256(token.encode("utf-8")).hexdigest()[:32]


class BearerToken(AuthProvider):
    """A bearer token, fixed or fetched per request from ``source()`` (called from many threads).

    Sent as ``Authorization: Bearer <token>``; with another ``header`` the bare token is sent.
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
        token = self.token()
        if token is None:
            return {}
        return {self.header: f"Bearer {token}" if self._bearer else token}

    def __repr__(self) -> str:  # never the token
        return f"<BearerToken header={self.header!r}>"


def as_auth(auth: Union[TokenSource, AuthProvider, None], header: str = "Authorization") -> Optional[AuthProvider]:
    """``auth=`` as given by a user: ``None``, an ``AuthProvider``, or a token / token callable."""
    if auth is None or isinstance(auth, AuthProvider):
        return auth
    return BearerToken(auth, header)
