"""``Timeout`` and ``Limits``: how long a client's calls may take and how much they may hold.

Values, like httpx's: ``Client(url, timeout=Timeout(30, connect=10), limits=Limits(workers=8))``;
``Client(url, timeout=30)`` is ``Timeout(30)``. Frozen: one instance can serve many clients, and
``replace()`` makes a changed copy.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional, Union

from .._util.sentinel import (
    DEFAULT_INPUT_ROUNDS, DEFAULT_MAX_PAGES, DEFAULT_PROBE, DEFAULT_SERVER_TEXT, DEFAULT_WORKERS, KEEP, _Default, Keep,
    replaced,
)
from ..types._base import _SLOTS, _Value

__all__ = ["Limits", "Timeout", "TimeoutSetting"]


class _Unset:
    def __repr__(self) -> str:
        return "<the call timeout>"


_UNSET: Any = _Unset()


def _seconds(value: Any, what: str, *, none: bool = True) -> Optional[float]:
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number of seconds{' or None' if none else ''}, not {type(value).__name__}")
    if not value >= 0:  # (NaN too)
        raise ValueError(f"{what} must be >= 0, got {value!r}")
    return float(value)


@dataclasses.dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Timeout(_Value):
    """How long calls may take, in seconds (``None``: no limit).

    Example::

        Client(url, timeout=Timeout(30, connect=10, reset_on_progress=True, total=600))

    Args:
        call: each call's limit, for everything the call does (reconnecting, listing the tools
            before validating, every page of a listing, input rounds, the wire). A method's
            ``timeout=`` replaces it for one call.
        connect: ``connect()``'s limit, the whole of it (probe, fallback, handshake); default:
            ``call``.
        probe: how long the ``server/discover`` probe waits on stdio before taking silence for
            a handshake-era server.
        reset_on_progress: a progress notification of a call starts its ``call`` seconds again,
        total: up to this many seconds in all (``None``: no cap).
    """

    call: Optional[float] = 60.0
    connect: Optional[float] = _UNSET
    probe: float = DEFAULT_PROBE
    reset_on_progress: bool = False
    total: Optional[float] = None
    #: ``connect`` was not given, so it follows ``call`` (in ``replace()`` too).
    _connect_follows_call: bool = dataclasses.field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_connect_follows_call", self.connect is _UNSET)
        if not isinstance(self.reset_on_progress, bool):
            raise TypeError("reset_on_progress must be True or False")
        call = _seconds(self.call, "the call timeout")
        for name, value in (("call", call),
                            ("connect", call if self.connect is _UNSET else _seconds(self.connect, "the connect timeout")),
                            ("probe", _seconds(self.probe, "the probe timeout", none=False)),
                            ("total", _seconds(self.total, "the total timeout"))):
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, setting: "TimeoutSetting") -> "Timeout":
        """``timeout=`` as a ``Timeout``: seconds (``Timeout(seconds)``), ``None`` (no limit) or a ``Timeout``."""
        return setting if isinstance(setting, Timeout) else cls(setting)

    def replace(
        self, *,
        call: Union[Optional[float], Keep] = KEEP,
        connect: Union[Optional[float], Keep] = KEEP,
        probe: Union[float, Keep] = KEEP,
        reset_on_progress: Union[bool, Keep] = KEEP,
        total: Union[Optional[float], Keep] = KEEP,
    ) -> "Timeout":
        """A copy with the given fields changed (the others keep their values; a ``connect``
        never given follows a new ``call``)."""
        if self._connect_follows_call and connect is KEEP:
            connect = _UNSET
        return replaced(self, {
            "call": call, "connect": connect, "probe": probe, "reset_on_progress": reset_on_progress,
            "total": total,
        })


#: What ``timeout=`` takes: seconds, ``None`` (no limit), or a ``Timeout``.
TimeoutSetting = Union[float, None, Timeout]
#: What a call's ``timeout=`` takes: seconds, ``None`` (no limit), a ``Timeout``, or ``DEFAULT``
#: (the client's).
CallTimeout = Union[float, None, Timeout, _Default]


@dataclasses.dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Limits(_Value):
    """How much a client may hold at once.

    Example::

        Client(url, limits=Limits(workers=8, pages=100))

    Args:
        workers: threads for the server's requests (sampling, elicitation, roots: a handler may
            wait for a person) and for the results of calls nobody is waiting on.
        pages: pages of one ``list_*`` call (``TooManyPages`` past it).
        input_rounds: ``input_required`` rounds of one 2026 request (``InputRoundsExceeded``).
        server_text: characters kept of the server's instructions and of each tool's
            description, untrusted text; longer is cut and logged once (``None``: all).
    """

    workers: int = DEFAULT_WORKERS
    pages: int = DEFAULT_MAX_PAGES
    input_rounds: int = DEFAULT_INPUT_ROUNDS
    server_text: Optional[int] = DEFAULT_SERVER_TEXT

    def __post_init__(self) -> None:
        for name in ("workers", "pages", "input_rounds", "server_text"):
            value = getattr(self, name)
            if value is None and name == "server_text":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                extra = " or None" if name == "server_text" else ""
                raise ValueError(f"Limits({name}=) must be a whole number >= 1{extra}, not {value!r}")

    def replace(
        self, *,
        workers: Union[int, Keep] = KEEP,
        pages: Union[int, Keep] = KEEP,
        input_rounds: Union[int, Keep] = KEEP,
        server_text: Union[Optional[int], Keep] = KEEP,
    ) -> "Limits":
        """A copy with the given fields changed (the others keep their values)."""
        return replaced(self, {
            "workers": workers, "pages": pages, "input_rounds": input_rounds, "server_text": server_text,
        })
