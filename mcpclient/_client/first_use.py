"""A client's core, built on the client's first use.

``Client(...)`` checks its arguments (``Options``) and builds nothing else. Its first
``connect()`` starts the transport (``Transport.start``: a stdio server is spawned), then builds
the core (``_client.core``: the engine, the protocol layer, the routers), so that the server boots
while they load; the first use of anything else builds the core without starting the transport.
Until then a ``Client`` holds one ``FirstUse``, which its ``_core`` asks for the core.
"""
from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from .._engine.deadline import check_timeout
from .._util import fork as _fork
from .._util.sentinel import DEFAULT
from ..errors import MCPError

if TYPE_CHECKING:
    from .core import ClientCore
    from .options import Options

__all__ = ["FirstUse"]


class FirstUse:
    """What a client holds until its core is built: its checked ``options``, and the lock the
    core is built under. The lock is re-entrant (a signal handler's ``close()`` may come in while
    the main thread builds) and replaced in a forked child (a thread of the parent may have held
    it at the fork)."""

    _live: "weakref.WeakSet[FirstUse]" = weakref.WeakSet()

    def __init__(self, options: Options) -> None:
        self.options = options
        self._lock = threading.RLock()
        FirstUse._live.add(self)

    def core(self, client: Any, launch: bool = False) -> ClientCore:
        """``client``'s core, built now if it is not yet (kept in ``client.__dict__["_core"]``,
        where later reads find it first). ``launch``: the transport starts first; if building
        fails, it is closed again."""
        with self._lock:
            core = client.__dict__.get("_core")
            if core is not None:
                return core  # type: ignore[no-any-return]
            options = self.options
            try:
                if launch:
                    try:
                        options.transport.start()
                    except MCPError:  # (the session starts it again, and meets the same error there)
                        pass
                from .core import ClientCore  # deferred: the engine loads with the first connect()

                built = ClientCore(client, options)
            except BaseException:
                if launch:
                    options.transport.close()
                raise
            core = client.__dict__.setdefault("_core", built)
            if core is built:  # (else a signal handler's close() built one meanwhile, and closed it)
                client._finalizer = finalizer = weakref.finalize(client, built.release, True)
                finalizer.atexit = False  # at exit the stdio transport's own finalizer stops the server
                client._first_use = None
            return core  # type: ignore[no-any-return]

    def connect(self, client: Any, timeout: Any) -> None:
        """``client.connect(timeout)`` as its first use: a wrong ``timeout`` starts nothing, and
        a failure before the connection opened stops the server it launched."""
        if timeout is not DEFAULT:
            check_timeout(timeout)
        core = self.core(client, launch=True)
        try:
            core.connect(timeout)
        except BaseException:
            if core.conn.state == "new":  # (a failure inside the connect has torn everything down)
                core.release()
            raise

    @classmethod
    def _renew_locks(cls) -> None:
        for first_use in list(cls._live):
            first_use._lock = threading.RLock()


_fork.in_child(FirstUse._renew_locks)
