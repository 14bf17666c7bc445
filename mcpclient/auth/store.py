"""Where tokens live between requests (and, with ``FileTokenStore``, between runs).

A token is a small dict: ``access_token``, ``refresh_token``, ``expires_at`` (epoch seconds),
``scope``, and what a refresh needs (``token_endpoint``, ``client_id``, ``auth_method``,
``resource``). Stores are keyed by the MCP server's URL. Nothing here logs a value.
"""
from __future__ import annotations

import json
import os
import threading
from typing import Any, Dict, Optional

from .._files import write_json

__all__ = ["FileTokenStore", "MemoryTokenStore", "TokenStore"]

Token = Dict[str, Any]


class TokenStore:
    """The interface: ``get``/``set``/``delete`` by key; implementations must be thread-safe."""

    def get(self, key: str) -> Optional[Token]:
        raise NotImplementedError

    def set(self, key: str, token: Token) -> None:
        raise NotImplementedError

    def delete(self, key: str) -> None:
        raise NotImplementedError


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


class FileTokenStore(TokenStore):
    """Tokens in one JSON file, readable and writable by its owner only (mode 0600).

    Every change rewrites the file atomically (a 0600 temporary file, then ``os.replace``) under
    a lock: this process's threads through a mutex, other processes through ``flock`` (POSIX).
    """

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(os.path.expanduser(path))
        self._lock = threading.Lock()

    def _locked(self) -> Any:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        lock_path = self.path + ".lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            import fcntl  # deferred: POSIX-only, and only FileTokenStore needs it

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:  # not POSIX: the in-process mutex is all there is
            pass
        return fd

    def _read(self) -> Dict[str, Token]:
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: Dict[str, Token]) -> None:
        directory = os.path.dirname(self.path)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        write_json(self.path, data, mode=0o600)  # tokens: readable by this user only

    def _update(self, change: Any) -> None:
        with self._lock:
            fd = self._locked()
            try:
                data = self._read()
                change(data)
                self._write(data)
            finally:
                os.close(fd)

    def get(self, key: str) -> Optional[Token]:
        with self._lock:
            token = self._read().get(key)
        return dict(token) if isinstance(token, dict) else None

    def set(self, key: str, token: Token) -> None:
        self._update(lambda data: data.__setitem__(key, dict(token)))

    def delete(self, key: str) -> None:
        self._update(lambda data: data.pop(key, None))
