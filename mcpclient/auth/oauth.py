"""``OAuth``: get, keep and renew an access token for one MCP server (OAuth 2.1).

Plug it in as ``Client(url, auth=OAuth(...))``. Until a token is needed nothing happens; when the
server answers 401 (or 403 ``insufficient_scope``) the transport calls ``on_challenge`` and
repeats the request. ``on_challenge`` discovers the authorization server (``discovery``), finds
or registers a client identity (pre-registered, a Client ID Metadata Document URL, or dynamic
registration), runs the grant (authorization code + PKCE through ``authorize``, or client
credentials) and stores the token. Many threads hitting the same 401 cause one flow: the rest
wait and reuse its token. No token, code, verifier or secret is ever logged or put in an error.
"""
from __future__ import annotations

import base64
import hashlib
import logging
import secrets
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from ..errors import AuthError, parse_challenge
from .discovery import AuthServer, Resource, discover_resource, discover_server, legacy_server

__all__ = ["OAuth"]

log = logging.getLogger("mcpclient.auth")

#: ``authorize(authorization_url) -> callback_url``: send the user to the URL and return the URL
#: the authorization server redirected back to (with ``code``, ``state``, ``iss``).
Authorize = Callable[[str], str]


class OAuth:
    """OAuth 2.1 for an MCP server (authorization code + PKCE, or client credentials).

    Args:
        grant: ``"authorization_code"`` (a user logs in: needs ``authorize``) or
            ``"client_credentials"`` (a backend: needs ``client_id`` and ``client_secret``).
        authorize: ``(authorization_url) -> callback_url``; runs the browser step (see
            ``loopback_authorize`` for desktops). Without it the code flow raises ``AuthError``.
        client_id / client_secret: a pre-registered client (else a CIMD URL, else registration).
        client_metadata_url: an HTTPS URL that identifies this client (Client ID Metadata
            Document), used when the authorization server supports it.
        redirect_uri: where the authorization server sends the user back.
        scopes: scopes to ask for (else the server's challenge, else its ``scopes_supported``).
        client_name: shown by servers during dynamic registration.
        timeout: seconds for each request to the authorization server.
        max_step_ups: re-authorizations for more scope allowed in a row before giving up.
    """

    def __init__(self, *, grant: str = "authorization_code", authorize: Optional[Authorize] = None,
                 client_id: Optional[str] = None, client_secret: Optional[str] = None,
                 client_metadata_url: Optional[str] = None,
                 redirect_uri: str = "http://127.0.0.1:33418/callback", scopes: Optional[Sequence[str]] = None,
                 client_name: str = "mcpclient", timeout: float = 30.0, max_step_ups: int = 2) -> None:
        if grant not in ("authorization_code", "client_credentials"):
            raise ValueError("grant must be 'authorization_code' or 'client_credentials'")
        if grant == "client_credentials" and not (client_id and client_secret):
            raise ValueError("the client_credentials grant needs client_id and client_secret")
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
        self._token: Optional[str] = None
        self._granted: List[str] = []  # the scopes asked for with the current token
        self._step_ups = 0
        self._registered: Dict[str, Tuple[str, Optional[str], Optional[str]]] = {}  # issuer -> id, secret, method
        self._lock = threading.Lock()
        self._http: Any = None

    def __repr__(self) -> str:  # never the token
        return f"<OAuth {self.grant} client_id={self.client_id!r} token={'set' if self._token else 'none'}>"

    # --- the transport's side ---------------------------------------------------------------------

    def __call__(self) -> Optional[str]:
        """The current access token (None before the first flow)."""
        return self._token

    def on_challenge(self, server_url: str, status: int, www_authenticate: Optional[str],
                     sent_token: Optional[str]) -> bool:
        """The server refused ``sent_token`` (401) or wants more scope (403). Get a better token
        (once, however many threads ask); True: repeat the request. ``AuthError`` if impossible."""
        challenge = parse_challenge(www_authenticate or "")
        with self._lock:
            if self._token is not None and self._token != sent_token:
                return True  # another thread got a new token meanwhile
            wanted = (challenge.get("scope") or "").split()
            if status == 403:
                if challenge.get("error") != "insufficient_scope":
                    return False
                if (wanted and set(wanted) <= set(self._granted)) or self._step_ups >= self.max_step_ups:
                    raise AuthError(f"{server_url} still wants scope {challenge.get('scope')!r}; "
                                    "giving up on stepping up", status=403, www_authenticate=www_authenticate)
                self._step_ups += 1
                wanted = sorted(set(self._granted) | set(wanted), key=(self._granted + wanted).index)
            else:
                self._step_ups = 0
            self._token = self._authorize(server_url, challenge, wanted)
            return True

    # --- the flow ---------------------------------------------------------------------------------

    def _authorize(self, server_url: str, challenge: Dict[str, str], wanted: List[str]) -> str:
        resource = discover_resource(server_url, challenge.get("resource_metadata"), self._get)
        if resource is None or not resource.authorization_servers:
            server = legacy_server(server_url, self._get)
            resource_id = None
        else:
            server = discover_server(resource.authorization_servers[0], self._get)
            resource_id = resource.resource
        scopes = self._choose_scopes(wanted, resource, server)
        if self.grant == "client_credentials":
            client_id, secret, method = self.client_id or "", self.client_secret, self._auth_method(server, None)
            fields = {"grant_type": "client_credentials"}
        else:
            client_id, secret, method = self._identity(server)
            code, verifier = self._code(server, client_id, resource_id, scopes)
            fields = {"grant_type": "authorization_code", "code": code, "redirect_uri": self.redirect_uri,
                      "code_verifier": verifier}
        if resource_id is not None:
            fields["resource"] = resource_id  # exactly as the metadata publishes it
        if scopes:
            fields["scope"] = " ".join(scopes)
        token = self._token_request(server, fields, client_id, secret, method)
        self._granted = scopes
        log.info("authorized with %s (scopes: %s)", server.issuer, " ".join(scopes) or "none")
        return token

    def _choose_scopes(self, wanted: List[str], resource: Optional[Resource], server: AuthServer) -> List[str]:
        scopes = list(wanted) or list(self.scopes or []) or list((resource.scopes_supported if resource else None) or [])
        if scopes and server.supports("scopes_supported", "offline_access") and "offline_access" not in scopes \
                and self.grant == "authorization_code":
            scopes.append("offline_access")  # a refresh token, where the server offers one
        return scopes

    def _identity(self, server: AuthServer) -> Tuple[str, Optional[str], str]:
        """(client_id, secret, token endpoint auth method) for ``server``: pre-registered, a
        metadata document URL, or registered now (once per issuer)."""
        if self.client_id:
            return self.client_id, self.client_secret, self._auth_method(server, None)
        if self.client_metadata_url and server.raw.get("client_id_metadata_document_supported") is True:
            return self.client_metadata_url, None, "none"
        known = self._registered.get(server.issuer)
        if known is None:
            known = self._registered[server.issuer] = self._register(server)
        return known[0], known[1], known[2] or self._auth_method(server, known[1])

    def _register(self, server: AuthServer) -> Tuple[str, Optional[str], Optional[str]]:
        if not server.registration_endpoint:
            raise AuthError(f"{server.issuer} offers no dynamic registration: configure client_id "
                            "(or client_metadata_url)")
        body = {"client_name": self.client_name, "redirect_uris": [self.redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                "application_type": "native", "token_endpoint_auth_method": "none"}
        response = self._session().post(server.registration_endpoint, json=body, timeout=self.timeout)
        if response.status_code not in (200, 201):
            raise AuthError(f"registration at {server.issuer} failed with HTTP {response.status_code}",
                            status=response.status_code)
        doc = response.json()
        if not isinstance(doc, dict) or not isinstance(doc.get("client_id"), str):
            raise AuthError(f"registration at {server.issuer} returned no client_id")
        method = doc.get("token_endpoint_auth_method")
        return doc["client_id"], doc.get("client_secret"), method if isinstance(method, str) else None

    @staticmethod
    def _auth_method(server: AuthServer, secret: Optional[str]) -> str:
        listed = server.raw.get("token_endpoint_auth_methods_supported")
        listed = listed if isinstance(listed, list) else ["client_secret_basic"]
        for method in ("client_secret_basic", "client_secret_post", "none"):
            if method in listed and (method == "none" or secret is not None or len(listed) == 1):
                return method
        return "client_secret_basic" if secret else "none"

    def _code(self, server: AuthServer, client_id: str, resource: Optional[str],
              scopes: List[str]) -> Tuple[str, str]:
        """The authorization step: PKCE S256, ``state``, ``resource``; checks the callback's
        ``state`` and (RFC 9207) ``iss`` before the code is used."""
        if self.authorize is None:
            raise AuthError("this server needs a user to log in: pass OAuth(authorize=...) "
                            "(e.g. loopback_authorize()) or use the client_credentials grant")
        if not server.authorization_endpoint:
            raise AuthError(f"{server.issuer} publishes no authorization endpoint")
        methods = server.raw.get("code_challenge_methods_supported")
        if isinstance(methods, list) and "S256" not in methods:
            raise AuthError(f"{server.issuer} does not support PKCE with S256; refusing to authorize")
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        state = secrets.token_urlsafe(24)
        query = {"response_type": "code", "client_id": client_id, "redirect_uri": self.redirect_uri,
                 "code_challenge": challenge, "code_challenge_method": "S256", "state": state}
        if resource is not None:
            query["resource"] = resource
        if scopes:
            query["scope"] = " ".join(scopes)
        joiner = "&" if urlsplit(server.authorization_endpoint).query else "?"
        callback = self.authorize(server.authorization_endpoint + joiner + urlencode(query, quote_via=quote))
        answer = {k: v[0] for k, v in parse_qs(urlsplit(callback).query).items()}
        if "error" in answer:
            raise AuthError(f"{server.issuer} refused the authorization: {answer['error']}")
        if answer.get("state") != state:
            raise AuthError("the authorization response's state does not match; refusing it")
        iss = answer.get("iss")
        if (iss is None and server.raw.get("authorization_response_iss_parameter_supported") is True) or \
                (iss is not None and iss != server.issuer):
            raise AuthError(f"the authorization response's issuer {iss!r} is not {server.issuer!r}; refusing it")
        code = answer.get("code")
        if not code:
            raise AuthError("the authorization response carries no code")
        return code, verifier

    def _token_request(self, server: AuthServer, fields: Dict[str, str], client_id: str,
                       secret: Optional[str], method: str) -> str:
        headers = {"Accept": "application/json"}
        if method == "client_secret_basic" and secret is not None:
            pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        else:
            fields = dict(fields, client_id=client_id)
            if method == "client_secret_post" and secret is not None:
                fields["client_secret"] = secret
        response = self._session().post(server.token_endpoint, data=fields, headers=headers, timeout=self.timeout)
        try:
            doc = response.json()
        except ValueError:
            doc = {}
        if response.status_code != 200 or not isinstance(doc, dict) or not isinstance(doc.get("access_token"), str):
            error = doc.get("error") if isinstance(doc, dict) else None
            raise AuthError(f"{server.issuer} refused the token request (HTTP {response.status_code}"
                            f"{', ' + str(error) if error else ''})", status=response.status_code)
        return doc["access_token"]

    # --- HTTP -------------------------------------------------------------------------------------

    def _session(self) -> Any:
        if self._http is None:
            import requests

            self._http = requests.Session()
        return self._http

    def _get(self, url: str) -> Tuple[int, Optional[Dict[str, Any]]]:
        response = self._session().get(url, headers={"Accept": "application/json"}, timeout=self.timeout,
                                       allow_redirects=False)
        try:
            return response.status_code, response.json() if response.status_code == 200 else None
        except ValueError:
            return response.status_code, None


def headless_authorize(http_get: Optional[Callable[[str], Any]] = None) -> Authorize:
    """An ``authorize`` that fetches the authorization URL and takes the redirect it answers
    with — for authorization servers that approve without a user (test servers, pre-consented
    machine clients). Real logins need a browser: see ``loopback_authorize``."""
    def authorize(url: str) -> str:
        import requests

        response = (http_get or (lambda u: requests.get(u, allow_redirects=False, timeout=30)))(url)
        location = response.headers.get("Location")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise AuthError(f"the authorization endpoint answered HTTP {response.status_code} without a redirect")
        return location
    return authorize
