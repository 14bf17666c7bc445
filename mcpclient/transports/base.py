"""The ``Transport`` interface the session drives.

A transport moves whole JSON-RPC messages (dicts) and knows nothing of futures or MCP methods;
the only id it ever looks at is that of a request it could not deliver (``DeliveryFailed``).
Foreign exceptions (``OSError``, ``requests``' errors) are mapped to ``mcpclient.errors`` inside
the transport and nowhere else.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any, Optional

from ..errors import ProtocolError

__all__ = ["DeliveryFailed", "Transport", "decode_frame", "encode_frame"]


class DeliveryFailed:
    """Returned by ``receive()`` in place of a message: the request ``request_id`` could not be
    delivered or answered (an HTTP error status, a refused connection); its call fails with
    ``error``. Stream transports never produce it: their failures end the whole connection."""

    __slots__ = ("request_id", "error")

    def __init__(self, request_id: Any, error: BaseException) -> None:
        self.request_id = request_id
        self.error = error


class Transport(ABC):
    """One connection to one MCP server.

    ``start()`` connects; ``send()`` may be called from many threads at once; ``receive()`` is
    called by the session's single reader thread only and blocks until a message arrives;
    it returns ``None`` at a clean end of stream and raises ``TransportError`` when the
    connection broke. ``close()`` is idempotent, bounded in time, callable from any thread, and
    makes a blocked ``receive()`` return.
    """

    #: A short label used in thread and logger names (e.g. the server command's basename).
    name: str = "server"
    #: The connection number used in thread names (``mcpclient-<instance>-...``); 0 = not assigned.
    instance: int = 0

    @abstractmethod
    def start(self) -> None:
        """Connect (spawn the process, open the stream). Raises ``ConnectError``."""

    @abstractmethod
    def send(self, message: Any, timeout: Optional[float] = None, wait: bool = False) -> None:
        """Send one message (a dict, or a list for a batch). Raises ``TransportError``.

        ``timeout`` bounds the wait for the peer to take the message (``None``: until it does or
        the transport closes); past it ``SendTimeout`` is raised if nothing was sent, and a message
        cut short leaves the connection broken (it is closed). ``wait`` says the caller blocks
        until the answer anyway, so a transport may do the whole exchange on the calling thread
        (HTTP does: one thread hand-off less); what it receives still goes through ``receive()``.
        """

    @abstractmethod
    def receive(self) -> Optional[Any]:
        """Block until the next message; ``None`` at end of stream."""

    def negotiated(self, protocol_version: str) -> None:
        """Called once the handshake agreed on ``protocol_version`` (before
        ``notifications/initialized`` is sent). HTTP transports add the version header from here
        on and open their server-to-client stream; others need not care."""

    #: True for transports that exist only in the handshake era (the 2024-11-05 HTTP+SSE one):
    #: the client then runs ``initialize`` without probing ``server/discover`` first.
    handshake_only = False

    def cancel_request(self, request_id: Any) -> bool:
        """Cancel an in-flight request the transport's own way; True if that replaces the
        ``notifications/cancelled`` message (2026-07-28 HTTP closes the request's stream)."""
        return False

    @abstractmethod
    def close(self) -> None:
        """Release everything; idempotent and bounded in time."""


# Built once (hot path). NaN/Infinity are not JSON: refusing them beats a server parse error.
_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
_decode = json.JSONDecoder().decode


def encode_frame(message: Any) -> bytes:
    """Compact UTF-8 JSON without a newline (JSON escapes newlines inside strings)."""
    return _encode(message).encode("utf-8")


def decode_frame(data: bytes) -> Any:
    """Parse one UTF-8 frame; raise ``ProtocolError`` if it is not JSON (the caller logs and skips)."""
    try:
        return _decode(data.decode("utf-8"))
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
        raise ProtocolError(f"frame is not valid JSON: {exc}") from None
