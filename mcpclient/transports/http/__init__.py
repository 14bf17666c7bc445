"""The HTTP transports: Streamable HTTP (``streamable``) and the legacy HTTP+SSE one (``sse``), on
what they share (``_exchange``: the one request/stream loop; ``_posters``, ``_reading``,
``_streams``: the GET streams; ``_sessions``: the MCP session id, its renewal). Each loads on first
use.

Imports: as ``transports``.
"""
from typing import TYPE_CHECKING

from ..._util.lazy import lazy_names as _lazy_names

if TYPE_CHECKING:
    from .sse import SSETransport
    from .streamable import HTTPTransport

__all__ = ["HTTPTransport", "SSETransport"]

__getattr__ = _lazy_names(__name__, {"HTTPTransport": "streamable", "SSETransport": "sse"}, globals())
