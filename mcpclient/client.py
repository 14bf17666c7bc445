"""``Client``: the blocking, thread-safe MCP API. Each request method checks its arguments,
builds its params, makes the call's one deadline and sends through the client's ``Channel``
(``_client.channel``), the one object it holds; the contract every request method shares is
written once, in ``Client``'s docstring."""
from __future__ import annotations

import weakref
from typing import (
    TYPE_CHECKING, Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Type, TypeVar, Union,
)

from . import types as _types
from ._client.channel import Channel
from ._client.settings import declared_extensions
from ._client.tools import call_tool, list_tools, tool_parser
from ._engine.deadline import Deadline
from ._engine.futures import CallFuture
from ._util.callbacks import CallbackKeeper
from ._util.waiting import wait_for
from ._util.sentinel import DEFAULT
from ._version import __version__
from .protocol import params as _params
from .transports.targets import transport_and_options

if TYPE_CHECKING:
    from ._client.events import Event, Subscription
    from ._engine.futures import ProgressCallback
    from ._engine.session import Session
    from .auth.base import AuthProvider
    from .extensions.registry import ExtensionsSetting
    from .policies.handlers import Handlers
    from .policies.reconnect import Keepalive, Reconnect
    from .policies.timeout import CallTimeout, Limits, TimeoutSetting
    from .policies.tracing import TracingSetting
    from .transports.base import Transport
    from .transports.targets import Target
    from .types import (
        Completion, Implementation, Page, Prompt, PromptResult, Resource, ResourceContents, ResourceTemplate,
        ServerInfo, Tool, ToolResult,
    )
    from .types.handlers import RootsSetting
    from .types._json import JSONObject

    # (Annotations only: an alias of names not loaded yet compiles each of them when the module loads.)
    #: What ``Client(auth=)`` takes: a bearer token, a callable returning one, or an ``AuthProvider``.
    AuthSetting = Union[None, str, Callable[[], str], AuthProvider]
    #: What ``complete(ref, ...)`` completes for: a prompt, a resource template or resource, a wire
    #: ``ref`` dict, a prompt's name or a template's URI.
    CompletionRef = Union[Prompt, ResourceTemplate, Resource, Dict[str, str], str]

__all__ = ["DEFAULT", "Client"]

T = TypeVar("T")
F = TypeVar("F")


#: ``Client.page(kind)``: kind -> (method, result key, the name of its item type in ``types``).
_LISTINGS = {"tools": ("tools/list", "tools", "Tool"), "resources": ("resources/list", "resources", "Resource"),
             "resource_templates": ("resources/templates/list", "resourceTemplates", "ResourceTemplate"),
             "prompts": ("prompts/list", "prompts", "Prompt")}


