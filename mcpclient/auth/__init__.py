"""Credentials for remote MCP servers: ``Client(url, auth=...)``.

``AuthProvider`` is what an HTTP transport asks of its credentials; a token string or a callable
returning one becomes a ``BearerToken``. ``OAuth(grant)`` runs discovery, client registration and
the grant when the server first answers 401, and again for more scope on a 403
``insufficient_scope``. The grant is a value: ``AuthorizationCode`` (a user logs in; its
``authorize`` step is ``loopback_authorize`` for desktops, ``headless_authorize`` for servers that
approve without a user), ``ClientCredentials`` (a back end), ``JWTBearer`` (workload identity) or
``EnterpriseExchange`` (enterprise-managed authorization). Token stores: ``MemoryTokenStore``
(the default), ``FileTokenStore`` (one machine, several processes), ``RedisTokenStore`` (worker
fleets; the ``mcpclient[redis]`` extra).
"""
# OAuth, its grants, the token stores and the login steps load on first use (``_util.lazy``):
# every HTTP transport imports this package for ``AuthProvider``, and a server without OAuth never
# needs them (about 10 ms: the flow, ``webbrowser``, ``http.server``).
#
# Imports: ``policies``, ``types``, ``_util``, ``errors``; never a transport (transports import it).
from typing import TYPE_CHECKING, Any

from .._util.lazy import lazy_names as _lazy_names
from .base import AuthProvider, BearerToken, Challenge, as_auth

if TYPE_CHECKING:
    from .grants import AuthorizationCode, ClientCredentials, EnterpriseExchange, Grant, JWTBearer
    from .loopback import loopback_authorize
    from .oauth import OAuth, headless_authorize
    from .redis_store import RedisTokenStore
    from .store import FileTokenStore, MemoryTokenStore, TokenStore

__all__ = [
    "AuthProvider", "AuthorizationCode", "BearerToken", "Challenge", "ClientCredentials", "EnterpriseExchange",
    "FileTokenStore", "Grant", "JWTBearer", "MemoryTokenStore", "OAuth", "RedisTokenStore", "TokenStore",
    "as_auth", "headless_authorize", "loopback_authorize",
]

_LAZY = {
    "OAuth": "oauth", "headless_authorize": "oauth", "loopback_authorize": "loopback",
    "AuthorizationCode": "grants", "ClientCredentials": "grants", "EnterpriseExchange": "grants", "Grant": "grants",
    "JWTBearer": "grants",
    "FileTokenStore": "store", "MemoryTokenStore": "store", "TokenStore": "store", "RedisTokenStore": "redis_store",
}


__getattr__ = _lazy_names(__name__, _LAZY, globals())


def __dir__() -> Any:
    return sorted(__all__)
