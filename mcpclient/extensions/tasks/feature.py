"""``Tasks``: the client's tasks, on an object of their own: ``client.extension(Tasks)``.

It reaches both kinds: the 2025-11-25 tasks of the core protocol (``call_tool`` runs a tool as
one; ``list``) and the Tasks extension (declared with ``Client(extensions={TASKS: {}})``: the
server turns calls into tasks itself, and ``call_tool_future(...).task`` follows one). ``task(id)``
gives a handle for either, from an id saved before a restart.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, List, Mapping, Optional, Protocol

from ..._engine.futures import CallFuture
from ..._util.waiting import wait_for
from ..._util.sentinel import DEFAULT
from ...types._tasks import Task
from ..base import Feature, FeatureOwner
from ...policies.timeout import CallTimeout

if TYPE_CHECKING:
    from ..._engine.deadline import Deadline
    from .core import ToolTask

__all__ = ["Tasks"]


class TasksOwner(FeatureOwner, Protocol):
    """What ``Tasks`` uses of its client, besides what every feature does (``Channel``)."""

    def start_task(self, name: str, arguments: Optional[Mapping[str, object]], raise_on_error: bool,
                   meta: Optional[Mapping[str, object]], task: Any, deadline: "Deadline") -> "ToolTask":
        """Send ``tools/call`` task-augmented; its ``ToolTask``."""

    def resume_task(self, task_id: str) -> "ToolTask":
        """A handle for the task ``task_id``; nothing is sent."""

    def listing(self, method: str, key: str, parse: Callable[[Any], Any], deadline: "Deadline") -> CallFuture[Any]:
        """A whole listing as one call."""


class Tasks(Feature):
    """A client's tasks: ``client.extension(Tasks)``.

    Example::

        tasks = client.extension(Tasks)
        # returns once the server made the task
        task = tasks.call_tool("render", {"scene": 3}, ttl=60_000)
        saved = task.task_id
        ...
        # later, or in another process
        print(tasks.task(saved).result().text)

    ``timeout`` as everywhere: omitted, the client's; ``None``, no limit.
    """

    _owner: TasksOwner

    def call_tool(self, name: str, arguments: Optional[Mapping[str, object]] = None, *, ttl: Optional[int] = None,
                  timeout: CallTimeout = DEFAULT, raise_on_error: bool = False,
                  meta: Optional[Mapping[str, object]] = None) -> "ToolTask":
        """Run a tool as a 2025-11-25 task: the server answers at once with the task, which the
        returned ``ToolTask`` follows (``.status()``, ``.result()``, ``.cancel()``, ``.wait()``).

        Args:
            ttl: how long the server should keep the task and its result, in milliseconds.

        Raises:
            CapabilityError: the server runs no tool calls as tasks, or this tool forbids it.
        """
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0):
            raise ValueError(f"ttl must be a whole number of milliseconds >= 0, or None, not {ttl!r}")
        owner = self._owner
        return owner.start_task(name, arguments, raise_on_error, meta, True if ttl is None else {"ttl": ttl},
                                owner.deadline(timeout))

    def task(self, task_id: str) -> "ToolTask":
        """A handle for a task of this server by id (saved from ``task.task_id`` before a
        restart), nothing sent: the Tasks extension's if both sides declare it, else 2025-11-25's.

        Raises:
            ValueError: the Tasks extension is not declared and the server has no 2025-11-25 tasks.
        """
        return self._owner.resume_task(task_id)

    def list(self, *, timeout: CallTimeout = DEFAULT) -> List[Task]:
        """Every task the server knows of for this client (``tasks/list``, all pages)."""
        owner = self._owner
        return wait_for(owner.listing, "tasks/list", "tasks", Task.from_wire, owner.deadline(timeout))  # type: ignore[no-any-return]
