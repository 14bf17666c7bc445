"""``Implementation``: the name and version a client or a server sends about itself
(``clientInfo``/``serverInfo``). Part of ``mcpclient.types``; it follows that package's rules."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from ._base import _SLOTS, Raw, _opt, _opt_str, _Value

__all__ = ["Implementation"]


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
