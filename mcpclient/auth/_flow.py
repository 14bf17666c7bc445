"""The authorization flow of ``OAuth`` (``oauth``): everything said to the authorization server.

Discovery of the server that protects the MCP server (``discovery``), the client's identity there
(pre-registered, a Client ID Metadata Document URL, or dynamic registration, once per issuer),
the grant (authorization code with PKCE S256 through the user's ``authorize`` step, client
credentials, a JWT bearer assertion, or an enterprise ID-JAG from the IdP), the token request
(client authentication by secret or ``private_key_jwt``, DPoP proofs and nonces) and keeping what
it answers. Every URL is checked by the address guard before anything is sent, and no request
follows a redirect. ``AuthorizationFlow`` is a base of ``OAuth``, which sets the attributes
declared below; it runs inside ``OAuth``'s single flights, under no lock of its own (a refresh's
token request runs under the token store's refresh lock: ``oauth``).
"""
from __future__ import annotations

import base64
import hashlib
import logging
import secrets
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from ..errors import AuthError
from .discovery import AddressGuard, AuthServer, Resource, discover_resource, discover_server, legacy_server

if TYPE_CHECKING:
    from .store import TokenStore

__all__ = ["AuthorizationFlow", "JWT_BEARER", "origin_of"]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

log = logging.getLogger("mcpclient.auth")


