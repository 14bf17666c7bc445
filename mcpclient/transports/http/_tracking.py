"""The connections of a ``requests`` session an HTTP transport made itself: urllib3's own
(``HTTPConnection``, ``HTTPSConnection``), subclassed only to tell the request being sent on them
(``_inflight.current``) the socket its answer's status line and headers are read from, before
they wait for them: what ``close()``, a cancel or a deadline shuts down when a server trickles
them (no read timeout can bound that: ``requests``' is per read). They reach the pools through
the adapter's pool manager (``pool_classes_by_scheme``), the hook urllib3 and ``requests``'
``HTTPAdapter`` offer for it.

Imports ``requests`` and urllib3: ``_connections`` loads it when a transport starts.
"""
from __future__ import annotations

from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.poolmanager import ProxyManager

from ._inflight import current

__all__ = ["TrackingAdapter"]


class _Tracked:
    """Before waiting for an answer, tell the request being sent (if any) the socket."""

    sock: Any

    def getresponse(self) -> Any:
        request = current.request
        if request is not None:
            request.waiting_on(self.sock)
        return super().getresponse()  # type: ignore[misc]


class _TrackedHTTPConnection(_Tracked, HTTPConnection):
    pass


class _TrackedHTTPSConnection(_Tracked, HTTPSConnection):
    pass


class _TrackedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = _TrackedHTTPConnection


class _TrackedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = _TrackedHTTPSConnection


_POOLS = {"http": _TrackedHTTPConnectionPool, "https": _TrackedHTTPSConnectionPool}


class TrackingAdapter(HTTPAdapter):
    """``requests``' adapter, whose pools (direct or through an HTTP proxy) make tracked connections."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **kwargs)
        if type(manager) is ProxyManager:  # (a SOCKS proxy's manager keeps its own pools)
            manager.pool_classes_by_scheme = _POOLS
        return manager
