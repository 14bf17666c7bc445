"""How the Streamable HTTP transport follows redirects: ``RedirectPoster``, with a ``Redirects`` policy.

``requests`` follows redirects itself but strips only ``Authorization`` when the host changes: an
API key in another header, the ``Mcp-Session-Id`` or a ``DPoP`` proof would reach whatever host a
server names. So every POST is sent with ``allow_redirects=False`` and each 3xx is judged here
before anything goes to its ``Location``: the hop count, the status (307/308 only: they keep the
POST and its body), the scheme (never HTTPS to HTTP), the origin (another one only with
``cross_origin=True``, and then with only the headers ``Redirects.keeps`` allows). A refusal is an
``HTTPError`` naming the status and the reason, the URL shown without its query.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple
from urllib.parse import urljoin, urlsplit

from ...errors import HTTPError
from ...policies.redirects import Redirects
from ._exchange import request_error
from ._posters import SessionPoster

if TYPE_CHECKING:
    import requests

    from ...auth.base import AuthProvider

__all__ = ["RedirectPoster", "origin"]

_REDIRECTS = (301, 302, 303, 307, 308)
_KEEP_POST = (307, 308)
_DEFAULT_PORTS = {"http": 80, "https": 443}


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


class RedirectPoster(SessionPoster):
    """A ``SessionPoster`` that follows the redirects ``policy`` allows (see the module doc)."""

    def __init__(self, http: "requests.Session", url: str, headers: Dict[str, str], name: str,
                 connect_timeout: float, policy: Redirects, auth: Optional["AuthProvider"] = None) -> None:
        super().__init__(http, url, headers, name, connect_timeout)
        self._policy = policy
        self._origin = origin(self.url)
        self._auth = auth  # re-signs a DPoP proof for a same-origin hop (the proof names the URL)

    def post(self, body: bytes, headers: Dict[str, str], read: Optional[float]) -> Any:
        response = super().post(body, headers, read)
        url, stripped = self.url, False
        hops = 0
        while response.status_code in _REDIRECTS and response.headers.get("Location"):
            status = response.status_code
            try:
                target = urljoin(url, response.headers["Location"])
                urlsplit(target).port  # noqa: B018  (a port that is no port, a broken [IPv6]: ValueError)
            except ValueError:
                response.close()
                raise HTTPError(status, "redirect to a malformed URL refused (its host or port is invalid)") from None
            try:
                self._judge(status, url, target, hops)
            except HTTPError:
                response.close()
                raise
            cross = origin(target) != self._origin
            if cross and not self._policy.cross_origin:
                response.close()
                raise HTTPError(status, f"redirect to {_shown(target)} refused: another origin "
                                        "(Redirects(cross_origin=True) allows it, without credentials)")
            stripped = stripped or cross
            response.close()
            response = self._hop(target, body, headers, read, stripped)
            url = target
            hops += 1
        return response

    def _judge(self, status: int, url: str, target: str, hops: int) -> None:
        """Raise ``HTTPError`` unless a redirect from ``url`` to ``target`` may be followed."""
        if hops >= self._policy.max_redirects:
            raise HTTPError(status, f"redirect to {_shown(target)} refused: more than "
                                    f"{self._policy.max_redirects} redirects")
        if status not in _KEEP_POST:
            raise HTTPError(status, f"redirect to {_shown(target)} refused: a {status} turns the POST into a GET "
                                    "(an MCP server redirects with 307 or 308)")
        scheme = urlsplit(target).scheme.lower()
        if scheme not in ("http", "https"):
            raise HTTPError(status, f"redirect to a {scheme or 'relative'}: URL refused")
        if scheme == "http" and urlsplit(url).scheme.lower() == "https":
            raise HTTPError(status, f"redirect to {_shown(target)} refused: HTTPS is never downgraded to HTTP")

    def _hop(self, target: str, body: bytes, headers: Dict[str, str], read: Optional[float],
             stripped: bool) -> Any:
        """POST ``body`` to ``target``: with every header if it is still our origin, else
        (``stripped``) with only those the policy keeps, and no cookies or session auth."""
        http = self._http
        request = self._new()
        request.method = "POST"
        request.url = target
        merged = self._headers.copy()
        merged.update(headers)
        merged["Content-Length"] = str(len(body))
        if stripped:
            for name in [k for k in merged if not self._policy.keeps(k)]:
                del merged[name]
        elif self._auth is not None and "DPoP" in merged:  # a proof is bound to its URL: a new one
            merged.update(self._auth.headers("POST", target))
        request.headers = merged
        request.body = body
        request.hooks = http.hooks
        if not stripped:
            request.prepare_cookies(http.cookies)
            if http.auth is not None:
                request.prepare_auth(http.auth, target)
        env = http.merge_environment_settings(target, {}, None, None, None)
        settings = {"proxies": env["proxies"], "verify": env["verify"], "cert": env["cert"]}
        try:
            return http.send(request, stream=True, timeout=(self._connect, read), allow_redirects=False, **settings)
        except (self._errors, ValueError) as exc:
            raise request_error(self._name, exc, self._connect) from exc
