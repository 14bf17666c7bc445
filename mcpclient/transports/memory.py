"""In-process transport: a pair of queues, for tests and embedded servers.

Messages are encoded to JSON on send and decoded on receive, exactly as on a real wire, so a test
through memory sees what a server would see. The other side is a ``MemoryPeer`` whose ``send`` /
``receive`` / ``close`` mirror the transport's.
"""
from __future__ import annotations

import queue
from typing import TYPE_CHECKING, Dict, Optional, Tuple

from ..errors import ConnectionClosed
from .base import Endpoint, Transport, TransportInfo, decode_frame, encode_frame

if TYPE_CHECKING:
    from .base import Message, Received

__all__ = ["MemoryPeer", "MemoryTransport"]

_EOF = b""


class _End:
    def __init__(self, inbox: "queue.Queue[bytes]", outbox: "queue.Queue[bytes]") -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._closed = False

    def send(self, message: Message, *, deadline: Optional[float] = None,
             headers: Optional[Dict[str, str]] = None, idempotent: Optional[bool] = False, setup: bool = False) -> None:
        """Queue one message for the other end. Raises ``ConnectionClosed`` once this end is closed."""
        if self._closed:
            raise ConnectionClosed("memory transport is closed")
        self._outbox.put(encode_frame(message))

    def receive(self, timeout: Optional[float] = None) -> Optional[Received]:
        """The next message, or ``None`` once the other side closed (or ``timeout`` passed)."""
        try:
            frame = self._inbox.get(timeout=timeout)
        except queue.Empty:
            return None
        if frame is _EOF:
            self._inbox.put(_EOF)  # keep reporting EOF to later calls
            return None
        return decode_frame(frame)

    def close(self, deadline: Optional[float] = None) -> None:
        """Close both directions: each end's ``receive()`` then returns ``None``. Idempotent; never raises."""
        if not self._closed:
            self._closed = True
            self._outbox.put(_EOF)
            self._inbox.put(_EOF)


class MemoryPeer(_End):
    """The server's end of a ``MemoryTransport``: ``receive()`` client messages, ``send()`` replies."""


class MemoryTransport(_End, Transport):
    """The client's end of an in-process connection.

    Example::

        transport, peer = MemoryTransport.pair()
        threading.Thread(target=my_server_loop, args=(peer,)).start()
        with Client(transport) as client: ...
    """

    #: In this process; nothing to remember, no secret, used once.
    _INFO = TransportInfo("memory", Endpoint("memory"))

    @classmethod
    def pair(cls) -> Tuple["MemoryTransport", MemoryPeer]:
        """Make a connected pair.

        Returns:
            ``(transport, peer)``: give the transport to ``Client``, serve on the peer.
        """
        to_server: "queue.Queue[bytes]" = queue.Queue()
        to_client: "queue.Queue[bytes]" = queue.Queue()
        return cls(to_client, to_server), MemoryPeer(to_server, to_client)

    @property
    def info(self) -> TransportInfo:
        """In this process."""
        return self._INFO

    def start(self) -> None:
        """Nothing to connect: the queues are there."""
