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
    and ``poll_interval`` are milliseconds (read from ``ttl``/``pollInterval``, or the Tasks
    extension's ``ttlMs``/``pollIntervalMs``). The extension's ``tasks/get`` also carries, by
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
    def from_wire(cls, raw: Any) -> "Task":
        """Build a ``Task`` from its wire dict.

        Raises ``ProtocolError`` if ``taskId`` or ``status`` is missing or not a string.
        """
        if not isinstance(raw, dict) or not isinstance(raw.get("taskId"), str) or not isinstance(raw.get("status"), str):
            raise ProtocolError("task: expected an object with string 'taskId' and 'status'")
        what = "task"  # a wrong-typed optional field is dropped (types.py), never met later in arithmetic
        ttl = _number(raw, "ttlMs")
        poll = _number(raw, "pollIntervalMs")
        return cls(raw["taskId"], raw["status"], _opt(raw, "statusMessage", str, what),
                   _opt(raw, "createdAt", str, what), _opt(raw, "lastUpdatedAt", str, what),
                   _number(raw, "ttl") if ttl is None else ttl, _number(raw, "pollInterval") if poll is None else poll,
                   _opt(raw, "_meta", dict, what), raw, _opt(raw, "result", dict, what), _opt(raw, "error", dict, what),
                   _opt(raw, "inputRequests", dict, what))
