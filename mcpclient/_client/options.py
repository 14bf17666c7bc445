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
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Union, cast

from .._engine.deadline import check_timeout
from ..protocol.spec import era_setting
from .responder import Responder
from .server_text import TextLimit

if TYPE_CHECKING:
    from ..extensions.registry import Registry
    from ..policies.handlers import Handlers
    from ..policies.timeout import Limits, Timeout
    from ..policies.reconnect import Keepalive, Reconnect
    from ..policies.tracing import Tracing
    from ..transports.base import Transport

__all__ = ["Options", "Settings", "client_identity"]


class Settings:
    """How a client's calls behave: its ``Timeout`` and ``Limits``, and ``validate_output``
    (made with the core, from the checked ``Options``)."""

    __slots__ = ("timeout", "limits", "validate_output")

    def __init__(self, timeout: "Timeout", limits: "Limits", validate_output: Union[bool, str]) -> None:
        self.timeout = timeout
        self.limits = limits
        self.validate_output = validate_output


def _given(value: Any, name: str, kind: str) -> Any:
    """``value`` if it is the policy value ``kind`` (``Limits``, ``Handlers``) or None, else
    ``TypeError``. Its class is imported only for a value given (the caller imported it then):
    ``Client(...)`` with the defaults loads neither it nor ``dataclasses``."""
    if value is None:
        return None
    from .. import policies  # deferred: only for a value given (see above)

    if not isinstance(value, getattr(policies, kind)):
        raise TypeError(f"{name} must be a {kind}, not {type(value).__name__}")
    return value


def client_identity(info: Any) -> Dict[str, Any]:
    """``Client(client_info=)`` as the wire's ``Implementation`` dict."""
    if isinstance(info, Mapping):
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

    def __init__(self, transport: Transport, *, timeout: Any, protocol: str, limits: Optional[Limits],
                 handlers: Optional[Handlers], reconnect: Any, keepalive: Any, extensions: Any, tracing: Any,
                 validate_output: Union[bool, str], cache: bool, capabilities: Optional[Mapping[str, object]],
                 client_info: Any) -> None:
        self.transport = transport
        if isinstance(timeout, (int, float)) or timeout is None:
            check_timeout(timeout)
        else:
            _given(timeout, "timeout", "Timeout")
        self.timeout = timeout
        self.limits: Optional[Limits] = _given(limits, "limits", "Limits")
        handlers = _given(handlers, "handlers", "Handlers")
        if validate_output not in (True, False, "listed"):
            raise ValueError(f"validate_output must be True, False or 'listed', not {validate_output!r}")
        self.validate_output = validate_output
        if not isinstance(cache, bool):
            raise TypeError("cache must be True or False")
        #: ``Tracing(...)`` asked for, or None (automatic, ``tracing=None``, is decided at connect()).
        self.tracing: Optional[Tracing] = None
        # Automatic tracing (tracing=None) is decided at connect(): on only once the application
        # uses OpenTelemetry (has imported it), so that it costs nothing otherwise; it goes
        # quietly off if the package cannot be loaded.
        self.tracing_auto = tracing is None
        if tracing is not None and tracing is not False:
            from ..policies.tracing import wants_tracing  # deferred: import cost (a dataclass)

            self.tracing = wants_tracing(tracing)
        if (reconnect is not None and reconnect is not False) or keepalive is not None:
            from ..policies.reconnect import Keepalive, Reconnect  # deferred: import cost; only clients that use them

            reconnect, keepalive = Reconnect.of(reconnect), Keepalive.of(keepalive)
        self.reconnect: Optional[Reconnect] = reconnect or None
        self.keepalive: Optional[Keepalive] = keepalive
        self.registry: Optional[Registry] = None
        if isinstance(capabilities, Mapping) and not isinstance(capabilities, dict):
            capabilities = dict(capabilities)
        given_capabilities = cast(Optional[Dict[str, Any]], capabilities)  # checked by the registry and the responder
        if extensions is not None:
            from ..extensions.base import TASKS  # deferred: import cost; only clients that declare one
            from ..extensions.registry import build_registry

            self.registry = build_registry(extensions, given_capabilities, {TASKS: _tasks_extension})
        given = handlers if handlers is not None else _NO_HANDLERS
        workers, server_text = (4, 8192) if limits is None else (limits.workers, limits.server_text)
        self.responder = Responder(given.sampling, given.elicitation, given.elicitation_modes, given.roots,
                                   given_capabilities, given.task_requests, transport.info.instance, workers,
                                   self.registry.capabilities() if self.registry is not None else None)
        self.text = TextLimit(server_text, transport.info.name)  # of the instructions and tool descriptions
        era_setting(protocol)  # (checked now; the connector reads it again)
        self.protocol = protocol
        self.client_info = client_identity(client_info)
        self.cache = cache
        self.on_notification = given.on_notification
        self.on_log = given.on_log
        self.on_reconnect = given.on_reconnect
        self.server_log = logging.getLogger(f"mcpclient.server.{transport.info.name}")


class _NoHandlers:
    """``Handlers()``'s fields, without loading its class (see ``_given``)."""

    sampling = elicitation = roots = on_log = on_notification = on_reconnect = None
    elicitation_modes = ("form",)
    task_requests = False


_NO_HANDLERS = _NoHandlers()


def _tasks_extension(settings: Dict[str, Any]) -> Any:
    """``Client(extensions={TASKS: settings})``: the Tasks extension, its options from ``settings``."""
    from ..extensions.tasks.extension import TasksExtension  # deferred: import cost; only clients that declare TASKS

    return TasksExtension.from_settings(settings)
