"""``Handlers``: the code of the application's that a client runs for the server.

One value holds them all: the answers to the server's own requests (sampling, elicitation,
roots; declaring one declares its capability) and the callbacks for what the server says
(log messages, any notification) and for the connection (a reconnect). Which thread runs each,
and what it may do there, is the docs' *Thread safety* page; in short, request handlers run on
the client's worker threads and may block, callbacks run in order on its notification thread.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable, Dict, Optional, Sequence, Union

from .._util.sentinel import KEEP, Keep, replaced
from ..types._base import _SLOTS

if TYPE_CHECKING:
    from ..types.handlers import ElicitationHandler, RootsSetting, SamplingHandler

__all__ = ["Handlers", "LogHandler", "NotificationHandler"]

#: ``(level, logger, data)`` for each ``notifications/message`` (``logger`` may be None).
LogHandler = Callable[[str, Optional[str], object], object]
#: ``(method, params)`` for each notification the server sends.
NotificationHandler = Callable[[str, Dict[str, object]], object]

_MODES = frozenset(("form", "url"))


@dataclasses.dataclass(frozen=True, **_SLOTS)
class Handlers:
    """What a client runs for the server. Nothing is declared or called for a field left out.

    Example::

        Client(cmd, handlers=Handlers(
            sampling=ask_my_llm,
            roots=["file:///srv/project"],
            on_log=lambda level, logger, data: print(level, data),
        ))

    Args:
        sampling: ``(CreateMessageRequest) -> CreateMessageResult | dict`` for the server's
            ``sampling/createMessage`` (declares ``sampling``).
        elicitation: ``(ElicitationRequest) -> ElicitationResult | dict`` for
            ``elicitation/create`` (declares ``elicitation``; ``accept_defaults`` is
            ready-made); ``elicitation_modes``: ``("form",)``, ``("url",)`` or both.
        roots: ``Root`` objects or ``file://`` URIs for ``roots/list``, or a callable giving
            them (declares ``roots``; ``Client.set_roots`` replaces them later).
        on_log: ``(level, logger, data)`` for the server's log messages (without it they go to
            the logger ``mcpclient.server.<name>``).
        on_notification: ``(method, params)`` for every notification the server sends.
        on_reconnect: called after a ``Reconnect`` policy opened a new connection.
        task_requests: let the server ask for sampling and elicitation as 2025-11-25 tasks.
    """

    sampling: Optional["SamplingHandler"] = None
    elicitation: Optional["ElicitationHandler"] = None
    elicitation_modes: Sequence[str] = ("form",)
    roots: Optional["RootsSetting"] = dataclasses.field(default=None, hash=False)  # (a list: unhashable)
    on_log: Optional[LogHandler] = None
    on_notification: Optional[NotificationHandler] = None
    on_reconnect: Optional[Callable[[], object]] = None
    task_requests: bool = False

    def __post_init__(self) -> None:
        for name in ("sampling", "elicitation", "on_log", "on_notification", "on_reconnect"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise TypeError(f"Handlers({name}=) must be callable, not {type(value).__name__}")
        modes = self.elicitation_modes
        if isinstance(modes, str) or not modes or not set(modes) <= _MODES:
            raise ValueError(f"Handlers(elicitation_modes=) must be ('form',), ('url',) or both, not {modes!r}")
        object.__setattr__(self, "elicitation_modes", tuple(modes))
        if not isinstance(self.task_requests, bool):
            raise TypeError("Handlers(task_requests=) must be True or False")

    def replace(
        self, *,
        sampling: Union[Optional["SamplingHandler"], Keep] = KEEP,
        elicitation: Union[Optional["ElicitationHandler"], Keep] = KEEP,
        elicitation_modes: Union[Sequence[str], Keep] = KEEP,
        roots: Union[Optional["RootsSetting"], Keep] = KEEP,
        on_log: Union[Optional[LogHandler], Keep] = KEEP,
        on_notification: Union[Optional[NotificationHandler], Keep] = KEEP,
        on_reconnect: Union[Optional[Callable[[], object]], Keep] = KEEP,
        task_requests: Union[bool, Keep] = KEEP,
    ) -> "Handlers":
        """A copy with the given fields changed (the others keep their values)."""
        return replaced(self, {
            "sampling": sampling, "elicitation": elicitation, "elicitation_modes": elicitation_modes,
            "roots": roots, "on_log": on_log, "on_notification": on_notification,
            "on_reconnect": on_reconnect, "task_requests": task_requests,
        })
