"""Which era a server speaks: ``server/discover`` first, the ``initialize`` handshake otherwise.

``probe()`` sends ``server/discover`` at the newest modern revision. A ``DiscoverResult`` sharing a
modern revision with us means modern. ``-32022`` (unsupported version) naming a modern revision
we speak means modern too: ask again at that revision (once). Anything else a legacy server may
answer — another JSON-RPC error, a 4xx without an MCP body, silence on stdio — means "run the
handshake". Outages (5xx, refused connections, a dead process) and authentication failures are
never era verdicts: they are raised. The verdict is remembered per target for this process, so
reconnecting to a legacy server does not probe again.
"""
from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import Any, Dict, Hashable, Optional, Tuple

from .._util import fork as _fork
from .._util.waiting import wait_for
from ..errors import HTTPError, ProtocolError, RequestTimeout, RPCError, UnsupportedProtocolVersion
from .stateless import (
    LATEST_MODERN_VERSION, META_SERVER_INFO, MODERN_VERSIONS, mutual_version, request_meta, routing_headers,
)
from .spec import HANDSHAKE_VERSIONS
from .._engine.deadline import Deadline
from .._engine.session import Session
from ..types import Implementation

__all__ = ["LEGACY", "EraMemory", "Negotiated", "probe", "refused_discover"]

log = logging.getLogger("mcpclient")

LEGACY = "legacy"


class Negotiated:
    """What connect() agreed on with the server; fixed for the connection's life.

    ``stateless`` is the era: True for 2026-07-28 (``server/discover``), False for the
    ``initialize`` handshake. ``raw`` is the server's answer as it came.
    """

    __slots__ = ("version", "stateless", "capabilities", "server_info", "instructions", "raw")

    def __init__(self, version: str, stateless: bool, capabilities: Dict[str, Any], server_info: "Implementation",
                 instructions: Optional[str], raw: Dict[str, Any]) -> None:
        self.version = version
        self.stateless = stateless
        self.capabilities = capabilities
        self.server_info = server_info
        self.instructions = instructions
        self.raw = raw

    def __repr__(self) -> str:
        return (f"Negotiated(version={self.version!r}, stateless={self.stateless!r}, capabilities="
                f"{self.capabilities!r}, server_info={self.server_info!r}, instructions={self.instructions!r})")


class EraMemory:
    """What connecting learned about servers, kept beyond one client: the era each target speaks
    (keyed by ``TransportInfo.identity``: ``"legacy"`` or the modern revision last seen) and the
    ``DiscoverResult`` of HTTP servers while their ``ttlMs`` says it is fresh (keyed by identity
    and credentials). Thread-safe; its lock is replaced in a forked child (a thread of the
    parent, connecting another client, may have held it)."""

    _live: "weakref.WeakSet[EraMemory]" = weakref.WeakSet()

    def __init__(self) -> None:
        self._eras: Dict[str, str] = {}
        self._discoveries: Dict[Hashable, Tuple[float, Negotiated]] = {}
        self._lock = threading.Lock()
        EraMemory._live.add(self)

    def era(self, key: Optional[str]) -> Optional[str]:
        """The era remembered for ``key`` (None: none, or no key)."""
        with self._lock:
            return self._eras.get(key) if key else None

    def remember(self, key: Optional[str], era: str) -> None:
        if key:
            with self._lock:
                self._eras[key] = era

    def forget(self, key: Optional[str]) -> None:
        """Drop a remembered verdict (the server changed: e.g. ``initialize`` answered ``-32022``)."""
        if key:
            with self._lock:
                self._eras.pop(key, None)

    def discovery(self, key: Hashable) -> Optional[Negotiated]:
        """A ``DiscoverResult`` kept under ``key`` that is still fresh by its ``ttlMs``."""
        with self._lock:
            entry = self._discoveries.get(key)
            if entry is not None and entry[0] > time.monotonic():
                return entry[1]
            self._discoveries.pop(key, None)
            return None

    def keep_discovery(self, key: Hashable, found: Negotiated) -> None:
        """Keep ``found`` under ``key`` for its ``ttlMs`` (at most a day; 256 entries)."""
        ttl = found.raw.get("ttlMs")
        if isinstance(ttl, (int, float)) and not isinstance(ttl, bool) and ttl > 0:
            with self._lock:
                if len(self._discoveries) >= 256:
                    self._discoveries.pop(next(iter(self._discoveries)))
                self._discoveries[key] = (time.monotonic() + min(ttl / 1000.0, 24 * 3600.0), found)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._eras.clear()
            self._discoveries.clear()

    @classmethod
    def _renew_locks(cls) -> None:
        for memory in list(cls._live):
            memory._lock = threading.Lock()


