"""``OAuth``: get, keep and renew an access token for one MCP server (OAuth 2.1).

Plug it in as ``Client(url, auth=OAuth(grant))``, ``grant`` being one of the values of
``grants`` (``AuthorizationCode``, ``ClientCredentials``, ``JWTBearer``, ``EnterpriseExchange``).
Until a token is needed nothing happens; when the server answers 401 (or 403
``insufficient_scope``) the transport calls ``on_challenge`` and repeats the request. Getting a
token, everything said to the authorization server (discovery, the client's identity, the grant,
the token request, DPoP), is the ``AuthorizationFlow`` an ``OAuth`` holds (``_flow``); ``OAuth``
keeps the token and decides when a flow or a refresh runs. Many threads hitting the same 401
cause one flow, and many meeting the same expiring token one refresh (``_threads.SingleFlight``):
the rest wait, each bounded by its own request's deadline, and reuse the new token. No lock is
held across a network round trip or the ``authorize`` callback, which may wait minutes for a
human — except the token store's refresh lock (``TokenStore.lock``), held by the one refreshing
thread across re-reading the stored token and the refresh request, so that clients in other
processes sharing the store (``FileTokenStore``, ``RedisTokenStore``) refresh a rotating refresh
token once, not each. No token, code, verifier or secret is ever logged or put in an error.
"""
from __future__ import annotations

import hashlib
import logging
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from .._util.lazy import load
from .._util.threads import FlightTimeout, SingleFlight
from ..errors import AuthError, parse_challenge
from ._flow import AuthorizationFlow, DPoP, DPoPMode, TokenResponse
from .base import AuthProvider, Challenge
from .grants import GRANTS, Authorize, Grant
from .store import MemoryTokenStore, TokenStore

if TYPE_CHECKING:
    import requests

__all__ = ["OAuth", "headless_authorize"]

log = logging.getLogger("mcpclient.auth")


