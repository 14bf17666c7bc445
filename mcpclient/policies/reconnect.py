"""``Reconnect`` and ``Keepalive``: how a client stays connected — immutable policy values.

Like ``Retry``, each is a frozen value: one instance can serve many clients, ``replace()``
makes a changed copy. ``Reconnect`` says what the client does after its connection is lost (the
stdio server exited, a keepalive failed, the process was forked): calls in flight fail with the
typed error, and the next call starts a new connection (a new process or HTTP session, the
handshake or discovery again, subscriptions and listens restored), after a backoff that grows
with each failed attempt. ``Keepalive`` says how often an idle connection is pinged and how many
unanswered pings mean it is lost.
"""
from __future__ import annotations

import dataclasses
import random
from typing import Optional, Union

from .._util.sentinel import KEEP, Keep, replaced
from ..types._base import _SLOTS

__all__ = ["Keepalive", "Reconnect"]


@dataclasses.dataclass(frozen=True, **_SLOTS)
class Reconnect:
    """Reconnect when the connection is lost. Off unless given: ``Client(url, reconnect=Reconnect())``.

    Reconnecting starts the server again (stdio) or opens a new session (HTTP): the server
    forgets whatever it kept for the old connection, which a client should not do silently —
    hence opt-in. A call in flight when the connection is lost is never re-sent; it fails with
    ``ConnectionClosed`` (``ProcessExited`` for a stdio server) and the caller decides.

    Args:
        max_attempts: consecutive failed reconnects after which the client gives up (calls
            raise ``ConnectError`` until ``connect()`` is called); ``None``: never give up.
        backoff_factor: after the n-th consecutive failure the next attempt waits
            ``backoff_factor * 2**(n-1)`` s (jittered), at most ``backoff_max``. A call that
            arrives meanwhile waits for it within its own timeout, else fails at once with
            ``ConnectError`` naming the last failure.
        after_fork: in a process forked from the one that made the client, open a new
            connection on first use (the parent's stays untouched); ``False``: raise
            ``ForkedClientError`` there, as a client without this policy does.
    """

    max_attempts: Optional[int] = 5
    backoff_factor: float = 0.5
    backoff_max: float = 30.0
    after_fork: bool = True

    def __post_init__(self) -> None:
        if self.max_attempts is not None and self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1, or None")
        if self.backoff_factor < 0 or self.backoff_max < 0:
            raise ValueError("backoff_factor and backoff_max must not be negative")

    def replace(
        self, *,
        max_attempts: Union[Optional[int], Keep] = KEEP,
        backoff_factor: Union[float, Keep] = KEEP,
        backoff_max: Union[float, Keep] = KEEP,
        after_fork: Union[bool, Keep] = KEEP,
    ) -> "Reconnect":
        """A copy with the given fields changed (the others keep their values)."""
        return replaced(self, {
            "max_attempts": max_attempts, "backoff_factor": backoff_factor, "backoff_max": backoff_max,
            "after_fork": after_fork,
        })

    def delay(self, failures: int) -> float:
        """Seconds between the ``failures``-th consecutive failed attempt and the next one."""
        if failures <= 0:
            return 0.0
        backoff = min(self.backoff_max, self.backoff_factor * (2.0 ** (failures - 1)))
        return backoff * (0.5 + random.random() / 2)  # jitter: clients that failed together spread out

    def gave_up(self, failures: int) -> bool:
        """Whether ``failures`` consecutive failed attempts exhaust this policy."""
        return self.max_attempts is not None and failures >= self.max_attempts

    @classmethod
    def of(cls, setting: Union[None, bool, "Reconnect"]) -> Optional["Reconnect"]:
        """``Client(reconnect=)`` as a policy: ``None``/``False`` (off), ``True`` (the default one), or a ``Reconnect``."""
        if setting is None or setting is False:
            return None
        if setting is True:
            return cls()
        if not isinstance(setting, Reconnect):
            raise TypeError("reconnect must be a Reconnect, True, False or None")
        return setting


@dataclasses.dataclass(frozen=True, **_SLOTS)
class Keepalive:
    """Ping an idle connection. ``Client(target, keepalive=30)`` is ``Keepalive(interval=30)``.

    Every ``interval`` seconds in which no answer arrived from the server, the client sends a
    ping (``server/discover`` in the 2026 era, which has none). ``failures`` pings in a row
    that fail or go unanswered for ``timeout`` seconds mark the connection lost: calls in
    flight fail with ``ConnectionClosed``, and with a ``Reconnect`` policy the next call
    reconnects. It runs on the connection's existing timer thread: no thread of its own.

    A server that handles one request at a time cannot answer a ping during a long call: give
    it an ``interval + failures * timeout`` longer than its longest call, or no keepalive.
    """

    interval: float
    failures: int = 2
    timeout: Optional[float] = None  #: per ping; ``None``: ``interval`` (at most 30 s)

    def __post_init__(self) -> None:
        if not self.interval > 0:
            raise ValueError("the keepalive interval must be a positive number of seconds")
        if self.failures < 1:
            raise ValueError("failures must be at least 1")
        if self.timeout is not None and not self.timeout > 0:
            raise ValueError("the keepalive timeout must be positive")

    @property
    def ping_timeout(self) -> float:
        """Seconds to wait for a keepalive ping's answer: ``timeout``, else ``min(interval, 30)``."""
        return self.timeout if self.timeout is not None else min(self.interval, 30.0)

    @classmethod
    def of(cls, setting: Union[None, float, "Keepalive"]) -> Optional["Keepalive"]:
        """``Client(keepalive=)`` as a policy: ``None``, seconds, or a ``Keepalive``."""
        if setting is None or isinstance(setting, Keepalive):
            return setting
        if isinstance(setting, bool) or not isinstance(setting, (int, float)):
            raise TypeError("keepalive must be a number of seconds, a Keepalive, or None")
        return cls(float(setting))
