"""What ``Client(...)`` takes, checked: each argument a ``TypeError``/``ValueError`` naming it,
before anything starts, without loading what a value the caller did not give would need.

A ``Timeout``, ``Limits`` or ``Handlers`` the caller made is used as it is. Left out (or a
timeout given as seconds), the client reads the same fields from a plain stand-in here instead:
a frozen dataclass costs about 1 ms to define on Python 3.11 (``dataclasses`` compiles its
methods), which is most of what ``Timeout`` and ``Limits`` would add to a one-shot call
(benchmarks/cold.py). tests/client/test_settings.py holds each stand-in to its class's fields."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional

from .. import policies, types as _types
from .._engine.deadline import check_timeout
from .._util.sentinel import DEFAULT_INPUT_ROUNDS, DEFAULT_MAX_PAGES, DEFAULT_PROBE, DEFAULT_SERVER_TEXT, DEFAULT_WORKERS

if TYPE_CHECKING:
    from ..extensions.registry import Registry

__all__ = ["DEFAULT_LIMITS", "NO_HANDLERS", "Seconds", "checked_kind", "checked_timeout", "client_identity",
           "declared_extensions", "extension_registry"]


def checked_timeout(value: Any) -> Any:
    """A ``timeout=``: seconds or None (checked as they are), or a ``Timeout`` the caller made."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        check_timeout(value)
        return value
    return checked_kind(value, "timeout", policies.Timeout)


def checked_kind(value: Any, name: str, kind: type) -> Any:
    """``value`` if it is a ``kind`` (``Limits``, ``Handlers``) or None, else ``TypeError``."""
    if value is not None and not isinstance(value, kind):
        raise TypeError(f"{name} must be a {kind.__name__}, not {type(value).__name__}")
    return value


class _NoHandlers:
    """``Handlers()``'s fields, without loading its class (``Client(...)`` without handlers)."""

    sampling = elicitation = roots = on_log = on_notification = on_reconnect = None
    elicitation_modes = ("form",)
    task_requests = False


NO_HANDLERS = _NoHandlers()


class _DefaultLimits:
    """``Limits()``'s fields, without loading its class (``Client(...)`` without ``limits=``)."""

    workers = DEFAULT_WORKERS
    pages = DEFAULT_MAX_PAGES
    input_rounds = DEFAULT_INPUT_ROUNDS
    server_text: Optional[int] = DEFAULT_SERVER_TEXT


DEFAULT_LIMITS = _DefaultLimits()


class Seconds:
    """``Timeout(seconds)``'s fields, without loading its class (``Client(timeout=30)``, or
    ``timeout=`` left out): ``call`` and ``connect`` are the seconds (``None``: no limit)."""

    __slots__ = ("call", "connect")
    probe = DEFAULT_PROBE
    reset_on_progress = False
    total: Optional[float] = None

    def __init__(self, seconds: Optional[float]) -> None:
        self.call = self.connect = None if seconds is None else float(seconds)


def client_identity(info: Any) -> Dict[str, Any]:
    """``Client(client_info=)`` as the wire's ``Implementation`` dict."""
    if isinstance(info, Mapping):
        return dict(info)
    if not isinstance(info, (tuple, list)) and isinstance(info, _types.Implementation):  # (made by the caller)
        return dict(info.raw) or {"name": info.name, "version": info.version}
    name, version = info
    return {"name": str(name), "version": str(version)}


def extension_registry(extensions: Any, capabilities: Optional[Dict[str, Any]]) -> Optional[Registry]:
    """``Client(extensions=)``'s registry (None: no extension declared)."""
    if extensions is None:
        return None
    from ..extensions.base import TASKS  # extensions: only clients that declare one load them
    from ..extensions.registry import build_registry

    return build_registry(extensions, capabilities, {TASKS: _tasks_extension})


def _tasks_extension(settings: Dict[str, Any]) -> Any:
    """``Client(extensions={TASKS: settings})``: the Tasks extension, its options from ``settings``."""
    from ..extensions.tasks.extension import TasksExtension  # extension: only clients that declare TASKS

    return TasksExtension.from_settings(settings)


def declared_extensions(capabilities: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The ``extensions`` of a capabilities object: id -> settings (entries that are no object left out)."""
    found = capabilities.get("extensions")
    return {k: dict(v) for k, v in found.items() if isinstance(v, dict)} if isinstance(found, dict) else {}
