"""Where to authorize: protected resource metadata (RFC 9728), then the authorization server's
metadata (RFC 8414 / OpenID Connect discovery), with the 2025-03-26 fallbacks.

Every fetch goes through ``get(url) -> (status, json or None)`` so the caller owns HTTP
(timeouts, TLS, proxies). URLs are tried in the spec's order and nothing is guessed beyond it;
the documents' own values (``resource``, ``issuer``) are kept exactly as published.
"""
from __future__ import annotations

import ipaddress
import socket
from typing import Any, Callable, Dict, FrozenSet, List, NamedTuple, Optional, Tuple
from urllib.parse import urlsplit

from urllib3.util import parse_url

from ..errors import AuthError

__all__ = ["AddressGuard", "AuthServer", "Resource", "discover_resource", "discover_server"]

Fetch = Callable[[str], Tuple[int, Optional[Dict[str, Any]]]]


class Resource(NamedTuple):
    """The protected resource's metadata (``None`` fields: it published none; 2025-03-26 servers)."""

    resource: Optional[str]
    authorization_servers: List[str]
    scopes_supported: Optional[List[str]]
    raw: Dict[str, Any]


class AuthServer(NamedTuple):
    """An authorization server's endpoints and abilities."""

    issuer: str
    authorization_endpoint: Optional[str]
    token_endpoint: str
    registration_endpoint: Optional[str]
    raw: Dict[str, Any]

    def supports(self, key: str, value: str) -> bool:
        listed = self.raw.get(key)
        return isinstance(listed, list) and value in listed


_LOOPBACK = ("localhost", "127.0.0.1", "::1")


def connect_target(url: str, what: str) -> Tuple[str, str, Optional[int]]:
    """``(scheme, host, port)`` of ``url`` as the HTTP stack (urllib3, under requests) will
    connect: the host every check must judge. ``AuthError`` for a URL that parses two ways, whose
    host Python's ``urlsplit`` reads differently (``https://169.254.169.254\\@a.example/``: urllib3
    ends the host at the backslash and connects to 169.254.169.254), or that has no host."""
    try:
        stack = parse_url(url)
        port = stack.port
        split_host = (urlsplit(url).hostname or "").lower()
    except ValueError:  # (urllib3's LocationParseError is a ValueError too)
        raise AuthError(f"{what} is not a URL the client can use; refusing it") from None
    host = (stack.host or "").lower().strip("[]")
    split_host = split_host.replace("%25", "%")  # (an IPv6 zone, percent-encoded in a URL)
    if not split_host.isascii():  # (urllib3 sends an international name IDNA-encoded)
        try:
            split_host = split_host.encode("idna").decode("ascii")
        except UnicodeError:
            split_host = ""
    if not host or host != split_host:
        raise AuthError(f"{what} parses two ways (its host is {host!r} or {split_host!r}, depending on the "
                        "parser); refusing it") from None
    return (stack.scheme or "").lower(), host, port


def _checked_url(url: str, what: str) -> str:
    """Authorization traffic needs HTTPS (plain HTTP only to this machine, for development)."""
    scheme, host, _ = connect_target(url, what)
    if scheme == "https" or (scheme == "http" and host in _LOOPBACK):
        return url
    raise AuthError(f"{what} {url!r} is not an https URL; refusing to send credentials over it")


IPAddress = Any  # ipaddress.IPv4Address | ipaddress.IPv6Address


def address_class(ip: IPAddress) -> str:
    """``"loopback"``, ``"link-local"``, ``"private"`` (RFC 1918, ULA, shared and other
    non-global ranges), ``"reserved"`` (multicast, unspecified, reserved) or ``"global"``.
    An IPv4-mapped IPv6 address is judged as the IPv4 address it carries."""
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None:
        ip = mapped
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved:
        return "reserved"
    if ip.is_private or not ip.is_global:
        return "private"
    return "global"


def _addresses(host: str, port: Optional[int]) -> List[IPAddress]:
    """Every address ``host`` resolves to (an IP literal: itself; unresolvable: none)."""
    try:
        return [ipaddress.ip_address(host.split("%", 1)[0])]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port or 443, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []  # the request itself will fail to connect, with its own error
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


