"""``Implementation``: the name and version a client or a server sends about itself
(``clientInfo``/``serverInfo``); ``ServerInfo``: all a server said of itself when the client
connected; ``Page``: one page of a listing. Part of ``mcpclient.types``; it follows that
package's rules."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Generic, List, Optional, TypeVar

from ._base import _SLOTS, Raw, _opt, _opt_str, _Value

__all__ = ["Implementation", "Page", "ServerInfo"]

T = TypeVar("T")


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Implementation(_Value):
    """Name and version of a client or server (``serverInfo``)."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    name: str
    version: str
    title: Optional[str] = None
    description: Optional[str] = None
    website_url: Optional[str] = None
    icons: Optional[List[Raw]] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw) -> "Implementation":
        """Build an ``Implementation`` from ``serverInfo`` (lenient: a malformed one gives empty fields; never raises)."""
        raw = raw if isinstance(raw, dict) else {}
        what = "serverInfo"
        return cls(_opt_str(raw, "name", what), _opt_str(raw, "version", what), _opt(raw, "title", str, what),
                   _opt(raw, "description", str, what), _opt(raw, "websiteUrl", str, what),
                   _opt(raw, "icons", list, what), raw)


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


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Page(_Value, Generic[T]):
    """One page of a listing (``Client.page``): its ``items``, and the cursor of the next page
    (``None`` on the last)."""

    __module__ = "mcpclient.types"

    items: List[T] = field(hash=False)
    next_cursor: Optional[str]
