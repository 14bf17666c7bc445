"""Transports: how a ``Client`` reaches its server. They move JSON-RPC messages and know nothing
of MCP methods.
"""
# One module each. Each transport loads on first use (PEP 562): a program that only runs stdio
# servers never pays for the HTTP ones, nor one that only talks HTTP for the stdio one.
#
# Imports: ``auth``, ``policies``, ``types``, ``_util``, ``errors``: a transport knows no MCP
# method and no era.
from typing import TYPE_CHECKING

from .._util.lazy import lazy_names as _lazy_names
from .base import Endpoint, Transport, TransportInfo

if TYPE_CHECKING:
    from ..policies.redirects import Redirects
    from .http.streamable import HTTPTransport
    from .memory import MemoryTransport
    from .http.sse import SSETransport
    from .stdio.transport import StdioTransport

__all__ = ["Endpoint", "HTTPTransport", "MemoryTransport", "Redirects", "SSETransport", "StdioTransport", "Transport",
           "TransportInfo"]

_LAZY = {"HTTPTransport": "http.streamable", "SSETransport": "http.sse", "Redirects": "http._exchange", "MemoryTransport": "memory",
         "StdioTransport": "stdio.transport"}


__getattr__ = _lazy_names(__name__, _LAZY, globals())
