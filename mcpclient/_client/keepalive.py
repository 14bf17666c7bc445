"""``KeepaliveWatch``: pings an idle connection; ticks on the session's timer thread.

The watch is an entry of the session's ``DeadlineTimer`` (it has a ``due()``, is ``done()``
once stopped, and the timer calls its ``expired()``), so keepalive needs no thread of its own and
costs nothing between ticks. A tick that finds the server sent something since the last one does
nothing; otherwise it has one ping sent (never two at once) by a worker of the session, as a
call's next step is (a send may wait for room in a full pipe: the timer must never wait). ``Keepalive.failures`` pings in a row
that fail or time out report the connection lost (``lost``), once; a ping answered with a
JSON-RPC error (a server that implements no ``ping``: -32601) was answered, and counts as a success.
"""
from __future__ import annotations

import logging
from time import monotonic as _monotonic
from typing import TYPE_CHECKING, Any, Callable, Optional

from ..errors import ConnectionClosed, MCPError, RPCError

if TYPE_CHECKING:
    from .._engine.futures import CallFuture
    from ..policies.reconnect import Keepalive
    from .._engine.session import Session

__all__ = ["KeepaliveWatch"]

log = logging.getLogger("mcpclient")


class KeepaliveWatch:
    """Keeps ``session`` checked under ``policy``. ``ping(timeout)`` sends a ping and returns its
    future (it must not block); ``lost(error)`` is told once when the pings fail."""

    request_id = None  # (for the timer: not a request of its own)
    method = "keepalive ping"  # (for the worker lane, which runs run_step() like a call's next step)

    def __init__(self, session: "Session", policy: "Keepalive", ping: Callable[[float], "CallFuture"],
                 lost: Callable[[MCPError], Any]) -> None:
        self._session = session
        self._policy = policy
        self._ping = ping
        self._lost = lost
        self._seen = session.reader.received
        self._due = _monotonic() + policy.interval
        self._failures = 0
        self._pinging = False
        self._stopped = False
        self.pings = 0  # sent so far (for tests and diagnostics)

    def start(self) -> None:
        self._session.watch(self)  # type: ignore[arg-type]

    def stop(self) -> None:
        self._stopped = True

    def due(self) -> float:
        return self._due

    def done(self) -> bool:
        return self._stopped or self._session.is_closed

    def expired(self) -> None:
        """Timer thread: a tick. Never blocks (the ping is sent on a worker)."""
        if self.done():
            return
        self._due = _monotonic() + self._policy.interval
        received = self._session.reader.received
        if received != self._seen or self._pinging:
            self._seen = received  # the server is talking (or a ping is still out): nothing to do
            self._session.watch(self)  # type: ignore[arg-type]
            return
        self._pinging = True
        self.pings += 1
        # Sent on a worker, as a call's next step is: a send may wait for room in a full pipe (a
        # server that stopped reading), which on this thread would stall every other timeout.
        if not self._session.continue_call(self, None):  # type: ignore[arg-type]
            self._pinging = False  # closing
        if not self.done():
            self._session.watch(self)  # type: ignore[arg-type]

    def fail(self, error: BaseException) -> None:
        """The worker lane dropped the ping (closing)."""
        self._pinging = False

    def run_step(self, _: Any) -> None:
        """A worker: send one ping; its outcome goes to ``_answered``."""
        if self.done():
            self._pinging = False
            return
        try:
            future = self._ping(self._policy.ping_timeout)
        except MCPError as exc:
            self._answered(exc)
        else:
            future.add_done_callback(lambda done: self._answered(
                None if done.cancelled() else done.exception()))

    def _answered(self, error: Optional[BaseException]) -> None:
        self._seen = self._session.reader.received
        self._pinging = False
        if error is None or isinstance(error, RPCError):  # (an error reply is an answer: some servers implement no ping)
            self._failures = 0
            return
        self._failures += 1
        log.info("keepalive ping %d of %d failed: %s", self._failures, self._policy.failures, error)
        if self._failures >= self._policy.failures and not self._stopped:
            self._stopped = True
            self._lost(ConnectionClosed(f"the server did not answer {self._failures} keepalive ping(s) in a row "
                                        f"(the last: {error})"))
