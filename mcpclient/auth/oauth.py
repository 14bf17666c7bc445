"""``OAuth``: get, keep and renew an access token for one MCP server (OAuth 2.1).

Plug it in as ``Client(url, auth=OAuth(...))``. Until a token is needed nothing happens; when the
server answers 401 (or 403 ``insufficient_scope``) the transport calls ``on_challenge`` and
repeats the request. ``on_challenge`` discovers the authorization server (``discovery``), finds or
registers a client identity (pre-registered, a Client ID Metadata Document URL, or dynamic
registration), runs the grant (authorization code + PKCE through ``authorize``, or client
credentials) and stores the token: that flow, everything said to the authorization server, is
``_flow``; this module keeps the token and decides when a flow or a refresh runs. Many threads
hitting the same 401 cause one flow, and many meeting the same expiring token one refresh
(``_threads.SingleFlight``): the rest wait, each bounded by its own request's deadline, and reuse
the new token. No lock is held across a network round trip or the ``authorize`` callback, which
may wait minutes for a human — except the token store's refresh lock (``TokenStore.lock``), held
by the one refreshing thread across re-reading the stored token and the refresh request, so that
clients in other processes sharing the store (``FileTokenStore``, ``RedisTokenStore``) refresh a
rotating refresh token once, not each. No token, code, verifier or secret is ever logged or put in
an error.
"""
from __future__ import annotations

import hashlib
import logging
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .._util.threads import FlightTimeout, SingleFlight
from ..errors import AuthError, parse_challenge
from ._flow import AuthorizationFlow, origin_of
from .base import AuthProvider, Challenge
from .discovery import AddressGuard, AuthServer
from .store import MemoryTokenStore, TokenStore

__all__ = ["OAuth", "headless_authorize"]

GRANTS = ("authorization_code", "client_credentials", "jwt_bearer", "enterprise")

log = logging.getLogger("mcpclient.auth")

#: ``authorize(authorization_url) -> callback_url``: send the user to the URL and return the URL
#: the authorization server redirected back to (with ``code``, ``state``, ``iss``).
Authorize = Callable[[str], str]


