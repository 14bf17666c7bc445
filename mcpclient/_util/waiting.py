"""``wait_for``: how a blocking method waits for the future of its call.

A blocking method is ``result()`` on the future its twin returns. ``wait_for(submit, *args)``
makes that future with the calling thread announced as its waiter (``announce``): the engine
then keeps a reply that arrives before the thread reaches ``result()`` for that thread, instead
of handing it to a worker thread that would only pass it on (one thread hop less per call). A
call announced that is not the future waited on is released before the wait.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Callable, List, Optional, Protocol, TypeVar

__all__ = ["Announced", "announce", "wait_for"]

T = TypeVar("T")


class Announced(Protocol):
    """A call a thread announced it will wait for (see ``announce``)."""

    def waiter_left(self) -> None:
        """The announcing thread will not wait after all (or waited and returned): what the
        call kept for it goes to whoever else runs the call's steps."""


#: ``wait_for``'s announcement, as a two-item list (cheaper to make than an object, once per
#: call): ``[open, the one call announced]``; closed once the future is made.
_Announcement = List[Any]


class _ThisThread(threading.local):
    #: Set by ``wait_for`` while it makes its future (per thread: no other thread sees it).
    announcement: Optional[_Announcement] = None


_this_thread = _ThisThread()


def announce(call: Announced) -> bool:
    """Whether the thread making ``call`` waits for it next (``wait_for`` is making its
    future, and no call was announced yet): the engine then parks its reply for that thread."""
    announcement = _this_thread.announcement
    if announcement is None or announcement[1] is not None or not announcement[0]:
        return False
    announcement[1] = call
    return True


def wait_for(submit: Callable[..., "Future[T]"], *args: Any, **kwargs: Any) -> T:
    """``result()`` on the future ``submit(*args, **kwargs)`` makes. An interrupt while
    waiting (Ctrl-C) cancels the call, on the server too, before it goes on up."""
    announcement: _Announcement = [True, None]
    outer, _this_thread.announcement = _this_thread.announcement, announcement
    future: Optional[Future[T]] = None
    try:
        future = submit(*args, **kwargs)
    finally:
        _this_thread.announcement = outer
        announcement[0] = False  # (closed)
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
