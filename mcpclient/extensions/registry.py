"""Protocol extensions: ids, the ``Extension`` base class, and the registry a ``Client`` keeps.

An extension is negotiated through ``capabilities.extensions`` (id -> settings object; ``{}`` =
supported without settings): the client declares its own (``Client(extensions=...)``) in
``initialize`` and, in the 2026 era, in every request's ``_meta``; the server declares its own in
``initialize``/``server/discover``. Extensions are off by default. An ``Extension`` object adds,
without touching the core, handlers for server requests and notifications and the
``resultType`` values it answers for (e.g. the Tasks extension's ``"task"`` on ``tools/call``).
Every extension request first checks that the server declared the extension
(``CapabilityError``, nothing sent). Bottom layer: only ``errors`` and the standard library.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

from .._util.sentinel import DEFAULT
from ..types._ui import APP_MIME_TYPE  # the MIME type of an MCP App's HTML (declared in the client's APPS settings)
from ..errors import CapabilityError, ClientClosedError, ProtocolError
from ..protocol.eras import Resolver

if TYPE_CHECKING:
    from .._engine.futures import CallFuture

__all__ = ["APPS", "APP_MIME_TYPE", "Extension", "ExtensionContext", "Registry", "SKILLS", "TASKS", "check_id",
           "require", "server_settings"]

#: The Tasks extension (long-running tool calls answered as tasks).
TASKS = "io.modelcontextprotocol/tasks"
#: MCP Apps (tools with an interactive HTML view in a ``ui://`` resource).
APPS = "io.modelcontextprotocol/ui"
#: Skills (SEP-2640): server-declared only, the client declares nothing.
SKILLS = "io.modelcontextprotocol/skills"

Raw = Dict[str, Any]

_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def check_id(value: Any) -> str:
    """``value`` if it is an extension id, else ``ValueError``: a vendor prefix of dot-separated
    labels (a letter first, letters, digits or ``-`` inside, a letter or digit last), ``/``, and
    a name (letters and digits at both ends; ``-``, ``_``, ``.`` inside), e.g.
    ``io.modelcontextprotocol/tasks``. (No regex: none is compiled at import.)"""
    if not isinstance(value, str):
        raise ValueError(f"an extension id must be a string, not {type(value).__name__}")
    prefix, slash, name = value.partition("/")
    ok = bool(slash) and bool(prefix) and all(_label(label) for label in prefix.split(".")) and _name(name)
    if not ok:
        raise ValueError(f"{value!r:.80} is not an extension id (expected '<vendor.prefix>/<name>', e.g. {TASKS!r})")
    return value


def _label(label: str) -> bool:
    return bool(label) and label[0] in _LETTERS and label[-1] in _ALNUM and _ALNUM.union("-").issuperset(label)


def _name(name: str) -> bool:
    return bool(name) and name[0] in _ALNUM and name[-1] in _ALNUM and _ALNUM.union("-_.").issuperset(name)


def server_settings(capabilities: Mapping[str, Any], extension_id: str) -> Optional[Dict[str, Any]]:
    """The settings the server declared for ``extension_id`` (``None``: not declared)."""
    declared = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    found = declared.get(extension_id) if isinstance(declared, dict) else None
    return found if isinstance(found, dict) else None


def require(capabilities: Mapping[str, Any], extension_id: str, method: Optional[str] = None) -> Dict[str, Any]:
    """The server's settings for ``extension_id``, or ``CapabilityError`` (capability
    ``extensions.<id>``) when it did not declare the extension: the request is then not sent."""
    found = server_settings(capabilities, extension_id)
    if found is None:
        raise CapabilityError(f"extensions.{extension_id}", method)
    return found


class Extension:
    """A client extension: subclass it, set ``id``, override what you need (all have defaults).

    Pass an instance in ``Client(extensions={ext.id: ext})`` (an instance serves one client:
    another one refuses it with ``ValueError``; its ``close()`` is final). The client declares
    ``settings()`` under ``capabilities.extensions[id]``, serves the server requests of
    ``request_handlers()`` (on a handler thread, like sampling) and passes the notifications of
    ``notification_handlers()`` (on the notification thread, before ``on_notification``), and
    hands results whose ``resultType`` ``result_types()`` claims to ``resolve``. ``bind(ctx)``
    runs after each connect, with the ``ExtensionContext`` the extension sends through.
    """

    #: The extension id (``<vendor.prefix>/<name>``), checked when the client is made.
    id: str = ""

    def settings(self) -> Dict[str, Any]:
        """The settings object declared under ``capabilities.extensions[id]`` (``{}``: none)."""
        return {}

    def request_handlers(self) -> Mapping[str, Callable[[Dict[str, Any]], Any]]:
        """Server-to-client requests this extension answers: method -> ``(params) -> result``
        (a JSON-encodable dict; raise an ``RPCError`` for an error reply; anything else raised,
        or returned, is answered -32603 with a fixed message and logged)."""
        return {}

    def notification_handlers(self) -> Mapping[str, Callable[[Dict[str, Any]], None]]:
        """Server notifications this extension handles: method -> ``(params) -> None``."""
        return {}

    def result_types(self) -> Mapping[str, FrozenSet[str]]:
        """The ``resultType`` values this extension answers for: kind -> the methods whose
        results may carry it (any other unknown ``resultType`` is a ``ProtocolError``)."""
        return {}

    def resolve(self, kind: str, method: str, raw: Raw, ctx: "ExtensionContext") -> Any:
        """Turn a result of a claimed ``kind`` into the final one, on the thread that parses the
        call's result (the blocking caller's, or a worker's; never the reader's).

        Return the final raw result (its ``resultType`` ``complete`` or absent), which then goes
        through the call's usual parsing; or a ``concurrent.futures.Future`` of it, which the
        call waits for within what is left of its timeout (on expiry the future is cancelled
        and the call raises ``RequestTimeout``)."""
        raise ProtocolError(f"{method}: resultType {kind!r:.50} is claimed by {self.id} but not resolved")

    def bind(self, ctx: "ExtensionContext") -> None:
        """Called after each connect (and reconnect): the server's settings are known now.
        An exception is logged; the connect goes on."""

    def call_future(self, ctx: "ExtensionContext", call: Callable[..., "CallFuture[Any]"], method: str,
                    params: Raw, transform: Callable[[Any], Any], **options: Any) -> Optional["CallFuture[Any]"]:
        """A detached call (``*_future``) of a method this extension claims a ``resultType`` for:
        return its own future to take it over (send it with ``call(method, params, transform,
        owned=False, **options)``), so no worker waits for the claimed result; None (the
        default): the call goes the usual way, ``resolve`` included."""
        return None

    def close(self) -> None:
        """The client closed (after its connection): stop this extension's threads, and settle
        the futures ``resolve`` returned that are still pending (e.g. ``ClientClosedError``): a
        blocking call waits on them until its timeout, for ever with ``timeout=None``."""


class _Declared(Extension):
    """An extension declared by id and settings only (``Client(extensions={id: {...}})``)."""

    def __init__(self, extension_id: str, settings: Dict[str, Any]) -> None:
        self.id = extension_id
        self._settings = settings

    def settings(self) -> Dict[str, Any]:
        return dict(self._settings)


class ExtensionContext:
    """What an extension may use of its client (never the ``Client`` itself): its id, both
    sides' settings, requests gated on the server's declaration, and the client's own handlers.

    Made by the client; ``send(method, params, timeout, owned)`` returns the call's ``CallFuture``,
    ``capabilities()`` the server's current capabilities, ``answer(method, params)`` runs the
    client's sampling/elicitation/roots handlers (with their checks)."""

    def __init__(self, extension_id: str, client_settings: Dict[str, Any],
                 send: Callable[..., "CallFuture[Any]"], capabilities: Callable[[], Mapping[str, Any]],
                 answer: Callable[[str, Dict[str, Any]], Any],
                 stateless: Optional[Callable[[], bool]] = None) -> None:
        self.id = extension_id
        self._stateless = stateless
        self.client_settings = client_settings
        self._send = send
        self._capabilities = capabilities
        self._answer = answer

    @property
    def stateless(self) -> bool:
        """Whether the connection speaks the 2026 era (``subscriptions/listen`` exists there);
        False once the client is gone (a poller thread reading it must not die of that)."""
        try:
            return bool(self._stateless()) if self._stateless is not None else False
        except ClientClosedError:  # the client was garbage-collected: it will release the extension
            return False

    @property
    def server_settings(self) -> Optional[Dict[str, Any]]:
        """The settings the server declared for this extension (``None``: not declared, or not
        connected yet)."""
        return server_settings(self._capabilities(), self.id)

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT) -> Any:
        """Send ``method`` (in the negotiated era's way: ``_meta``, routing headers) and wait for
        its raw result; ``timeout`` omitted: the client's default, ``None``: no limit.

        Raises:
            CapabilityError: the server did not declare this extension (nothing was sent).
            MCPError: what any request raises (``RPCError``, ``RequestTimeout``, ...).
        """
        require(self._capabilities(), self.id, method)
        return self._send(method, params, timeout, True).result()

    def request_future(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                       timeout: Any = DEFAULT) -> "CallFuture[Any]":
        """``request``, returning the call's future at once (``CapabilityError`` raised here)."""
        require(self._capabilities(), self.id, method)
        return self._send(method, params, timeout, False)

    def answer(self, method: str, params: Dict[str, Any]) -> Any:
        """Answer a server request embedded in an extension's message (``sampling/createMessage``,
        ``elicitation/create``, ``roots/list``) with the client's own handlers: the result, or an
        ``RPCError`` (``MethodNotFound`` when the client has no such handler)."""
        return self._answer(method, params)


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
            if getattr(ext, "_mcpclient_attached", False):  # its bind() would point it at the last client
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
            for method, handler in dict(ext.notification_handlers()).items():
                self.notifications.setdefault(method, []).append(handler)
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

    def attach(self, make: Callable[[str, Dict[str, Any]], ExtensionContext]) -> None:
        """Give each extension its context, ``make(id, client settings)`` (the client does this
        once, when nothing of its construction is left to fail): the instances are its now."""
        for key, ext in self.extensions.items():
            self._contexts[key] = make(key, self.declared[key])
            ext._mcpclient_attached = True  # type: ignore[attr-defined]

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

    def call_future(self, call: Callable[..., "CallFuture[Any]"], method: str, params: Raw,
                    transform: Callable[[Any], Any], **options: Any) -> Optional["CallFuture[Any]"]:
        """The future of a detached call that a claiming extension takes over, or None."""
        for ext in self._claims.get(method, {}).values():
            future = ext.call_future(self._contexts[ext.id], call, method, params, transform, **options)
            if future is not None:
                return future
        return None

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


def split_value(key: str, value: Any) -> Tuple[Optional[Dict[str, Any]], Optional[Extension]]:
    """One ``extensions=`` value: ``(settings, None)`` for a dict or ``True``, ``(None, ext)``
    for an ``Extension``; ``TypeError`` for anything else."""
    if isinstance(value, Extension):
        return None, value
    if value is True:
        return {}, None
    if isinstance(value, Mapping):
        return dict(value), None
    raise TypeError(f"extensions[{key!r}] must be a settings dict, True, False or an Extension, not "
                    f"{type(value).__name__}")
