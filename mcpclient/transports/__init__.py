"""Transports: one module each; they move JSON-RPC messages and know nothing of MCP methods."""
from .base import Transport
from .memory import MemoryTransport
from .stdio import StdioTransport

__all__ = ["MemoryTransport", "StdioTransport", "Transport"]
