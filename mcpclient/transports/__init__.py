"""Transports: one module each; they move JSON-RPC messages and know nothing of MCP methods.

``HTTPTransport`` and ``SSETransport`` load on first use (PEP 562): a program that only runs stdio
servers never pays for them.
"""
from typing import TYPE_CHECKING

from .base import Transport
from .memory import MemoryTransport
from .stdio import StdioTransport

if TYPE_CHECKING:
    from .http import HTTPTransport
    from .sse import SSETransport

__all__ = ["HTTPTransport", "MemoryTransport", "SSETransport", "StdioTransport", "Transport"]

_LAZY = {"HTTPTransport": "http", "SSETransport": "sse"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpclient.transports' has no attribute {name!r}")
    import importlib  # deferred: only the first use of a lazy name needs it

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