class AddressGuard:
    """Refuses authorization URLs (metadata, token and registration endpoints) that point into
    this machine or its networks, so that an MCP server cannot make the client fetch internal
    URLs (cloud metadata services on link-local addresses, admin endpoints on loopback or
    private addresses). Every address the host resolves to must be ``global``, or of a class
    the MCP server itself is on: a server on loopback may use loopback authorization servers,
    one on a private network private ones. Link-local and reserved addresses are never allowed,
    unless ``allow_all`` (``OAuth(allow_private_addresses=True)``) turns the guard off.

    The check resolves the name once and the request resolves it again: it stops a server that
    names an internal address, not one that controls its DNS and answers differently each time.
    """

    def __init__(self, server_url: str, allow_all: bool = False) -> None:
        self.allow_all = allow_all
        self._allowed: Optional[FrozenSet[str]] = None
        self.server_url = server_url

    def allowed(self) -> FrozenSet[str]:
        """The address classes authorization URLs may use: global, and the server's own."""
        if self._allowed is None:
            parts = urlsplit(self.server_url)
            own = {address_class(ip) for ip in _addresses(parts.hostname or "", parts.port)}
            self._allowed = frozenset({"global"} | (own & {"loopback", "private"}))
        return self._allowed

    def check(self, url: str, what: str) -> str:
        """``url`` if its host is allowed, else ``AuthError`` naming the host (never a token)."""
        if self.allow_all:
            return url
        _, host, port = connect_target(url, what)
        for ip in _addresses(host, port):
            kind = address_class(ip)
            if kind not in self.allowed():
                raise AuthError(
                    f"{what} is on {host!r}, a {kind} address ({ip}), and the MCP server is not; refusing to "
                    "fetch it (OAuth(allow_private_addresses=True) allows it)")
        return url


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def discover_resource(server_url: str, metadata_url: Optional[str], get: Fetch) -> Optional[Resource]:
    """The server's protected resource metadata: the challenge's ``resource_metadata`` URL, else
    the path-based well-known URL, else the root one. None if there is none (2025-03-26)."""
    if metadata_url:
        candidates = [metadata_url]  # given by the server: never second-guessed
    else:
        path = urlsplit(server_url).path.rstrip("/")
        base = _origin(server_url) + "/.well-known/oauth-protected-resource"
        candidates = [base + path, base] if path else [base]
    for url in candidates:
        status, doc = get(_checked_url(url, "the resource metadata URL"))
        if status == 200 and isinstance(doc, dict):
            resource = doc.get("resource")
            servers = doc.get("authorization_servers")
            scopes = doc.get("scopes_supported")
            found = Resource(resource if isinstance(resource, str) else None,
                             [s for s in servers if isinstance(s, str)] if isinstance(servers, list) else [],
                             [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else None, doc)
            _check_resource(server_url, found.resource)
            return found
    if metadata_url:
        raise AuthError(f"the server's resource metadata at {metadata_url} could not be read")
    return None


def _check_resource(server_url: str, resource: Optional[str]) -> None:
    """The metadata must describe this server: same origin, and a path that is a prefix of ours."""
    if resource is None:
        raise AuthError("the protected resource metadata names no resource")
    ours, theirs = urlsplit(server_url), urlsplit(resource)
    same_origin = (ours.scheme, ours.netloc.lower()) == (theirs.scheme, theirs.netloc.lower())
    prefix = theirs.path.rstrip("/")
    if not same_origin or not (ours.path == theirs.path or ours.path.startswith(prefix + "/") or not prefix):
        raise AuthError(f"the protected resource metadata is for {resource!r}, not for {server_url!r}; "
                        "refusing to send credentials for another resource")


def discover_server(issuer: str, get: Fetch) -> AuthServer:
    """The metadata of the authorization server ``issuer``: RFC 8414 and OIDC well-known URLs in
    the spec's order (path-aware); its ``issuer`` must be exactly ``issuer``."""
    parts = urlsplit(_checked_url(issuer, "the authorization server"))
    origin, path = _origin(issuer), parts.path.rstrip("/")
    if path:
        candidates = [f"{origin}/.well-known/oauth-authorization-server{path}",
                      f"{origin}/.well-known/openid-configuration{path}",
                      f"{origin}{path}/.well-known/openid-configuration"]
    else:
        candidates = [f"{origin}/.well-known/oauth-authorization-server",
                      f"{origin}/.well-known/openid-configuration"]
    for url in candidates:
        status, doc = get(url)
        if status == 200 and isinstance(doc, dict):
            if doc.get("issuer") != issuer:
                raise AuthError(f"the authorization server metadata at {url} names issuer "
                                f"{doc.get('issuer')!r}, not {issuer!r}; refusing it")
            return _server(doc, issuer)
    raise AuthError(f"no authorization server metadata found for {issuer}")


def legacy_server(server_url: str, get: Fetch) -> AuthServer:
    """2025-03-26: no resource metadata; the server's origin is the authorization server, its
    metadata at the root, else the default endpoints."""
    origin = _origin(_checked_url(server_url, "the server"))
    status, doc = get(f"{origin}/.well-known/oauth-authorization-server")
    if status == 200 and isinstance(doc, dict):
        return _server(doc, str(doc.get("issuer") or origin))
    return AuthServer(origin, f"{origin}/authorize", f"{origin}/token", f"{origin}/register",
                      {"code_challenge_methods_supported": ["S256"]})


def _server(doc: Dict[str, Any], issuer: str) -> AuthServer:
    token = doc.get("token_endpoint")
    if not isinstance(token, str):
        raise AuthError(f"the authorization server {issuer} publishes no token endpoint")
    _checked_url(token, "the token endpoint")
    authorize, register = doc.get("authorization_endpoint"), doc.get("registration_endpoint")
    for url, what in ((authorize, "the authorization endpoint"), (register, "the registration endpoint")):
        if isinstance(url, str):
            _checked_url(url, what)
    return AuthServer(issuer, authorize if isinstance(authorize, str) else None, token,
                      register if isinstance(register, str) else None, doc)
