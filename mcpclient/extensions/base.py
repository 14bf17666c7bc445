"""Protocol extensions as the core sees them: ids, the ``Extension`` base class and the
``ExtensionContext`` an extension works through.

An extension is negotiated through ``capabilities.extensions`` (id -> settings object; ``{}`` =
supported without settings): the client declares its own (``Client(extensions=...)``) in
``initialize`` and, in the 2026 era, in every request's ``_meta``; the server declares its own in
``initialize``/``server/discover``. Extensions are off by default. An ``Extension`` object adds,
without touching the core, handlers for server requests and notifications and the
``resultType`` values it answers for (e.g. the Tasks extension's ``"task"`` on ``tools/call``).
Every extension request first checks that the server declared the extension
(``CapabilityError``, nothing sent). The registry a client keeps is in ``registry``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Mapping, Optional, Protocol, Tuple, TypeVar, Union

from .._util.sentinel import DEFAULT
from ..errors import CapabilityError, ProtocolError
from ..types._ui import APP_MIME_TYPE  # the MIME type of an MCP App's HTML (declared in the client's APPS settings)

if TYPE_CHECKING:
    from concurrent.futures import Future

    from .._engine.deadline import Deadline
    from .._engine.futures import CallFuture, ProgressCallback
    from ..policies.timeout import CallTimeout
    from ..types._json import JSONObject, JSONValue

__all__ = ["APPS", "APP_MIME_TYPE", "Extension", "ExtensionContext", "ExtensionOwner", "SKILLS", "TASKS", "check_id",
           "require", "server_settings", "split_value"]

#: The Tasks extension (long-running tool calls answered as tasks).
TASKS = "io.modelcontextprotocol/tasks"
#: MCP Apps (tools with an interactive HTML view in a ``ui://`` resource).
APPS = "io.modelcontextprotocol/ui"
#: Skills (SEP-2640): server-declared only, the client declares nothing.
SKILLS = "io.modelcontextprotocol/skills"

Raw = Dict[str, Any]
T = TypeVar("T")
#: A server request's handler (``Extension.request_handlers``): its params in, the result out.
RequestHandler = Callable[["JSONObject"], "JSONObject"]
#: A server notification's handler (``Extension.notification_handlers``).
NotificationHandler = Callable[["JSONObject"], None]
#: What ``Extension.resolve`` returns: the final raw result, or a future of it.
Resolved = Union["JSONObject", "Future[JSONObject]"]

_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def check_id(value: Any) -> str:
    """``value`` if it is an extension id, else ``ValueError``: a vendor prefix of dot-separated
    labels (a letter first, letters, digits or ``-`` inside, a letter or digit last), ``/``, and
    a name (letters and digits at both ends; ``-``, ``_``, ``.`` inside), e.g.
    ``io.modelcontextprotocol/tasks``."""
    # No regex: none is compiled at import.
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
    _attached = False  # given to a client already (an instance serves one)

    def settings(self) -> JSONObject:
        """The settings object declared under ``capabilities.extensions[id]`` (``{}``: none)."""
        return {}

    def request_handlers(self) -> Mapping[str, RequestHandler]:
        """Server-to-client requests this extension answers: method -> ``(params) -> result``
        (a JSON-encodable dict; raise an ``RPCError`` for an error reply; anything else raised,
        or returned, is answered -32603 with a fixed message and logged)."""
        return {}

    def notification_handlers(self) -> Mapping[str, NotificationHandler]:
        """Server notifications this extension handles: method -> ``(params) -> None``."""
        return {}

    def result_types(self) -> Mapping[str, FrozenSet[str]]:
        """The ``resultType`` values this extension answers for: kind -> the methods whose
        results may carry it (any other unknown ``resultType`` is a ``ProtocolError``)."""
        return {}

    def resolve(self, kind: str, method: str, raw: JSONObject, ctx: "ExtensionContext") -> Resolved:
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

    def call_future(self, ctx: "ExtensionContext", method: str, params: JSONObject, transform: Callable[[JSONValue], T],
                    deadline: "Deadline", on_progress: Optional[ProgressCallback]) -> Optional["CallFuture[T]"]:
        """A call (blocking or not: one future) of a method this extension claims a
        ``resultType`` for: return its own future to take it over (send it with
        ``ctx.call(method, params, AsIs(kinds), deadline, on_progress=on_progress)``: ``AsIs``
        hands the claimed results over unresolved), so no worker waits for the claimed result;
        None (the default): the call goes the usual way, ``resolve`` included."""
        return None

    def wind_down(self, ctx: "ExtensionContext", deadline: float) -> None:
        """The client is about to close (still connected): let what this extension sent on
        the user's behalf (a cancellation) reach the server, until ``deadline`` (monotonic).
        An exception is logged; the close goes on."""

    def close(self) -> None:
        """The client closed (after its connection): stop this extension's threads, and settle
        the futures ``resolve`` returned that are still pending (e.g. ``ClientClosedError``): a
        blocking call waits on them until its timeout, for ever with ``timeout=None``."""


class Feature:
    """A feature of the client that lives on an object of its own: ``client.extension(Tasks)``,
    ``client.extension(Skills)``. The client makes one per feature class, on first use, bound
    to its ``FeatureOwner`` (never the ``Client``: a feature object must not keep it alive)."""

    def __init__(self, owner: "FeatureOwner") -> None:
        self._owner = owner

    @classmethod
    def for_client(cls, owner: "FeatureOwner") -> "Feature":
        """The feature's object for the client ``owner`` is the core of."""
        return cls(owner)


