"""The HTTP transports: Streamable HTTP (``streamable``) and the legacy HTTP+SSE one (``sse``).
Each is made of parts that keep their own state: ``_exchange`` (the policy loops around one
request: retries, session renewal, auth rounds, redirects; who requests act as),
``_inflight`` (the requests in flight and what ends them: close, a cancel, a deadline),
``_connections`` (the ``requests`` session and its connections), ``_posters`` (how a POST is
sent), ``_reading`` (bodies, event streams, errors), and for Streamable HTTP ``_sessions`` (the
MCP session id's life) and ``_streams`` (the GET stream, resumption). Each transport loads on
first use.

Imports: as ``transports``.
"""
from typing import TYPE_CHECKING

from ..._util.lazy import lazy_names as _lazy_names

if TYPE_CHECKING:
    from .sse import SSETransport
    from .streamable import HTTPTransport

__all__ = ["HTTPTransport", "SSETransport"]

__getattr__ = _lazy_names(__name__, {"HTTPTransport": "streamable", "SSETransport": "sse"}, globals())
