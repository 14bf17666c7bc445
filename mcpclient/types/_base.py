"""What every result type shares (``mcpclient.types``, ``mcpclient._catalog``, ``mcpclient._content``
and the feature modules' own values): ``_Value``'s ``==``/``hash()``/``repr()``, ``_SLOTS``, and the
lenient field readers that build a value from its wire dict."""
from __future__ import annotations

import logging
import sys
from dataclasses import fields
from typing import Any, Dict

from .._util.lazy import load
from ..errors import ProtocolError
from ._json import Raw


log = logging.getLogger("mcpclient")


#: ``slots=True`` where dataclasses has it (3.10+): ``@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)`` keeps one
#: class body for every version, and mypy and pyright still see a frozen dataclass.
_SLOTS: Dict[str, bool] = {"slots": True} if sys.version_info >= (3, 10) else {}


_NAMES: Dict[type, "tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]"] = {}


def _names(cls: type) -> "tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]":
    """(compared, hashed, shown) field names of a dataclass, by its ``field()`` flags (cached)."""
    names = _NAMES.get(cls)
    if names is None:
        found = fields(cls)
        names = _NAMES[cls] = (tuple(f.name for f in found if f.compare),
                               tuple(f.name for f in found if (f.compare if f.hash is None else f.hash)),
                               tuple(f.name for f in found if f.repr))
    return names


class _Value:
    """``==``, ``hash()`` and ``repr()`` of every result type, as ``@dataclass`` would generate
    them: equal when of the same class with equal compared fields; hashed over the compared
    fields not marked ``hash=False``; shown as ``Name(field=value, ...)``."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _names(self.__class__)[0])

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n) for n in _names(self.__class__)[1]))

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in _names(self.__class__)[2])
        return f"{self.__class__.__qualname__}({shown})"


def _require(raw: Any, key: str, what: str) -> Any:
    if not isinstance(raw, dict):
        raise ProtocolError(f"{what}: expected an object, got {type(raw).__name__}")
    value = raw.get(key)
    if value is None:
        raise ProtocolError(f"{what}: missing required field {key!r}")
    return value


def _str(raw: Raw, key: str, what: str) -> str:
    """A required string field; ``ProtocolError`` if it is missing or not a string."""
    value = _require(raw, key, what)
    if type(value) is not str:
        raise ProtocolError(f"{what}: {key!r} must be a string, got {type(value).__name__}")
    return value


def _opt(raw: Raw, key: str, kind: type, what: str) -> Any:
    """An optional field: its value if it is of type ``kind`` (exactly: a bool is no int), else
    ``None``. A value of the wrong type is dropped, with a DEBUG log (the raw dict keeps it)."""
    value = raw.get(key)
    if value is None or type(value) is kind:
        return value
    log.debug("%s: dropped %r, a %s where a %s belongs", what, key, type(value).__name__, kind.__name__)
    return None


def _opt_str(raw: Raw, key: str, what: str, default: str = "") -> str:
    """An optional string field that defaults to ``default`` (also for a value of the wrong type)."""
    value = _opt(raw, key, str, what)
    return default if value is None else value


def _b64decode(data: Any, what: str) -> bytes:
    """Base64 ``data`` decoded; ``ProtocolError`` if it is no string or not valid base64."""
    if not isinstance(data, str):
        raise ProtocolError(f"{what}: base64 data must be a string")
    # binary content only: a program that sees text never loads base64 (and its two C modules:
    # 0.8 ms of the one-shot benchmark's stdio row)
    base64 = load("base64")
    try:  # line breaks (as base64.encodebytes writes them) are tolerated; other junk is not
        return base64.b64decode("".join(data.split()), validate=True)  # type: ignore[no-any-return]
    except ValueError as exc:  # binascii.Error is a ValueError
        raise ProtocolError(f"{what}: invalid base64 data") from exc
