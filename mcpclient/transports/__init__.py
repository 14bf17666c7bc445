"""Transports: one module each; they move JSON-RPC messages and know nothing of MCP methods."""
from .base import Transport
from .http import HTTPTransport
from .memory import MemoryTransport
from .sse import SSETransport
from .stdio import StdioTransport

__all__ = ["HTTPTransport", "MemoryTransport", "SSETransport", "StdioTransport", "Transport"]
