"""``wait_for``: how a blocking method waits for the future of its call.

A blocking method is ``result()`` on the future its twin returns. ``wait_for(submit, *args)``
makes that future with the calling thread announced as its waiter (``announced_waiter``): the
engine then keeps a reply that arrives before the thread reaches ``result()`` for that thread,
instead of handing it to a worker thread that would only pass it on (one thread hop less per
call). Whatever was announced and is not the future waited on is released before the wait.
"""
from __future__ import annotations

from concurrent.futures import Future
from contextvars import ContextVar
from typing import Any, Callable, List, Optional, Protocol, TypeVar, Union

__all__ = ["Announced", "announced_waiter", "wait_for"]

T = TypeVar("T")


class Announced(Protocol):
    """A call a thread announced it will wait for (see ``announced_waiter``)."""

    def waiter_left(self) -> None:
        """The announcing thread will not wait after all (or waited and returned): what the
        call kept for it goes to whoever else runs the call's steps."""


#: Set by ``wait_for`` while it makes its future: the engine appends the first call made
#: meanwhile on this thread (an ``Announced``), which this thread will then wait for.
announced_waiter: "ContextVar[Optional[List[Announced]]]" = ContextVar("announced_waiter", default=None)


def wait_for(submit: Union["Future[T]", Callable[..., "Future[T]"]], *args: Any, **kwargs: Any) -> T:
    """``result()`` on the future ``submit(*args, **kwargs)`` makes (or on ``submit``, a
    future). An interrupt while waiting (Ctrl-C) cancels the call, on the server too, before
    it goes on up."""
    announced: List[Announced] = []
    if isinstance(submit, Future):
        future = submit
    else:
        token = announced_waiter.set(announced)
        made: Optional[Future[T]] = None
        try:
            made = future = submit(*args, **kwargs)
        finally:
            announced_waiter.reset(token)
            if announced and announced[0] is not made:
                announced.pop().waiter_left()
    try:
        return future.result()
    except BaseException:
        future.cancel()  # (nothing happens once it is done: then this is its outcome)
        raise
    finally:
        if announced:
            announced[0].waiter_left()
