"""``Client.listen()``: change events from the server as an iterator (and/or a callback).

2026-07-28: one ``subscriptions/listen`` request stays open; the server acknowledges the filter
(``notifications/subscriptions/acknowledged``), then sends list-changed and resource-updated
notifications tagged with the request's id, and ends it with a result (or ``notifications/
cancelled`` on stdio). Closing the subscription cancels the request (stdio: a cancellation
notice; HTTP: the stream is closed). Handshake era: the same events come from unsolicited
list-changed notifications and ``resources/subscribe``; ``listen()`` subscribes and routes them,
so code written against ``listen()`` works with both.

Events wait in a bounded queue (``MAX_QUEUED``): a consumer that stops reading loses the oldest
events (counted in ``dropped``), never memory.
"""
from __future__ import annotations

import collections
import threading
from typing import Any, Callable, Deque, Dict, Iterator, List, NamedTuple, Optional

from .errors import ClientClosedError, SubscriptionLost

__all__ = ["Event", "Subscription"]

MAX_QUEUED = 1000

#: notification method -> event kind
KINDS = {
    "notifications/tools/list_changed": "tools_changed",
    "notifications/prompts/list_changed": "prompts_changed",
    "notifications/resources/list_changed": "resources_changed",
    "notifications/resources/updated": "resource_updated",
}
_END = object()


class Event(NamedTuple):
    """One change: ``kind`` is ``tools_changed``, ``prompts_changed``, ``resources_changed`` or
    ``resource_updated`` (then ``uri`` names the resource)."""

    kind: str
    uri: Optional[str] = None


class Subscription:
    """Iterate for events (blocking); ``get(timeout)`` for one; ``close()`` (or ``with``) ends it.

    Ends quietly when the server or ``close()`` ends it; raises ``SubscriptionLost`` when the
    stream broke. ``acknowledged`` is the filter the server honoured (2026 era), once known.
    """

    def __init__(self, wanted: Dict[str, Any], on_event: Optional[Callable[[Event], Any]],
                 closer: Callable[["Subscription"], None]) -> None:
        self.wanted = wanted
        self.acknowledged: Optional[Dict[str, Any]] = None
        self.dropped = 0
        self._on_event = on_event
        self._closer = closer
        self._queue: Deque[Any] = collections.deque()
        self._cond = threading.Condition()
        self._error: Optional[BaseException] = None
        self._ended = False
        self.subscription_id: Any = None

    # --- fed by the client (notification thread / reader thread) ---------------------------------

    def deliver(self, event: Event) -> None:
        with self._cond:
            if self._ended:
                return
            if len(self._queue) >= MAX_QUEUED:
                self._queue.popleft()
                self.dropped += 1
            self._queue.append(event)
            self._cond.notify_all()
        if self._on_event is not None:
            self._on_event(event)

    def acknowledge(self, honoured: Any) -> None:
        with self._cond:
            self.acknowledged = honoured if isinstance(honoured, dict) else {}
            self._cond.notify_all()

    def end(self, error: Optional[BaseException] = None) -> None:
        with self._cond:
            if self._ended:
                return
            self._ended = True
            self._error = error
            self._queue.append(_END)
            self._cond.notify_all()

    # --- the user's side --------------------------------------------------------------------------

    def get(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event; None after ``timeout`` seconds or once the subscription ended quietly;
        ``SubscriptionLost`` if it broke."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._queue, timeout):
                return None
            item = self._queue[0]
            if item is _END:
                if self._error is not None:
                    raise self._error
                return None
            self._queue.popleft()
            return item

    def wait_acknowledged(self, timeout: Optional[float] = None) -> bool:
        """True once the server acknowledged the filter (always True in the handshake era)."""
        with self._cond:
            return self._cond.wait_for(lambda: self.acknowledged is not None or self._ended, timeout) \
                and self.acknowledged is not None

    def __iter__(self) -> Iterator[Event]:
        while True:
            event = self.get()
            if event is None:
                return
            yield event

    @property
    def closed(self) -> bool:
        return self._ended

    def close(self) -> None:
        """End the subscription (idempotent; any thread)."""
        if not self._ended:
            self._closer(self)
        self.end()

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Subscription {self.wanted} {'ended' if self._ended else 'open'}>"


def filter_params(tools: bool, prompts: bool, resources: bool, resource_uris: List[str]) -> Dict[str, Any]:
    wanted: Dict[str, Any] = {}
    if tools:
        wanted["toolsListChanged"] = True
    if prompts:
        wanted["promptsListChanged"] = True
    if resources:
        wanted["resourcesListChanged"] = True
    if resource_uris:
        wanted["resourceSubscriptions"] = list(resource_uris)
    return wanted


def matches(wanted: Dict[str, Any], event: Event) -> bool:
    """Whether a handshake-era notification is one this subscription asked for."""
    if event.kind == "resource_updated":
        return event.uri in (wanted.get("resourceSubscriptions") or [])
    flag = {"tools_changed": "toolsListChanged", "prompts_changed": "promptsListChanged",
            "resources_changed": "resourcesListChanged"}[event.kind]
    return bool(wanted.get(flag))


def ended_by(exc: Optional[BaseException]) -> Optional[BaseException]:
    """The error a finished listen request leaves the user: None for a quiet end."""
    if exc is None or isinstance(exc, ClientClosedError):
        return None
    from concurrent.futures import CancelledError

    if isinstance(exc, CancelledError):
        return None
    lost = SubscriptionLost(f"the subscription ended unexpectedly: {exc}")
    lost.__cause__ = exc
    return lost