class FeatureOwner(Protocol):
    """What a feature object uses of its client (``Channel`` is the implementation)."""

    @property
    def session(self) -> Any:
        """The current session (a reconnect replaces it)."""

    def server_capabilities(self) -> Dict[str, Any]:
        """What the server declared (``{}`` before connect)."""

    def deadline(self, timeout: "CallTimeout" = DEFAULT) -> "Deadline":
        """The deadline of a request made now with ``timeout=``."""

    def call(self, method: str, params: Optional[Mapping[str, object]], transform: Optional[Callable[[Any], Any]],
             deadline: "Deadline", *, check: bool = True,
             on_progress: Optional[ProgressCallback] = None,
             on_late: Optional[Callable[[Dict[str, Any]], Any]] = None) -> "CallFuture[Any]":
        """Send ``method`` the negotiated era's way."""


class _Declared(Extension):
    """An extension declared by id and settings only (``Client(extensions={id: {...}})``)."""

    def __init__(self, extension_id: str, settings: Dict[str, Any]) -> None:
        self.id = extension_id
        self._settings = settings

    def settings(self) -> Dict[str, Any]:
        return dict(self._settings)


class ExtensionOwner(FeatureOwner, Protocol):
    """What the contexts need of the client they belong to (``Channel``; never the
    ``Client``): what a feature uses, and these."""

    @property
    def stateless(self) -> bool:
        """Whether the connection speaks the 2026 era."""

    def answer(self, method: str, params: Dict[str, Any]) -> "JSONObject":
        """Answer a server request with the client's own handlers."""


class ExtensionContext:
    """What an extension may use of its client (never the ``Client`` itself): its id, both
    sides' settings, requests gated on the server's declaration, and the client's own handlers.
    Made by the client for each declared extension."""

    def __init__(self, extension_id: str, client_settings: JSONObject, owner: "ExtensionOwner") -> None:
        self.id = extension_id
        self.client_settings = client_settings
        self._owner = owner

    @property
    def stateless(self) -> bool:
        """Whether the connection speaks the 2026 era (``subscriptions/listen`` exists there)."""
        return self._owner.stateless

    @property
    def server_settings(self) -> Optional[JSONObject]:
        """The settings the server declared for this extension (``None``: not declared, or not
        connected yet)."""
        return server_settings(self._owner.server_capabilities(), self.id)

    def request(self, method: str, params: Optional[Mapping[str, object]] = None, *,
                timeout: CallTimeout = DEFAULT) -> JSONObject:
        """Send ``method`` (in the negotiated era's way: ``_meta``, routing headers) and wait for
        its raw result; ``timeout`` omitted: the client's default, ``None``: no limit.

        Raises:
            CapabilityError: the server did not declare this extension (nothing was sent).
            MCPError: what any request raises (``RPCError``, ``RequestTimeout``, ...).
        """
        return self.request_future(method, params, timeout=timeout).result()

    def request_future(self, method: str, params: Optional[Mapping[str, object]] = None, *,
                       timeout: CallTimeout = DEFAULT) -> "CallFuture[JSONObject]":
        """``request``, returning the call's future at once (``CapabilityError`` raised here)."""
        owner = self._owner
        require(owner.server_capabilities(), self.id, method)
        return owner.call(method, params, None, owner.deadline(timeout), check=False)

    def call(self, method: str, params: Optional[Mapping[str, object]], transform: Callable[[JSONValue], T],
             deadline: "Deadline", *, on_progress: Optional[ProgressCallback] = None,
             on_late: Optional[Callable[[JSONObject], object]] = None) -> "CallFuture[T]":
        """Send a call this extension takes over (``Extension.call_future``): the
        negotiated era's way, within the caller's ``deadline``, gated like the core method.
        ``on_late(reply)``: an answer that comes after the call gave up (what it made, a task,
        may need undoing; see ``Session.call``)."""
        return self._owner.call(method, params, transform, deadline, on_progress=on_progress,
                                on_late=on_late)

    def answer(self, method: str, params: JSONObject) -> JSONObject:
        """Answer a server request embedded in an extension's message (``sampling/createMessage``,
        ``elicitation/create``, ``roots/list``) with the client's own handlers: the result, or an
        ``RPCError`` (``MethodNotFound`` when the client has no such handler)."""
        return self._owner.answer(method, params)


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
