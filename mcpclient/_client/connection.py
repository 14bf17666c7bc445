"""Connecting: start the session, find the server's era, run its handshake -> ``Negotiated``.

``Connector.connect`` probes ``server/discover`` (unless the target is known to be, or asked to
be, handshake-era), falls back to ``initialize``/``notifications/initialized``, starts a stdio
server again if it died on the probe (``transport_builder.relaunch``), and tries the legacy
HTTP+SSE transport when a Streamable HTTP endpoint turns out to be an old server
(``transport_builder.fallback``). Replacing a transport means a new ``Session``: the client's
``replace`` callback installs it, or refuses (returns None) once the client is closing, so a
concurrent ``close()`` never waits for a connect in progress (no lock is held across any of
this). ``era_for`` turns the result into the era strategy the client then uses, and
``Connection`` holds all of it for one client: transport, session, state, ``Negotiated``, era.

What a ``Client(...)`` and its ``connect()`` import before the transport starts is kept small
(the checks of the arguments, the transport): this module, the engine and the server's
description (``types``, ``dataclasses`` with them) load after the transport's early ``start()``,
while a stdio server boots (``_client.channel``; benchmarks/cold.py, one-shot).
"""
from __future__ import annotations

import enum
import logging
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Protocol, Tuple

from .._util import fork as _fork
from ..protocol.params import none
from .._util.threads import start_thread
from .._util.waiting import wait_for
from ..protocol.cache import ResultCache
from ..protocol.eras import Era, Handshake
from ..errors import (
    ClientClosedError, ConnectError, ConnectionClosed, ForkedClientError, HTTPError, MCPError,
    ProcessExited, ProtocolError, RequestTimeout, TransportError, UnsupportedProtocolVersion,
)
from ..protocol.negotiation import LEGACY, EraMemory, Negotiated, probe
from ..protocol.rpc_rules import MCPRules
from ..protocol.spec import check_server_version, era_setting, initialize_params
from ..types import Implementation
from .._engine.deadline import Deadline
from .._engine.rules import RPCRules
from .._engine.session import Session
from ..transports.base import CLOSE_BUDGET, Transport
from . import transport_builder

if TYPE_CHECKING:
    from .keepalive import KeepaliveWatch
    from ..policies.reconnect import Keepalive, Reconnect
    from ..protocol.rounds import Answer

__all__ = ["ERAS", "Connection", "ConnectionOwner", "Connector", "era_for"]

log = logging.getLogger("mcpclient")

#: What the clients of this process learn about servers' eras (a ``Connector``'s default).
ERAS = EraMemory()


class ConnectionOwner(Protocol):
    """What a ``Connection`` asks of the client it belongs to (``Channel``)."""

    @property
    def handshake_timeout(self) -> Optional[float]:
        """The most a reconnect's handshake may take, even for a caller without a limit."""

    def new_session(self, transport: Transport, rules: RPCRules) -> Session:
        """A new, unstarted session on ``transport`` speaking MCP by ``rules``, wired to the
        client's handlers."""

    def make_era(self, negotiated: Negotiated, transport: Transport) -> Era:
        """The era strategy for what a (re)connect negotiated."""

    def lost(self, error: MCPError) -> None:
        """The connection was lost (the reader's or the timer's thread)."""

    def restored(self, era: Era) -> None:
        """A reconnect succeeded."""

    def forked(self) -> None:
        """At-fork hook in the child, before any other code: replace the locks."""


#: ``(new transport) -> its new, unstarted session``, or None when the client is closing.
Replace = Callable[[Transport], Optional[Session]]


