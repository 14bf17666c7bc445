"""OAuth 2.1 for remote MCP servers: ``Client(url, auth=OAuth(...))``.

``OAuth`` runs discovery, client registration and the grant when the server first answers 401,
and again for more scope on a 403 ``insufficient_scope``; ``headless_authorize`` completes the
authorization step for servers that approve without a user.
"""
from .loopback import loopback_authorize
from .oauth import OAuth, headless_authorize
from .store import FileTokenStore, MemoryTokenStore, TokenStore

__all__ = ["FileTokenStore", "MemoryTokenStore", "OAuth", "TokenStore", "headless_authorize", "loopback_authorize"]
