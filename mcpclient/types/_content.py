"""The content blocks rarer than text: ``ImageContent``, ``AudioContent``, ``ResourceLink``,
``UnknownContent``.

Part of ``mcpclient.types`` (import them from there, or from ``mcpclient``): a module of their own
so that they load on first use (PEP 562) — when such a block first arrives, or a program names one —
and a program whose tools answer with text does not pay for building them at ``import mcpclient``.
They follow ``types``' rules exactly. ``types.parse_content`` parses text and embedded resources
itself and hands every other block here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Type, TypeVar, Union

from ._base import _SLOTS, Raw, _b64decode, _opt, _opt_str, _str, _Value

__all__ = ["AudioContent", "ImageContent", "ResourceLink", "UnknownContent"]


_Media = TypeVar("_Media", bound="_MediaContent")


class _MediaContent(_Value):
    """What image and audio content share: ``from_wire``. Not a dataclass itself (each one costs
    import time): both declare the same fields, ``data, mime_type, annotations, meta, raw``."""

    __slots__ = ()

    @classmethod
    def from_wire(cls: Type[_Media], raw: Raw) -> _Media:
        """Build image or audio content from its wire dict.

        Raises ``ProtocolError`` if ``data`` is missing or not valid base64.
        """
        what = f"{raw.get('type')} content"
        return cls(_b64decode(raw.get("data"), what), _opt_str(raw, "mimeType", what),
                   _opt(raw, "annotations", dict, what), _opt(raw, "_meta", dict, what), raw)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ImageContent(_MediaContent):
    """An image; ``data`` is the decoded bytes (the wire carries base64)."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    data: bytes = field(repr=False)
    mime_type: str
    annotations: Optional[Raw] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)
    type: str = field(default="image", init=False)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class AudioContent(_MediaContent):
    """Audio; ``data`` is the decoded bytes (the wire carries base64)."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    data: bytes = field(repr=False)
    mime_type: str
    annotations: Optional[Raw] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)
    type: str = field(default="audio", init=False)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ResourceLink(_Value):
    """A link to a resource the server can serve (``resource_link``)."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    uri: str
    name: str
    title: Optional[str] = None
    description: Optional[str] = None
    mime_type: Optional[str] = None
    size: Optional[int] = None
    annotations: Optional[Raw] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)
    type: str = field(default="resource_link", init=False)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class UnknownContent(_Value):
    """A content block of a type this version does not know; kept, never an error."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    type: str
    raw: Raw = field(default_factory=dict, repr=False, compare=False)


def _link(raw: Raw) -> ResourceLink:
    what = "resource_link"
    return ResourceLink(_str(raw, "uri", what), _opt_str(raw, "name", what), _opt(raw, "title", str, what),
                        _opt(raw, "description", str, what), _opt(raw, "mimeType", str, what),
                        _opt(raw, "size", int, what), _opt(raw, "annotations", dict, what),
                        _opt(raw, "_meta", dict, what), raw)


#: What ``parse_other`` returns: the part of ``types.Content`` defined here.
Other = Union[ImageContent, AudioContent, ResourceLink, UnknownContent]


_PARSERS: Dict[str, Callable[[Raw], Other]] = {
    "image": ImageContent.from_wire, "audio": AudioContent.from_wire, "resource_link": _link,
}


def parse_other(raw: Raw, kind: Any) -> Other:
    """Parse a content block whose ``type`` is ``kind``, neither ``text`` nor ``resource`` (those
    ``types.parse_content`` parses itself); an unknown ``type`` becomes ``UnknownContent``."""
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:  # (a type that is no string is named by its JSON kind, never str()'d whole)
        return UnknownContent(kind if type(kind) is str else _json_kind(kind), raw)
    return parser(raw)


def _json_kind(value: Any) -> str:
    return "None" if value is None else str(value) if type(value) in (int, float, bool) else type(value).__name__
