"""How the Streamable HTTP transport POSTs. ``FastPoster``: straight to ``requests``' own urllib3
connection pool, for a transport that owns its ``requests.Session``, sends to its endpoint
directly (no proxy applies) and follows no redirects.

Why: on a fast server, ``Session.send`` / ``HTTPAdapter.send`` / ``build_response`` (URL parsing,
proxy and pool lookups, cookie extraction twice, hooks, a ``Response`` built per request) cost
more CPU than the HTTP exchange itself, and with many threads that CPU, under the GIL, is what
bounds throughput. Nothing is hand-built: the pool is the one the session's mounted adapter hands
out for the endpoint (``get_connection_with_tls_context`` + ``cert_verify``: the same TLS
verification settings as every request the session sends), the headers are the session's merged
once, and the session's cookie jar is still used, through ``requests``' cookie helpers, whenever it
holds cookies or an answer sets one (a sticky load balancer's). With a user's session, a proxy or
``follow_redirects`` the transport keeps sending through ``requests`` (``SessionPoster``), which
still skips what ``Session.request`` redoes per request, and sends each redirect hop the
``_exchange`` loop judged (``SessionPoster.hop``).

``FastResponse`` gives the rest of the transport the few things it reads of a ``requests.Response``
(``status_code``, ``headers``, ``content``, ``text``, ``raw``, ``close``). Both posters map failures
with ``_reading.request_error`` (urllib3's as ``requests``' own): ``ConnectError`` when nothing
reached the server (the request may be sent again), ``ConnectionClosed`` when it may have.
"""
from __future__ import annotations

from typing import AbstractSet, Any, Callable, Dict, Mapping, Optional, Union

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.cookies import extract_cookies_to_jar, get_cookie_header
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers, select_proxy

from ._reading import JSON, SSE, request_error

__all__ = ["FastPoster", "FastResponse", "SessionPoster"]


def _template(http: "requests.Session", url: str, headers: Dict[str, str]) -> "requests.PreparedRequest":
    """The POST both posters start from: ``http``'s headers and ``headers`` merged as ``requests``
    merges them, ``Accept`` and ``Content-Type`` set; ``Content-Length`` and ``Authorization``
    removed (each request sets its own, if any)."""
    template = http.prepare_request(requests.Request("POST", url, headers=headers, data=b"{}"))
    template.headers["Accept"] = f"{JSON}, {SSE}"
    template.headers["Content-Type"] = JSON
    for header in ("Content-Length", "Authorization"):
        template.headers.pop(header, None)
    return template


class FastResponse:
    """What the transport reads of an answer, over a streamed ``urllib3.HTTPResponse`` (``raw``).

    ``close()`` returns the connection to the pool when the body was read to its end (urllib3
    does it as the last byte is read) and closes it otherwise: a connection with unread bytes
    of an answer on it is never handed to another request.
    """

    __slots__ = ("raw", "status_code", "headers", "sent", "_content")

    def __init__(self, raw: "urllib3.HTTPResponse", sent: Mapping[str, Union[str, bytes]]) -> None:
        self.raw = raw
        self.sent = sent  # the request's headers (an error page that quotes them is masked)
        self.status_code: int = raw.status
        self.headers = raw.headers  # urllib3's HTTPHeaderDict: case-insensitive, like requests'
        self._content: Optional[bytes] = None

    @property
    def content(self) -> bytes:
        if self._content is None:
            self._content = self.raw.read(decode_content=True)
        return self._content

    @property
    def text(self) -> str:
        charset = get_encoding_from_headers(self.headers)  # type: ignore[arg-type]  # (only .get is used)
        return self.content.decode(charset or "utf-8", "replace")

    def close(self) -> None:
        raw = self.raw
        if raw.connection is None:  # read to the end (and released by urllib3), or closed already
            return
        if raw.length_remaining == 0:
            raw.read()  # an empty or fully read body: urllib3 marks it done and releases the connection
        else:
            raw.close()  # bytes left unread: the connection is dropped, never reused
        raw.release_conn()


