"""``Requester``: how a feature below the façade sends (the subscriptions, the tasks, the
skills): the interface ``Channel`` implements, so those features never hold the client."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Protocol

from .._util.sentinel import DEFAULT
from .abandoned import LateHandler
from .deadline import Deadline
from .futures import CallFuture, ProgressCallback, Transform

if TYPE_CHECKING:
    from .session import Session

__all__ = ["Requester"]


class Requester(Protocol):
    """How a feature below the façade sends (``Channel`` is the implementation): the
    negotiated era's way, within the deadline of the public call it serves. A public method of
    a feature's own (``ToolTask.status(timeout=)``, ``Subscription.close()``) makes that
    deadline with ``deadline(timeout)``: the one place ``DEFAULT`` becomes the client's timeout."""

    @property
    def session(self) -> "Session":
        """The current session (a reconnect replaces it)."""

    def deadline(self, timeout: Any = DEFAULT) -> Deadline:
        """The deadline of a call made now with ``timeout=`` (``DEFAULT``: the client's)."""

    def call(self, method: str, params: Optional[Dict[str, Any]], transform: Optional[Transform], deadline: Deadline,
             *, check: bool = True, on_progress: Optional[ProgressCallback] = None,
             on_late: Optional[LateHandler] = None) -> CallFuture[Any]:
        """Send ``method`` (``check``: refuse what the server did not declare, nothing sent;
        ``on_late``: as ``Session.call``'s)."""