class Connector:
    """How one client connects: its ``protocol=`` setting, identity, capabilities and probe limit,
    and the ``EraMemory`` it consults and teaches (``eras``: the process's by default)."""

    #: The step the connect in progress is at (one at a time per connection): a connect that
    #: runs out of time says where.
    phase = "starting the transport"

    def __init__(self, protocol: str, client_info: Dict[str, Any], capabilities: Callable[[], Dict[str, Any]],
                 probe_timeout: float, reuse_discovery: bool, eras: EraMemory = ERAS) -> None:
        self.eras = eras
        self.mode, self.modern_offer, self.offer = era_setting(protocol)
        self.protocol = protocol
        self.client_info = client_info
        self.capabilities = capabilities
        self.probe_timeout = probe_timeout
        self.reuse_discovery = reuse_discovery

    def connect(self, session: Session, deadline: Deadline, replace: Replace) -> Tuple[Session, Negotiated]:
        """Connect ``session`` within ``deadline``; returns the session that ended up connected
        (a relaunch or a fallback makes a new one) and what was negotiated. The caller closes
        what is returned if this raises; sessions this replaced are closed here."""
        self.phase = "starting the transport"
        try:
            return self._handshake(session, deadline, replace)
        except HTTPError as exc:
            substitute = transport_builder.fallback(session.transport, exc)
            if substitute is None:
                raise
            log.info("%s refused the Streamable HTTP initialize (%s); trying the HTTP+SSE transport",
                     session.transport.info.name, exc)
            session = self._swap(session, substitute, replace, deadline)
            try:
                return self._handshake(session, deadline, replace, via=" of the HTTP+SSE fallback")
            except Exception as second:  # report the first failure; the fallback's is its cause
                if deadline.passed():  # (unless the fallback ran out of time: that is what happened)
                    raise
                raise exc from second

    def _swap(self, old: Session, transport: Transport, replace: Replace, deadline: Deadline) -> Session:
        # The new session is installed before the old one is closed: a concurrent close() then
        # finds the new, unstarted one (quick to close) and never waits for the old one's
        # shutdown, which this thread finishes (bounded by its own deadline).
        new = replace(transport)
        old.close(_teardown_by(deadline))
        if new is None:
            raise ClientClosedError("the client was closed while connecting")
        return new

    def _handshake(self, session: Session, deadline: Deadline, replace: Replace,
                   via: str = "") -> Tuple[Session, Negotiated]:
        """``server/discover`` (unless legacy is known or asked for), else ``initialize``
        (``via``: what the steps' names add, the fallback)."""
        self.phase = f"starting the transport{via}"
        session.start()
        transport = session.transport
        info = transport.info
        key = info.identity
        if info.handshake_only and self.mode == "modern":
            raise ProtocolError(f"{type(transport).__name__} carries only the handshake-era protocol")
        if self.mode != "legacy" and not info.handshake_only and (
                self.mode == "modern" or self.eras.era(key) != LEGACY):
            self.phase = f"the server/discover probe{via}"
            try:
                found = self._discover(session, deadline)
                if found is not None:
                    return session, found
                if deadline.passed():  # (a stdio probe's wait took what was left: no initialize can go)
                    raise RequestTimeout("server/discover got no answer before the deadline", method="server/discover")
            except ConnectionClosed:
                # Some handshake-era servers exit on any request before initialize: start it again.
                substitute = transport_builder.relaunch(transport) if self.mode != "modern" else None
                if substitute is None:
                    raise
                self.phase = "starting the server again after the probe"
                session = self._swap(session, substitute, replace, deadline)
                session.start()
                log.info("%s exited on server/discover: a handshake-era server; started it again", info.name)
        self.phase = f"the initialize handshake{via}"
        return session, self._initialize(session, deadline)

    def _initialize(self, session: Session, deadline: Deadline) -> Negotiated:
        transport = session.transport
        key = transport.info.identity
        params = initialize_params(self.offer, self.client_info, self.capabilities())  # type: ignore[arg-type]
        try:
            result = wait_for(session.call, "initialize", params, deadline=deadline, idempotent=True, setup=True,
                              cancellable=False)
        except UnsupportedProtocolVersion:
            # A server we took for legacy (a slow probe, or a remembered verdict) is modern after all.
            self.eras.forget(key)
            found = self._discover(session, deadline) if self.mode != "legacy" else None
            if found is None:
                raise
            return found
        if not isinstance(result, dict):
            raise ProtocolError("initialize result is not an object")
        if self.mode == "auto":
            self.eras.remember(key, LEGACY)  # only now: the handshake worked
        version = check_server_version(self.offer, result.get("protocolVersion"), self.protocol)  # type: ignore[arg-type]
        transport.negotiated(version, False)
        session.notify("notifications/initialized", setup=True)
        capabilities = result.get("capabilities")
        instructions = result.get("instructions")
        return Negotiated(version, False, capabilities if isinstance(capabilities, dict) else {},
                          Implementation.from_wire(result.get("serverInfo") or {}),
                          instructions if isinstance(instructions, str) else None, result)

    def _discover(self, session: Session, deadline: Deadline) -> Optional[Negotiated]:
        """Probe ``server/discover``; the 2026 era's ``Negotiated`` if the server speaks it."""
        transport = session.transport
        info = transport.info
        wait = deadline
        if not info.remote and self.mode != "modern":  # a handshake-era stdio server may never answer
            # (with the 2026 era required, silence is a server slow to start, not a verdict: all the time left)
            left = deadline.remaining()
            wait = Deadline(self.probe_timeout if left is None else min(left, self.probe_timeout))
        # A server's DiscoverResult is reused while its ttlMs says it is fresh (same credentials).
        reuse = (info.identity, info.credentials) if info.remote and self.reuse_discovery else None
        found = self.eras.discovery(reuse) if reuse is not None else None
        if found is None or (self.modern_offer and found.version != self.modern_offer):
            found = probe(session, self.capabilities(), self.client_info, wait,
                          required=self.mode == "modern", version=self.modern_offer or "")
            if found is None:
                return None
            if reuse is not None:
                self.eras.keep_discovery(reuse, found)
        self.eras.remember(info.identity, found.version)
        transport.negotiated(found.version, True)
        return found


