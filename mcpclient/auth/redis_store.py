"""``RedisTokenStore``: tokens in Redis, shared by worker processes on several machines.

Same guarantees as ``FileTokenStore`` across machines: the refresh lock is a Redis key taken
with ``SET NX PX`` (an expiry, so a holder that dies frees it after ``lock_ttl`` seconds; a live
holder's keeper thread renews it every ``lock_ttl / 3`` seconds, so a slow refresh keeps it) and
released by a Lua script only by the holder whose random value it still holds; ``delete_if``
(compare-and-delete after ``invalid_grant``) is one Lua script, atomic on the server. Needs the
``redis`` package: ``pip install 'mcpclient[redis]'``.
"""
from __future__ import annotations

import contextlib
import json
import logging
import secrets
import threading
import time
from typing import Any, Iterator, Optional

from .._util.lazy import load
from .._util.threads import start_thread
from ..errors import AuthError, MissingExtraError
from .store import Token, TokenStore, _waits

__all__ = ["RedisTokenStore"]

log = logging.getLogger(__name__)

# KEYS[1]: the lock; ARGV[1]: the holder's value. Deletes it only if it is still ours.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

# KEYS[1]: the lock; ARGV[1]: the holder's value, ARGV[2]: the new expiry (ms). Renews it only if still ours.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

# KEYS[1]: the token; ARGV[1]: the refresh token that failed. Deletes the token only if it still
# carries that refresh token (a newer generation is kept).
_DELETE_IF = """
local value = redis.call('GET', KEYS[1])
if not value then
  return 0
end
local ok, token = pcall(cjson.decode, value)
if ok and type(token) == 'table' and token['refresh_token'] == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class RedisTokenStore(TokenStore):
    """Tokens in Redis under ``<prefix>token:<server URL>`` (JSON), refresh locks under
    ``<prefix>lock:<server URL>``.

    Args:
        url_or_client: a ``redis://`` URL, or a ``redis.Redis`` client to use as it is.
        prefix: put before every key this store uses.
        lock_ttl: seconds after which a refresh lock expires if its holder died without
            releasing it. A live holder renews it (every ``lock_ttl / 3`` s) however long its
            refresh takes, so another worker never refreshes the same token meanwhile.
    """

    def __init__(self, url_or_client: Any, prefix: str = "mcpclient:", lock_ttl: float = 60.0) -> None:
        try:
            redis = load("redis")  # the optional extra: only this store needs it
        except ImportError as exc:
            raise MissingExtraError("RedisTokenStore needs the 'redis' package: pip install 'mcpclient[redis]'",
                                    extra="redis", name="redis") from exc
        if lock_ttl <= 0:
            raise ValueError("lock_ttl must be positive")
        self._errors = redis.RedisError
        self._redis = redis.Redis.from_url(url_or_client) if isinstance(url_or_client, str) else url_or_client
        self.prefix = prefix
        self.lock_ttl = lock_ttl
        self._release = self._redis.register_script(_RELEASE)
        self._renew = self._redis.register_script(_RENEW)
        self._delete_if = self._redis.register_script(_DELETE_IF)

    def __repr__(self) -> str:  # the URL may carry a password
        return f"<RedisTokenStore prefix={self.prefix!r}>"

    def _key(self, key: str) -> str:
        return f"{self.prefix}token:{key}"

    @contextlib.contextmanager
    def _failures(self) -> Iterator[None]:
        """Redis's own errors (unreachable, refused, timed out) as ``AuthError``: the caller of a
        request sees mcpclient's error types only. Never the URL (it may carry a password)."""
        try:
            yield
        except self._errors as exc:
            raise AuthError(f"the Redis token store failed ({type(exc).__name__})") from exc

    def get(self, key: str) -> Optional[Token]:
        with self._failures():
            raw = self._redis.get(self._key(key))
        if raw is None:
            return None
        try:
            token = json.loads(raw)
        except ValueError:
            return None
        return token if isinstance(token, dict) else None

    def set(self, key: str, token: Token) -> None:
        with self._failures():
            self._redis.set(self._key(key), json.dumps(token))

    def delete(self, key: str) -> None:
        with self._failures():
            self._redis.delete(self._key(key))

    @contextlib.contextmanager
    def lock(self, key: str, timeout: float) -> Iterator[None]:
        """Hold ``key``'s refresh lock across all clients of this Redis (``TimeoutError`` after
        ``timeout`` seconds of waiting; the lock itself expires after ``lock_ttl``)."""
        name, mine = f"{self.prefix}lock:{key}", secrets.token_hex(16)
        ttl_ms = max(1, int(self.lock_ttl * 1000))
        with self._failures():
            for _ in _waits(time.monotonic() + max(0.0, timeout)):
                if self._redis.set(name, mine, nx=True, px=ttl_ms):
                    break
            else:
                raise TimeoutError(f"the token store's refresh lock was busy for {timeout:.3g} s")
        done = threading.Event()
        keeper = start_thread(lambda: self._keep(name, mine, ttl_ms, done), "mcpclient-redis-lock-keeper")
        try:
            yield
        finally:
            done.set()
            keeper.join(self.lock_ttl)  # (a renewal under way ends within it, or Redis is gone)
            with self._failures():
                self._release(keys=[name], args=[mine])

    def _keep(self, name: str, mine: str, ttl_ms: int, done: threading.Event) -> None:
        """Keeper thread: renew our lock until ``done`` (a holder still refreshing keeps it; one
        that died stops renewing, and the lock expires)."""
        while not done.wait(self.lock_ttl / 3):
            try:
                if not self._renew(keys=[name], args=[mine, ttl_ms]):
                    log.warning("the Redis refresh lock expired before it could be renewed; another client may refresh")
                    return
            except Exception as exc:  # Redis unreachable a moment: try again at the next tick
                log.debug("renewing the Redis refresh lock failed (%s)", type(exc).__name__)

    def delete_if(self, key: str, refresh_token: Optional[str]) -> bool:
        if refresh_token is None:  # nothing to compare with in Lua (JSON null is not nil): plain path
            return super().delete_if(key, refresh_token)
        with self._failures():
            return bool(self._delete_if(keys=[self._key(key)], args=[refresh_token]))
