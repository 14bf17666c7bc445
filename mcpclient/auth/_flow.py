"""The authorization flow of ``OAuth`` (``oauth``): everything said to the authorization server.

``AuthorizationFlow`` runs a grant (``grants``) for one ``OAuth``: discovery of the server that
protects the MCP server (``discovery``), the client's identity there (pre-registered, a Client ID
Metadata Document URL, or dynamic registration, once per issuer), the grant itself (authorization
code with PKCE S256 through the user's ``authorize`` step, client credentials, a JWT bearer
assertion, or an enterprise ID-JAG from the IdP), and the token request (client authentication by
secret or ``private_key_jwt``, DPoP proofs and nonces). It answers with a ``TokenResponse``;
keeping the token, and deciding when to ask for one, is ``OAuth``'s. ``DPoP`` is the proof of
possession state both share: the key, whether the current token is bound to it, the servers'
nonces. Every URL is checked by the address guard before anything is sent, and no request
follows a redirect. The flow runs inside ``OAuth``'s single flights, under no lock of its own (a
refresh's token request runs under the token store's refresh lock: ``oauth``).
"""
from __future__ import annotations

import base64
import hashlib
import importlib.util
import logging
import secrets
from typing import TYPE_CHECKING, Any, Dict, List, Literal, NamedTuple, Optional, Sequence, Tuple, Union
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from .._util.lazy import load
from ..errors import AuthError
from .discovery import AddressGuard, AuthServer, Resource, discover_resource, discover_server, legacy_server
from .grants import AuthorizationCode, ClientCredentials, EnterpriseExchange, Grant, JWTBearer, JWTSource, signing_key

if TYPE_CHECKING:
    import requests
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePrivateKey

    from .jwt import DPoPKey

__all__ = ["AuthorizationFlow", "DPoP", "DPoPMode", "JWT_BEARER", "TokenResponse", "origin_of"]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

#: ``OAuth(dpop=)``: ``"auto"`` (where the authorization server and the resource both take ES256 proofs), ``True`` or ``False``.
DPoPMode = Union[bool, Literal["auto"]]

log = logging.getLogger("mcpclient.auth")


class TokenResponse(NamedTuple):
    """A token endpoint's answer, and what keeping and later refreshing its token needs."""

    body: Dict[str, Any]
    issuer: str
    token_endpoint: str
    client_id: str
    auth_method: str
    resource: Optional[str]
    scopes: Optional[List[str]]  # the scopes asked for; None for a refresh (the granted ones stay)


class DPoP:
    """Proof of possession (RFC 9449) for one ``OAuth``: whether to bind tokens (``mode``), the
    key they are bound to, whether the current token is, and the nonce each server asked for."""

    def __init__(self, mode: DPoPMode) -> None:
        self.mode = mode
        self.key: Optional[DPoPKey] = None
        self._bound = False  # the last token response was a DPoP-bound token
        # What the protected resource's metadata says (RFC 9728): it takes DPoP-bound tokens / needs them.
        self._resource_accepts = self._resource_requires = False
        self._nonces: Dict[str, str] = {}  # origin -> the DPoP nonce its server asked for

    @property
    def bound_key(self) -> Optional[DPoPKey]:
        """The key the current token is bound to (requests carry it as ``DPoP`` with a proof made
        with this key), or None for a bearer token."""
        key = self.key
        return key if self._bound else None

    def nonce(self, url: str) -> Optional[str]:
        """The nonce ``url``'s server last asked proofs to carry, if any."""
        return self._nonces.get(origin_of(url))

    def remember_nonce(self, url: str, nonce: str) -> None:
        """``url``'s server asked for this nonce (``use_dpop_nonce``): later proofs carry it."""
        self._nonces[origin_of(url)] = nonce

    def reset(self) -> None:
        """Another server: a new key when one is needed, and a bearer token until then."""
        self.key, self._bound = None, False

    def resource_says(self, resource: Optional[Resource], scheme: Optional[str]) -> None:
        """What the protected resource says of DPoP: it takes DPoP-bound tokens if its metadata
        lists ES256 in ``dpop_signing_alg_values_supported`` or its challenge used the ``DPoP``
        scheme (RFC 9449, 7.1); it requires them with ``dpop_bound_access_tokens_required``
        (RFC 9728). A resource that says none of this (a ``Bearer`` challenge) takes bearer tokens."""
        raw = resource.raw if resource is not None else {}
        algs = raw.get("dpop_signing_alg_values_supported")
        self._resource_requires = raw.get("dpop_bound_access_tokens_required") is True
        self._resource_accepts = self._resource_requires or (isinstance(algs, list) and "ES256" in algs) \
            or (scheme or "").lower() == "dpop"

    def key_for(self, server: AuthServer) -> Optional[DPoPKey]:
        """The key for token requests to ``server`` (made on first use, one per ``OAuth``), or None."""
        if self.key is not None and self.mode is not False:
            return self.key  # a refresh of a DPoP-bound token must prove the same key
        if not server.issuer or self.mode is False:
            return self.key if self.mode is not False else None
        if self.mode == "auto":
            # Only where both ends take it: an MCP server that checks only "Bearer" refuses a
            # DPoP-bound token. Without the oauth extra, bearer, unless the resource requires DPoP.
            if not self._resource_accepts or not server.supports("dpop_signing_alg_values_supported", "ES256"):
                return None
            if not self._resource_requires and importlib.util.find_spec("cryptography") is None:
                return None
        if self.key is None:
            self.key = load("mcpclient.auth.jwt").DPoPKey()  # the optional extra (cryptography): MissingExtraError
        return self.key

    def answered(self, key: Optional[DPoPKey], body: Dict[str, Any], *, refreshing: bool) -> None:
        """A token request proved ``key`` (or none) and got ``body``: is the new token bound?"""
        if key is not None and str(body.get("token_type", "")).lower() == "dpop":
            self.key, self._bound = key, True
        elif not refreshing:
            self._bound = False