class AuthorizationFlow:
    """Getting a token from the authorization server (see the module docstring)."""

    grant: str
    authorize: Optional[Callable[[str], str]]
    client_id: Optional[str]
    client_secret: Optional[str]
    client_metadata_url: Optional[str]
    redirect_uri: str
    scopes: Optional[List[str]]
    client_name: str
    timeout: float
    token_store: "TokenStore"
    assertion: Any
    id_token: Any
    idp_token_endpoint: Optional[str]
    idp_client_id: Optional[str]
    issuer: Optional[str]
    dpop: Any
    allow_private_addresses: bool
    _signing_key: Any
    _dpop_key: Any
    _token_type: str
    _nonces: Dict[str, str]
    _guard: Optional[AddressGuard]
    _key: Optional[str]
    _token: Optional[str]
    _expires_at: Optional[float]
    _granted: List[str]
    _secrets: Dict[str, Optional[str]]
    _registered: Dict[str, Tuple[str, Optional[str], Optional[str]]]
    _http: Any

    # --- the flow ---------------------------------------------------------------------------------

    def _authorize(self, server_url: str, challenge: Dict[str, str], wanted: List[str]) -> None:
        resource = discover_resource(server_url, challenge.get("resource_metadata"), self._get)
        if resource is None or not resource.authorization_servers:
            server = legacy_server(server_url, self._get)
            resource_id = None
        else:
            server = discover_server(resource.authorization_servers[0], self._get)
            resource_id = resource.resource
        self._check_issuer(server)
        scopes = self._choose_scopes(wanted, resource, server)
        if self.grant == "client_credentials":
            client_id, secret = self.client_id or "", self.client_secret
            method = self._auth_method(server, secret)
            fields = {"grant_type": "client_credentials"}
        elif self.grant == "jwt_bearer":  # workload identity: a JWT the platform issued us
            client_id, secret = self.client_id or "", self.client_secret
            method = self._auth_method(server, secret)
            fields = {"grant_type": JWT_BEARER, "assertion": _value(self.assertion)}
        elif self.grant == "enterprise":  # the IdP trades our ID token for an ID-JAG the AS accepts
            client_id, secret, method = self.client_id or "", self.client_secret, "client_secret_basic"
            fields = {"grant_type": JWT_BEARER, "assertion": self._id_jag(server, resource_id)}
        else:
            client_id, secret, method = self._identity(server)
            code, verifier = self._code(server, client_id, resource_id, scopes)
            fields = {"grant_type": "authorization_code", "code": code, "redirect_uri": self.redirect_uri,
                      "code_verifier": verifier}
        if resource_id is not None:
            fields["resource"] = resource_id  # exactly as the metadata publishes it
        if scopes:
            fields["scope"] = " ".join(scopes)
        doc = self._token_request(server, fields, client_id, secret, method)
        self._secrets[client_id] = secret
        self._keep(doc, server, client_id, method, resource_id, None, scopes)
        log.info("authorized with %s (scopes: %s)", server.issuer, " ".join(scopes) or "none")

    def _keep(self, doc: Dict[str, Any], server: AuthServer, client_id: str, method: str, resource: Any,
              old_refresh: Optional[str], scopes: Optional[List[str]] = None) -> None:
        """Adopt and store a token response (a refresh keeps the old refresh token unless rotated)."""
        self._token = doc["access_token"]
        if scopes is not None:
            self._granted = scopes
        expires_in = doc.get("expires_in")
        self._expires_at = time.time() + expires_in if isinstance(expires_in, (int, float)) else None
        stored: Dict[str, Any] = {
            "access_token": doc["access_token"], "token_type": doc.get("token_type"),
            "refresh_token": doc.get("refresh_token") if isinstance(doc.get("refresh_token"), str) else old_refresh,
            "expires_at": self._expires_at,
            "scope": doc.get("scope") if isinstance(doc.get("scope"), str) else " ".join(self._granted),
            "issuer": server.issuer, "token_endpoint": server.token_endpoint, "client_id": client_id,
            "auth_method": method, "resource": resource}
        self.token_store.set(self._key or "", stored)

    def _check_issuer(self, server: AuthServer) -> None:
        """Configured credentials (a secret, a key, an assertion) belong to one authorization
        server: the ``issuer`` given, else the first one they were used with. A server that now
        points elsewhere does not get them."""
        holds_credentials = bool(self.client_secret or self._signing_key is not None or self.assertion
                                 or self.id_token)
        if not holds_credentials:
            return
        if self.issuer is None:
            self.issuer = server.issuer
        elif server.issuer != self.issuer:
            raise AuthError(f"the server now names the authorization server {server.issuer!r}; the configured "
                            f"credentials belong to {self.issuer!r}, refusing to send them there")

    def _id_jag(self, server: AuthServer, resource: Optional[str]) -> str:
        """RFC 8693 token exchange at the enterprise IdP: our ID token -> an identity assertion
        grant (ID-JAG) for ``server`` and this resource."""
        fields = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                  "subject_token": _value(self.id_token),
                  "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                  "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                  "audience": server.issuer}
        if resource is not None:
            fields["resource"] = resource
        if self.idp_client_id:
            fields["client_id"] = self.idp_client_id
        idp = AuthServer("", None, str(self.idp_token_endpoint), None, {})
        return self._token_request(idp, fields, "", None, "none", add_client_id=False)["access_token"]

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
        self._checked(server.registration_endpoint, "the registration endpoint")
        # Never follow a redirect: its target would get the request unchecked by the address guard.
        response = self._session().post(server.registration_endpoint, json=body, timeout=self.timeout,
                                        allow_redirects=False)
        if response.status_code not in (200, 201):
            raise AuthError(f"registration at {server.issuer} failed with HTTP {response.status_code}",
                            status=response.status_code)
        doc = response.json()
        if not isinstance(doc, dict) or not isinstance(doc.get("client_id"), str):
            raise AuthError(f"registration at {server.issuer} returned no client_id")
        method = doc.get("token_endpoint_auth_method")
        return doc["client_id"], doc.get("client_secret"), method if isinstance(method, str) else None

    def _auth_method(self, server: AuthServer, secret: Optional[str]) -> str:
        listed = server.raw.get("token_endpoint_auth_methods_supported")
        listed = listed if isinstance(listed, list) else ["client_secret_basic"]
        if self._signing_key is not None and ("private_key_jwt" in listed or secret is None):
            return "private_key_jwt"
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
        # (headless_authorize fetches it, loopback_authorize opens it: an authorization URL too)
        self._checked(server.authorization_endpoint, "the authorization endpoint")
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
        if answer.get("state") != state:
            raise AuthError("the authorization response's state does not match; refusing it")
        iss = answer.get("iss")
        if (iss is None and server.raw.get("authorization_response_iss_parameter_supported") is True) or \
                (iss is not None and iss != server.issuer):
            raise AuthError(f"the authorization response's issuer {iss!r} is not {server.issuer!r}; refusing it")
        if "error" in answer:
            raise AuthError(f"{server.issuer} refused the authorization: {answer['error']}")
        code = answer.get("code")
        if not code:
            raise AuthError("the authorization response carries no code")
        return code, verifier

    def _token_request(self, server: AuthServer, fields: Dict[str, str], client_id: str,
                       secret: Optional[str], method: str, add_client_id: bool = True) -> Dict[str, Any]:
        if add_client_id:  # not the enterprise IdP's endpoint: the user configured that one
            self._checked(server.token_endpoint, "the token endpoint")
        headers = {"Accept": "application/json"}
        if method == "client_secret_basic" and secret is not None:
            pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        elif method == "private_key_jwt" and self._signing_key is not None:
            from .jwt import client_assertion  # RFC 7523: a signed assertion instead of a secret

            fields = dict(fields, client_id=client_id,
                          client_assertion_type="urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                          client_assertion=client_assertion(client_id, server.issuer, self._signing_key))
        elif add_client_id:
            fields = dict(fields, client_id=client_id)
            if method == "client_secret_post" and secret is not None:
                fields["client_secret"] = secret
        key = self._dpop_for(server)
        for _ in range(2):  # once more if the server asks for a DPoP nonce
            if key is not None:
                headers["DPoP"] = key.proof("POST", server.token_endpoint, None,
                                            self._nonces.get(origin_of(server.token_endpoint)))
            # No redirects: the body (refresh token, code, secret) would go to a URL the guard never saw.
            response = self._session().post(server.token_endpoint, data=fields, headers=headers, timeout=self.timeout,
                                            allow_redirects=False)
            try:
                doc = response.json()
            except ValueError:
                doc = {}
            nonce = response.headers.get("DPoP-Nonce")
            if key is None or response.status_code != 400 or not nonce or \
                    not (isinstance(doc, dict) and doc.get("error") == "use_dpop_nonce"):
                break
            self._nonces[origin_of(server.token_endpoint)] = nonce
        if response.status_code != 200 or not isinstance(doc, dict) or not isinstance(doc.get("access_token"), str):
            error = doc.get("error") if isinstance(doc, dict) else None
            raise AuthError(f"{server.issuer or server.token_endpoint} refused the token request (HTTP "
                            f"{response.status_code}{', ' + str(error) if error else ''})", status=response.status_code)
        if key is not None and str(doc.get("token_type", "")).lower() == "dpop":
            self._dpop_key, self._token_type = key, "DPoP"
        elif "refresh_token" not in fields.get("grant_type", ""):
            self._token_type = "Bearer"
        return doc

    def _dpop_for(self, server: AuthServer) -> Any:
        """The DPoP key for token requests to ``server`` (a new one per client), or None."""
        if self._dpop_key is not None and self.dpop is not False:
            return self._dpop_key  # a refresh of a DPoP-bound token must prove the same key
        if not server.issuer or self.dpop is False:
            return self._dpop_key if self.dpop is not False else None
        if self.dpop == "auto" and not server.supports("dpop_signing_alg_values_supported", "ES256"):
            return None
        if self._dpop_key is None:
            from .jwt import DPoPKey  # deferred: import cost (auth.jwt); only private_key_jwt and DPoP use it

            self._dpop_key = DPoPKey()
        return self._dpop_key

    # --- HTTP -------------------------------------------------------------------------------------

    def _session(self) -> Any:
        if self._http is None:
            import requests  # deferred: import cost (requests); stdio-only programs never load it

            self._http = requests.Session()
        return self._http

    def _checked(self, url: str, what: str) -> str:
        """``url`` if the address guard lets authorization traffic go there (``AuthError`` if not)."""
        server_url = self._key or ""
        if self._guard is None or self._guard.server_url != server_url:
            self._guard = AddressGuard(server_url, self.allow_private_addresses)
        return self._guard.check(url, what)

    def _get(self, url: str) -> Tuple[int, Optional[Dict[str, Any]]]:
        self._checked(url, "the authorization metadata URL")
        response = self._session().get(url, headers={"Accept": "application/json"}, timeout=self.timeout,
                                       allow_redirects=False)
        try:
            return response.status_code, response.json() if response.status_code == 200 else None
        except ValueError:
            return response.status_code, None


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _value(setting: Any) -> str:
    """A secret given as a string, or as a callable that returns the current one."""
    value = setting() if callable(setting) else setting
    if not isinstance(value, str) or not value:
        raise AuthError("the configured assertion or ID token is empty")
    return value