class Client:
    """A blocking MCP client; every method is safe to call from many threads at once.

    Example::

        with Client("python -m mcpclient.testing") as client:
            print([t.name for t in client.list_tools()])
            print(client.call_tool("add", {"a": 1, "b": 2}).structured_content)

    **What every request method shares.** ``timeout=`` is seconds for the whole call, or a
    ``Timeout`` (omitted: the client's; ``None``: no limit). It becomes one deadline when the
    method is called; everything the call does spends it: reconnecting, listing the tools
    before validating, every page of a ``list_*``, input rounds, the wire. Each call is one
    ``CallFuture`` (a ``concurrent.futures.Future``), and a blocking method is ``result()`` on
    it: ``call_tool_future`` and ``request_future`` return it at once, for many calls started
    together; ``cancel()`` on it cancels the request on the server, as a Ctrl-C in a blocking
    method does. Besides its own (the docs' *Errors* page draws the tree), a method raises:

    Raises:
        RequestTimeout: the deadline passed (the request is cancelled on the server).
        CapabilityError: the server did not declare what the method needs (nothing was sent).
        ClientClosedError: the client is closed or not connected.
        MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
            ``AuthError``, ``ProtocolError``.

    Args:
        target: a command line or argv list (run over stdio), an ``http(s)://`` URL (Streamable
            HTTP, falling back to HTTP+SSE), or a ``Transport``.
        timeout: seconds (every call's, and ``connect()``'s), ``None`` (no limit), or a
            ``Timeout`` (connect, probe, reset on progress, total cap).
        limits: a ``Limits`` (worker threads, pages per listing, input rounds, server text).
        handlers: a ``Handlers``: the answers to the server's requests (sampling, elicitation,
            roots: each declares its capability) and the callbacks (log, notification, reconnect).
        auth / headers: a bearer token, a callable returning one, or an ``AuthProvider`` such as
            ``mcpclient.auth.OAuth``; HTTP headers (URL targets only).
        protocol: ``"auto"`` (``server/discover``, else the ``initialize`` handshake), ``"legacy"``
            (handshake only), ``"modern"``, or an exact revision (``"2025-06-18"``).
        reconnect / keepalive: a ``Reconnect`` policy (``True``: the default) opens a new
            connection on the next call after one is lost, and in a forked child; seconds (or a
            ``Keepalive``) between pings of an idle connection (docs, "Web apps and workers").
        extensions: id -> settings dict, ``True``, ``False``, or an ``Extension`` (``TASKS``,
            ``APPS``; docs, "Extensions").
        tracing: OpenTelemetry: ``None`` traces once the program has imported ``opentelemetry``,
            ``False`` never, ``True`` or a ``Tracing(...)`` insists (docs, "Tracing").
        validate_output: check ``structuredContent`` against the ``outputSchema``: ``True`` lists
            the tools after a call to a tool not listed since they changed, ``"listed"`` only
            uses schemas already listed, ``False`` never checks.
        cache: reuse list and read results while the server's ``ttlMs`` says they are fresh.
        capabilities: extra ``ClientCapabilities`` merged into the declared ones.
        client_info: ``(name, version)``, a dict, or an ``Implementation`` sent to the server.

    Handlers run on worker threads; callbacks and ``on_progress`` in order on one thread; a
    future's done-callbacks on the thread that completes it, never the reader (docs, "Thread
    safety").
    """

    def __init__(
        self, target: Target, *, timeout: TimeoutSetting = 60.0, limits: Optional[Limits] = None,
        handlers: Optional[Handlers] = None, auth: AuthSetting = None, headers: Optional[Dict[str, str]] = None,
        protocol: str = "auto", reconnect: Union[None, bool, Reconnect] = None,
        keepalive: Union[None, float, Keepalive] = None, extensions: ExtensionsSetting = None,
        tracing: TracingSetting = None, validate_output: Union[bool, Literal["listed"]] = True, cache: bool = True,
        capabilities: Optional[Mapping[str, object]] = None,
        client_info: Union[Tuple[str, str], Mapping[str, object], Implementation] = ("mcpclient", __version__),
    ) -> None:
        transport, settings = transport_and_options(target, headers, auth, {"timeout": timeout, "protocol": protocol})
        # The callbacks are the client's alone: the threads get stand-ins (see CallbackKeeper).
        self._callbacks = keeper = CallbackKeeper()
        if handlers is not None:
            from .policies.handlers import Handlers as _Handlers  # (loaded by the channel's check anyway)

            if isinstance(handlers, _Handlers):
                handlers = handlers.replace(
                    sampling=keeper.hold(handlers.sampling), elicitation=keeper.hold(handlers.elicitation),
                    roots=keeper.hold(handlers.roots), on_log=keeper.hold(handlers.on_log),
                    on_notification=keeper.hold(handlers.on_notification),
                    on_reconnect=keeper.hold(handlers.on_reconnect))
        self._channel = channel = Channel(  # every argument checked now; nothing started
            transport, timeout=settings["timeout"], protocol=settings["protocol"], limits=limits, handlers=handlers,
            reconnect=reconnect, keepalive=keepalive, extensions=extensions, tracing=tracing,
            validate_output=validate_output, cache=cache, capabilities=capabilities, client_info=client_info)
        # A client nobody references is collected: its channel is closed, with a ResourceWarning
        # if it was connected (nothing the channel holds refers to the client).
        self._finalizer = finalizer = weakref.finalize(self, channel.release, True)
        finalizer.atexit = False  # at exit the stdio transport's own finalizer stops the server

    # --- lifecycle ------------------------------------------------------------------------------

    def connect(self, timeout: CallTimeout = DEFAULT) -> "Client":
        """Start the transport and negotiate with the server, within ``timeout`` in all (default:
        the client's connect timeout; on failure everything started is torn down first);
        ``with Client(...)`` calls it for you.

        Returns:
            This client, ready for calls.

        Raises:
            ConnectError: the server could not be started or the handshake failed (retry safely).
            UnsupportedProtocolVersion: the server speaks none of the revisions asked for.
        """
        self._channel.open(timeout)
        return self

    def close(self) -> None:
        """Fail pending calls, stop the server and every thread. Idempotent, any thread; returns
        within ``CLOSE_BUDGET`` (5 s) whatever the server or a callback does. In a process forked
        from the one that made the client, only this process's side is released."""
        self._finalizer.detach()
        self._channel.release()

    def __enter__(self) -> "Client":
        return self.connect()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getstate__(self) -> Any:
        raise TypeError("a Client holds a live connection and cannot be pickled")

    def __repr__(self) -> str:
        server = self.server
        return f"<mcpclient.Client {server.name if server else self.transport.info.name!r} {self.state}>"

    # --- state ------------------------------------------------------------------------------------

    @property
    def server(self) -> Optional[ServerInfo]:
        """What the server said of itself when the client connected (``ServerInfo``: ``name``,
        ``version``, ``protocol_version``, ``capabilities``, ``instructions``, ``extensions``,
        ``raw``); ``None`` before ``connect()``."""
        negotiated = self._channel.negotiated
        if negotiated is None:
            return None
        capabilities = negotiated.capabilities
        return _types.ServerInfo(negotiated.server_info, negotiated.version, capabilities,
                                 self._channel.text.cut(negotiated.instructions, "instructions"),
                                 declared_extensions(capabilities), negotiated.raw)

    @property
    def state(self) -> str:
        """``"new"``, ``"connecting"``, ``"ready"``, ``"lost"`` (``connect()`` or a ``Reconnect``
        policy opens a new connection), ``"forked"`` (inherited by a forked process), ``"closed"``."""
        return self._channel.state

    @property
    def transport(self) -> Transport:
        """The transport in use (a relaunch or a fallback while connecting replaces it)."""
        return self._channel.current_transport

    @property
    def _is_closed(self) -> bool:
        """No call can be made: closed, or the connection ended with no policy to reopen it."""
        return self._channel.is_closed

    @property
    def _session(self) -> Session:
        """The JSON-RPC engine of the connection (its counters: ``late_replies``...)."""
        return self._channel.session

    def _known_tool(self, name: str) -> Optional[Tool]:
        """The tool ``name`` from the latest listing, without a request (``ClientTools``, the MCP
        Apps bridge: a model's or an app's call is checked against it)."""
        return self._channel.tools.get(name) if isinstance(name, str) else None

    def extension(self, kind: Union[Type[F], str]) -> F:
        """A feature of this client that lives on its own object: ``Tasks`` (2025-11-25 tasks
        and the Tasks extension), ``Skills``, an ``Extension`` class this client declared, or an
        extension id this client declared (its ``Extension``).

        Returns:
            The feature's object, bound to this client (the same one each time).

        Raises:
            LookupError: an extension this client did not declare.
        """
        return self._channel.feature(kind)  # type: ignore[no-any-return]

    # --- requests -------------------------------------------------------------------------------

    def request(self, method: str, params: Optional[Mapping[str, object]] = None, *,
                timeout: CallTimeout = DEFAULT) -> JSONObject:
        """Send any ``method`` with ``params`` as they are (the escape hatch: no capability check).

        Returns:
            The server's ``result`` object, unparsed.
        """
        return wait_for(self.request_future, method, params, timeout=timeout)

    def request_future(self, method: str, params: Optional[Mapping[str, object]] = None, *,
                       timeout: CallTimeout = DEFAULT) -> CallFuture[JSONObject]:
        """``request``, returning its ``CallFuture`` at once."""
        channel = self._channel
        return channel.call(method, params, None, channel.deadline(timeout), check=False)

    def ping(self, *, timeout: CallTimeout = DEFAULT) -> None:
        """Check the server answers (``ping``; in the 2026 era, which has none, ``server/discover``)."""
        wait_for(self._ping, self._channel.deadline(timeout))

    def _ping(self, deadline: Deadline) -> CallFuture[None]:
        channel = self._channel
        return channel.call(channel.ready("ping", deadline).ping_method, None, _params.none, deadline)

    def list_tools(self, *, timeout: CallTimeout = DEFAULT) -> List[Tool]:
        """Every tool (all pages); their output schemas are kept for validating calls.

        Returns:
            A list of ``Tool``.
        """
        channel = self._channel
        return wait_for(list_tools, channel, channel.deadline(timeout))

    def call_tool(self, name: str, arguments: Optional[Mapping[str, object]] = None, *, timeout: CallTimeout = DEFAULT,
                  on_progress: Optional[ProgressCallback] = None, raise_on_error: bool = False,
                  meta: Optional[Mapping[str, object]] = None) -> ToolResult:
        """Call a tool. A tool that fails reports ``is_error=True`` as data (``raise_on_error=True``
        or ``result.raise_for_error()`` raise ``ToolError``); structured output is validated
        against its ``outputSchema`` (``Client(validate_output=)``). As a task:
        ``client.extension(Tasks).call_tool(...)``.

        Args:
            on_progress: ``(progress, total, message)``, called on the notification thread.
            meta: ``_meta`` sent with the request.

        Returns:
            The ``ToolResult`` (``.text``, ``.content``, ``.structured_content``, ``.is_error``).

        Raises:
            ToolError: the tool reported an error and ``raise_on_error`` is set.
            SchemaValidationError: the structured output does not match the tool's ``outputSchema``.
            UnsendableMessage: the arguments cannot be encoded as JSON (nothing was sent).
            URLElicitationRequired: the server needs the user to complete URL elicitations first.
        """
        channel = self._channel  # (what call_tool_future does, without its frame: the hot path)
        return wait_for(call_tool, channel, name, arguments, raise_on_error, meta, channel.deadline(timeout), on_progress)

    def call_tool_future(self, name: str, arguments: Optional[Mapping[str, object]] = None, *,
                         timeout: CallTimeout = DEFAULT, on_progress: Optional[ProgressCallback] = None,
                         raise_on_error: bool = False, meta: Optional[Mapping[str, object]] = None,
                         ) -> CallFuture[ToolResult]:
        """``call_tool``, returning its ``CallFuture`` at once (start many calls, then wait)."""
        channel = self._channel
        return call_tool(channel, name, arguments, raise_on_error, meta, channel.deadline(timeout), on_progress)

    def list_resources(self, *, timeout: CallTimeout = DEFAULT) -> List[Resource]:
        """Every resource the server lists (all pages).

        Returns:
            A list of ``Resource``.
        """
        return wait_for(self._listing, "resources/list", "resources", _types.Resource.from_wire, timeout)

    def list_resource_templates(self, *, timeout: CallTimeout = DEFAULT) -> List[ResourceTemplate]:
        """Every resource template (all pages).

        Returns:
            A list of ``ResourceTemplate``.
        """
        return wait_for(self._listing, "resources/templates/list", "resourceTemplates",
                        _types.ResourceTemplate.from_wire, timeout)

    def read_resource(self, uri: str, *, timeout: CallTimeout = DEFAULT) -> List[ResourceContents]:
        """Read a resource (``ResourceNotFound`` if there is none: handshake-era servers).

        Returns:
            Its ``ResourceContents`` parts: text as ``.text``, binary as decoded ``.blob`` bytes.
        """
        channel = self._channel
        return wait_for(channel.call, "resources/read", {"uri": _params.uri(uri)}, _params.contents,
                        channel.deadline(timeout))

    def subscribe_resource(self, uri: str, *, timeout: CallTimeout = DEFAULT) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri`` (``resources.subscribe``;
        2026 era: one ``subscriptions/listen`` carries every such URI). ``listen()`` is the one
        way to receive them."""
        wait_for(self._subscription, "resources/subscribe", _params.uri(uri), self._channel.deadline(timeout))

    def unsubscribe_resource(self, uri: str, *, timeout: CallTimeout = DEFAULT) -> None:
        """Stop the updates ``subscribe_resource(uri)`` asked for."""
        wait_for(self._subscription, "resources/unsubscribe", _params.uri(uri), self._channel.deadline(timeout))

    def _subscription(self, method: str, uri: str, deadline: Deadline) -> CallFuture[None]:
        """``resources/subscribe`` or ``resources/unsubscribe`` (2026: a change of the one listen)."""
        channel = self._channel
        era = channel.ready(method, deadline)
        era.check_capability(method)  # (both eras: 2026 carries it on a listen)
        return channel.subscriptions.change(method, uri, era.stateless, deadline)

    def list_prompts(self, *, timeout: CallTimeout = DEFAULT) -> List[Prompt]:
        """Every prompt (all pages).

        Returns:
            A list of ``Prompt``.
        """
        return wait_for(self._listing, "prompts/list", "prompts", _types.Prompt.from_wire, timeout)

    def page(self, kind: Literal["tools", "resources", "resource_templates", "prompts"],
             cursor: Optional[str] = None, *, timeout: CallTimeout = DEFAULT,
             ) -> Page[Union[Tool, Resource, ResourceTemplate, Prompt]]:
        """One page of a listing, from ``cursor`` (``None``: the first), for a caller that keeps
        its place (a web view paging through a server's tools): a ``list_*`` method walks them all.

        Returns:
            A ``Page``: ``items`` (``Tool``, ``Resource``, ``ResourceTemplate`` or ``Prompt``) and
            ``next_cursor`` (``None`` on the last page).
        """
        listing = _LISTINGS.get(kind) if isinstance(kind, str) else None
        if listing is None:
            raise ValueError(f"kind must be one of {', '.join(map(repr, _LISTINGS))}, not {kind!r}")
        if cursor is not None and not isinstance(cursor, str):
            raise TypeError("cursor must be a string, or None for the first page")
        channel = self._channel
        deadline = channel.deadline(timeout)
        method, key, type_name = listing
        parse = tool_parser(channel, deadline) if kind == "tools" else getattr(_types, type_name).from_wire
        return wait_for(channel.call, method, None if cursor is None else {"cursor": cursor},
                        _params.one_page(method, key, parse), deadline)

    def _listing(self, method: str, key: str, parse: Callable[[Any], T], timeout: CallTimeout) -> CallFuture[List[T]]:
        channel = self._channel
        return channel.listing(method, key, parse, channel.deadline(timeout))

    def get_prompt(self, name: str, arguments: Optional[Dict[str, str]] = None, *,
                   timeout: CallTimeout = DEFAULT) -> PromptResult:
        """Render a prompt with string ``arguments``.

        Returns:
            A ``PromptResult`` (``.description``, ``.messages``).
        """
        channel = self._channel
        return wait_for(channel.call, "prompts/get", _params.prompt_params(name, arguments),
                        _types.PromptResult.from_wire, channel.deadline(timeout))

    def complete(self, ref: CompletionRef, argument_name: str, argument_value: str,
                 context: Optional[Dict[str, str]] = None, *, timeout: CallTimeout = DEFAULT) -> Completion:
        """Suggest values for ``argument_name`` of a prompt or resource template, given what the
        user typed (``argument_value``) and the other arguments chosen (``context``).

        Args:
            ref: a ``Prompt``, ``ResourceTemplate``, ``Resource``, wire dict, prompt name or URI.

        Returns:
            A ``Completion`` (``.values``, ``.total``, ``.has_more``).
        """
        params = _params.complete_params(_types.Completion.wire_ref(ref), argument_name, argument_value, context)
        channel = self._channel
        return wait_for(channel.call, "completion/complete", params, _types.Completion.from_wire,
                        channel.deadline(timeout))

    def set_logging_level(self, level: str, *, timeout: CallTimeout = DEFAULT) -> None:
        """Ask the server to send log messages at ``level`` (``"debug"`` ... ``"emergency"``;
        ``ValueError`` for another) and above. The 2026 era has no ``logging/setLevel``: the
        level rides in the ``_meta`` of every later request (only their messages are sent)."""
        wait_for(self._logging_level, _params.level(level), self._channel.deadline(timeout))

    def _logging_level(self, level: str, deadline: Deadline) -> CallFuture[None]:
        """``logging/setLevel``, or (2026) the level in every later request's ``_meta``."""
        channel = self._channel
        return channel.ready("logging/setLevel", deadline).set_logging_level(
            channel.session, level, lambda method, params: channel.call(method, params, _params.none, deadline))

    # --- what the server says, and the client's side --------------------------------------------

    def listen(self, *, tools: bool = False, prompts: bool = False, resources: bool = False,
               resource_uris: Sequence[str] = (), on_event: Optional[Callable[[Event], object]] = None) -> Subscription:
        """Receive change events: list changes of tools, prompts, resources; updates of
        ``resource_uris``. Iterate the subscription or ``get(timeout)``; ``on_event(event)`` runs
        for each on the notification thread; ``close()`` ends it. 2026 era: one open
        ``subscriptions/listen``; handshake era: the server's notifications, and
        ``resources/subscribe`` for each URI (within the client's timeout). In both, only the kinds
        the server declared (``listChanged``, ``resources.subscribe``) are asked for and end up in
        ``acknowledged``: ``CapabilityError`` if it declared none, ``ValueError`` if none was asked.

        Returns: a ``Subscription`` of ``Event`` objects (``SubscriptionLost``: the stream broke).
        """
        wanted = _params.listen_filter(tools, prompts, resources, [_params.uri(u) for u in resource_uris])
        if not wanted:
            raise ValueError("listen() needs at least one of tools, prompts, resources or resource_uris")
        channel = self._channel
        deadline = channel.deadline()
        era = channel.ready("subscriptions/listen", deadline)
        held = self._callbacks.hold(on_event)
        subscription = channel.subscriptions.listen(era.stateless, era.honoured(wanted), held, deadline)
        self._callbacks.until(held, lambda: subscription.closed)
        return subscription

    def set_roots(self, roots: RootsSetting) -> None:
        """Replace the roots and tell the server (``notifications/roots/list_changed``); the client
        must have been made with ``Handlers(roots=)`` (``[]``: none yet), else ``ValueError``, as
        for a URI that is no local ``file://`` path (``TypeError`` for what is no ``Root``, URI or dict)."""
        channel = self._channel
        era = channel.era_if_ready("set_roots")  # ClientClosedError once closed
        channel.responder.set_roots(self._callbacks.hold(roots))
        if era is not None:
            era.roots_changed(channel.session)

    def wait_for_elicitation(self, elicitation_id: str, timeout: Optional[float] = None) -> bool:
        """Block until the server reports the URL elicitation ``elicitation_id`` complete; then
        repeat the request that raised ``URLElicitationRequired`` (``timeout``: ``None``, for ever).

        Returns:
            True once it completed; False if ``timeout`` seconds passed first.
        """
        channel = self._channel
        return channel.notifications.elicitations.wait(elicitation_id, timeout, channel.ended)

