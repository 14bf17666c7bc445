"""The ``requests`` session an HTTP transport sends through (``Connections``): the user's, used
as given (never closed), or one the transport makes when it starts and owns: its adapter pools
``pool_size`` connections, never retries, and tells the request in flight which socket it waits
on (``_tracking``), so that ``close()``, a cancel or a deadline can end it however slowly the
server answers. With a session of the user's, its adapters stay the user's: the wait for an
answer's headers is then bounded per read only.

Nothing here imports ``requests`` at module level: a program that only names the HTTP transports
(a type hint) loads neither it nor urllib3.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional

from ..._util import fork as _fork
from ._reading import Response, request_error

if TYPE_CHECKING:
    import requests

__all__ = ["Connections", "close_pools"]


class Connections:
    """The ``requests`` session of one transport and the few requests sent through it directly
    (a GET, a POST, a DELETE: one try each, failures mapped by ``request_error``)."""

    def __init__(self, session: Optional["requests.Session"], *, name: str, connect_timeout: float) -> None:
        self.http = session
        #: The transport made the session (and closes it).
        self.owned = session is None
        self._name = name
        self._connect = connect_timeout
        self._pid = _fork.pid  # the process this transport was made in
        self._errors: Any = Exception  # requests' RequestException, once open

    def open(self, url: str, pool_size: int) -> "requests.Session":
        """The session, made now unless the user gave one; the environment (proxies, CA bundle)
        is read once, not on every request as ``requests`` would (a fifth of a call's CPU): one
        endpoint means one answer for the whole session."""
        import requests  # deferred: import cost (requests); stdio-only programs never load it

        from ._tracking import TrackingAdapter  # deferred: it subclasses urllib3 and requests (import cost)

        self._errors = requests.exceptions.RequestException
        if self.http is None:
            self.http = http = requests.Session()
            adapter = TrackingAdapter(pool_connections=1, pool_maxsize=pool_size, max_retries=0)
            http.mount("http://", adapter)
            http.mount("https://", adapter)
            env = http.merge_environment_settings(url, {}, None, None, None)
            http.proxies, http.verify, http.trust_env = env["proxies"], env["verify"], False
        return self.http

    def get(self, url: str, headers: Dict[str, str], read: Optional[float]) -> Response:
        """A GET of an event stream (the body is read as it comes); ``read``: the read timeout."""
        try:
            return self.http.get(url, headers=headers, stream=True,  # type: ignore[union-attr]  # (open)
                                 timeout=(self._connect, read), allow_redirects=False)
        except self._errors as exc:
            raise request_error(self._name, exc, self._connect) from exc

    def post(self, url: str, body: bytes, headers: Dict[str, str], read: Optional[float]) -> Response:
        """A POST of ``body`` (its answer's body is read by the caller, within its own bounds)."""
        try:
            return self.http.post(url, data=body, headers=headers,  # type: ignore[union-attr]  # (open)
                                  timeout=(self._connect, read), allow_redirects=False, stream=True)
        except self._errors as exc:
            raise request_error(self._name, exc, self._connect) from exc

    def delete(self, url: str, headers: Dict[str, str], budget: float) -> Response:
        """A DELETE whose connect and read together take at most ``budget`` s (``total=``: a
        server that stopped accepting, its listen backlog full, cannot hold the caller)."""
        from urllib3.util import Timeout  # deferred: import cost (urllib3), loaded already by open()

        timeout = Timeout(connect=budget, read=budget, total=budget)
        try:
            return self.http.delete(url, headers=headers, timeout=timeout,  # type: ignore[union-attr, arg-type]
                                    allow_redirects=False)
        except self._errors as exc:
            raise request_error(self._name, exc, self._connect) from exc

    def close(self) -> None:
        if self.owned and self.http is not None:
            close_pools(self.http)
            self.http.close()

    def to_share(self) -> Optional["requests.Session"]:
        """For a new transport to the same server (``reopen``, ``fallback``): the user's session
        (None if the transport made its own). In a forked child its pooled connections are the
        parent's sockets: they are dropped (the child's copies closed; the parent's connections
        stay open) so that none is ever used here."""
        if self.owned:
            return None
        if _fork.pid != self._pid and self.http is not None:
            for adapter in list(self.http.adapters.values()):
                adapter.close()
        return self.http


def close_pools(http: "requests.Session") -> None:
    """Close the idle connections of a session the transport made (its adapters are requests'
    own ``HTTPAdapter``s). ``Session.close()`` alone no longer does: urllib3 2.8's
    ``PoolManager.clear()`` forgets its pools without closing them, which left a socket open after
    ``close()`` until the garbage collector came by."""
    for adapter in list(http.adapters.values()):
        managers = [adapter.poolmanager, *adapter.proxy_manager.values()]  # type: ignore[attr-defined]
        for manager in managers:
            for key in list(manager.pools.keys()):
                pool = manager.pools.get(key)
                if pool is not None:
                    pool.close()
