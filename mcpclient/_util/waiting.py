"""``wait_for``: how a blocking method waits for the future of its call.

A blocking method is ``result()`` on the future its twin returns. ``wait_for(submit, *args)``
makes that future with the calling thread announced as its waiter (``announce``): the engine
then keeps a reply that arrives before the thread reaches ``result()`` for that thread, instead
of handing it to a worker thread that would only pass it on (one thread hop less per call). A
call announced that is not the future waited on is released before the wait.
"""
from __future__ import annotations

from _thread import get_ident as _get_ident
from concurrent.futures import Future
from contextvars import ContextVar
from typing import Any, Callable, List, Optional, Protocol, TypeVar

__all__ = ["Announced", "announce", "wait_for"]

T = TypeVar("T")


class Announced(Protocol):
    """A call a thread announced it will wait for (see ``announce``)."""

    def waiter_left(self) -> None:
        """The announcing thread will not wait after all (or waited and returned): what the
        call kept for it goes to whoever else runs the call's steps."""


#: ``wait_for``'s announcement, as a two-item list (cheaper to make than an object, once per
#: call): ``[the thread that will wait, the one call announced for it]``.
_Announcement = List[Any]

#: Set by ``wait_for`` while it makes its future (a context copied meanwhile keeps it: the
#: thread check makes it inert anywhere else, and it is closed once the future is made).
_announcement: "ContextVar[Optional[_Announcement]]" = ContextVar("mcpclient_announcement", default=None)


def announce(call: Announced) -> bool:
    """Whether the thread making ``call`` waits for it next (``wait_for`` is making its
    future, and no call was announced yet): the engine then parks its reply for that thread."""
    announcement = _announcement.get()
    if announcement is None or announcement[1] is not None or announcement[0] != _get_ident():
        return False
    announcement[1] = call
    return True


def wait_for(submit: Callable[..., "Future[T]"], *args: Any, **kwargs: Any) -> T:
    """``result()`` on the future ``submit(*args, **kwargs)`` makes. An interrupt while
    waiting (Ctrl-C) cancels the call, on the server too, before it goes on up."""
    announcement: _Announcement = [_get_ident(), None]
    token = _announcement.set(announcement)
    future: Optional[Future[T]] = None
    try:
        future = submit(*args, **kwargs)
    finally:
        _announcement.reset(token)
        announcement[0] = None  # (closed)
        announced = announcement[1]
        if announced is not None and announced is not future:
            announced.waiter_left()
            announced = None
    try:
        return future.result()  # type: ignore[union-attr]  # (made, or submit raised)
    except BaseException:
        future.cancel()  # type: ignore[union-attr]  # (nothing happens once it is done: then this is its outcome)
        if announced is not None:
            announced.waiter_left()  # (interrupted before its wait began: what was kept for it goes on)
        raise
