"""Typed routing of server notifications: list changes, resource updates, finished elicitations.

``Client`` hands every notification to ``Watchers.route`` on the connection's ordered
notification thread. List changes can re-fetch the changed list and pass it to the user's
callback; that fetch is several requests, so it runs on a separate single ``refresh`` thread
(the notification thread must stay free to deliver the answers it waits for). Bursts are
coalesced: one refresh per list is queued at most, and callbacks run one at a time, in order.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Optional

from ._threads import Lane
from .errors import ClientClosedError

__all__ = ["ElicitationTracker", "Watchers"]

log = logging.getLogger("mcpclient")

LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}

_REMEMBERED = 1000  # finished elicitation ids kept so a late waiter still sees them
_LIVENESS = 1.0  # seconds between checks that the connection is still there, while waiting


class ElicitationTracker:
    """Remembers which URL elicitations the server reported complete, so threads can wait for one."""

    def __init__(self) -> None:
        self._done: "OrderedDict[str, None]" = OrderedDict()
        self._cond = threading.Condition()
        self._closed = False

    def complete(self, elicitation_id: Any) -> None:
        if not isinstance(elicitation_id, str):
            return
        with self._cond:
            self._done[elicitation_id] = None
            while len(self._done) > _REMEMBERED:
                self._done.popitem(last=False)
            self._cond.notify_all()

    def wait(self, elicitation_id: str, timeout: Optional[float], lost: Callable[[], bool]) -> bool:
        """True once ``elicitation_id`` is complete, False after ``timeout``; ``ClientClosedError``
        when the client closes or ``lost()`` (the connection ended; checked every second)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while elicitation_id not in self._done:
                if self._closed or lost():
                    raise ClientClosedError("the client closed before the elicitation completed")
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(_LIVENESS if left is None else min(left, _LIVENESS))
            return True

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class Watchers:
    """The user's typed notification callbacks, and the refresh thread that feeds them lists.

    ``on_changed[kind]`` (kind ``tools``/``prompts``/``resources``) is called with the freshly
    fetched list when the server reports that list changed; ``fetch[kind]`` fetches it.
    """

    def __init__(self, instance: int, on_changed: Dict[str, Optional[Callable[[Any], Any]]],
                 fetch: Dict[str, Callable[[], Any]], on_resource_updated: Optional[Callable[[str], Any]],
                 on_invalidate: Callable[..., None]) -> None:
        self._instance = instance
        self._on_changed = {kind: cb for kind, cb in on_changed.items() if cb is not None}
        self._fetch = fetch
        self._on_resource_updated = on_resource_updated
        self._on_invalidate = on_invalidate
        self._queued: Dict[str, bool] = {}
        self._lock = threading.Lock()
        self._refresher: Optional[Lane] = None
        self._closed = False
        self.elicitations = ElicitationTracker()

    def route(self, method: str, params: Dict[str, Any]) -> None:
        """Act on one notification (on the notification thread)."""
        kind = LIST_CHANGED.get(method)
        if kind is not None:
            self._on_invalidate(kind)
            if kind in self._on_changed:
                self._schedule(kind)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str):
                self._on_invalidate("resources/read", uri)
                if self._on_resource_updated is not None:
                    self._on_resource_updated(uri)
        elif method == "notifications/elicitation/complete":
            self.elicitations.complete(params.get("elicitationId"))

    def _schedule(self, kind: str) -> None:
        with self._lock:
            if self._closed or self._queued.get(kind):
                return  # a refresh that has not started yet will see this change too
            self._queued[kind] = True
            if self._refresher is None:
                self._refresher = Lane(f"mcpclient-{self._instance}-refresh", 1, -1)
            refresher = self._refresher
        refresher.try_submit(f"on_{kind}_changed callback", self._refresh, kind)  # errors are logged

    def _refresh(self, kind: str) -> None:
        with self._lock:
            self._queued[kind] = False  # from here on, a new change queues another refresh
            if self._closed:
                return
        try:
            items = self._fetch[kind]()
        except Exception as exc:
            if not self._closed:  # after close() the failure is expected, not worth a warning
                log.warning("could not refresh the %s list after the server changed it: %s", kind, exc)
            return
        self._on_changed[kind](items)

    def close(self, deadline: float) -> None:
        with self._lock:
            self._closed = True
            refresher, self._refresher = self._refresher, None
        if refresher is not None:
            refresher.shutdown(max(deadline, time.monotonic()))

    def threads(self) -> list:
        refresher = self._refresher
        return refresher.threads() if refresher is not None else []
