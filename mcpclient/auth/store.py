"""Where tokens live between requests (and, with ``FileTokenStore``, between runs and processes).

A token is a small dict: ``access_token``, ``refresh_token``, ``expires_at`` (epoch seconds),
``scope``, and what a refresh needs (``token_endpoint``, ``client_id``, ``auth_method``,
``resource``). Stores are keyed by the MCP server's URL. Nothing here logs a value.

Every store also offers what makes a refresh safe when several clients share it (rotating
refresh tokens are single-use: two refreshes of the same one get the whole family revoked):
``lock(key, timeout)``, held by ``OAuth`` around re-reading the stored token and refreshing it,
so that one refresh happens and the others adopt its result; and ``delete_if(key,
refresh_token)``, which forgets a token after ``invalid_grant`` only if it is still the
generation that failed. The base class implements both for one process (a lock per key); stores
shared between processes (``FileTokenStore``, ``RedisTokenStore``) override them.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from typing import Any, Dict, Iterator, Optional

from .._util.files import write_json

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

__all__ = ["FileTokenStore", "MemoryTokenStore", "TokenStore"]

Token = Dict[str, Any]

_GUARD = threading.Lock()  # creates the base class's per-store lock table


def _waits(deadline: float) -> Iterator[None]:
    """Yields until ``deadline`` with growing pauses (1 ms .. 50 ms) between, for locks that
    offer only a try (``flock(LOCK_NB)``, ``SET NX``): nothing signals their release to us."""
    pause = 0.001
    while True:
        yield
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        threading.Event().wait(min(pause, remaining))
        pause = min(pause * 2, 0.05)


class TokenStore:
    """The interface: ``get``/``set``/``delete`` by key (thread-safe), and the refresh lock and
    compare-and-delete that make sharing a store between clients safe (see the module doc)."""

    def get(self, key: str) -> Optional[Token]:
        """The token stored under ``key``, or ``None``.

        Raises ``OSError`` (file store) or the backend's error (Redis) if the store cannot be read.
        """
        raise NotImplementedError

    def set(self, key: str, token: Token) -> None:
        """Store ``token`` under ``key``, replacing any other.

        Raises ``OSError`` (file store) or the backend's error (Redis) if the store cannot be written.
        """
        raise NotImplementedError

    def delete(self, key: str) -> None:
        """Remove the token under ``key`` (nothing if there is none).

        Raises the store's error as ``set`` does.
        """
        raise NotImplementedError

    @contextlib.contextmanager
    def lock(self, key: str, timeout: float) -> Iterator[None]:
        """Hold ``key``'s refresh lock (``TimeoutError`` after ``timeout`` seconds of waiting).
        This one excludes the other threads of this process; shared stores exclude other
        processes too."""
        with _GUARD:
            table = self.__dict__.setdefault("_mcpclient_refresh_locks", {})
            mutex = table.setdefault(key, threading.Lock())
        if not mutex.acquire(timeout=max(0.0, timeout)):
            raise TimeoutError(f"the token store's refresh lock was busy for {timeout:.3g} s")
        try:
            yield
        finally:
            mutex.release()

    def delete_if(self, key: str, refresh_token: Optional[str]) -> bool:
        """Delete ``key``'s token only if its refresh token is still ``refresh_token`` (the
        generation that failed; a newer one someone stored meanwhile is kept). True if deleted.
        Atomic here only against callers holding ``lock(key)``; shared stores make it atomic."""
        token = self.get(key)
        if token is None or token.get("refresh_token") != refresh_token:
            return False
        self.delete(key)
        return True


class MemoryTokenStore(TokenStore):
    """Tokens for the life of the process (the default)."""

    def __init__(self) -> None:
        self._tokens: Dict[str, Token] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Optional[Token]:
        with self._lock:
            token = self._tokens.get(key)
            return dict(token) if token is not None else None

    def set(self, key: str, token: Token) -> None:
        with self._lock:
            self._tokens[key] = dict(token)

    def delete(self, key: str) -> None:
        with self._lock:
            self._tokens.pop(key, None)

    def delete_if(self, key: str, refresh_token: Optional[str]) -> bool:
        with self._lock:
            token = self._tokens.get(key)
            if token is None or token.get("refresh_token") != refresh_token:
                return False
            del self._tokens[key]
            return True


class _FileLock:
    """An exclusive lock on a file, between processes: ``fcntl.flock`` on POSIX, ``msvcrt.locking``
    on Windows (both from the standard library: mcpclient's only runtime dependencies are
    requests and jsonschema, so no locking library). The operating system drops it when its
    holder dies. Each acquisition opens the file anew, so threads exclude each other too."""

    def __init__(self, path: str) -> None:
        self.path = path

    @contextlib.contextmanager
    def held(self, timeout: Optional[float] = None) -> Iterator[None]:
        """Hold the lock (``TimeoutError`` after ``timeout`` seconds; None: wait as long as it takes)."""
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            self._acquire(fd, timeout)
            try:
                yield
            finally:
                self._release(fd)
        finally:
            os.close(fd)

    def _acquire(self, fd: int, timeout: Optional[float]) -> None:
        if sys.platform == "win32":
            def attempt() -> bool:
                os.lseek(fd, 0, os.SEEK_SET)
                try:
                    msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
                    return True
                except OSError:
                    return False
        else:
            if timeout is None:
                fcntl.flock(fd, fcntl.LOCK_EX)
                return

            def attempt() -> bool:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return True
                except BlockingIOError:
                    return False
        deadline = time.monotonic() + (timeout if timeout is not None else float("inf"))
        for _ in _waits(deadline):
            if attempt():
                return
        raise TimeoutError(f"the lock {os.path.basename(self.path)} was busy for {timeout:.3g} s")

    def _release(self, fd: int) -> None:
        if sys.platform == "win32":
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        # POSIX: closing the descriptor releases the flock


class FileTokenStore(TokenStore):
    """Tokens in one JSON file, readable and writable by its owner only (mode 0600), safe to
    share between processes on one machine.

    Every change rewrites the file atomically (a 0600 temporary file, then ``os.replace``) under
    a file lock (``<path>.lock``). Refreshes take another file lock (``<path>.refresh.lock``,
    one for the whole file: refreshes are rare), held across re-reading the token and the
    refresh request, so that of several processes meeting the same expired token one refreshes
    and the others adopt its result.
    """

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(os.path.expanduser(path))
        self._lock = threading.Lock()
        self._file_lock = _FileLock(self.path + ".lock")
        self._refresh_lock = _FileLock(self.path + ".refresh.lock")

    def _read(self) -> Dict[str, Token]:
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: Dict[str, Token]) -> None:
        write_json(self.path, data, mode=0o600)  # tokens: readable by this user only

    def _update(self, change: Any) -> Any:
        with self._lock, self._file_lock.held():
            data = self._read()
            result = change(data)
            self._write(data)
            return result

    def get(self, key: str) -> Optional[Token]:
        with self._lock:
            token = self._read().get(key)
        return dict(token) if isinstance(token, dict) else None

    def set(self, key: str, token: Token) -> None:
        self._update(lambda data: data.__setitem__(key, dict(token)))

    def delete(self, key: str) -> None:
        self._update(lambda data: data.pop(key, None))

    @contextlib.contextmanager
    def lock(self, key: str, timeout: float) -> Iterator[None]:
        """Hold the refresh lock: other threads and processes using this file wait."""
        with self._refresh_lock.held(max(0.0, timeout)):
            yield

    def delete_if(self, key: str, refresh_token: Optional[str]) -> bool:
        def change(data: Dict[str, Token]) -> bool:
            token = data.get(key)
            if not isinstance(token, dict) or token.get("refresh_token") != refresh_token:
                return False
            del data[key]
            return True

        return bool(self._update(change))