def era_for(negotiated: Negotiated, capabilities: Dict[str, Any], client_info: Dict[str, Any], answer: Answer,
            max_rounds: int, cache: Optional[ResultCache], sends_headers: bool) -> Era:
    """The strategy for the era ``negotiated`` settled on."""
    if negotiated.stateless:
        from ..protocol.stateless_era import Stateless  # deferred: a handshake-era connection never loads it

        return Stateless(negotiated, capabilities, client_info, answer, max_rounds, cache, sends_headers)
    return Handshake(negotiated)


class _State(enum.Enum):
    NEW = "new"  # constructed; no I/O yet
    CONNECTING = "connecting"  # connect() (or a reconnect) is negotiating
    READY = "ready"  # calls allowed
    LOST = "lost"  # the connection ended (server exit, failed keepalive, fork): connect() or Reconnect restarts it
    CLOSED = "closed"  # terminal: close() was called


#: Every Connection of this process: a forked child marks them inherited (``_inherited_by_fork``).
_live: "weakref.WeakSet[Connection]" = weakref.WeakSet()

#: Seconds a connection must live to count as made for good (see ``Connection._count_loss``).
STEADY = 2.0
#: Seconds a failed connect may take past its deadline to stop what it started (a server slow
#: to exit is killed sooner): ``connect(timeout=T)`` ends within ``T`` and this.
TEARDOWN = 0.5


def _teardown_by(deadline: Deadline) -> float:
    """When a failed connect's teardown ends: within ``CLOSE_BUDGET``, and ``TEARDOWN`` past the
    connect's deadline."""
    now = time.monotonic()
    return min(now + CLOSE_BUDGET, max(now, deadline.at) + TEARDOWN)
#: Sessions a forked child inherited and replaced: kept, never collected, because freeing them
#: would close file objects whose locks a thread of the parent may have held at the fork.
_abandoned: List[Session] = []


def _inherited_by_fork() -> None:
    for connection in list(_live):
        try:
            connection._forked()
        except Exception:  # (a client collected meanwhile): the others must still be reset
            pass


_fork.in_child(_inherited_by_fork)


