"""Transports made in place of a client's transport: when, and from what.

A transport says how another like it is made (``TransportInfo.remake``, the recipe it was built
from); the client decides when: a ``relaunch`` when a stdio server exited on the
``server/discover`` probe (some handshake-era servers do), a ``reopen`` for a new connection
after a loss or in a forked child, a ``fallback`` when a Streamable HTTP endpoint refused the
first handshake as an old HTTP+SSE server does (400, 404 or 405 without a JSON-RPC body). The
new transport is unstarted and keeps the connection number (``info.instance``) of the one it
replaces.
"""
from __future__ import annotations

from typing import Optional

from ..errors import HTTPError
from ..transports.base import RemakeKind, Transport

__all__ = ["fallback", "relaunch", "reopen"]

#: How an HTTP+SSE server refuses the Streamable HTTP setup POST.
_LEGACY_REFUSALS = (400, 404, 405)


def _remake(old: Transport, how: RemakeKind) -> Optional[Transport]:
    remake = old.info.remake
    return remake(how) if remake is not None else None


def relaunch(old: Transport) -> Optional[Transport]:
    """A fresh transport to the server ``old`` started, which exited on the probe; None if
    ``old`` cannot be started again."""
    return _remake(old, "relaunch")


def reopen(old: Transport) -> Optional[Transport]:
    """A fresh transport to ``old``'s server for a new connection (``old`` was lost, or belongs
    to the parent of this forked process and must not be touched); None if it cannot be made."""
    return _remake(old, "reopen")


def fallback(old: Transport, error: BaseException) -> Optional[Transport]:
    """The legacy transport to try after ``old``'s first handshake failed with ``error``, if
    that is how an HTTP+SSE server refuses Streamable HTTP and ``old`` offers one; else None."""
    if not isinstance(error, HTTPError) or error.status not in _LEGACY_REFUSALS:
        return None
    return _remake(old, "fallback")
