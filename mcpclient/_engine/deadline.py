"""``Deadline``: one call's time limit, made once, by the public method, from its ``timeout``.

Everything below the method spends what is left of it — a tool listing before validation, a
reconnect, input rounds, the transport's send — and nobody below resolves the client's default
again (``Client``'s contract). With ``resets`` (``Timeout(reset_on_progress=True)``), each progress
notification of the call starts its ``seconds`` again, never past ``hard`` (``Timeout(total=)``
after it started): ``progressed()`` moves ``at``, and whoever shares the deadline (the engine's
wait and timer, a task's wait) sees it move.
"""
from __future__ import annotations

from time import monotonic as _monotonic
from typing import Any, Optional

__all__ = ["Deadline", "NEVER", "check_timeout"]

_INF = float("inf")


class Deadline:
    """The time limit of one call: ``seconds`` from ``started`` (monotonic), or never (``None``).

    Args:
        seconds: the timeout, ``None`` for no limit.
        resets: a progress notification starts the timeout again (up to ``max_total``).
        max_total: the most seconds in all, however much progress comes (``None``: no cap).
        started: when the timeout started (default: now).
    """

    __slots__ = ("seconds", "started", "at", "hard", "resets")

    def __init__(self, seconds: Optional[float], *, resets: bool = False, max_total: Optional[float] = None,
                 started: Optional[float] = None) -> None:
        self.started = _monotonic() if started is None else started
        self.seconds = seconds
        self.hard = _INF if max_total is None else self.started + max_total
        self.at = self.hard if seconds is None else min(self.started + seconds, self.hard)
        self.resets = resets and seconds is not None

    def remaining(self) -> Optional[float]:
        """Seconds left (0 once passed), or ``None``: no limit."""
        at = self.at
        return None if at == _INF else max(0.0, at - _monotonic())

    def passed(self) -> bool:
        """Whether the limit has been reached."""
        return self.at <= _monotonic()

    def progressed(self) -> None:
        """The call made progress: a deadline that resets starts its timeout again."""
        if self.resets:
            self.at = min(_monotonic() + self.seconds, self.hard)  # type: ignore[operator]

    def __repr__(self) -> str:
        left = self.remaining()
        return "<Deadline never>" if left is None else f"<Deadline {self.seconds} s, {left:.3g} s left>"


#: No time limit (a call that was never sent, an internal wait without one). Never moves.
NEVER = Deadline(None, started=0.0)


def check_timeout(timeout: Any) -> Optional[float]:
    """A timeout is ``None`` (wait forever) or a number of seconds >= 0."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, not {type(timeout).__name__}")
    if not timeout >= 0:  # also rejects NaN
        raise ValueError(f"timeout must be >= 0, got {timeout!r}")
    return float(timeout)
