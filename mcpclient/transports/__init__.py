"""Transports: one module each; they move JSON-RPC messages and know nothing of MCP methods.

Each transport loads on first use (PEP 562): a program that only runs stdio servers never pays
for the HTTP ones, nor one that only talks HTTP for the stdio one.
"""
from typing import TYPE_CHECKING

from .._lazy import lazy_names as _lazy_names
from .base import Transport

if TYPE_CHECKING:
    from ..redirects import Redirects
    from .http import HTTPTransport
    from .memory import MemoryTransport
    from .sse import SSETransport
    from .stdio import StdioTransport

__all__ = ["HTTPTransport", "MemoryTransport", "Redirects", "SSETransport", "StdioTransport", "Transport"]

_LAZY = {"HTTPTransport": "http", "SSETransport": "sse", "Redirects": "_redirects", "MemoryTransport": "memory",
         "StdioTransport": "stdio"}


__getattr__ = _lazy_names(__name__, _LAZY, globals())
