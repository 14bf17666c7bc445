"""Connecting: start the session, find the server's era, run its handshake -> ``Negotiated``.

``Connector.connect`` probes ``server/discover`` (unless the target is known to be, or asked to
be, handshake-era), falls back to ``initialize``/``notifications/initialized``, starts a stdio
server again if it died on the probe (``Transport.relaunch``), and tries the legacy HTTP+SSE
transport when a Streamable HTTP endpoint turns out to be an old server
(``Transport.fallback``). Replacing a transport means a new ``Session``: the client's
``replace`` callback installs it, or refuses (returns None) once the client is closing, so a
concurrent ``close()`` never waits for a connect in progress (no lock is held across any of
this). ``era_for`` turns the result into the era strategy the client then uses, and
``Connection`` holds all of it for one client: transport, session, state, ``Negotiated``, era.
"""
from __future__ import annotations

import enum
import logging
import re
import threading
import time
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

from .cache import ResultCache
from .eras import Era, Handshake, Stateless
from .errors import (
    ClientClosedError, ConnectError, ConnectionClosed, HTTPError, MCPError, ProtocolError, TransportError,
    UnsupportedProtocolVersion,
)
from .negotiation import (
    LEGACY, Negotiated, era_setting, forget_era, fresh_discovery, keep_discovery, probe, remember_era,
    remembered_era,
)
from .protocol import check_server_version, initialize_params
from .rounds import Answer
from .session import Session
from .transports._cmdline import split_command
from .transports.base import CLOSE_BUDGET, Transport
from .transports.stdio import StdioTransport
from .types import Implementation

__all__ = ["Connection", "Connector", "Target", "client_identity", "era_for", "make_transport"]

#: What ``Client(target)`` takes: a command line, an argv list, an http(s) URL, or a ``Transport``.
Target = Union[str, Sequence[str], Transport]

log = logging.getLogger("mcpclient")

def make_transport(target: Target, headers: Optional[Dict[str, str]], auth: Any) -> Transport:
    """The transport for a ``Client(target, headers=, auth=)``."""
    if isinstance(target, Transport):
        if headers or auth:
            raise ValueError("headers= and auth= go to the transport when you pass one")
        return target
    if isinstance(target, str):
        if re.match(r"^https?://", target, re.I):
            from .transports.http import HTTPTransport  # deferred: import cost (stdio users never need it)

            # Built from a URL: an old HTTP+SSE server may be tried when Streamable HTTP is refused.
            return HTTPTransport(target, headers=headers, auth=auth, sse_fallback=True)
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", target):
            raise ValueError(f"{target!r}: only http(s) URLs and commands are supported targets")
        if headers or auth:
            raise ValueError("headers= and auth= apply to HTTP targets only")
        argv = split_command(target)  # the Windows rules on Windows: C:\dir\srv.exe keeps its backslashes
        if not argv:
            raise ValueError("empty command")
        return StdioTransport(argv)
    if isinstance(target, (list, tuple)) and all(isinstance(a, str) for a in target):
        if headers or auth:
            raise ValueError("headers= and auth= apply to HTTP targets only")
        return StdioTransport(list(target))
    raise TypeError(f"target must be a command string, an argv list or a Transport, not {type(target).__name__}")


def client_identity(info: Any) -> Dict[str, Any]:
    """``Client(client_info=)`` as the wire's ``Implementation`` dict."""
    if isinstance(info, Implementation):
        return dict(info.raw) or {"name": info.name, "version": info.version}
    if isinstance(info, dict):
        return dict(info)
    name, version = info
    return {"name": str(name), "version": str(version)}


#: ``(new transport) -> its new, unstarted session``, or None when the client is closing.
Replace = Callable[[Transport], Optional[Session]]


