"""Routing of server notifications: logs, list changes, resource updates, finished elicitations.

The engine hands every notification to ``NotificationRouter.handle`` on the connection's ordered
notification thread (``mcpclient-<n>-notify``). It feeds ``listen()`` subscriptions (the one way
to follow changes), turns log messages into ``on_log`` calls or Python log records, forgets
cached results and tools a change made stale, and wakes ``wait_for_elicitation``.
``on_notification`` gets every notification last.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Protocol

from ..errors import ClientClosedError

if TYPE_CHECKING:
    from ..policies.handlers import LogHandler, NotificationHandler

__all__ = ["ElicitationTracker", "NotificationOwner", "NotificationRouter"]

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


_PYTHON_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
                  "warning": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL,
                  "alert": logging.CRITICAL, "emergency": logging.CRITICAL}

class NotificationOwner(Protocol):
    """What the router asks of the client it belongs to (``Channel``)."""

    def invalidate(self, kind: str, uri: Optional[str] = None) -> None:
        """Forget what a change of ``kind`` (or of resource ``uri``) made stale."""

    def route(self, method: str, params: Dict[str, Any]) -> None:
        """Feed the subscriptions (``listen()``)."""


class NotificationRouter:
    """One client's notification handling (see the module docstring).

    Args:
        server_log: the logger server log messages go to without ``on_log``.
        owner: the client's channel (invalidation, subscriptions).
        on_notification / on_log: the user's callbacks (``Handlers``).
    """

    def __init__(self, server_log: logging.Logger, owner: NotificationOwner, *,
                 on_notification: Optional[NotificationHandler], on_log: Optional[LogHandler]) -> None:
        self.server_log = server_log
        self._owner = owner
        self._on_notification = on_notification
        self._on_log = on_log
        self.elicitations = ElicitationTracker()
        #: The declared extensions' notification handlers: ``(method, params)``, or None.
        self.extensions: Optional[Callable[[str, Dict[str, Any]], Any]] = None

    def forked(self) -> None:
        """In a forked child (at-fork hook): new locks, the old ones may be held by parent threads."""
        self.elicitations._cond = threading.Condition()

    def handle(self, method: str, params: Dict[str, Any]) -> None:
        """One notification (notification thread)."""
        try:
            self._owner.route(method, params)
            if self.extensions is not None:
                self.extensions(method, params)
            if method == "notifications/message":
                self._log(params)
            else:
                self._typed(method, params)
        except BaseException:  # one failing callback (sys.exit() too) must not silence on_notification
            log.exception("callback for %s failed", method)
        callback = self._on_notification
        if callback is not None:
            callback(method, params)

    def _typed(self, method: str, params: Dict[str, Any]) -> None:
        kind = LIST_CHANGED.get(method)
        if kind is not None:
            self._owner.invalidate(kind)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str):
                self._owner.invalidate("resources/read", uri)
        elif method == "notifications/elicitation/complete":
            self.elicitations.complete(params.get("elicitationId"))

    def _log(self, params: Dict[str, Any]) -> None:
        level = params.get("level") if isinstance(params.get("level"), str) else "info"
        logger_name = params.get("logger") if isinstance(params.get("logger"), str) else None
        data = params.get("data")
        if self._on_log is not None:
            self._on_log(level, logger_name, data)
            return
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=repr)
        prefix = f"[{logger_name}] " if logger_name else ""
        self.server_log.log(_PYTHON_LEVELS.get(level, logging.INFO), "%s%s", prefix, text)  # type: ignore[arg-type]
