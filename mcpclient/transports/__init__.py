"""Transports: one module each; they move JSON-RPC messages and know nothing of MCP methods.

``HTTPTransport`` and ``SSETransport`` load on first use (PEP 562): a program that only runs stdio
servers never pays for them.
"""
from typing import TYPE_CHECKING

from .._lazy import lazy_names as _lazy_names
from .base import Transport
from .memory import MemoryTransport
from .stdio import StdioTransport

if TYPE_CHECKING:
    from ..redirects import Redirects
    from .http import HTTPTransport
    from .sse import SSETransport

__all__ = ["HTTPTransport", "MemoryTransport", "Redirects", "SSETransport", "StdioTransport", "Transport"]

_LAZY = {"HTTPTransport": "http", "SSETransport": "sse", "Redirects": "_redirects"}


__getattr__ = _lazy_names(__name__, _LAZY, globals())
