"""The registry a ``Client`` keeps of the extensions it declares (``Client(extensions=...)``):
the declaration, the server requests and notifications they handle, the ``resultType`` values
they claim, and the contexts they work through. The façade reaches extensions only through it.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Union

from ..protocol.eras import Era, Resolver
from ..protocol.stateless import TASK_EXTENSION_METHODS
from .base import (
    APP_MIME_TYPE, APPS, TASKS, Extension, ExtensionContext, ExtensionOwner, Raw, _Declared, check_id, require,
    split_value,
)

if TYPE_CHECKING:
    from .._engine.deadline import Deadline
    from .._engine.futures import CallFuture

__all__ = ["ExtensionsSetting", "Registry", "build_registry"]


class Registry:
    """A client's extensions: the declaration, and the tables the core consults.

    Args:
        extensions: id -> ``Extension`` (ids checked, each instance's ``id`` equal to its key).
        capabilities: the ``capabilities=`` the user passed (an id also there is a conflict).
    """

    def __init__(self, extensions: Mapping[str, Extension], capabilities: Optional[Mapping[str, Any]]) -> None:
        given = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
        self.extensions: Dict[str, Extension] = {}
        self.declared: Dict[str, Dict[str, Any]] = {}
        self.requests: Dict[str, Callable[[Dict[str, Any]], Any]] = {}
        self.notifications: Dict[str, List[Callable[[Dict[str, Any]], None]]] = {}
        self._claims: Dict[str, Dict[str, Extension]] = {}  # method -> kind -> extension
        for key, ext in extensions.items():
            check_id(key)
            if not isinstance(ext, Extension):
                raise TypeError(f"extensions[{key!r}] must be a settings dict, True or an Extension")
            if ext.id != key:
                raise ValueError(f"extensions[{key!r}] is an Extension whose id is {ext.id!r}")
            if isinstance(given, Mapping) and key in given:
                raise ValueError(f"extension {key!r} is declared twice: in extensions= and in capabilities=")
            if ext._attached:  # its bind() would point it at the last client
                raise ValueError(f"extensions[{key!r}]: this Extension instance was given to another Client; an "
                                 "instance serves one Client (make one per Client, or pass its settings dict)")
            settings = ext.settings()
            if not isinstance(settings, dict):
                raise TypeError(f"{type(ext).__name__}.settings() must return a dict")
            self.extensions[key], self.declared[key] = ext, settings
            for method, handler in dict(ext.request_handlers()).items():
                if method in self.requests:
                    raise ValueError(f"two extensions handle the server request {method!r}")
                self.requests[method] = handler
            for method, listener in dict(ext.notification_handlers()).items():
                self.notifications.setdefault(method, []).append(listener)
            for kind, methods in dict(ext.result_types()).items():
                if kind in ("complete", "input_required"):
                    raise ValueError(f"{key}: resultType {kind!r} belongs to the core protocol")
                for method in methods:
                    claimed = self._claims.setdefault(method, {})
                    if kind in claimed:
                        raise ValueError(f"resultType {kind!r} of {method} is claimed by {claimed[kind].id} and {key}")
                    claimed[kind] = ext
        self._contexts: Dict[str, ExtensionContext] = {}
        #: ``close()`` ran (the client closed).
        self.closed = False

    def capabilities(self) -> Dict[str, Any]:
        """What to merge into the declared ``ClientCapabilities``: ``{"extensions": {...}}``."""
        return {"extensions": {key: dict(settings) for key, settings in self.declared.items()}} if self.declared else {}

    def attach(self, owner: "ExtensionOwner") -> None:
        """Give each extension its context on ``owner`` (the client does this once, when
        nothing of its construction is left to fail): the instances are its now."""
        for key, ext in self.extensions.items():
            self._contexts[key] = ExtensionContext(key, self.declared[key], owner)
            ext._attached = True

    def extend(self, era: Era, sends_headers: bool) -> None:
        """A new era (each connect): the claimed result types, and the Tasks extension's routing
        headers over HTTP in the handshake era."""
        era.resolvers = self.resolvers()
        if sends_headers and not era.stateless and TASKS in self.declared:
            era.routed = TASK_EXTENSION_METHODS

    def bind(self) -> None:
        """After each connect: every extension's ``bind(ctx)``. One that raises is logged and
        keeps neither the others nor the connect (its ``with`` block, a reconnect) from going on."""
        for key, ext in self.extensions.items():
            try:
                ext.bind(self._contexts[key])
            except Exception:
                logging.getLogger("mcpclient").exception("extension %s: bind() failed", key)

    def context(self, key: str) -> Optional[ExtensionContext]:
        """The context of extension ``key`` (None: not declared)."""
        return self._contexts.get(key)

    def resolvers(self) -> Dict[str, Dict[str, Resolver]]:
        """method -> kind -> the claiming extension's ``resolve`` bound to its context (for the
        eras' result checks)."""
        table: Dict[str, Dict[str, Resolver]] = {}
        for method, kinds in self._claims.items():
            for kind, ext in kinds.items():
                table.setdefault(method, {})[kind] = _bound(ext, self._contexts[ext.id])
        return table

    def call_future(self, method: str, params: Raw, transform: Callable[[Any], Any], deadline: "Deadline",
                    on_progress: Optional[Callable[..., Any]]) -> Optional["CallFuture[Any]"]:
        """The future of a call that a claiming extension takes over, or None."""
        for ext in self._claims.get(method, {}).values():
            future = ext.call_future(self._contexts[ext.id], method, params, transform, deadline, on_progress)
            if future is not None:
                return future
        return None

    def wind_down(self, deadline: float) -> None:
        """Every extension's ``wind_down(ctx, deadline)`` (the client is about to close)."""
        for key, ext in self.extensions.items():
            try:
                ext.wind_down(self._contexts[key], deadline)
            except Exception:
                logging.getLogger("mcpclient").exception("extension %s: wind_down() failed", key)

    def close(self) -> None:
        """Every extension's ``close()`` (the client closed), once (``close()`` may come again)."""
        if self.closed:
            return
        self.closed = True
        for ext in self.extensions.values():
            ext.close()

    #: ``require(server_capabilities, id, method)``: the server's settings, or ``CapabilityError``.
    require = staticmethod(require)

    def notify(self, method: str, params: Dict[str, Any]) -> bool:
        """Pass a notification to the extensions that handle it (True if any did); one handler
        that raises is logged and does not keep the others (or the core's handling) from it."""
        handlers = self.notifications.get(method)
        for handler in handlers or ():
            try:
                handler(params)
            except BaseException:  # sys.exit() too: a handler's, not the notification thread's
                logging.getLogger("mcpclient").exception("extension handler for %s failed", method)
        return bool(handlers)


def _bound(ext: Extension, ctx: ExtensionContext) -> Resolver:
    return lambda kind, method, raw: ext.resolve(kind, method, raw, ctx)


#: What ``Client(extensions=...)`` takes: id -> settings dict, ``True`` (``{}``) or an ``Extension``.
ExtensionsSetting = Optional[Mapping[str, Union[Mapping[str, object], bool, Extension]]]


#: ``(settings dict) -> the Extension`` a built-in id with those settings declares.
Builtin = Callable[[Dict[str, Any]], Extension]


def build_registry(extensions: ExtensionsSetting, capabilities: Optional[Dict[str, Any]],
                   builtins: Mapping[str, Builtin]) -> Optional[Registry]:
    """The registry of ``Client(extensions=...)`` (None when nothing is declared). Built-in ids
    get built-in behaviour: ``builtins[id](settings)`` (the client's: ``TASKS`` makes the Tasks
    extension, a dict being its options), ``APPS`` a declaration whose ``mimeTypes`` always
    include ``APP_MIME_TYPE``; other ids with a dict (or ``True``) are declared as they are;
    ``False`` declares nothing. ``ValueError``/``TypeError`` for bad ids or values."""
    if extensions is None:
        return None
    if not isinstance(extensions, Mapping):
        raise TypeError("extensions must be a dict: id -> settings dict, True or an Extension")
    made: Dict[str, Extension] = {}
    for key, value in extensions.items():
        check_id(key)
        if value is False:  # (as tracing=False: said, and not declared)
            continue
        settings, instance = split_value(key, value)
        made[key] = instance if instance is not None else _builtin(key, settings or {}, builtins)
    return Registry(made, capabilities) if made else None


def _builtin(key: str, settings: Dict[str, Any], builtins: Mapping[str, Builtin]) -> Extension:
    """The extension a settings dict declares for ``key`` (see ``build_registry``)."""
    if key in builtins:
        return builtins[key](settings)
    if key == APPS:
        mimes = settings.get("mimeTypes", [])
        if not isinstance(mimes, list) or not all(isinstance(m, str) for m in mimes):
            raise TypeError(f"extensions[{key!r}]['mimeTypes'] must be a list of strings")
        return _Declared(key, {**settings, "mimeTypes": mimes if APP_MIME_TYPE in mimes else [APP_MIME_TYPE, *mimes]})
    return _Declared(key, settings)