class Connector:
    """How one client connects: its ``protocol=`` setting, identity, capabilities and probe limit."""

    def __init__(self, protocol: str, client_info: Dict[str, Any], capabilities: Callable[[], Dict[str, Any]],
                 probe_timeout: float, reuse_discovery: bool) -> None:
        self.mode, self.modern_offer, self.offer = era_setting(protocol)
        self.protocol = protocol
        self.client_info = client_info
        self.capabilities = capabilities
        self.probe_timeout = probe_timeout
        self.reuse_discovery = reuse_discovery

    def connect(self, session: Session, timeout: Optional[float], replace: Replace) -> Tuple[Session, Negotiated]:
        """Connect ``session``; returns the session that ended up connected (a relaunch or a
        fallback makes a new one) and what was negotiated. The caller closes what is returned
        if this raises; sessions this replaced are closed here."""
        try:
            return self._handshake(session, timeout, replace)
        except HTTPError as exc:
            substitute = session.transport.fallback(exc)
            if substitute is None:
                raise
            log.info("%s refused the Streamable HTTP initialize (%s); trying the HTTP+SSE transport",
                     session.transport.name, exc)
            session = self._swap(session, substitute, replace)
            try:
                return self._handshake(session, timeout, replace)
            except Exception as second:  # report the first failure; the fallback's is its cause
                raise exc from second

    def _swap(self, old: Session, transport: Transport, replace: Replace) -> Session:
        # The new session is installed before the old one is closed: a concurrent close() then
        # finds the new, unstarted one (quick to close) and never waits for the old one's
        # shutdown, which this thread finishes (bounded by its own deadline).
        new = replace(transport)
        old.close()
        if new is None:
            raise ClientClosedError("the client was closed while connecting")
        return new

    def _handshake(self, session: Session, timeout: Optional[float], replace: Replace) -> Tuple[Session, Negotiated]:
        """``server/discover`` (unless legacy is known or asked for), else ``initialize``."""
        session.start()
        transport = session.transport
        key = transport.identity()
        if transport.handshake_only and self.mode == "modern":
            raise ProtocolError(f"{type(transport).__name__} carries only the handshake-era protocol")
        if self.mode != "legacy" and not transport.handshake_only and (
                self.mode == "modern" or remembered_era(key) != LEGACY):
            try:
                found = self._discover(session, timeout)
                if found is not None:
                    return session, found
            except ConnectionClosed:
                # Some handshake-era servers exit on any request before initialize: start it again.
                substitute = transport.relaunch() if self.mode != "modern" else None
                if substitute is None:
                    raise
                session = self._swap(session, substitute, replace)
                session.start()
                log.info("%s exited on server/discover: a handshake-era server; started it again", transport.name)
        return session, self._initialize(session, timeout)

    def _initialize(self, session: Session, timeout: Optional[float]) -> Negotiated:
        transport = session.transport
        key = transport.identity()
        params = initialize_params(self.offer, self.client_info, self.capabilities())  # type: ignore[arg-type]
        try:
            result = session.call("initialize", params, owned=True, timeout=timeout, idempotent=True, setup=True,
                                  cancellable=False).result()
        except UnsupportedProtocolVersion:
            # A server we took for legacy (a slow probe, or a remembered verdict) is modern after all.
            forget_era(key)
            found = self._discover(session, timeout) if self.mode != "legacy" else None
            if found is None:
                raise
            return found
        if not isinstance(result, dict):
            raise ProtocolError("initialize result is not an object")
        if self.mode == "auto":
            remember_era(key, LEGACY)  # only now: the handshake worked
        version = check_server_version(self.offer, result.get("protocolVersion"), self.protocol)  # type: ignore[arg-type]
        transport.negotiated(version, False)
        session.notify("notifications/initialized", setup=True)
        capabilities = result.get("capabilities")
        instructions = result.get("instructions")
        return Negotiated(version, False, capabilities if isinstance(capabilities, dict) else {},
                          Implementation.from_wire(result.get("serverInfo") or {}),
                          instructions if isinstance(instructions, str) else None, result)

    def _discover(self, session: Session, timeout: Optional[float]) -> Optional[Negotiated]:
        """Probe ``server/discover``; the 2026 era's ``Negotiated`` if the server speaks it."""
        transport = session.transport
        wait = timeout
        if not transport.remote:  # a handshake-era stdio server may never answer
            wait = self.probe_timeout if wait is None else min(wait, self.probe_timeout)
        # A server's DiscoverResult is reused while its ttlMs says it is fresh (same credentials).
        reuse = (transport.identity(), transport.credentials()) if transport.remote and self.reuse_discovery else None
        found = fresh_discovery(reuse) if reuse is not None else None
        if found is None or (self.modern_offer and found.version != self.modern_offer):
            found = probe(session, self.capabilities(), self.client_info, wait,
                          required=self.mode == "modern", version=self.modern_offer or "")
            if found is None:
                return None
            if reuse is not None:
                keep_discovery(reuse, found)
        remember_era(transport.identity(), found.version)
        transport.negotiated(found.version, True)
        return found


