"""``Event`` and ``Subscription``: the change events ``Client.listen()`` delivers, as the user sees
them. A ``Subscription`` is a bounded queue of events (``MAX_QUEUED``: a consumer that stops
reading loses the oldest, counted in ``dropped``, never memory) that ends quietly or with
``SubscriptionLost``; ``subscriptions.SubscriptionRouter`` feeds it from the wire.
"""
from __future__ import annotations

import collections
import logging
import threading
from concurrent.futures import CancelledError
from dataclasses import dataclass
from typing import Any, Callable, Deque, Dict, Iterator, Optional

from ..errors import ClientClosedError, SubscriptionLost
from .._engine.futures import CallFuture
from ..types._base import _SLOTS, _Value
from ..types._json import JSONObject

__all__ = ["Event", "KINDS", "MAX_QUEUED", "Subscription", "ended_by", "event_of", "matches"]

log = logging.getLogger("mcpclient")

MAX_QUEUED = 1000

#: notification method -> event kind
KINDS = {
    "notifications/tools/list_changed": "tools_changed",
    "notifications/prompts/list_changed": "prompts_changed",
    "notifications/resources/list_changed": "resources_changed",
    "notifications/resources/updated": "resource_updated",
}
_FLAGS = {"tools_changed": "toolsListChanged", "prompts_changed": "promptsListChanged",
          "resources_changed": "resourcesListChanged"}
_END = object()


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Event(_Value):
    """One change: ``kind`` is ``tools_changed``, ``prompts_changed``, ``resources_changed`` or
    ``resource_updated`` (then ``uri`` names the resource)."""

    kind: str
    uri: Optional[str] = None


class Subscription:
    """Iterate for events (blocking); ``get(timeout)`` for one; ``close()`` (or ``with``) ends it.

    Ends quietly when the server or ``close()`` ends it; raises ``SubscriptionLost`` when the
    stream broke. ``acknowledged`` is the filter the server honoured (2026 era), once known.
    ``on_event`` runs on the notification thread.
    """

    def __init__(self, wanted: JSONObject, on_event: Optional[Callable[[Event], object]],
                 closer: Callable[["Subscription"], None]) -> None:
        self.wanted: Dict[str, Any] = wanted
        self.acknowledged: Optional[Dict[str, Any]] = None
        self.dropped = 0
        self.relistens = 0  # its stream broke and it was sent again, since the last event (router)
        #: the ``subscriptions/listen`` request's id (2026 era), else None
        self.subscription_id: Any = None
        #: the ``subscriptions/listen`` request (2026 era), else None
        self.request: Optional[CallFuture] = None
        self._on_event = on_event
        self._closer = closer
        self._queue: Deque[Any] = collections.deque()
        self._cond = threading.Condition()
        self._error: Optional[BaseException] = None
        self._ended = False
        self._carrier = False  # the router's listen for subscribe_resource URIs (restored from them)
        #: ``(acknowledged: bool, error)`` once, when the server acknowledged it or it ended first
        #: (the router's hook for subscribe_resource; runs on the reader thread, must not block).
        self.on_settled: Optional[Callable[[bool, Optional[BaseException]], None]] = None

    # --- fed by the router (notification thread / reader thread) ---------------------------------

    def deliver(self, event: Event) -> None:
        """Queue an event for the reader of this subscription (called by the client's router; drops the oldest past ``MAX_QUEUED``). Never raises."""
        self.relistens = 0
        with self._cond:
            if self._ended:
                return
            if len(self._queue) >= MAX_QUEUED:
                self._queue.popleft()
                self.dropped += 1
            self._queue.append(event)
            self._cond.notify_all()
        if self._on_event is not None:
            try:
                self._on_event(event)
            except BaseException:  # (SystemExit too) the other subscriptions, the cache and on_notification still get it
                log.exception("on_event callback failed")

    def acknowledge(self, honoured: object) -> None:
        """Record the server's acknowledgement of the filter (called by the client's router). Never raises."""
        with self._cond:
            first = self.acknowledged is None and not self._ended
            self.acknowledged = honoured if isinstance(honoured, dict) else {}
            self._cond.notify_all()
        if first:
            self._settled(True, None)

    def end(self, error: Optional[BaseException] = None) -> None:
        """End the subscription: readers get ``None``, or ``error`` (e.g. ``SubscriptionLost``) if given. Called by the client's router; idempotent."""
        with self._cond:
            if self._ended:
                return
            unacknowledged = self.acknowledged is None
            self._ended = True
            self._error = error
            self._queue.append(_END)
            self._cond.notify_all()
        if unacknowledged:
            self._settled(False, error)

    def _settled(self, acknowledged: bool, error: Optional[BaseException]) -> None:
        hook = self.on_settled
        if hook is not None:
            hook(acknowledged, error)

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
            return item  # type: ignore[no-any-return]

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
        """True once the subscription has ended (closed, or its stream finished or broke)."""
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


def matches(wanted: Dict[str, Any], event: Event) -> bool:
    """Whether a handshake-era notification is one this subscription asked for."""
    if event.kind == "resource_updated":
        return event.uri in (wanted.get("resourceSubscriptions") or [])
    return bool(wanted.get(_FLAGS[event.kind]))


def ended_by(exc: Optional[BaseException]) -> Optional[BaseException]:
    """The error a finished listen request leaves the user: None for a quiet end."""
    if exc is None or isinstance(exc, (ClientClosedError, CancelledError)):
        return None
    lost = SubscriptionLost(f"the subscription ended unexpectedly: {exc}")
    lost.__cause__ = exc
    return lost


def event_of(method: str, params: Dict[str, Any]) -> Event:
    uri = params.get("uri")
    return Event(KINDS[method], uri if isinstance(uri, str) else None)