class Connection:
    """One client's connection and its lifecycle: the transport and its session (a relaunch or
    a fallback replaces both while connecting, a reconnect after a loss), the state, what was
    negotiated and the era strategy built from it. ``_lock`` guards state, transport and
    session; it is never held across I/O, a join or a spawn, so ``close()`` never waits for a
    connect in progress. Lock order where two nest: ``Connection._lock``, then ``Session._lock``.

    A connection lost (the session's reader ended, a keepalive failed) stays ``LOST`` until
    ``connect()`` or, with a ``Reconnect`` policy, the next call opens a new one on a fresh
    transport (``transport_builder.reopen``). In a process forked after it was made, the connection is
    the parent's: it is never used, closed or finalized here (``ForkedClientError``, or a new
    connection with ``Reconnect(after_fork=True)``).
    """

    def __init__(self, transport: Transport, connector: Connector, owner: ConnectionOwner, *,
                 reconnect: Optional[Reconnect] = None, keepalive: Optional[Keepalive] = None) -> None:
        self.connector = connector
        self._owner = owner
        self.reconnect = reconnect
        self.keepalive = keepalive
        self.transport = transport
        self.rules = MCPRules()  # what MCP adds to the engine's JSON-RPC, for every session of this connection
        self.session = self._new_session(transport)
        self.negotiated: Optional[Negotiated] = None
        self.era: Optional[Era] = None
        self._state = _State.NEW
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a (re)connect ended, or close()
        self._pid = _fork.pid  # the process the connection belongs to
        self._inherited = False  # forked: the session is the parent's (never closed here)
        self._lost: Optional[MCPError] = None  # why the connection was lost
        self._failures = 0  # reconnects failed in a row (a connection lost soon after it was made counts)
        self._settled_at = 0.0  # monotonic time the connection in use was made
        self._next_try = 0.0  # monotonic time before which no reconnect is tried
        self._last_failure: Optional[BaseException] = None
        self._watch: Optional[KeepaliveWatch] = None
        self._closing_elsewhere: Optional[Session] = None  # lost by a keepalive: closed on its own thread
        self.reconnects = 0  # successful reconnects (for tests and diagnostics)
        _live.add(self)

    def _new_session(self, transport: Transport) -> Session:
        session = self._owner.new_session(transport, self.rules)
        session.on_lost = lambda error: self._session_lost(session, error)
        return session

    def _forked(self) -> None:
        """In a forked child, before any other code runs: the locks may be held by threads that
        do not exist here, and the session, if started, belongs to the parent."""
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._watch = None
        if self._state is not _State.NEW and self._state is not _State.CLOSED:
            self._inherited = True
            if self._state is _State.CONNECTING:
                self._state = _State.LOST
            # The parent's failed attempts and backoff are not this process's: it has not tried.
            self._failures, self._next_try, self._last_failure = 0, 0.0, None
        self._owner.forked()  # the owner replaces its own locks

    @property
    def state(self) -> str:
        return "forked" if self._inherited else self._state.value

    @property
    def protocol_version(self) -> Optional[str]:
        """The revision agreed with the server (None before the handshake)."""
        negotiated = self.negotiated
        return negotiated.version if negotiated is not None else None

    @property
    def gave_up(self) -> bool:
        """The reconnect policy gave up (until ``connect()``)."""
        return self.reconnect is not None and self.reconnect.gave_up(self._failures)

    @property
    def is_closed(self) -> bool:
        state = self._state
        if state is _State.CLOSED:
            return True
        if self._inherited:  # forked: usable only if the policy opens a connection of its own
            return self.reconnect is None or not self.reconnect.after_fork
        if self.reconnect is not None:  # a lost connection is reopened by the next call
            return False
        return state is _State.LOST or self.session.is_closed

    # --- connecting -----------------------------------------------------------------------------

    def open(self, deadline: Deadline) -> None:
        """``connect()``: connect and negotiate (again, after a loss) within ``deadline``; on a
        first connect's failure everything started is torn down, then it raises."""
        with self._lock:
            state = self._state
            while state is _State.CONNECTING and self.era is not None:  # another thread reconnects
                wait = deadline.remaining()
                if wait is not None and wait <= 0:
                    raise ConnectError("connect(): the reconnect in progress did not finish in time")
                self._changed.wait(None if wait is None else min(wait, threading.TIMEOUT_MAX))
                state = self._state
                if state is _State.READY:
                    return  # it succeeded: connected, as asked
            if state is _State.READY and not self._inherited and not self.session.is_closed:
                raise ClientClosedError("connect() on a client that is connected already")
            if state is _State.CLOSED or state is _State.CONNECTING:
                raise ClientClosedError(f"connect() on a client that is {state.value}"
                                        + ("; make a new Client" if state is _State.CLOSED else ""))
            self._state = _State.CONNECTING
            first = state is _State.NEW
            self._failures = 0  # an explicit connect() starts the count again
        if not first:
            self._connect_again(deadline)
            return
        try:
            session, negotiated = self.connector.connect(self.session, deadline, self._replace)
            era = self._owner.make_era(negotiated, session.transport)
            self._settle(negotiated, era)
        except BaseException as exc:
            closed_by_user = self._state is _State.CLOSED
            timed_out = deadline.passed()  # (before the teardown, which may take a little past it)
            self.close(_teardown_by(deadline))
            if closed_by_user and isinstance(exc, MCPError) and not isinstance(exc, ClientClosedError):
                raise ClientClosedError("the client was closed while connecting") from exc
            stray = self.transport.info.stray_output
            if isinstance(exc, MCPError) and stray is not None and not isinstance(exc, ClientClosedError):
                raise ConnectError(f"the handshake with {self.transport.info.name} failed: {str(exc).partition(chr(10))[0]}"
                                   f"; the server wrote a line that is not JSON-RPC where only messages belong: "
                                   f"{stray!r} (a stdio server writes messages only to stdout, its logs to stderr)"
                                   ) from exc
            if timed_out and isinstance(exc, MCPError) and not isinstance(exc, ClientClosedError):
                raise self._out_of_time(deadline, exc, "connecting to") from exc
            if isinstance(exc, TransportError) and not isinstance(exc, ConnectError):
                # (the first line, but all of a dead server's stderr tail: it says why it died)
                said = str(exc) if isinstance(exc, ProcessExited) else str(exc).partition("\n")[0]
                raise ConnectError(f"the handshake with {self.transport.info.name} failed: {said}") from exc
            raise

    def _out_of_time(self, deadline: Deadline, exc: MCPError, doing: str) -> ConnectError:
        """A (re)connect whose deadline passed: the error names the step it ran out of time in."""
        return ConnectError(f"{doing} {self.transport.info.name} ran out of time ({deadline.at - deadline.started:.3g} s) "
                            f"in {self.connector.phase}: {str(exc).partition(chr(10))[0]}")

    def _settle(self, negotiated: Negotiated, era: Era) -> None:
        """A (re)connect succeeded: calls may go, the keepalive starts."""
        with self._lock:
            if self._state is not _State.CONNECTING:
                raise ClientClosedError("the client was closed while connecting")
            # Lost after the handshake, before now: its on_lost found CONNECTING and did nothing,
            # so READY would be for good on a dead session. (Checked under the lock: a loss after
            # this sees READY in _session_lost.)
            self.session._check_open()
            self.negotiated, self.era, self._state = negotiated, era, _State.READY
            self._pid, self._inherited, self._lost = _fork.pid, False, None
            self._settled_at = time.monotonic()  # (failures: counted on until it proves steady, _count_loss)
            session = self.session
            self._changed.notify_all()
        if self.keepalive is not None:
            from .keepalive import KeepaliveWatch  # deferred: import cost (only clients that ping need it)

            self._watch = watch = KeepaliveWatch(session, self.keepalive, lambda timeout: era.call(
                session, era.ping_method, None, none, Deadline(timeout)),
                lambda error: self.lose(session, error))
            watch.start()

    def _replace(self, transport: Transport) -> Optional[Session]:
        """connect() moved to ``transport`` (a relaunch, a fallback): its session, or None if closing."""
        session = self._new_session(transport)
        with self._lock:
            if self._state is not _State.CONNECTING:
                return None
            self.transport, self.session = transport, session
        return session

    def _connect_again(self, deadline: Deadline) -> None:
        """(State ``CONNECTING``, owned by this thread.) A new connection on a fresh transport in
        place of the lost (or inherited) one; on failure the state is ``LOST`` again and the
        failure counts for the backoff."""
        old, inherited = self.session, self._inherited
        name = old.transport.info.name
        try:
            transport = transport_builder.reopen(old.transport)
            if transport is None:
                raise ConnectError(f"{name}: a {type(old.transport).__name__} cannot be opened again; make a new Client")
            if self._replace(transport) is None:
                raise ClientClosedError("the client was closed while reconnecting")
            if inherited:  # the parent's: left alone, never closed (nor freed)
                _abandoned.append(old)
            elif old is not self._closing_elsewhere:  # (a failed keepalive's closer has it)
                old.close(_teardown_by(deadline))  # lost already: this only joins its threads
            session, negotiated = self.connector.connect(self.session, deadline, self._replace)
            era = self._owner.make_era(negotiated, session.transport)
            self._settle(negotiated, era)
        except BaseException as exc:
            timed_out = deadline.passed()  # (before the teardown, which may take a little past it)
            with self._lock:
                closed = self._state is _State.CLOSED
                failed = self.session if self.session is not old else None
                if not closed:
                    self._state = _State.LOST
                    self._failures += 1
                    delay = self.reconnect.delay(self._failures) if self.reconnect is not None else 0.0
                    self._next_try = time.monotonic() + delay
                    self._last_failure = exc
                self._changed.notify_all()
            if failed is not None:
                failed.close(_teardown_by(deadline))
            if closed and isinstance(exc, MCPError):
                raise ClientClosedError("the client was closed while reconnecting") from exc
            if timed_out and isinstance(exc, MCPError) and not isinstance(exc, ClientClosedError):
                raise self._out_of_time(deadline, exc, "reconnecting to") from exc
            if isinstance(exc, MCPError) and not isinstance(exc, (ConnectError, ClientClosedError)):
                raise ConnectError(f"reconnecting to {name} failed: {str(exc).partition(chr(10))[0]}") from exc
            raise
        self.reconnects += 1
        log.info("reconnected to %s (%s)", name, "a new process after fork" if inherited else "after a lost connection")
        self._owner.restored(era)

    # --- calls ----------------------------------------------------------------------------------

    def ready(self, method: str, deadline: Deadline) -> Era:
        """The era strategy, if calls are allowed now (after reconnecting within ``deadline``,
        with a policy, if the connection was lost); else the error that says why not, naming
        ``method``."""
        era = self.era
        if self._state is _State.READY and self._pid == _fork.pid:
            return era  # type: ignore[return-value]
        return self._recover(method, deadline)

    def _recover(self, method: str, deadline: Deadline) -> Era:
        while True:
            with self._lock:
                state = self._state
                forked = self._inherited or (state is _State.READY and self._pid != _fork.pid)
                if state is _State.READY and not forked:
                    return self.era  # type: ignore[return-value]
                if state is _State.CLOSED:
                    raise ClientClosedError(f"{method}: the client is closed")
                if state is _State.NEW or (state is _State.CONNECTING and self.era is None):
                    raise ClientClosedError(f"{method}: the client is not connected; call connect() or use 'with'")
                policy = self.reconnect
                if forked and (policy is None or not policy.after_fork):
                    raise ForkedClientError(
                        f"{method}: this Client was made in process {self._pid} and is used in process {_fork.pid}, "
                        "forked from it; its connection belongs to the parent. Make the client after the fork "
                        "(gunicorn post_fork, Celery worker_process_init, the multiprocessing target), or pass "
                        "Client(..., reconnect=Reconnect()) to open a new connection in each process on first use")
                if policy is None:
                    raise self._lost_error(method)
                now = time.monotonic()
                if state is _State.CONNECTING:  # another thread reconnects: wait for it
                    wait = deadline.remaining()
                elif policy.gave_up(self._failures):
                    raise ConnectError(f"{method}: gave up reconnecting to {self.transport.info.name} after "
                                       f"{self._failures} failed attempts; call connect() to try again"
                                       ) from self._last_failure
                elif self._next_try > now:  # backing off after a failed attempt
                    wait = self._next_try - now
                    if self._next_try > deadline.at:
                        raise ConnectError(f"{method}: reconnecting to {self.transport.info.name} failed "
                                           f"{self._failures} time(s); the next attempt is in {wait:.1f} s"
                                           ) from self._last_failure
                else:
                    self._state = _State.CONNECTING  # this thread reconnects
                    wait = -1.0
                if wait is None or wait >= 0:
                    if wait is not None and wait <= 0:
                        raise ConnectError(f"{method}: the reconnect to {self.transport.info.name} in progress "
                                           "did not finish in time")
                    self._changed.wait(None if wait is None else min(wait, threading.TIMEOUT_MAX))
                    continue
            # The handshake is bounded by the client's timeout even for a caller that waits
            # forever (the background reconnect): a server that never answers must not hold the
            # connection in CONNECTING, and every other caller with it.
            bound = self._owner.handshake_timeout
            remaining = deadline.remaining()
            if remaining is None or (bound is not None and bound < remaining):
                self._connect_again(Deadline(bound))
            else:
                self._connect_again(deadline)

    def _lost_error(self, method: str) -> MCPError:
        """The error a call meets on a lost connection without a reconnect policy."""
        lost = self._lost if self._lost is not None else ConnectionClosed("the connection was lost")
        error = type(lost)(*lost.args) if not isinstance(lost, ProcessExited) else \
            ProcessExited(lost.returncode, lost.stderr_tail)
        error.args = (f"{method}: {error}\nthe connection is lost: call connect() to open a new one, or pass "
                      "Client(..., reconnect=Reconnect()) to reconnect on the next call",)
        return error

    def era_if_ready(self, what: str) -> Optional[Era]:
        """The era strategy once connected, None before; ``ClientClosedError`` once closed."""
        with self._lock:
            if self._state is _State.CLOSED:
                raise ClientClosedError(f"{what}: the client is closed")
            return self.era if self._state is _State.READY else None

    # --- losing and closing ---------------------------------------------------------------------

    def _session_lost(self, session: Session, error: BaseException) -> None:
        """``Session.on_lost`` (reader thread): the connection ended under us."""
        with self._lock:
            if session is not self.session or self._state is not _State.READY:
                return
            self._state = _State.LOST
            self._lost = error if isinstance(error, MCPError) else ConnectionClosed(str(error))
            self._count_loss(self._lost)
            watch, self._watch = self._watch, None
        if watch is not None:
            watch.stop()
        self._owner.lost(self._lost)

    def _count_loss(self, error: MCPError) -> None:
        """(Under ``_lock``.) A reconnect whose connection is lost within ``STEADY`` seconds failed
        as one that could not connect: the next waits the policy's backoff, and counts towards
        giving up (a server that dies on every call is not respawned at once, again and again).
        A connection that lived longer starts the count again."""
        if time.monotonic() - self._settled_at >= STEADY:
            self._failures, self._next_try = 0, 0.0
            return
        if self.reconnects == 0:  # (the first connection: its loss is no failed reconnect)
            return
        self._failures += 1
        self._next_try = time.monotonic() + (self.reconnect.delay(self._failures) if self.reconnect is not None else 0.0)
        self._last_failure = error

    def lose(self, session: Session, error: MCPError) -> None:
        """A keepalive found ``session`` dead: fail its calls with ``error`` and mark it lost
        (closed on a thread of its own: this runs on the timer or a worker)."""
        with self._lock:
            if session is not self.session or self._state is not _State.READY:
                return
            self._state = _State.LOST
            self._lost = error
            self._count_loss(error)
            self._watch = None
            self._closing_elsewhere = session
        log.warning("%s: %s", session.transport.info.name, error)
        text, kind = str(error), type(error)
        start_thread(lambda: session.close(time.monotonic() + CLOSE_BUDGET, lambda: kind(text)),
                     f"mcpclient-{session.instance}-closer")
        self._owner.lost(error)

    def mark_closed(self) -> Optional[Session]:
        """Refuse new calls from now on; returns the session to close (None in a forked child:
        the session there is the parent's)."""
        with self._lock:
            self._state = _State.CLOSED
            watch, self._watch = self._watch, None
            self._changed.notify_all()
            inherited = self._inherited or (self._pid != _fork.pid and self.era is not None)
            session = self.session
        if watch is not None:
            watch.stop()
        return None if inherited else session

    def close(self, deadline: float) -> None:
        session = self.mark_closed()
        if session is not None:
            session.close(deadline)