def era_for(negotiated: Negotiated, capabilities: Dict[str, Any], client_info: Dict[str, Any], answer: Answer,
            max_rounds: int, cache: Optional[ResultCache], sends_headers: bool) -> Era:
    """The strategy for the era ``negotiated`` settled on."""
    if negotiated.stateless:
        return Stateless(negotiated, capabilities, client_info, answer, max_rounds, cache, sends_headers)
    return Handshake(negotiated)


class _State(enum.Enum):
    NEW = "new"  # constructed; no I/O yet
    CONNECTING = "connecting"  # connect() is negotiating
    READY = "ready"  # calls allowed
    CLOSED = "closed"  # terminal: close() was called (a connection that died stays READY until then)


class Connection:
    """One client's connection and its lifecycle: the transport and its session (a relaunch or
    a fallback replaces both while connecting), the state, what was negotiated and the era
    strategy built from it. ``_lock`` guards state, transport and session; it is never held
    across I/O, a join or a spawn, so ``close()`` never waits for a connect in progress.
    Lock order where two nest: ``Connection._lock``, then ``Session._lock``."""

    def __init__(self, transport: Transport, make_session: Callable[[Transport], Session], connector: Connector,
                 make_era: Callable[[Negotiated, Transport], Era]) -> None:
        self.transport = transport
        self._make_session = make_session
        self._connector = connector
        self._make_era = make_era
        self.session = make_session(transport)
        self.negotiated: Optional[Negotiated] = None
        self.era: Optional[Era] = None
        self._state = _State.NEW
        self._lock = threading.Lock()

    @property
    def state(self) -> str:
        return self._state.value

    @property
    def is_closed(self) -> bool:
        return self._state is _State.CLOSED or self.session.is_closed

    def open(self, timeout: Optional[float]) -> None:
        """Connect and negotiate; on failure everything started is torn down, then it raises."""
        with self._lock:
            if self._state is not _State.NEW:
                raise ClientClosedError(f"connect() on a client that is {self._state.value}; make a new Client")
            self._state = _State.CONNECTING
        try:
            session, negotiated = self._connector.connect(self.session, timeout, self._replace)
            era = self._make_era(negotiated, session.transport)
            with self._lock:
                if self._state is not _State.CONNECTING:
                    raise ClientClosedError("the client was closed while connecting")
                self.negotiated, self.era, self._state = negotiated, era, _State.READY
        except BaseException as exc:
            closed_by_user = self._state is _State.CLOSED
            self.close(time.monotonic() + CLOSE_BUDGET)
            if closed_by_user and isinstance(exc, MCPError) and not isinstance(exc, ClientClosedError):
                raise ClientClosedError("the client was closed while connecting") from exc
            if isinstance(exc, TransportError) and not isinstance(exc, ConnectError):
                first_line = str(exc).partition("\n")[0]  # details stay on the cause
                raise ConnectError(f"the handshake with {self.transport.name} failed: {first_line}") from exc
            raise

    def _replace(self, transport: Transport) -> Optional[Session]:
        """connect() moved to ``transport`` (a relaunch, a fallback): its session, or None if closing."""
        session = self._make_session(transport)
        with self._lock:
            if self._state is not _State.CONNECTING:
                return None
            self.transport, self.session = transport, session
        return session

    def ready(self, method: str) -> Era:
        """The era strategy, if calls are allowed now; else ``ClientClosedError`` naming ``method``."""
        era = self.era
        if self._state is not _State.READY or era is None:
            state = "closed" if self._state is _State.CLOSED else "not connected; call connect() or use 'with'"
            raise ClientClosedError(f"{method}: the client is {state}")
        return era

    def era_if_ready(self, what: str) -> Optional[Era]:
        """The era strategy once connected, None before; ``ClientClosedError`` once closed."""
        with self._lock:
            if self._state is _State.CLOSED:
                raise ClientClosedError(f"{what}: the client is closed")
            return self.era if self._state is _State.READY else None

    def mark_closed(self) -> Session:
        """Refuse new calls from now on; returns the session to close."""
        with self._lock:
            self._state = _State.CLOSED
            return self.session

    def close(self, deadline: float) -> None:
        self.mark_closed().close(deadline)