class OAuth(AuthProvider):
    """OAuth 2.1 for an MCP server: one grant, and the token it gets, kept and refreshed.

    Example::

        login = OAuth(AuthorizationCode(loopback_authorize()),
                      store=FileTokenStore("~/.mcp-tokens.json"))
        with Client("https://mcp.example.com/mcp", auth=login) as client:
            print(client.list_tools())

        secret = os.environ["SVC_SECRET"]
        service = OAuth(ClientCredentials("svc", client_secret=secret))

    Args:
        grant: how a token is got, with that grant's own settings (the client's identity among
            them): ``AuthorizationCode`` (a user logs in), ``ClientCredentials`` (a back end),
            ``JWTBearer`` (workload identity) or ``EnterpriseExchange`` (enterprise-managed).
        store: where tokens are kept (``MemoryTokenStore`` by default; ``FileTokenStore`` keeps
            them across runs, mode 0600; ``RedisTokenStore`` for fleets). Client secrets are
            never stored.
        scopes: scopes to ask for (else the server's challenge, else its ``scopes_supported``).
        issuer: the authorization server the grant's credentials belong to (else the first one
            they are used with); they are never sent to another one.
        timeout: seconds for each request to the authorization server, and at most for waiting
            on another client's refresh.
        refresh_margin: refresh a token this many seconds before it expires.
        max_step_ups: re-authorizations for more scope (403 ``insufficient_scope``) allowed in a
            row before giving up.
        dpop: bind tokens to a key with DPoP (RFC 9449): ``"auto"`` where both the authorization
            server (ES256 proofs) and the protected resource (its metadata's
            ``dpop_signing_alg_values_supported`` or ``dpop_bound_access_tokens_required``) take
            it, ``True``, or ``False``. Each request then carries a fresh proof. Proofs need
            ``mcpclient[oauth]``: without it ``True`` raises ``MissingExtraError`` at the first
            token request, and ``"auto"`` binds nothing unless the resource requires DPoP (then
            ``MissingExtraError`` too).
        allow_private_addresses: fetch metadata and use endpoints on loopback, private and
            link-local addresses even when the MCP server is not on one (by default a server on
            loopback may use loopback ones and one on a private network private ones; link-local
            never: ``AuthError`` naming the host).

    Raises:
        TypeError: ``grant`` is not a grant value, or ``scopes`` is a string.
        ValueError: ``dpop``, ``timeout``, ``refresh_margin`` or ``max_step_ups`` is out of range.
    """

    def __init__(self, grant: Grant, *, store: Optional[TokenStore] = None, scopes: Optional[Sequence[str]] = None,
                 issuer: Optional[str] = None, timeout: float = 30.0, refresh_margin: float = 30.0,
                 max_step_ups: int = 2, dpop: DPoPMode = "auto", allow_private_addresses: bool = False) -> None:
        if not isinstance(grant, GRANTS):
            raise TypeError("OAuth takes a grant value: AuthorizationCode(...), ClientCredentials(...), "
                            f"JWTBearer(...) or EnterpriseExchange(...), not {type(grant).__name__}")
        if isinstance(scopes, str):
            raise TypeError("scopes is a list of scope names, not a string")
        if not (isinstance(dpop, bool) or dpop == "auto"):
            raise ValueError("dpop must be 'auto', True or False")
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        if not refresh_margin >= 0:
            raise ValueError(f"refresh_margin must be zero or more seconds, not {refresh_margin!r}")
        if max_step_ups < 0:
            raise ValueError(f"max_step_ups must be zero or more, not {max_step_ups!r}")
        self.grant = grant
        self.store = store if store is not None else MemoryTokenStore()
        self.timeout = timeout
        self.refresh_margin = refresh_margin
        self.max_step_ups = max_step_ups
        self._dpop = DPoP(dpop)  # the resource requests' proofs, and the flow's token requests'
        self._flow = AuthorizationFlow(grant, dpop=self._dpop, scopes=scopes, issuer=issuer, timeout=timeout,
                                       allow_private_addresses=allow_private_addresses)
        self._key: Optional[str] = None  # the MCP server's URL: the store's key
        self._token: Optional[str] = None
        self._expires_at: Optional[float] = None  # epoch seconds, kept in memory for the hot path
        self._granted: List[str] = []  # the scopes asked for with the current token
        self._step_ups = 0
        # One token refresh and one authorization flow at a time, with no lock held while they
        # run: a login may wait minutes for a human, and every other request needs the token.
        self._flights = SingleFlight()

    def __repr__(self) -> str:  # never the token, nor a secret
        return (f"<OAuth {type(self.grant).__name__} client_id={self.grant.client_id!r} "
                f"token={'set' if self._token else 'none'}>")

    # --- the transport's side (AuthProvider) ----------------------------------------------------

    def headers(self, method: str, url: str) -> Dict[str, str]:
        """The authorization headers of one request: ``Bearer <token>``, or for a DPoP-bound token
        ``DPoP <token>`` plus a fresh proof for this method and URL."""
        return self._headers_for(method, url, self.token())

    def request_credentials(self, method: str, url: str,
                            deadline: Optional[float] = None) -> Tuple[Optional[str], Dict[str, str]]:
        """The token and headers of one try (see ``headers``); waiting for another thread's
        refresh of an expiring token ends at ``deadline`` (``AuthError``), not ``timeout``."""
        token = self._current(deadline)
        return token, self._headers_for(method, url, token)

    def _headers_for(self, method: str, url: str, token: Optional[str]) -> Dict[str, str]:
        if token is None:
            return {}
        key = self._dpop.bound_key
        if key is None:
            return {"Authorization": f"Bearer {token}"}
        return {"Authorization": f"DPoP {token}", "DPoP": key.proof(method, url, token, self._dpop.nonce(url))}

    def bind(self, server_url: str) -> None:
        """Called by the transport at start: tokens are stored under the server's URL (a stored,
        still valid token from an earlier run is used at once)."""
        if self._key is not None and self._key != server_url:
            # one OAuth per server: another server's token must never be sent here
            self._token, self._expires_at, self._granted = None, None, []
            self._dpop.reset()
        self._key = server_url
        stored = self.store.get(server_url)
        if stored is not None and isinstance(stored.get("access_token"), str):
            self._adopt(stored)

    def token(self) -> Optional[str]:
        """The access token for the next request (None before the first flow).

        An expiring one is refreshed first when there is a refresh token: once, however many
        threads ask; the others wait for that refresh up to ``timeout`` seconds (then
        ``AuthError``), never for a lock held across it.
        """
        return self._current(None)

    def _current(self, deadline: Optional[float]) -> Optional[str]:
        """``token()``, a wait for another thread's refresh bounded by ``deadline`` (else ``timeout``)."""
        token, expires_at = self._token, self._expires_at
        if token is None or self._key is None or expires_at is None or time.time() + self.refresh_margin < expires_at:
            return token  # the hot path: no lock, no store access
        self._once("refresh", self._refresh_if_stale, deadline, "token refresh")
        return self._token

    def fingerprint(self) -> Optional[str]:
        """The current token, hashed (never refreshed for this: it is only a cache key)."""
        token = self._token
        return None if token is None else hashlib.sha256(token.encode("utf-8")).hexdigest()[:32]

    def on_challenge(self, challenge: Challenge) -> bool:
        """The server refused the token a request carried (401) or wants more scope (403). Get a
        better token; True: repeat the request. ``AuthError`` if impossible.

        Many threads refused at once cause one flow: the first runs it (discovery, registration,
        the ``authorize`` step a human may take minutes over, the token request) with no lock
        held; the others wait for its outcome until their request's ``challenge.deadline`` (else
        ``timeout`` seconds) and then raise ``AuthError`` instead of waiting on.
        """
        parsed = parse_challenge(challenge.www_authenticate or "")
        if parsed.get("error") == "use_dpop_nonce" and challenge.dpop_nonce and self._dpop.key is not None:
            self._dpop.remember_nonce(challenge.url, challenge.dpop_nonce)  # RFC 9449 §9: repeat with its nonce
            return True
        return self._once("flow", lambda: self._resolve(challenge, parsed), challenge.deadline, "authorization")

    def _once(self, key: str, job: Callable[[], bool], deadline: Optional[float], what: str) -> bool:
        """Run ``job`` as the one flight of ``key``, or wait for the one running (bounded)."""
        timeout = self.timeout if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            return self._flights.run(key, job, timeout)
        except FlightTimeout:
            raise AuthError(f"gave up after {timeout:.3g} s waiting for another request's {what} with "
                            f"{self._key or 'the server'} (it is still running)") from None

    def _refresh_if_stale(self) -> bool:
        """Flight job: adopt a token another process stored, or refresh an expiring one."""
        expires_at = self._expires_at
        if self._token is not None and (expires_at is None or time.time() + self.refresh_margin < expires_at):
            return True  # a flight that ended just before this one started renewed it
        return self._locked_refresh(lambda stored: not self._expiring(stored))

    def _locked_refresh(self, usable: Callable[[Dict[str, Any]], bool]) -> bool:
        """Refresh under the store's refresh lock, which other processes sharing the store honour
        too: re-read the stored token first, and adopt it without a request if it is ``usable``
        (another process refreshed it while we waited); else refresh it. Waiting for the lock is
        bounded by ``timeout`` (then ``AuthError``, as when waiting for another thread's refresh)."""
        key = self._key or ""
        try:
            with self.store.lock(key, self.timeout):
                stored = self.store.get(key) or {}
                if isinstance(stored.get("access_token"), str) and usable(stored):
                    self._adopt(stored)  # another process refreshed it: no request of ours
                    return True
                return self._refresh(stored)
        except TimeoutError:
            raise AuthError(f"gave up after {self.timeout:.3g} s waiting for another client's token refresh "
                            f"with {key or 'the server'} (the token store's refresh lock is still held)") from None

    def _adopt(self, stored: Dict[str, Any]) -> None:
        self._token = stored["access_token"]
        expires_at = stored.get("expires_at")
        self._expires_at = expires_at if isinstance(expires_at, (int, float)) else None
        scope = stored.get("scope")
        self._granted = scope.split() if isinstance(scope, str) else []

    def _expiring(self, stored: Dict[str, Any]) -> bool:
        expires_at = stored.get("expires_at")
        return isinstance(expires_at, (int, float)) and time.time() + self.refresh_margin >= expires_at

    def _refresh(self, stored: Dict[str, Any]) -> bool:
        """Swap the refresh token for a new access token (inside the "refresh" flight); False if
        impossible."""
        refresh_token = stored.get("refresh_token")
        if not isinstance(refresh_token, str) or not isinstance(stored.get("token_endpoint"), str):
            return False
        try:
            response = self._flow.refresh(self._key or "", stored)
        except (OSError, ValueError) as exc:  # unreachable (requests' errors are OSErrors) or not JSON
            log.info("token refresh failed (%s); keeping the current token", type(exc).__name__)
            return False
        except AuthError as exc:
            if exc.status not in (400, 401):  # the server failed, not our refresh token: keep it
                log.info("token refresh failed (%s); keeping the current token", exc)
                return False
            # The refresh token was refused (invalid_grant): forget that generation only. A newer
            # one another client stored meanwhile is kept, and adopted.
            if self.store.delete_if(self._key or "", refresh_token):
                log.info("token refresh failed (%s); a new authorization is needed", exc)
            else:
                newer = self.store.get(self._key or "") or {}
                if isinstance(newer.get("access_token"), str) and newer.get("refresh_token") != refresh_token:
                    log.info("token refresh failed (%s); adopting the token another client stored", exc)
                    self._adopt(newer)
                    return not self._expiring(newer)
            self._token = self._expires_at = None
            return False
        self._keep(response, refresh_token)
        log.info("refreshed the access token from %s", response.issuer or response.token_endpoint)
        return True

    def _keep(self, response: TokenResponse, old_refresh: Optional[str]) -> None:
        """Adopt and store a token response (a refresh keeps the old refresh token unless rotated)."""
        body = response.body
        self._token = body["access_token"]
        if response.scopes is not None:
            self._granted = response.scopes
        expires_in = body.get("expires_in")
        self._expires_at = time.time() + expires_in if isinstance(expires_in, (int, float)) else None
        refresh_token = body.get("refresh_token")
        scope = body.get("scope")
        self.store.set(self._key or "", {
            "access_token": body["access_token"], "token_type": body.get("token_type"),
            "refresh_token": refresh_token if isinstance(refresh_token, str) else old_refresh,
            "expires_at": self._expires_at,
            "scope": scope if isinstance(scope, str) else " ".join(self._granted),
            "issuer": response.issuer, "token_endpoint": response.token_endpoint, "client_id": response.client_id,
            "auth_method": response.auth_method, "resource": response.resource})

    def _resolve(self, challenge: Challenge, parsed: Dict[str, str]) -> bool:
        """Flight job (one at a time): a better token than the one ``challenge`` refused."""
        server_url = challenge.url
        if self._key is None:
            self._key = server_url
        if self._token is not None and self._token != challenge.sent_token:
            return True  # another flight got a new token after this request was sent
        if challenge.status == 401:
            def usable(stored: Dict[str, Any]) -> bool:  # not the refused one, and fresh
                return stored.get("access_token") != challenge.sent_token and not self._expiring(stored)

            if self._once("refresh", lambda: self._locked_refresh(usable), challenge.deadline, "token refresh"):
                return True
        wanted = (parsed.get("scope") or "").split()
        if challenge.status == 403:
            if parsed.get("error") != "insufficient_scope":
                return False
            if (wanted and set(wanted) <= set(self._granted)) or self._step_ups >= self.max_step_ups:
                raise AuthError(f"{server_url} still wants scope {parsed.get('scope')!r}; "
                                "giving up on stepping up", status=403, www_authenticate=challenge.www_authenticate)
            self._step_ups += 1
            wanted = sorted(set(self._granted) | set(wanted), key=(self._granted + wanted).index)
        else:
            self._step_ups = 0
        self._keep(self._flow.obtain(server_url, parsed, wanted), None)
        return True


def headless_authorize(http_get: Optional[Callable[[str], requests.Response]] = None) -> Authorize:
    """An ``AuthorizationCode(authorize=...)`` step that fetches the authorization URL and takes
    the redirect it answers with — for authorization servers that approve without a user (test
    servers, pre-consented machine clients). Real logins need a browser: see
    ``loopback_authorize``. ``http_get(url)`` fetches without following redirects (default:
    ``requests.get``)."""
    def authorize(url: str) -> str:
        get = http_get or (lambda u: load("requests").get(u, allow_redirects=False, timeout=30))  # HTTP only
        response = get(url)
        location = response.headers.get("Location")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise AuthError(f"the authorization endpoint answered HTTP {response.status_code} without a redirect")
        return location
    return authorize
