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
from typing import Any, Callable, Optional, Protocol, TypeVar, Union

__all__ = ["Announced", "announce", "wait_for"]

T = TypeVar("T")


class Announced(Protocol):
    """A call a thread announced it will wait for (see ``announce``)."""

    def waiter_left(self) -> None:
        """The announcing thread will not wait after all (or waited and returned): what the
        call kept for it goes to whoever else runs the call's steps."""


class _Announcement:
    """``wait_for``'s: the thread that will wait, and the one call announced for it."""

    __slots__ = ("thread", "call")

    def __init__(self, thread: Optional[int]) -> None:
        self.thread = thread
        self.call: Optional[Announced] = None


#: Set by ``wait_for`` while it makes its future (a context copied meanwhile keeps it: the
#: thread check makes it inert anywhere else, and it is closed once the future is made).
_announcement: "ContextVar[Optional[_Announcement]]" = ContextVar("mcpclient_announcement", default=None)


def announce(call: Announced) -> bool:
    """Whether the thread making ``call`` waits for it next (``wait_for`` is making its
    future, and no call was announced yet): the engine then parks its reply for that thread."""
    announcement = _announcement.get()
    if announcement is None or announcement.call is not None or announcement.thread != _get_ident():
        return False
    announcement.call = call
    return True


def wait_for(submit: Union["Future[T]", Callable[..., "Future[T]"]], *args: Any, **kwargs: Any) -> T:
    """``result()`` on the future ``submit(*args, **kwargs)`` makes (or on ``submit``, a
    future). An interrupt while waiting (Ctrl-C) cancels the call, on the server too, before
    it goes on up."""
    announcement: Optional[_Announcement] = None
    try:
        if isinstance(submit, Future):
            future = submit
        else:
            announcement = _Announcement(_get_ident())
            token = _announcement.set(announcement)
            made: Optional[Future[T]] = None
            try:
                made = future = submit(*args, **kwargs)
            finally:
                _announcement.reset(token)
                announcement.thread = None  # (closed)
                announced = announcement.call
                if announced is not None and announced is not made:
                    announcement.call = None
                    announced.waiter_left()
        try:
            value = future.result()
        except BaseException:
            future.cancel()  # (nothing happens once it is done: then this is its outcome)
            raise
        if announcement is not None:
            announcement.call = None  # (over: nothing is kept for this thread any more)
        return value
    finally:
        if announcement is not None and announcement.call is not None:
            announcement.call.waiter_left()