class FastPoster:
    """POSTs to one URL through the pool ``requests`` keeps for it. Make it with ``open``."""

    def __init__(self, http: "requests.Session", template: "requests.PreparedRequest", pool: Any,
                 static: AbstractSet[str], name: str, connect_timeout: float) -> None:
        self._jar = http.cookies
        self._template = template  # url and static headers: what the cookie policy looks at
        self._pool = pool
        self._path: str = template.path_url
        self._base = {k: v for k, v in template.headers.items() if k.lower() not in static}
        self._name = name
        self._connect = connect_timeout
        self._timeout = urllib3.Timeout
        self._no_retries = urllib3.Retry(total=False, redirect=False)  # made once: urlopen would make one per call
        self._get_cookies = get_cookie_header
        self._set_cookies = extract_cookies_to_jar

    @classmethod
    def open(cls, http: "requests.Session", url: str, headers: Dict[str, str], name: str,
             connect_timeout: float) -> Optional["FastPoster"]:
        """A poster for ``url`` over ``http`` (a session the transport made itself, its
        environment settings already read into it), or ``None`` if a proxy applies to ``url``."""
        # (A Cookie header the caller gave stays in the template: the jar's cookies are then not
        # added, as requests does not add them over one.)
        template = _template(http, url, headers)
        full_url = template.url or url
        if select_proxy(full_url, http.proxies):
            return None
        adapter = http.get_adapter(full_url)
        if not isinstance(adapter, HTTPAdapter):
            return None
        pool = adapter.get_connection_with_tls_context(template, http.verify, cert=http.cert)
        adapter.cert_verify(pool, full_url, http.verify, http.cert)  # as HTTPAdapter.send does, once
        return cls(http, template, pool, {k.lower() for k in headers}, name, connect_timeout)

    def post(self, body: bytes, headers: Dict[str, str], read: Optional[float]) -> FastResponse:
        """POST ``body`` with the session's headers and ``headers`` (which win); ``read``: the
        read timeout (``None``: none). Raises ``ConnectError`` / ``ConnectionClosed``."""
        merged = self._base.copy()
        merged.update(headers)
        jar = self._jar
        if jar:
            cookie = self._get_cookies(jar, self._template)
            if cookie is not None:
                merged["Cookie"] = cookie
        try:
            raw = self._pool.urlopen("POST", self._path, body=body, headers=merged, retries=self._no_retries,
                                     redirect=False, preload_content=False,
                                     timeout=self._timeout(connect=self._connect, read=read))
        except Exception as exc:  # urllib3's errors, or a header value http.client refuses
            raise request_error(self._name, exc, self._connect) from exc
        if "Set-Cookie" in raw.headers:
            self._set_cookies(jar, self._template, raw)
        return FastResponse(raw, merged)


class SessionPoster:
    """POSTs to one URL through ``Session.send`` without redoing, per request, what
    ``Session.request`` redoes: URL parsing, header merging, environment lookup. The session's
    headers, proxies and certificate settings are read once, at start; its cookies, auth, hooks
    and adapters are still honoured on every request: for a user's session, through a proxy, or
    with ``follow_redirects`` (a session of the transport's own going direct uses
    ``FastPoster``). Never follows a redirect by itself (``hop`` sends what ``_exchange`` allowed)."""

    def __init__(self, http: "requests.Session", url: str, headers: Dict[str, str], name: str,
                 connect_timeout: float) -> None:
        self._http = http
        self._name = name
        self._connect = connect_timeout
        self._errors = requests.exceptions.RequestException
        self._new = requests.PreparedRequest
        template = _template(http, url, headers)
        self.url: str = template.url or url
        self._headers = CaseInsensitiveDict(template.headers)
        self._headers.pop("Cookie", None)  # the jar's, set per request below
        env = http.merge_environment_settings(self.url, {}, None, None, None)
        self._settings = {"proxies": env["proxies"], "verify": env["verify"], "cert": env["cert"]}

    def post(self, body: bytes, headers: Dict[str, str], read: Optional[float]) -> "requests.Response":
        """POST ``body``; ``read``: the read timeout. Raises ``ConnectError`` / ``ConnectionClosed``."""
        http = self._http
        request = self._new()
        request.method = "POST"
        request.url = self.url
        request.headers = merged = self._headers.copy()
        merged.update(headers)
        merged["Content-Length"] = str(len(body))
        request.body = body
        request.hooks = http.hooks
        request.prepare_cookies(http.cookies)  # also gives requests the jar it expects on a 3xx
        if http.auth is not None:
            request.prepare_auth(http.auth, self.url)
        try:
            return http.send(request, stream=True, timeout=(self._connect, read), allow_redirects=False,
                             **self._settings)
        except (self._errors, ValueError) as exc:  # ValueError: http.client refused a header value
            raise request_error(self._name, exc, self._connect) from exc

    def hop(self, target: str, body: bytes, headers: Dict[str, str], read: Optional[float],
            keep: Optional[Callable[[str], bool]]) -> "requests.Response":
        """POST ``body`` to ``target``, a redirect's ``Location`` (``_exchange`` judged it): with
        every header, the cookies and the session's auth if it is still our origin (``keep``
        None), else with only the headers ``keep`` allows."""
        http = self._http
        request = self._new()
        request.method = "POST"
        request.url = target
        request.headers = merged = self._headers.copy()
        merged.update(headers)
        merged["Content-Length"] = str(len(body))
        if keep is not None:
            for name in [k for k in merged if not keep(k)]:
                del merged[name]
        request.body = body
        request.hooks = http.hooks
        if keep is None:
            request.prepare_cookies(http.cookies)
            if http.auth is not None:
                request.prepare_auth(http.auth, target)
        env = http.merge_environment_settings(target, {}, None, None, None)
        settings = {"proxies": env["proxies"], "verify": env["verify"], "cert": env["cert"]}
        try:
            return http.send(request, stream=True, timeout=(self._connect, read), allow_redirects=False, **settings)
        except (self._errors, ValueError) as exc:
            raise request_error(self._name, exc, self._connect) from exc
