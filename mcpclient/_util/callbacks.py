"""``CallbackKeeper``: a user's callables, kept alive by their ``Client`` alone.

A ``Client`` nobody references is collected, and its finalizer closes it: so nothing the
library's threads can reach (the session, its reader, its pools) may refer to the client. A
user's callback often does, through the object that holds the client
(``Handlers(sampling=self.sample)``): held by the session, it would keep the client, its server
process and its threads alive for ever. So the threads are given stand-ins that reach each
callback through a weak reference to the keeper, which only the ``Client`` holds; once the
client is gone a stand-in does nothing (returns None). Standard library only.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Dict, TypeVar

__all__ = ["CallbackKeeper"]

T = TypeVar("T")


class CallbackKeeper:
    """Holds callables for one client; ``hold(fn)`` gives the stand-in to hand on instead."""

    __slots__ = ("_held", "_until", "_next", "_lock", "__weakref__")

    def __init__(self) -> None:
        self._held: Dict[int, Callable[..., Any]] = {}
        self._until: Dict[int, Callable[[], bool]] = {}  # key -> whether its user is over (see hold)
        self._next = 0
        self._lock = threading.Lock()

    def hold(self, fn: T) -> T:
        """A stand-in for ``fn``, to hand on instead (None, and what is not callable, as they are)."""
        if fn is None or not callable(fn):
            return fn
        with self._lock:
            for key in [k for k, over in self._until.items() if over()]:
                del self._held[key], self._until[key]
            key = self._next
            self._next += 1
            self._held[key] = fn
        return _StandIn(weakref.ref(self), key)  # type: ignore[return-value]

    def until(self, stand_in: object, over: Callable[[], bool]) -> None:
        """Let ``stand_in``'s callable go once ``over()`` is True (a listen that ended), checked
        at the next ``hold``: a client that listens again and again keeps only the live ones."""
        if isinstance(stand_in, _StandIn):
            with self._lock:
                self._until[stand_in.key] = over


class _StandIn:
    __slots__ = ("_keeper", "key")

    def __init__(self, keeper: "weakref.ref[CallbackKeeper]", key: int) -> None:
        self._keeper = keeper
        self.key = key

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        keeper = self._keeper()
        fn = None if keeper is None else keeper._held.get(self.key)
        return None if fn is None else fn(*args, **kwargs)

    def __repr__(self) -> str:
        keeper = self._keeper()
        fn = None if keeper is None else keeper._held.get(self.key)
        return f"<callback {fn!r}>" if fn is not None else "<callback of a collected client>"