class OAuth(AuthorizationFlow, AuthProvider):
    """OAuth 2.1 for an MCP server (authorization code + PKCE, or client credentials).

    Example::

        auth = OAuth(authorize=loopback_authorize(),
                     token_store=FileTokenStore("~/.mcp-tokens.json"))
        with Client("https://mcp.example.com/mcp", auth=auth) as client:
            print(client.list_tools())

    Args:
        grant: ``"authorization_code"`` (a user logs in: needs ``authorize``),
            ``"client_credentials"`` (a backend: ``client_id`` and ``client_secret``),
            ``"jwt_bearer"`` (workload identity: ``assertion``, a JWT from the platform, or a
            callable returning the current one; one attempt, never another grant), or
            ``"enterprise"`` (enterprise-managed: ``id_token`` is exchanged at
            ``idp_token_endpoint`` for an ID-JAG, which the server's AS takes with
            ``client_id``/``client_secret``).
        authorize: ``(authorization_url) -> callback_url``; runs the browser step (see
            ``loopback_authorize`` for desktops). Without it the code flow raises ``AuthError``.
        client_id / client_secret: a pre-registered client (else a CIMD URL, else registration).
        private_key: an EC P-256 private key (PEM) for ``private_key_jwt`` client authentication
            (RFC 7523), instead of a secret. Needs ``pip install 'mcpclient[oauth]'``
            (``cryptography``); without it ``MissingExtraError`` here.
        client_metadata_url: an HTTPS URL that identifies this client (Client ID Metadata
            Document), used when the authorization server supports it.
        redirect_uri: where the authorization server sends the user back.
        scopes: scopes to ask for (else the server's challenge, else its ``scopes_supported``).
        client_name: shown by servers during dynamic registration.
        timeout: seconds for each request to the authorization server.
        max_step_ups: re-authorizations for more scope allowed in a row before giving up.
        token_store: where tokens are kept (``MemoryTokenStore`` by default; ``FileTokenStore``
            keeps them across runs, mode 0600). Client secrets are never stored.
        refresh_margin: refresh a token this many seconds before it expires.
        issuer: the authorization server configured credentials belong to (else the first one
            they are used with); credentials are never sent to another one.
        dpop: bind tokens to a key with DPoP (RFC 9449): ``"auto"`` when the authorization server
            supports ES256 proofs, ``True``, or ``False``. Each request then carries a fresh proof.
            Proofs need ``mcpclient[oauth]``: without it ``True`` raises ``MissingExtraError`` at
            the first token request, and ``"auto"`` does too where the server offers DPoP.
        allow_private_addresses: fetch metadata and use endpoints on loopback, private and
            link-local addresses even when the MCP server is not on one (by default a server on
            loopback may use loopback ones and one on a private network private ones; link-local
            never: ``AuthError`` naming the host).
    """

    def __init__(self, *, grant: str = "authorization_code", authorize: Optional[Authorize] = None,
                 client_id: Optional[str] = None, client_secret: Optional[str] = None,
                 client_metadata_url: Optional[str] = None,
                 redirect_uri: str = "http://127.0.0.1:33418/callback", scopes: Optional[Sequence[str]] = None,
                 client_name: str = "mcpclient", timeout: float = 30.0, max_step_ups: int = 2,
                 token_store: Optional[TokenStore] = None, refresh_margin: float = 30.0,
                 assertion: Any = None, id_token: Any = None, idp_token_endpoint: Optional[str] = None,
                 idp_client_id: Optional[str] = None, private_key: Optional[str] = None,
                 dpop: Any = "auto", issuer: Optional[str] = None, allow_private_addresses: bool = False) -> None:
        if grant not in GRANTS:
            raise ValueError(f"grant must be one of {', '.join(GRANTS)}")
        if grant == "client_credentials" and not (client_id and (client_secret or private_key)):
            raise ValueError("the client_credentials grant needs client_id and client_secret (or private_key)")
        self._signing_key: Any = None  # a cryptography EC private key
        if private_key is not None:
            # deferred: import cost (auth.jwt); only private_key_jwt and DPoP use it
            from .jwt import load_ec_private_key

            try:
                self._signing_key = load_ec_private_key(private_key)
            except (ValueError, IndexError) as exc:
                raise ValueError(f"private_key must be an EC P-256 key in PEM: {exc}") from None
        if grant == "jwt_bearer" and assertion is None:
            raise ValueError("the jwt_bearer grant needs an assertion (a JWT, or a callable returning one)")
        if grant == "enterprise" and not (id_token and idp_token_endpoint and client_id and client_secret):
            raise ValueError("the enterprise grant needs id_token, idp_token_endpoint, client_id and client_secret")
        if dpop not in ("auto", True, False):
            raise ValueError("dpop must be 'auto', True or False")
        self.dpop = dpop
        self.allow_private_addresses = allow_private_addresses
        self._guard: Optional[AddressGuard] = None
        self._dpop_key: Any = None  # DPoPKey once the token is DPoP-bound
        self._token_type = "Bearer"
        self._nonces: Dict[str, str] = {}  # origin -> the DPoP nonce its server asked for
        self.issuer = issuer
        self.assertion = assertion
        self.id_token = id_token
        self.idp_token_endpoint = idp_token_endpoint
        self.idp_client_id = idp_client_id
        self.grant = grant
        self.authorize = authorize
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_metadata_url = client_metadata_url
        self.redirect_uri = redirect_uri
        self.scopes = list(scopes) if scopes else None
        self.client_name = client_name
        self.timeout = timeout
        self.max_step_ups = max_step_ups
        self.token_store = token_store if token_store is not None else MemoryTokenStore()
        self.refresh_margin = refresh_margin
        self._key: Optional[str] = None  # the MCP server's URL: the store's key
        self._token: Optional[str] = None
        self._expires_at: Optional[float] = None  # epoch seconds, kept in memory for the hot path
        self._granted: List[str] = []  # the scopes asked for with the current token
        self._secrets: Dict[str, Optional[str]] = {}  # client_id -> secret (memory only, never stored)
        self._step_ups = 0
        self._registered: Dict[str, Tuple[str, Optional[str], Optional[str]]] = {}  # issuer -> id, secret, method
        # One token refresh and one authorization flow at a time, with no lock held while they
        # run: a login may wait minutes for a human, and every other request needs the token.
        self._flights = SingleFlight()
        self._http: Any = None

    def __repr__(self) -> str:  # never the token
        return f"<OAuth {self.grant} client_id={self.client_id!r} token={'set' if self._token else 'none'}>"

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
        key = self._dpop_key
        if key is None or self._token_type.lower() != "dpop":
            return {"Authorization": f"Bearer {token}"}
        return {"Authorization": f"DPoP {token}",
                "DPoP": key.proof(method, url, token, self._nonces.get(origin_of(url)))}

    def bind(self, server_url: str) -> None:
        """Called by the transport at start: tokens are stored under the server's URL (a stored,
        still valid token from an earlier run is used at once)."""
        if self._key is not None and self._key != server_url:
            # one OAuth per server: another server's token must never be sent here
            self._token, self._expires_at, self._granted = None, None, []
            self._dpop_key, self._token_type = None, "Bearer"
        self._key = server_url
        stored = self.token_store.get(server_url)
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
        if parsed.get("error") == "use_dpop_nonce" and challenge.dpop_nonce and self._dpop_key is not None:
            self._nonces[origin_of(challenge.url)] = challenge.dpop_nonce  # RFC 9449 §9: repeat with its nonce
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
            with self.token_store.lock(key, self.timeout):
                stored = self.token_store.get(key) or {}
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
        refresh_token, endpoint = stored.get("refresh_token"), stored.get("token_endpoint")
        if not isinstance(refresh_token, str) or not isinstance(endpoint, str):
            return False
        client_id = str(stored.get("client_id") or "")
        fields = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        if isinstance(stored.get("resource"), str):
            fields["resource"] = stored["resource"]
        server = AuthServer(str(stored.get("issuer") or ""), None, endpoint, None, {})
        try:
            doc = self._token_request(server, fields, client_id, self._secrets.get(client_id),
                                      str(stored.get("auth_method") or "none"))
        except (OSError, ValueError) as exc:  # unreachable (requests' errors are OSErrors) or not JSON
            log.info("token refresh failed (%s); keeping the current token", type(exc).__name__)
            return False
        except AuthError as exc:
            if exc.status not in (400, 401):  # the server failed, not our refresh token: keep it
                log.info("token refresh failed (%s); keeping the current token", exc)
                return False
            # The refresh token was refused (invalid_grant): forget that generation only. A newer
            # one another client stored meanwhile is kept, and adopted.
            if self.token_store.delete_if(self._key or "", refresh_token):
                log.info("token refresh failed (%s); a new authorization is needed", exc)
            else:
                newer = self.token_store.get(self._key or "") or {}
                if isinstance(newer.get("access_token"), str) and newer.get("refresh_token") != refresh_token:
                    log.info("token refresh failed (%s); adopting the token another client stored", exc)
                    self._adopt(newer)
                    return not self._expiring(newer)
            self._token = self._expires_at = None
            return False
        self._keep(doc, server, client_id, str(stored.get("auth_method") or "none"), stored.get("resource"),
                   refresh_token)
        log.info("refreshed the access token from %s", server.issuer or endpoint)
        return True

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
        self._authorize(server_url, parsed, wanted)
        return True


def headless_authorize(http_get: Optional[Callable[[str], Any]] = None) -> Authorize:
    """An ``authorize`` that fetches the authorization URL and takes the redirect it answers
    with — for authorization servers that approve without a user (test servers, pre-consented
    machine clients). Real logins need a browser: see ``loopback_authorize``."""
    def authorize(url: str) -> str:
        import requests  # deferred: import cost (requests); stdio-only programs never load it

        response = (http_get or (lambda u: requests.get(u, allow_redirects=False, timeout=30)))(url)
        location = response.headers.get("Location")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise AuthError(f"the authorization endpoint answered HTTP {response.status_code} without a redirect")
        return location
    return authorize