class AuthorizationFlow:
    """Getting a token from the authorization server with one grant (see the module docstring)."""

    def __init__(self, grant: Grant, *, dpop: DPoP, scopes: Optional[Sequence[str]] = None,
                 issuer: Optional[str] = None, timeout: float = 30.0, allow_private_addresses: bool = False) -> None:
        self.grant = grant
        self.dpop = dpop
        self.scopes = list(scopes) if scopes else None
        self.issuer = issuer  # the authorization server the configured credentials belong to
        self.timeout = timeout
        self.allow_private_addresses = allow_private_addresses
        key = None if isinstance(grant, EnterpriseExchange) else grant.private_key
        self._signing_key: Optional[EllipticCurvePrivateKey] = None if key is None else signing_key(key)
        self._guard: Optional[AddressGuard] = None
        self._secrets: Dict[str, Optional[str]] = {}  # client_id -> secret (memory only, never stored)
        self._registered: Dict[str, Tuple[str, Optional[str], Optional[str]]] = {}  # issuer -> id, secret, method
        self._http: Optional[requests.Session] = None

    # --- the flow ---------------------------------------------------------------------------------

    def obtain(self, server_url: str, challenge: Dict[str, str], wanted: List[str]) -> TokenResponse:
        """A new token for ``server_url``, which answered ``challenge`` (its parsed
        ``WWW-Authenticate``), with the ``wanted`` scopes (else the configured or published ones)."""
        self._guard_for(server_url)
        resource = discover_resource(server_url, challenge.get("resource_metadata"), self._get)
        self.dpop.resource_says(resource, challenge.get("scheme"))
        if resource is None or not resource.authorization_servers:
            server = legacy_server(server_url, self._get)
            resource_id = None
        else:
            server = discover_server(resource.authorization_servers[0], self._get)
            resource_id = resource.resource
        self.check_issuer(server)
        scopes = self._choose_scopes(wanted, resource, server)
        grant = self.grant
        fields: Dict[str, str]
        if isinstance(grant, ClientCredentials):
            client_id, secret = grant.client_id, grant.client_secret
            method = self._auth_method(server, secret)
            fields = {"grant_type": "client_credentials"}
        elif isinstance(grant, JWTBearer):  # workload identity: a JWT the platform issued us
            client_id, secret = grant.client_id or "", grant.client_secret
            method = self._auth_method(server, secret)
            fields = {"grant_type": JWT_BEARER, "assertion": _value(grant.assertion)}
        elif isinstance(grant, EnterpriseExchange):  # the IdP trades our ID token for an ID-JAG the AS accepts
            client_id, secret, method = grant.client_id, grant.client_secret, "client_secret_basic"
            fields = {"grant_type": JWT_BEARER, "assertion": self._id_jag(grant, server, resource_id)}
        else:
            client_id, secret, method = self._identity(grant, server)
            code, verifier = self._code(grant, server, client_id, resource_id, scopes)
            fields = {"grant_type": "authorization_code", "code": code, "redirect_uri": grant.redirect_uri,
                      "code_verifier": verifier}
        if resource_id is not None:
            fields["resource"] = resource_id  # exactly as the metadata publishes it
        if scopes:
            fields["scope"] = " ".join(scopes)
        body = self._token_request(server, fields, client_id, secret, method)
        self._secrets[client_id] = secret
        log.info("authorized with %s (scopes: %s)", server.issuer, " ".join(scopes) or "none")
        return TokenResponse(body, server.issuer, server.token_endpoint, client_id, method, resource_id, scopes)

    def refresh(self, server_url: str, stored: Dict[str, Any]) -> TokenResponse:
        """Swap the ``stored`` token's refresh token for a new access token (``AuthError`` when
        the authorization server refuses; ``OSError``/``ValueError`` when it cannot answer)."""
        self._guard_for(server_url)
        client_id = str(stored.get("client_id") or "")
        method = str(stored.get("auth_method") or "none")
        fields = {"grant_type": "refresh_token", "refresh_token": str(stored.get("refresh_token"))}
        resource = stored.get("resource") if isinstance(stored.get("resource"), str) else None
        if resource is not None:
            fields["resource"] = resource
        server = AuthServer(str(stored.get("issuer") or ""), None, str(stored.get("token_endpoint")), None, {})
        body = self._token_request(server, fields, client_id, self._secrets.get(client_id), method)
        return TokenResponse(body, server.issuer, server.token_endpoint, client_id, method, resource, None)

    def check_issuer(self, server: AuthServer) -> None:
        """Configured credentials (a secret, a key, an assertion) belong to one authorization
        server: the ``issuer`` given, else the first one they were used with. A server that now
        points elsewhere does not get them."""
        grant = self.grant
        if isinstance(grant, AuthorizationCode) and grant.client_secret is None and self._signing_key is None:
            return  # a public client: nothing to keep from another server
        if self.issuer is None:
            self.issuer = server.issuer
        elif server.issuer != self.issuer:
            raise AuthError(f"the server now names the authorization server {server.issuer!r}; the configured "
                            f"credentials belong to {self.issuer!r}, refusing to send them there")

    def _id_jag(self, grant: EnterpriseExchange, server: AuthServer, resource: Optional[str]) -> str:
        """RFC 8693 token exchange at the enterprise IdP: our ID token -> an identity assertion
        grant (ID-JAG) for ``server`` and this resource."""
        fields = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                  "subject_token": _value(grant.id_token),
                  "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                  "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                  "audience": server.issuer}
        if resource is not None:
            fields["resource"] = resource
        if grant.idp_client_id:
            fields["client_id"] = grant.idp_client_id
        idp = AuthServer("", None, grant.idp_token_endpoint, None, {})
        return str(self._token_request(idp, fields, "", None, "none", add_client_id=False)["access_token"])

    def _choose_scopes(self, wanted: List[str], resource: Optional[Resource], server: AuthServer) -> List[str]:
        scopes = list(wanted) or list(self.scopes or []) or list((resource.scopes_supported if resource else None) or [])
        if scopes and server.supports("scopes_supported", "offline_access") and "offline_access" not in scopes \
                and isinstance(self.grant, AuthorizationCode):
            scopes.append("offline_access")  # a refresh token, where the server offers one
        return scopes

    def _identity(self, grant: AuthorizationCode, server: AuthServer) -> Tuple[str, Optional[str], str]:
        """(client_id, secret, token endpoint auth method) for ``server``: pre-registered, a
        metadata document URL, or registered now (once per issuer)."""
        if grant.client_id:
            return grant.client_id, grant.client_secret, self._auth_method(server, None)
        if grant.client_metadata_url and server.raw.get("client_id_metadata_document_supported") is True:
            return grant.client_metadata_url, None, "none"
        known = self._registered.get(server.issuer)
        if known is None:
            known = self._registered[server.issuer] = self._register(grant, server)
        return known[0], known[1], known[2] or self._auth_method(server, known[1])

    def _register(self, grant: AuthorizationCode, server: AuthServer) -> Tuple[str, Optional[str], Optional[str]]:
        if not server.registration_endpoint:
            raise AuthError(f"{server.issuer} offers no dynamic registration: configure AuthorizationCode's "
                            "client_id (or client_metadata_url)")
        body = {"client_name": grant.client_name, "redirect_uris": [grant.redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                "application_type": "native", "token_endpoint_auth_method": "none"}
        self._checked(server.registration_endpoint, "the registration endpoint")
        # Never follow a redirect: its target would get the request unchecked by the address guard.
        response = self.session().post(server.registration_endpoint, json=body, timeout=self.timeout,
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

    def _code(self, grant: AuthorizationCode, server: AuthServer, client_id: str, resource: Optional[str],
              scopes: List[str]) -> Tuple[str, str]:
        """The authorization step: PKCE S256, ``state``, ``resource``; checks the callback's
        ``state`` and (RFC 9207) ``iss`` before the code is used."""
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
        query = {"response_type": "code", "client_id": client_id, "redirect_uri": grant.redirect_uri,
                 "code_challenge": challenge, "code_challenge_method": "S256", "state": state}
        if resource is not None:
            query["resource"] = resource
        if scopes:
            query["scope"] = " ".join(scopes)
        joiner = "&" if urlsplit(server.authorization_endpoint).query else "?"
        callback = grant.authorize(server.authorization_endpoint + joiner + urlencode(query, quote_via=quote))
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
                       secret: Optional[str], method: str, *, add_client_id: bool = True) -> Dict[str, Any]:
        if add_client_id:  # not the enterprise IdP's endpoint: the user configured that one
            self._checked(server.token_endpoint, "the token endpoint")
        headers = {"Accept": "application/json"}
        if method == "client_secret_basic" and secret is not None:
            pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        elif method == "private_key_jwt" and self._signing_key is not None:
            client_assertion = load("mcpclient.auth.jwt").client_assertion  # the optional extra (cryptography)
            fields = dict(fields, client_id=client_id,
                          client_assertion_type="urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                          client_assertion=client_assertion(client_id, server.issuer, self._signing_key))
        elif add_client_id:
            fields = dict(fields, client_id=client_id)
            if method == "client_secret_post" and secret is not None:
                fields["client_secret"] = secret
        key = self.dpop.key_for(server)
        for _ in range(2):  # once more if the server asks for a DPoP nonce
            if key is not None:
                headers["DPoP"] = key.proof("POST", server.token_endpoint, None, self.dpop.nonce(server.token_endpoint))
            # No redirects: the body (refresh token, code, secret) would go to a URL the guard never saw.
            response = self.session().post(server.token_endpoint, data=fields, headers=headers, timeout=self.timeout,
                                           allow_redirects=False)
            try:
                doc = response.json()
            except ValueError:
                doc = {}
            nonce = response.headers.get("DPoP-Nonce")
            if key is None or response.status_code != 400 or not nonce or \
                    not (isinstance(doc, dict) and doc.get("error") == "use_dpop_nonce"):
                break
            self.dpop.remember_nonce(server.token_endpoint, nonce)
        if response.status_code != 200 or not isinstance(doc, dict) or not isinstance(doc.get("access_token"), str):
            error = doc.get("error") if isinstance(doc, dict) else None
            raise AuthError(f"{server.issuer or server.token_endpoint} refused the token request (HTTP "
                            f"{response.status_code}{', ' + str(error) if error else ''})", status=response.status_code)
        self.dpop.answered(key, doc, refreshing="refresh_token" in fields.get("grant_type", ""))
        return doc

    # --- HTTP -------------------------------------------------------------------------------------

    def session(self) -> requests.Session:
        """The HTTP session every request to an authorization server goes through."""
        if self._http is None:
            self._http = load("requests").Session()  # an OAuth never used (a stdio run) loads no requests
        return self._http

    def _guard_for(self, server_url: str) -> None:
        """The address guard of ``server_url``: authorization traffic for it goes where it may."""
        if self._guard is None or self._guard.server_url != server_url:
            self._guard = AddressGuard(server_url, self.allow_private_addresses)

    def _checked(self, url: str, what: str) -> str:
        """``url`` if the address guard lets authorization traffic go there (``AuthError`` if not)."""
        if self._guard is None:
            raise AuthError(f"{what} {url!r}: no MCP server to judge it by")
        return self._guard.check(url, what)

    def _get(self, url: str) -> Tuple[int, Optional[Dict[str, Any]]]:
        self._checked(url, "the authorization metadata URL")
        response = self.session().get(url, headers={"Accept": "application/json"}, timeout=self.timeout,
                                      allow_redirects=False)
        try:
            return response.status_code, response.json() if response.status_code == 200 else None
        except ValueError:
            return response.status_code, None


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _value(setting: JWTSource) -> str:
    """A JWT given as a string, or as a callable that returns the current one."""
    value = setting() if callable(setting) else setting
    if not isinstance(value, str) or not value:
        raise AuthError("the configured assertion or ID token is empty")
    return value
