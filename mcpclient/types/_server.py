"""``ServerInfo``: all a server said of itself when the client connected (``Client.server``).
Part of ``mcpclient.types``; it follows that package's rules (a module of its own: a program
that never asks loads no class for it, about 0.5 ms of a one-shot call, benchmarks/cold.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional

from ._base import _SLOTS, Raw, _Value
from ._implementation import Implementation

__all__ = ["ServerInfo"]


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ServerInfo(_Value):
    """What a server said of itself when the client connected (``Client.server``): fixed for the
    connection's life. ``instructions`` is untrusted text, cut at ``Limits(server_text=)``;
    ``raw`` is the server's answer (``initialize`` or ``server/discover``) as it came."""

    __module__ = "mcpclient.types"

    implementation: Implementation
    protocol_version: str
    capabilities: Raw = field(hash=False)
    instructions: Optional[str]
    extensions: Dict[str, Raw] = field(hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        """The server's name (``serverInfo.name``)."""
        return self.implementation.name

    @property
    def version(self) -> str:
        """The server's version (``serverInfo.version``)."""
        return self.implementation.version
