"""Credentials for remote MCP servers: ``Client(url, auth=...)``.

``AuthProvider`` is what an HTTP transport asks of its credentials; a token string or a callable
returning one becomes a ``BearerToken``. ``OAuth`` runs discovery, client registration and the
grant when the server first answers 401, and again for more scope on a 403
``insufficient_scope``; ``headless_authorize`` completes the authorization step for servers that
approve without a user, ``loopback_authorize`` for desktop logins. Token stores: ``MemoryTokenStore``
(the default), ``FileTokenStore`` (one machine, several processes), ``RedisTokenStore`` (worker
fleets; the ``mcpclient[redis]`` extra).
"""
# The OAuth machinery loads on first use (module ``__getattr__``): the transports import this
# package for ``AuthProvider``, and ``import mcpclient`` must stay cheap.
#
# Imports: ``policies``, ``types``, ``_util``, ``errors``; never a transport (transports import it).
from typing import TYPE_CHECKING, Any

from .._util.lazy import lazy_names as _lazy_names
from .base import AuthProvider, BearerToken, Challenge, as_auth

if TYPE_CHECKING:
    from .loopback import loopback_authorize
    from .oauth import OAuth, headless_authorize
    from .redis_store import RedisTokenStore
    from .store import FileTokenStore, MemoryTokenStore, TokenStore

__all__ = [
    "AuthProvider", "BearerToken", "Challenge", "FileTokenStore", "MemoryTokenStore", "OAuth", "RedisTokenStore",
    "TokenStore",
    "as_auth", "headless_authorize", "loopback_authorize",
]

_LAZY = {
    "OAuth": "oauth", "headless_authorize": "oauth", "loopback_authorize": "loopback",
    "FileTokenStore": "store", "MemoryTokenStore": "store", "TokenStore": "store", "RedisTokenStore": "redis_store",
}


__getattr__ = _lazy_names(__name__, _LAZY, globals())


def __dir__() -> Any:
    return sorted(__all__)
