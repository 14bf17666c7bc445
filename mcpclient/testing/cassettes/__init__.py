"""Record and replay: a session with a real server, saved to a cassette and served back offline.

``RecordingTransport`` (``record``) wraps any transport and writes what crosses it, secrets
redacted; ``ReplayTransport`` (``replay``) plays a cassette back to the client with no process or
socket, and raises ``CassetteMismatch`` for a message the cassette does not have.
"""

from __future__ import annotations

from .record import RecordingTransport
from .replay import CassetteMismatch, ReplayTransport

__all__ = ["CassetteMismatch", "RecordingTransport", "ReplayTransport"]