_fork.in_child(EraMemory._renew_locks)


def probe(session: Session, capabilities: Dict[str, Any], client_info: Dict[str, Any],
          deadline: Deadline, *, required: bool, version: str = LATEST_MODERN_VERSION) -> Optional[Negotiated]:
    """The 2026 era's ``Negotiated`` if the server speaks a modern revision with us, else None
    (legacy), found within ``deadline``.

    ``required`` (``protocol="modern"`` or a modern revision): anything but modern raises
    ``ProtocolError`` instead of returning None.
    """
    for attempt in range(2):
        params = {"_meta": request_meta(version, capabilities, client_info)}
        headers = routing_headers("server/discover", params, version, {}) if session.transport.info.sends_headers else None
        try:
            result = wait_for(session.call, "server/discover", params, deadline=deadline, headers=headers,
                              idempotent=True)
        except UnsupportedProtocolVersion as exc:
            mutual = mutual_version(exc.supported)
            if mutual is not None and attempt == 0:
                version = mutual  # the spec's retry: at a revision the server named
                continue
            if required or (exc.supported and not any(v in HANDSHAKE_VERSIONS for v in exc.supported)):
                raise ProtocolError(f"the server speaks {', '.join(exc.supported) or 'no revision it named'}; "
                                    f"this client speaks {', '.join(MODERN_VERSIONS + HANDSHAKE_VERSIONS)}") from exc
            return None
        except RequestTimeout as exc:
            if session.transport.info.remote:
                raise  # an HTTP server that does not answer is down, not old
            return _legacy(exc, required)
        except (RPCError, HTTPError) as exc:
            if not refused_discover(exc):
                raise  # an outage, not an answer about eras
            return _legacy(exc, required)
        discovered = _discovered(result, version)
        if discovered is None and required:
            raise ProtocolError(f"server/discover named no revision this client speaks: "
                                f"{(result or {}).get('supportedVersions')!r:.200}")
        return discovered
    return None  # unreachable: the loop returns or raises


def refused_discover(error: BaseException) -> bool:
    """Whether ``error``, ending a ``server/discover``, is a handshake-era server's answer (it
    knows no such method, or refuses the request below 500), not an outage: then ``initialize``
    follows. The tracer records such a probe without an error status."""
    if isinstance(error, UnsupportedProtocolVersion):
        return False  # (an answer about revisions: probe() looks at what it names)
    if isinstance(error, RPCError):
        return (error.http_status or 0) < 500
    return isinstance(error, HTTPError) and error.status < 500


def _legacy(exc: Exception, required: bool) -> None:
    if required:
        raise ProtocolError(f"the server does not speak the 2026-07-28 protocol (server/discover: {exc})") from exc
    log.debug("server/discover refused (%s): a handshake-era server", exc)
    return None


def _discovered(result: Any, asked: str) -> Optional[Negotiated]:
    if not isinstance(result, dict):
        raise ProtocolError("server/discover result is not an object")
    supported = result.get("supportedVersions")
    version = asked if isinstance(supported, list) and asked in supported else mutual_version(supported)
    if version is None:
        return None  # answers discover but advertises no modern revision we speak: legacy
    meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
    info = meta.get(META_SERVER_INFO) or result.get("serverInfo") or {}
    capabilities = result.get("capabilities")
    instructions = result.get("instructions")
    return Negotiated(version, True, capabilities if isinstance(capabilities, dict) else {},
                      Implementation.from_wire(info if isinstance(info, dict) else {}),
                      instructions if isinstance(instructions, str) else None, result)
