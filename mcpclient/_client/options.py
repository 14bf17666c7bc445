"""``Options``: ``Client(...)``'s arguments, checked when the client is made, and the parts of
the client that need nothing more than them.

The client's core (``_client.core``: the engine, the protocol layer, the routers) is built from
them on first use, after ``connect()`` has started the transport (``_client.first_use``), so
that a stdio server boots while the engine loads. So this module imports only what the checks
need (``_engine.deadline``, ``protocol.spec``: no session, no futures): a bad argument still
fails at ``Client(...)``, at the cost of the checks alone.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Union

from .._engine.deadline import check_timeout
from ..protocol.spec import era_setting
from .responder import Responder
from .server_text import TextLimit

if TYPE_CHECKING:
    from ..extensions.registry import Registry
    from ..policies.reconnect import Keepalive, Reconnect
    from ..policies.tracing import Tracing
    from ..transports.base import Transport

__all__ = ["Options", "Settings", "client_identity"]


class Settings:
    """How a client's calls behave (``Client(timeout=..., ...)``), checked once.

    ``timeout`` is the default for every ``timeout=`` left out (``None``: no limit); the rest
    are the constructor's keywords of the same names."""

    __slots__ = ("timeout", "reset_timeout_on_progress", "max_total_timeout", "validate_output",
                 "max_input_rounds", "max_pages", "max_workers")

    def __init__(self, timeout: Optional[float], reset_timeout_on_progress: bool, max_total_timeout: Optional[float],
                 validate_output: Union[bool, str], max_input_rounds: int, max_pages: int, max_workers: int) -> None:
        if validate_output not in (True, False, "listed"):
            raise ValueError(f"validate_output must be True, False or 'listed', not {validate_output!r}")
        if not isinstance(max_pages, int) or max_pages < 1:
            raise ValueError(f"max_pages must be a positive number, not {max_pages!r}")
        if not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, not {max_workers!r}")
        self.timeout = check_timeout(timeout)
        self.reset_timeout_on_progress = reset_timeout_on_progress
        self.max_total_timeout = max_total_timeout
        self.validate_output = validate_output
        self.max_input_rounds = max_input_rounds
        self.max_pages = max_pages
        self.max_workers = max_workers


def client_identity(info: Any) -> Dict[str, Any]:
    """``Client(client_info=)`` as the wire's ``Implementation`` dict."""
    if isinstance(info, dict):
        return dict(info)
    if not isinstance(info, tuple):  # (the default is a tuple: only another value loads the types)
        from ..types._implementation import Implementation  # deferred: the types load at connect()

        if isinstance(info, Implementation):
            return dict(info.raw) or {"name": info.name, "version": info.version}
    name, version = info
    return {"name": str(name), "version": str(version)}


class Options:
    """``Client(...)``'s arguments (the names and meanings are ``Client``'s), checked, with what
    is built from them alone: the settings, the responder, the server-text limit, the declared
    extensions' registry, the reconnect and keepalive policies, the tracing wanted."""

    def __init__(self, transport: Transport, *, client_info: Any, protocol: str, timeout: Any,
                 reset_timeout_on_progress: bool, max_total_timeout: Optional[float], sampling_handler: Any,
                 elicitation_handler: Any, elicitation_modes: Sequence[str], roots: Any, capabilities: Any,
                 on_notification: Any, on_log: Any, on_tools_changed: Any, on_prompts_changed: Any,
                 on_resources_changed: Any, on_resource_updated: Any, task_requests: bool, max_workers: int,
                 validate_output: Union[bool, str], probe_timeout: float, max_input_rounds: int, max_pages: int,
                 cache: bool, reconnect: Any, keepalive: Any, on_reconnect: Any, tracing: Any, extensions: Any,
                 max_server_text: Optional[int]) -> None:
        self.transport = transport
        #: ``Tracing(...)`` asked for, or None (automatic, ``tracing=None``, is decided at connect()).
        self.tracing: Optional[Tracing] = None
        # Automatic tracing (tracing=None) is decided at connect(): on only once the application
        # uses OpenTelemetry (has imported it), so that it costs nothing otherwise; it goes
        # quietly off if the package cannot be loaded.
        self.tracing_auto = tracing is None
        if tracing is not None and tracing is not False:
            from ..policies.tracing import wants_tracing  # deferred: import cost (a dataclass)

            self.tracing = wants_tracing(tracing)
        self.settings = Settings(timeout, reset_timeout_on_progress, max_total_timeout, validate_output,
                                 max_input_rounds, max_pages, max_workers)
        if (reconnect is not None and reconnect is not False) or keepalive is not None:
            from ..policies.reconnect import Keepalive, Reconnect  # deferred: import cost; only clients that use them

            reconnect, keepalive = Reconnect.of(reconnect), Keepalive.of(keepalive)
        self.reconnect: Optional[Reconnect] = reconnect or None
        self.keepalive: Optional[Keepalive] = keepalive
        self.registry: Optional[Registry] = None
        if extensions is not None:
            from ..extensions.base import TASKS  # deferred: import cost; only clients that declare one
            from ..extensions.registry import build_registry

            self.registry = build_registry(extensions, capabilities, {TASKS: _tasks_extension})
        self.responder = Responder(sampling_handler, elicitation_handler, elicitation_modes, roots, capabilities,
                                   task_requests, transport.instance, max_workers,
                                   self.registry.capabilities() if self.registry is not None else None)
        self.text = TextLimit(max_server_text, transport.name)  # of the instructions and tool descriptions
        era_setting(protocol)  # (checked now; the connector reads it again)
        self.protocol = protocol
        self.client_info = client_identity(client_info)
        self.probe_timeout = probe_timeout
        self.cache = cache
        self.on_notification = on_notification
        self.on_log = on_log
        self.on_resource_updated = on_resource_updated
        self.on_changed: Dict[str, Optional[Callable[..., Any]]] = {
            "tools": on_tools_changed, "prompts": on_prompts_changed, "resources": on_resources_changed}
        self.on_reconnect = on_reconnect
        self.server_log = logging.getLogger(f"mcpclient.server.{transport.name}")


def _tasks_extension(settings: Dict[str, Any]) -> Any:
    """``Client(extensions={TASKS: settings})``: the Tasks extension, its options from ``settings``."""
    from ..extensions.tasks.extension import TasksExtension  # deferred: import cost; only clients that declare TASKS

    return TasksExtension.from_settings(settings)
