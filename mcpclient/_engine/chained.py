"""``ChainedFuture``: a call made of other calls, one after another (``Skills.load``: the
manifest, then the file; the Tasks extension: the call, then its task). One ``CallFuture`` to
the caller, whose links run on the thread that waits for it, else a worker."""
from __future__ import annotations

from concurrent.futures import Future
from contextvars import copy_context
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar

from ..errors import RequestCancelled
from .futures import CallFuture

if TYPE_CHECKING:
    from .call_host import CallHost

__all__ = ["ChainedFuture"]

T = TypeVar("T")
U = TypeVar("U")


class ChainedFuture(CallFuture[T]):
    """A call made of other calls one after another (``Skills.load``: the manifest, then the
    file): each link gets the previous value on a worker thread and returns the final value or
    the next ``CallFuture`` (or other future: a task to wait for); ``cancel()`` cancels the link in flight."""

    def __init__(self, session: "CallHost[CallFuture]", method: str, first: "CallFuture[U]",
                 link: Callable[[Any], Any]) -> None:
        super().__init__(session, method)
        self._current: "Future[Any]" = first
        self._link: Optional[Callable[[Any], Any]] = link
        self._undeferred = False
        # The caller's context (its trace span...), for the links, which run on a worker thread:
        # the requests they make are then the caller's children, as the first one is.
        self._context = copy_context()
        first.add_done_callback(self._arrived)

    @property  # type: ignore[override]
    def request_id(self) -> Any:
        """The JSON-RPC id of the link in flight (None while it waits for something else than a reply)."""
        current = self._current
        return current.request_id if isinstance(current, CallFuture) else None

    def _arrived(self, done: "Future[Any]") -> None:
        if self.cancelled():
            return
        if done.cancelled():
            self._settle(None, RequestCancelled(f"{self.method} was cancelled"))
        elif done.exception() is not None:
            self._settle(None, done.exception())
        else:  # the next link runs on the thread waiting for this chain, else a worker
            self.deliver(done.result())

    def run_step(self, value: object) -> None:
        """Worker thread: run the next link with the previous link's value."""
        if self.cancelled():
            return
        link, self._link = self._link, None
        try:
            nxt = self._context.run(link, value) if link is not None else value
        except BaseException as exc:
            self._settle(None, exc)
            return
        if isinstance(nxt, Future):  # a CallFuture, or another future to wait for (a task)
            self._current = nxt
            if self._undeferred and isinstance(nxt, CallFuture):
                self._session.release_held(nxt)
            if self.cancelled():  # cancelled while the link ran: the new request goes too
                nxt.cancel()
                return
            nxt.add_done_callback(self._arrived)
        else:
            self._settle(nxt, None)

    def undefer(self) -> None:
        self._undeferred = True
        current = self._current
        if isinstance(current, CallFuture):
            current.undefer()

    def cancel(self) -> bool:
        if not Future.cancel(self):
            return False
        try:
            self.set_running_or_notify_cancel()  # wakes concurrent.futures.wait()/as_completed()
        except RuntimeError:  # cancelled (and notified) before
            return True
        self._cancel_current()
        return True

    def _cancel_current(self) -> None:
        """``cancel()``: stop the link in flight (a subclass may do more)."""
        self._current.cancel()

