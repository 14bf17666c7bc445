"""``wait_for``: how a blocking method waits for the future of its call."""
from __future__ import annotations

from concurrent.futures import Future
from typing import TypeVar

__all__ = ["wait_for"]

T = TypeVar("T")


def wait_for(future: "Future[T]") -> T:
    """``result()`` on the future a blocking method made. An interrupt
    while waiting (Ctrl-C) cancels the call, on the server too, before it goes on up."""
    try:
        return future.result()
    except BaseException:
        future.cancel()  # (nothing happens once it is done: then this is its outcome)
        raise
