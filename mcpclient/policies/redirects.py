"""``Redirects``: which HTTP redirects the Streamable HTTP transport follows — an immutable value.

Like ``Retry`` (and urllib3's ``Retry``), one frozen object states the whole policy; it is given as
``HTTPTransport(follow_redirects=...)``. A redirect is followed only where it cannot leak what the
request carries: to the same origin (scheme, host and port) by default; to another origin only
with ``cross_origin=True``, and then with every header but the protocol's own stripped (the
token, the session id, cookies, every header of ``headers=`` not named in ``safe_headers``); never
from HTTPS down to HTTP. The transport (``transports.http._exchange``) applies it.
"""
from __future__ import annotations

import dataclasses
import sys
from typing import Any, Dict, Tuple

__all__ = ["Redirects", "CREDENTIAL_HEADERS", "PROTOCOL_HEADERS"]

_SLOTS: Dict[str, Any] = {"slots": True} if sys.version_info >= (3, 10) else {}

#: Headers that carry who the request acts as: never sent to another origin, whatever ``safe_headers`` says.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "dpop", "mcp-session-id",
                                "last-event-id"})
#: Headers a cross-origin hop keeps: the protocol's own (``Mcp-Param-*`` too: the body carries the same).
PROTOCOL_HEADERS = frozenset({"accept", "accept-encoding", "content-type", "content-length", "user-agent",
                              "connection", "mcp-protocol-version", "mcp-method", "mcp-name"})


@dataclasses.dataclass(frozen=True, **_SLOTS)
class Redirects:
    """Which redirects an HTTP transport follows (``HTTPTransport(follow_redirects=Redirects(...))``;
    ``follow_redirects=True`` means ``Redirects()``, ``False`` follows none).

    Example::

        redirects = Redirects(cross_origin=True, safe_headers=("X-Tenant",))
        HTTPTransport(url, headers={"X-Tenant": "acme", "X-Api-Key": key},
                      follow_redirects=redirects)

    Only 307 and 308 are followed (the POST is sent again, body and all, as they ask); a 301, 302
    or 303 to a POST would turn it into a GET, which is no MCP request: ``HTTPError`` naming it.
    A redirect the policy does not allow (another origin, HTTPS to HTTP, one hop too many) is an
    ``HTTPError`` with the status and the reason; nothing is sent to the refused URL.

    Args:
        cross_origin: follow a redirect to another origin (another scheme, host or port;
            ``localhost`` and ``127.0.0.1`` are different hosts). Its request carries only the
            protocol's headers (``Accept``, ``Content-Type``, ``User-Agent``, ``MCP-Protocol-Version``,
            ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``) and those named in ``safe_headers``:
            no ``Authorization``, no custom auth header, no ``DPoP``, no ``Mcp-Session-Id``, no
            cookies, no other header of ``headers=`` or of the ``requests`` session.
        safe_headers: headers of ``headers=`` that may go to another origin (case-insensitive);
            a credential header (``Authorization``, ``Cookie``, ``Mcp-Session-Id``…) is refused
            here (``ValueError``).
        max_redirects: the most hops one request may take (``HTTPError`` past it).
    """

    cross_origin: bool = False
    safe_headers: Tuple[str, ...] = ()
    max_redirects: int = 5

    def __post_init__(self) -> None:
        if isinstance(self.safe_headers, str) or not all(isinstance(h, str) for h in self.safe_headers):
            raise TypeError("safe_headers must be a sequence of header names")
        object.__setattr__(self, "safe_headers", tuple(self.safe_headers))
        credentials = sorted(h for h in self.safe_headers if h.lower() in CREDENTIAL_HEADERS)
        if credentials:
            raise ValueError(f"safe_headers may not name a credential header: {', '.join(credentials)}")
        if not isinstance(self.max_redirects, int) or isinstance(self.max_redirects, bool) or self.max_redirects < 1:
            raise ValueError("max_redirects must be an int >= 1")

    def keeps(self, header: str) -> bool:
        """May ``header`` go with a request to another origin?"""
        name = header.lower()
        if name in CREDENTIAL_HEADERS:
            return False
        return name in PROTOCOL_HEADERS or name.startswith("mcp-param-") or \
            any(name == safe.lower() for safe in self.safe_headers)
