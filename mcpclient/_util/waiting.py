"""``wait_for``: how a blocking method waits for the future of its call.

A blocking method is ``result()`` on the future its twin returns. ``wait_for(submit, *args)``
makes that future with the calling thread announced as its waiter (``announce``): the engine
then keeps a reply that arrives before the thread reaches ``result()`` for that thread, instead
of handing it to a worker thread that would only pass it on (one thread hop less per call). A
call announced that is not the future waited on is released before the wait.
"""
from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Callable, Protocol, TypeVar

from .threads import this_thread as _this_thread

__all__ = ["Announced", "announce", "wait_for"]

T = TypeVar("T")


class Announced(Protocol):
    """A call a thread announced it will wait for (see ``announce``)."""

    def waiter_left(self) -> None:
        """The announcing thread will not wait after all (or waited and returned): what the
        call kept for it goes to whoever else runs the call's steps."""


#: ``this_thread.announced`` while ``wait_for`` makes its future, until a call is announced.
_OPEN = object()


def announce(call: Announced) -> bool:
    """Whether the thread making ``call`` waits for it next (``wait_for`` is making its
    future, and no call was announced yet): the engine then parks its reply for that thread."""
    this_thread = _this_thread
    if this_thread.announced is not _OPEN:
        return False
    this_thread.announced = call
    return True


def wait_for(submit: Callable[..., "Future[T]"], *args: Any, **kwargs: Any) -> T:
    """``result()`` on the future ``submit(*args, **kwargs)`` makes. An interrupt while
    waiting (Ctrl-C) cancels the call, on the server too, before it goes on up."""
    this_thread = _this_thread
    outer, this_thread.announced = this_thread.announced, _OPEN
    try:
        future = submit(*args, **kwargs)
    except BaseException:
        announced, this_thread.announced = this_thread.announced, outer
        if announced is not _OPEN:
            announced.waiter_left()
        raise
    announced, this_thread.announced = this_thread.announced, outer
    if announced is not future:  # (another call than the one waited for: released now)
        if announced is not _OPEN:
            announced.waiter_left()
        announced = None
    try:
        return future.result()
    except BaseException:
        future.cancel()  # (nothing happens once it is done: then this is its outcome)
        if announced is not None:
            announced.waiter_left()  # (interrupted before its wait began: what was kept for it goes on)
        raise
