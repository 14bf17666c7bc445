"""``Task``: the state of a task, as ``tasks/get`` reports it (the 2025-11-25 tasks and the
Tasks extension both). Loaded on first use (``mcpclient.types`` names it lazily)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import ProtocolError
from ._base import _SLOTS, Raw, _opt, _Value

__all__ = ["TERMINAL", "Task"]

TERMINAL = frozenset(("completed", "failed", "cancelled"))


def _number(raw: Raw, key: str) -> Optional[int]:
    """A duration in milliseconds: a non-negative number (a float is rounded), else None."""
    value: Any = raw.get(key)
    if type(value) in (int, float) and 0 <= value < float("inf"):  # (NaN compares false)
        return int(value)
    return None


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Task(_Value):
    """The state of a task (``tasks/get``): ``status`` is ``working``, ``input_required``,
    ``completed``, ``failed`` or ``cancelled``. Times are the server's ISO 8601 strings; ``ttl``
    and ``poll_interval`` are milliseconds (the Tasks extension's ``ttlMs``/``pollIntervalMs``,
    2025-11-25's ``ttl``/``pollInterval``, or drafts' ``ttlSeconds``/``pollIntervalMilliseconds``). The extension's ``tasks/get`` also carries, by
    status, ``result`` (the ``CallToolResult``), ``error`` (a JSON-RPC error object) and
    ``input_requests`` (key -> ``{method, params}``), kept here raw."""

    task_id: str
    status: str
    status_message: Optional[str] = None
    created_at: Optional[str] = None
    last_updated_at: Optional[str] = None
    ttl: Optional[int] = None
    poll_interval: Optional[int] = None
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)
    result: Optional[Raw] = field(default=None, repr=False, compare=False)
    error: Optional[Raw] = field(default=None, repr=False, compare=False)
    input_requests: Optional[Raw] = field(default=None, repr=False, compare=False)

    @property
    def is_terminal(self) -> bool:
        """True once the task is ``completed``, ``failed`` or ``cancelled`` (its status will not change)."""
        return self.status in TERMINAL

    @classmethod
    def from_wire(cls, raw: object) -> "Task":
        """Build a ``Task`` from its wire dict.

        Raises ``ProtocolError`` if ``taskId`` or ``status`` is missing or not a string.
        """
        if not isinstance(raw, dict) or not isinstance(raw.get("taskId"), str) or not isinstance(raw.get("status"), str):
            raise ProtocolError("task: expected an object with string 'taskId' and 'status'")
        what = "task"  # a wrong-typed optional field is dropped (types.py), never met later in arithmetic
        return cls(str(raw["taskId"]), str(raw["status"]), _opt(raw, "statusMessage", str, what),
                   _opt(raw, "createdAt", str, what), _opt(raw, "lastUpdatedAt", str, what),
                   _first(raw, _TTL), _first(raw, _POLL_INTERVAL),
                   _opt(raw, "_meta", dict, what), raw, _opt(raw, "result", dict, what), _opt(raw, "error", dict, what),
                   _opt(raw, "inputRequests", dict, what))


#: Where a task's durations are, in milliseconds, best first: the Tasks extension's final
#: spelling, 2025-11-25's, and drafts' that servers still send (key, factor to milliseconds).
#: (A draft's ``ttl`` in seconds cannot be told from 2025-11-25's in milliseconds: read as the latter.)
_TTL = (("ttlMs", 1), ("ttl", 1), ("ttlSeconds", 1000))
_POLL_INTERVAL = (("pollIntervalMs", 1), ("pollInterval", 1), ("pollIntervalMilliseconds", 1))


def _first(raw: Raw, keys: Any) -> Optional[int]:
    for key, factor in keys:
        value = _number(raw, key)
        if value is not None:
            return value * factor
    return None
