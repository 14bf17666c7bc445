"""``Client``: the blocking, thread-safe MCP API. Each request method checks its arguments,
makes the call's one deadline and hands the call to the client's core (``_client.core``); the
contract every request method shares is written once, in ``Client``'s docstring."""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Literal, Mapping, Optional, Sequence, Tuple, TypeVar, Union, overload

from ._client.deferred import params as _params, types as _types
from ._util.sentinel import DEFAULT, DEFAULT_MAX_PAGES
from ._version import __version__

if TYPE_CHECKING:
    from ._client.core import ClientCore
    from ._client.first_use import FirstUse
    from ._engine.futures import CallFuture, ProgressCallback
    from ._engine.session import Session
    from .errors import MCPError
    from .transports.base import Transport
    from .transports.targets import Target
    from .types import Implementation, ResourceContents, Tool, ToolResult
    from ._client.events import Event, Subscription
    from ._client.notifications import LogCallback, NotificationCallback
    from .extensions.registry import ExtensionsSetting
    from .extensions.skills import LoadedSkill, Skill
    from .extensions.tasks.core import ToolTask
    from .policies.reconnect import Keepalive, Reconnect
    from .policies.tracing import TracingSetting
    from .types import Completion, Prompt, PromptResult, Resource, ResourceTemplate, Task
    from .types.handlers import ElicitationHandler, RootsSetting, SamplingHandler

__all__ = ["DEFAULT", "Client"]

T = TypeVar("T")
#: ``Client.__init__``'s arguments that are not the core's options.
_NOT_OPTIONS = frozenset(("self", "target", "headers", "auth"))


class _CoreOnFirstUse:
    """``Client._core``: built on first use (``_client.first_use``); a non-data descriptor, so
    that once built the core, kept in the instance, is found first and this costs nothing."""

    def __get__(self, client: Optional["Client"], owner: type) -> Any:
        if client is None:
            return self
        first_use = client._first_use
        return client.__dict__["_core"] if first_use is None else first_use.core(client)


class Client:
    """A blocking MCP client; every method is safe to call from many threads at once.

    Example::

        with Client("python -m mcpclient.testing") as client:
            print([t.name for t in client.list_tools()])
            print(client.call_tool("add", {"a": 1, "b": 2}).structured_content)

    **What every request method shares.** ``timeout=`` is seconds for the whole call (omitted:
    the client's ``timeout``; ``None``: no limit). It becomes one deadline when the method is
    called; everything the call does spends it: reconnecting, listing the tools first, every
    page of a ``list_*`` (an ``iter_*`` page has its own), input rounds, the wire. Each method's
    ``<name>_future`` twin returns a ``CallFuture`` (a ``concurrent.futures.Future``) at once:
    its ``result()`` returns or raises what ``<name>`` does, ``cancel()`` cancels the request
    on the server. Besides its own (the docs' *Errors* page draws the tree), a method raises:

    Raises:
        RequestTimeout: the deadline passed (the request is cancelled on the server).
        CapabilityError: the server did not declare what the method needs (nothing was sent).
        ClientClosedError: the client is closed or not connected (all a ``_future`` twin itself raises).
        MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
            ``AuthError``, ``ProtocolError``.

    Args:
        target: a command line or argv list (run over stdio), an ``http(s)://`` URL (Streamable
            HTTP, falling back to HTTP+SSE), or a ``Transport``.
        client_info: ``(name, version)``, a dict, or an ``Implementation`` sent to the server.
        protocol: ``"auto"`` (``server/discover``, else the ``initialize`` handshake), ``"legacy"``
            (handshake only), ``"modern"``, or an exact revision (``"2025-06-18"``).
        timeout: the default timeout of every call, in seconds; ``None`` waits for ever.
        headers / auth: HTTP headers; a bearer token, a callable returning one, or an
            ``AuthProvider`` such as ``mcpclient.auth.OAuth`` (URL targets only).
        reset_timeout_on_progress / max_total_timeout: a progress notification restarts a
            call's timeout, up to ``max_total_timeout`` seconds in all (``None``: no cap).
        sampling_handler / elicitation_handler / elicitation_modes: answer the server's
            ``sampling/createMessage`` and ``elicitation/create`` (each declares its capability;
            ``accept_defaults`` is ready-made); the modes: ``("form",)``, ``("url",)`` or both.
        roots: ``Root`` objects or ``file://`` URIs for ``roots/list``, or a callable giving them.
        capabilities: extra ``ClientCapabilities`` merged into the declared ones.
        on_notification / on_log: ``(method, params)`` for every server notification; ``(level,
            logger, data)`` for log messages (else the logger ``mcpclient.server.<name>``).
        on_tools_changed / on_prompts_changed / on_resources_changed / on_resource_updated: the
            new list (re-fetched) after the server says it changed; ``(uri)`` of an update.
        task_requests: let the server ask for sampling / elicitation as 2025-11-25 tasks.
        max_workers: threads for server-initiated requests and for ``*_future`` results.
        validate_output: check ``structuredContent`` against the ``outputSchema``: ``True`` lists
            the tools first for a tool not listed since they changed, ``"listed"`` only uses
            schemas already listed, ``False`` never checks.
        probe_timeout: how long ``server/discover`` waits on stdio (silence: handshake era).
        max_input_rounds / max_pages: ``input_required`` rounds per 2026 request; pages per listing.
        cache: reuse list and read results while the server's ``ttlMs`` says they are fresh.
        reconnect / keepalive / on_reconnect: a ``Reconnect`` policy (``True``: the default) opens
            a new connection on the next call after one is lost, and in a forked child; seconds
            (or a ``Keepalive``) between pings of an idle connection; ``(client)`` after a
            reconnect (docs, "Web apps and workers").
        tracing: OpenTelemetry: ``None`` traces once the program has imported ``opentelemetry``,
            ``False`` never, ``True`` or a ``Tracing(...)`` insists (docs, "Tracing").
        extensions: id -> settings dict, ``True``, ``False``, or an ``Extension`` (``TASKS``,
            ``APPS``; docs, "Extensions").
        max_server_text: characters kept of the server's instructions and of each tool's
            description (untrusted text; longer is cut and logged once; ``None``: all).

    Handlers run on ``max_workers`` threads; notification callbacks and ``on_progress`` in order
    on one thread; futures' callbacks on workers, never the reader (docs, "Thread safety").
    """

    def __init__(
        self, target: Target, *, client_info: Any = ("mcpclient", __version__), protocol: str = "auto",
        timeout: Optional[float] = 60.0, headers: Optional[Dict[str, str]] = None, auth: Any = None,
        reset_timeout_on_progress: bool = False, max_total_timeout: Optional[float] = None,
        sampling_handler: Optional[SamplingHandler] = None, elicitation_handler: Optional[ElicitationHandler] = None,
        elicitation_modes: Sequence[str] = ("form",), roots: Optional[RootsSetting] = None,
        capabilities: Optional[Dict[str, Any]] = None, on_notification: Optional[NotificationCallback] = None,
        on_log: Optional[LogCallback] = None, on_tools_changed: Optional[Callable[[List[Tool]], Any]] = None,
        on_prompts_changed: Optional[Callable[[List[Prompt]], Any]] = None,
        on_resources_changed: Optional[Callable[[List[Resource]], Any]] = None,
        on_resource_updated: Optional[Callable[[str], Any]] = None, task_requests: bool = False,
        max_workers: int = 4, validate_output: Union[bool, str] = True, probe_timeout: float = 2.0,
        max_input_rounds: int = 10, max_pages: int = DEFAULT_MAX_PAGES, cache: bool = True,
        reconnect: Union[None, bool, Reconnect] = None, keepalive: Union[None, float, Keepalive] = None,
        on_reconnect: Optional[Callable[["Client"], Any]] = None, tracing: TracingSetting = None,
        extensions: ExtensionsSetting = None, max_server_text: Optional[int] = 8192,
    ) -> None:
        options = {name: value for name, value in locals().items() if name not in _NOT_OPTIONS}  # every keyword
        from ._client.first_use import FirstUse  # deferred: the checks load with the first Client, the core at connect()
        from ._client.options import Options
        from .transports.targets import transport_and_options  # deferred, as the checks
        transport, options = transport_and_options(target, headers, auth, options)
        self._first_use: Optional[FirstUse] = FirstUse(Options(transport, **options))  # every argument checked now
        self._finalizer: Optional[weakref.finalize] = None

    # --- lifecycle ------------------------------------------------------------------------------

    def connect(self, timeout: Any = DEFAULT) -> "Client":
        """Start the transport and negotiate with the server, within ``timeout`` in all (on failure
        everything started is torn down first); ``with Client(...)`` calls it for you.

        Returns:
            This client, ready for calls.

        Raises:
            ConnectError: the server could not be started or the handshake failed (retry safely).
            UnsupportedProtocolVersion: the server speaks none of the revisions asked for.
        """
        first_use = self._first_use
        if first_use is not None:  # the transport starts while the core is built (``_client.first_use``)
            first_use.connect(self, timeout)
        else:
            self._core.connect(timeout)
        return self

    def close(self) -> None:
        """Fail pending calls, stop the server and every thread. Idempotent, any thread; returns
        within ``CLOSE_BUDGET`` (5 s) whatever the server or a callback does. In a process forked
        from the one that made the client, only this process's side is released."""
        core = self._core
        if self._finalizer is not None:
            self._finalizer.detach()
        core.release()

    def __enter__(self) -> "Client":
        return self.connect()

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    #: The client's core (``_client.core``), built on first use (``_client.first_use``).
    _core: ClientCore = _CoreOnFirstUse()  # type: ignore[assignment]

    def __getstate__(self) -> Any:
        raise TypeError("a Client holds a live connection and cannot be pickled")

    def __repr__(self) -> str:
        return f"<mcpclient.Client {self.server_info.name or self.transport.name!r} {self.state}>"

    # --- state ------------------------------------------------------------------------------------

    @property
    def timeout(self) -> Optional[float]:
        """The default timeout of every call, in seconds (``None``: no limit); settable."""
        return self._core.settings.timeout

    @timeout.setter
    def timeout(self, value: Optional[float]) -> None:
        from ._engine.deadline import check_timeout  # (loaded: the core is)

        self._core.settings.timeout = check_timeout(value)

    @property
    def transport(self) -> Transport:
        """The transport in use (a relaunch or a fallback while connecting replaces it)."""
        return self._core.conn.transport

    @property
    def protocol_version(self) -> Optional[str]:
        """The revision agreed with the server (``None`` before ``connect()``)."""
        return self._core.conn.protocol_version

    @property
    def server_info(self) -> Implementation:
        """The server's ``Implementation`` (name, version, ...); empty fields before ``connect()``."""
        negotiated = self._core.conn.negotiated
        return negotiated.server_info if negotiated else _types.Implementation("", "")

    @property
    def server_capabilities(self) -> Dict[str, Any]:
        """The capabilities the server declared (``{}`` before ``connect()``)."""
        return self._core.server_capabilities()

    @property
    def instructions(self) -> Optional[str]:
        """The server's ``instructions`` (untrusted text, cut at ``max_server_text``; never sent to a
        model by mcpclient), if it sent any (``None`` before ``connect()``)."""
        negotiated = self._core.conn.negotiated
        return self._core.text.cut(negotiated.instructions, "instructions") if negotiated else None

    @property
    def state(self) -> str:
        """``"new"``, ``"connecting"``, ``"ready"``, ``"lost"`` (``connect()`` or a ``Reconnect``
        policy opens a new connection), ``"forked"`` (inherited by a forked process), ``"closed"``."""
        return self._core.conn.state

    @property
    def is_closed(self) -> bool:
        """True once the client can make no more calls: closed, or its connection ended."""
        return self._core.conn.is_closed

    @property
    def session(self) -> Session:
        """The JSON-RPC engine (counters such as ``late_replies`` live there)."""
        return self._core.conn.session

    @property
    def extensions(self) -> Mapping[str, Dict[str, Any]]:
        """The extensions this client declares: id -> settings (``extensions=``, and any given in
        ``capabilities["extensions"]``)."""
        return self._core.extensions_of(self._core.responder.capabilities())

    @property
    def server_extensions(self) -> Mapping[str, Dict[str, Any]]:
        """The extensions the server declared: id -> settings (``{}`` before ``connect()``)."""
        return self._core.extensions_of(self.server_capabilities)

    def supports_extension(self, extension_id: str) -> bool:
        """Whether both sides declared the extension ``extension_id``.

        Returns: True if this client and the server declared it (False before ``connect()``).
        """
        return extension_id in self.extensions and extension_id in self.server_extensions

    def known_tool(self, name: str) -> Optional[Tool]:
        """The tool ``name`` from the latest listing, without a request (the MCP Apps bridge checks its ``ui``).

        Returns: the ``Tool``, or None if no listing since the tools last changed named it."""
        return self._core.tools.get(name) if isinstance(name, str) else None

    # --- requests (``_send`` is the one way: a deadline now, then the core) ------------------

    def _send(self, method: str, params: Optional[Dict[str, Any]], transform: Optional[Callable[[Any], T]],
              timeout: Any, check: bool = True) -> CallFuture[T]:
        core = self._core
        return core.call(method, params, transform, core.deadline(timeout), check=check)

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT) -> Any:
        """Send any ``method`` with ``params`` as they are (the escape hatch: no capability check).

        Returns:
            The server's ``result`` object, unparsed.
        """
        return _outcome(self._send(method, params, None, timeout, check=False))

    def request_future(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                       timeout: Any = DEFAULT) -> CallFuture[Any]:
        """``request``, returning a ``CallFuture`` at once."""
        return self._send(method, params, None, timeout, check=False)

    def ping(self, *, timeout: Any = DEFAULT) -> None:
        """Check the server answers (``ping``; in the 2026 era, which has none, ``server/discover``)."""
        _outcome(self._core.ping(self._core.deadline(timeout)))

    def ping_future(self, *, timeout: Any = DEFAULT) -> CallFuture[None]:
        """``ping``, returning a ``CallFuture`` at once."""
        return self._core.ping(self._core.deadline(timeout))

    def iter_tools(self, *, timeout: Any = DEFAULT) -> Iterator[Tool]:
        """Yield the tools page by page, each fetched when needed (``timeout``: per page).

        Yields:
            Each ``Tool``.
        """
        core = self._core
        return core.pages("tools/list", "tools", core.tool_parser(core.deadline(timeout)), timeout)

    def list_tools(self, *, timeout: Any = DEFAULT) -> List[Tool]:
        """Every tool (all pages); their output schemas are kept for validating calls.

        Returns:
            A list of ``Tool``.
        """
        return _outcome(self._core.list_tools(self._core.deadline(timeout)))

    def list_tools_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[Tool]]:
        """``list_tools``, returning a ``CallFuture`` at once."""
        return self._core.list_tools(self._core.deadline(timeout))

    @overload
    def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT,
                  on_progress: Optional[ProgressCallback] = None, raise_on_error: bool = False,
                  meta: Optional[Dict[str, Any]] = None, reset_timeout_on_progress: Optional[bool] = None,
                  task: "Literal[False]" = False) -> ToolResult: ...

    @overload
    def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT,
                  on_progress: Optional[ProgressCallback] = None, raise_on_error: bool = False,
                  meta: Optional[Dict[str, Any]] = None, reset_timeout_on_progress: Optional[bool] = None,
                  task: Union["Literal[True]", Dict[str, Any]] = ...) -> ToolTask: ...

    def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT,
                  on_progress: Optional[ProgressCallback] = None, raise_on_error: bool = False,
                  meta: Optional[Dict[str, Any]] = None, reset_timeout_on_progress: Optional[bool] = None,
                  task: Union[bool, Dict[str, Any]] = False) -> Union[ToolResult, ToolTask]:
        """Call a tool. A tool that fails reports ``is_error=True`` as data (``raise_on_error=True``
        or ``result.raise_for_error()`` raise ``ToolError``); structured output is validated
        against its ``outputSchema`` (``Client(validate_output=)``).

        Args:
            on_progress: ``(progress, total, message)``, called on the notification thread.
            meta: ``_meta`` sent with the request.
            reset_timeout_on_progress: overrides the client's setting for this call.
            task: ``True`` or ``{"ttl": ms}``: run it as a 2025-11-25 task.

        Returns:
            The ``ToolResult`` (``.text``, ``.content``, ``.structured_content``, ``.is_error``);
            with ``task``, a ``ToolTask`` at once (``.status()``, ``.result()``, ``.cancel()``).

        Raises:
            ToolError: the tool reported an error and ``raise_on_error`` is set.
            SchemaValidationError: the structured output does not match the tool's ``outputSchema``.
            UnsendableMessage: the arguments cannot be encoded as JSON (nothing was sent).
            URLElicitationRequired: the server needs the user to complete URL elicitations first.
        """
        if task is True or isinstance(task, dict):
            core = self._core
            return core.start_task(name, arguments, raise_on_error, meta, task, core.deadline(timeout))
        if task not in (False, None):
            raise TypeError("task must be True, False or a dict such as {'ttl': 60000}")
        core = self._core
        return _outcome(core.tool_call(name, arguments, raise_on_error, meta,  # type: ignore[no-any-return]
                                       core.deadline(timeout, reset_timeout_on_progress), on_progress))

    def call_tool_future(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT,
                         on_progress: Optional[ProgressCallback] = None, raise_on_error: bool = False,
                         meta: Optional[Dict[str, Any]] = None,
                         reset_timeout_on_progress: Optional[bool] = None) -> CallFuture[ToolResult]:
        """``call_tool`` (without ``task``), returning a ``CallFuture`` at once."""
        core = self._core
        return core.tool_call(name, arguments, raise_on_error, meta, core.deadline(timeout, reset_timeout_on_progress),
                              on_progress)

    def call_tools(self, calls: Sequence[Tuple[str, Optional[Dict[str, Any]]]], *,
                   timeout: Optional[float] = None) -> List[Union[ToolResult, MCPError]]:
        """Run ``(name, arguments)`` calls at once (as a ``ServerGroup`` does; ``timeout``: each's).

        Returns:
            Each call's ``ToolResult``, or its error (never raised), in order.
        """
        return self._core.call_tools(calls, timeout)

    def iter_resources(self, *, timeout: Any = DEFAULT) -> Iterator[Resource]:
        """Yield the resources page by page, each fetched when needed (``timeout``: per page).

        Yields:
            Each ``Resource``.
        """
        return self._core.pages("resources/list", "resources", _types.Resource.from_wire, timeout)

    def list_resources(self, *, timeout: Any = DEFAULT) -> List[Resource]:
        """Every resource the server lists (all pages).

        Returns:
            A list of ``Resource``.
        """
        return _outcome(self._listing("resources/list", "resources", _types.Resource.from_wire, timeout))

    def list_resources_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[Resource]]:
        """``list_resources``, returning a ``CallFuture`` at once."""
        return self._listing("resources/list", "resources", _types.Resource.from_wire, timeout)

    def iter_resource_templates(self, *, timeout: Any = DEFAULT) -> Iterator[ResourceTemplate]:
        """Yield the resource templates page by page (``timeout``: per page).

        Yields:
            Each ``ResourceTemplate``.
        """
        return self._core.pages("resources/templates/list", "resourceTemplates", _types.ResourceTemplate.from_wire,
                                timeout)

    def list_resource_templates(self, *, timeout: Any = DEFAULT) -> List[ResourceTemplate]:
        """Every resource template (all pages).

        Returns:
            A list of ``ResourceTemplate``.
        """
        return _outcome(self._listing("resources/templates/list", "resourceTemplates", _types.ResourceTemplate.from_wire, timeout))

    def list_resource_templates_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[ResourceTemplate]]:
        """``list_resource_templates``, returning a ``CallFuture`` at once."""
        return self._listing("resources/templates/list", "resourceTemplates", _types.ResourceTemplate.from_wire, timeout)

    def read_resource(self, uri: str, *, timeout: Any = DEFAULT) -> List[ResourceContents]:
        """Read a resource (``ResourceNotFound`` if there is none: handshake-era servers).

        Returns:
            Its ``ResourceContents`` parts: text as ``.text``, binary as decoded ``.blob`` bytes.
        """
        return _outcome(self._send("resources/read", {"uri": _params.uri(uri)}, _params.contents, timeout))

    def read_resource_future(self, uri: str, *, timeout: Any = DEFAULT) -> CallFuture[List[ResourceContents]]:
        """``read_resource``, returning a ``CallFuture`` at once."""
        return self._send("resources/read", {"uri": _params.uri(uri)}, _params.contents, timeout)

    def subscribe_resource(self, uri: str, *, timeout: Any = DEFAULT) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri`` (``resources.subscribe``), for
        ``on_resource_updated`` (2026 era: one ``subscriptions/listen`` carries every such URI)."""
        _outcome(self._core.subscription("resources/subscribe", _params.uri(uri), self._core.deadline(timeout)))

    def subscribe_resource_future(self, uri: str, *, timeout: Any = DEFAULT) -> CallFuture[None]:
        """``subscribe_resource``, returning a ``CallFuture`` at once."""
        return self._core.subscription("resources/subscribe", _params.uri(uri), self._core.deadline(timeout))

    def unsubscribe_resource(self, uri: str, *, timeout: Any = DEFAULT) -> None:
        """Stop the updates ``subscribe_resource(uri)`` asked for."""
        _outcome(self._core.subscription("resources/unsubscribe", _params.uri(uri), self._core.deadline(timeout)))

    def unsubscribe_resource_future(self, uri: str, *, timeout: Any = DEFAULT) -> CallFuture[None]:
        """``unsubscribe_resource``, returning a ``CallFuture`` at once."""
        return self._core.subscription("resources/unsubscribe", _params.uri(uri), self._core.deadline(timeout))

    def iter_prompts(self, *, timeout: Any = DEFAULT) -> Iterator[Prompt]:
        """Yield the prompts page by page, each fetched when needed (``timeout``: per page).

        Yields:
            Each ``Prompt``.
        """
        return self._core.pages("prompts/list", "prompts", _types.Prompt.from_wire, timeout)

    def list_prompts(self, *, timeout: Any = DEFAULT) -> List[Prompt]:
        """Every prompt (all pages).

        Returns:
            A list of ``Prompt``.
        """
        return _outcome(self._listing("prompts/list", "prompts", _types.Prompt.from_wire, timeout))

    def list_prompts_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[Prompt]]:
        """``list_prompts``, returning a ``CallFuture`` at once."""
        return self._listing("prompts/list", "prompts", _types.Prompt.from_wire, timeout)

    def _listing(self, method: str, key: str, parse: Callable[[Any], T], timeout: Any) -> CallFuture[List[T]]:
        return self._core.listing(method, key, parse, self._core.deadline(timeout))

    def get_prompt(self, name: str, arguments: Optional[Dict[str, str]] = None, *, timeout: Any = DEFAULT) -> PromptResult:
        """Render a prompt with string ``arguments``.

        Returns:
            A ``PromptResult`` (``.description``, ``.messages``).
        """
        return _outcome(self._send("prompts/get", _params.prompt_params(name, arguments), _types.PromptResult.from_wire, timeout))

    def get_prompt_future(self, name: str, arguments: Optional[Dict[str, str]] = None, *,
                          timeout: Any = DEFAULT) -> CallFuture[PromptResult]:
        """``get_prompt``, returning a ``CallFuture`` at once."""
        return self._send("prompts/get", _params.prompt_params(name, arguments), _types.PromptResult.from_wire, timeout)

    def complete(self, ref: Any, argument_name: str, argument_value: str,
                 context: Optional[Dict[str, str]] = None, *, timeout: Any = DEFAULT) -> Completion:
        """Suggest values for ``argument_name`` of a prompt or resource template, given what the
        user typed (``argument_value``) and the other arguments chosen (``context``).

        Args:
            ref: a ``Prompt``, ``ResourceTemplate``, ``Resource``, wire dict, prompt name or URI.

        Returns:
            A ``Completion`` (``.values``, ``.total``, ``.has_more``).
        """
        params = _params.complete_params(_types.Completion.wire_ref(ref), argument_name, argument_value, context)
        return _outcome(self._send("completion/complete", params, _types.Completion.from_wire, timeout))

    def complete_future(self, ref: Any, argument_name: str, argument_value: str,
                        context: Optional[Dict[str, str]] = None, *, timeout: Any = DEFAULT) -> CallFuture[Completion]:
        """``complete``, returning a ``CallFuture`` at once."""
        params = _params.complete_params(_types.Completion.wire_ref(ref), argument_name, argument_value, context)
        return self._send("completion/complete", params, _types.Completion.from_wire, timeout)

    def set_logging_level(self, level: str, *, timeout: Any = DEFAULT) -> None:
        """Ask the server to send log messages at ``level`` (``"debug"`` ... ``"emergency"``;
        ``ValueError`` for another) and above. The 2026 era has no ``logging/setLevel``: the
        level rides in the ``_meta`` of every later request (only their messages are sent)."""
        _outcome(self.set_logging_level_future(level, timeout=timeout))

    def set_logging_level_future(self, level: str, *, timeout: Any = DEFAULT) -> CallFuture[None]:
        """``set_logging_level``, returning a ``CallFuture`` at once."""
        return self._core.set_logging_level(_params.level(level), self._core.deadline(timeout))

    # subscriptions and the server's side

    def listen(self, *, tools: bool = False, prompts: bool = False, resources: bool = False,
               resource_uris: Sequence[str] = (), on_event: Optional[Callable[[Event], Any]] = None) -> Subscription:
        """Receive change events: list changes of tools, prompts, resources; updates of
        ``resource_uris``. Iterate the subscription or ``get(timeout)``; ``on_event(event)`` runs
        for each on the notification thread; ``close()`` ends it. 2026 era: one open
        ``subscriptions/listen``; handshake era: the server's notifications, and
        ``resources/subscribe`` for each URI (within the client's timeout). In both, only the kinds
        the server declared (``listChanged``, ``resources.subscribe``) are asked for and end up in
        ``acknowledged``: ``CapabilityError`` if it declared none, ``ValueError`` if none was asked.

        Returns: a ``Subscription`` of ``Event`` objects (``SubscriptionLost``: the stream broke).
        """
        return self._core.listen(tools, prompts, resources, [_params.uri(u) for u in resource_uris], on_event)

    def set_roots(self, roots: RootsSetting) -> None:
        """Replace the roots and tell the server (``notifications/roots/list_changed``); the client
        must have been made with ``roots=`` (``[]``: none yet), else ``ValueError``, as for a URI
        that is no local ``file://`` path (``TypeError`` for what is no ``Root``, URI or dict)."""
        self._core.set_roots(roots)

    def wait_for_elicitation(self, elicitation_id: str, timeout: Optional[float] = None) -> bool:
        """Block until the server reports the URL elicitation ``elicitation_id`` complete; then
        repeat the request that raised ``URLElicitationRequired`` (``timeout``: ``None``, for ever).

        Returns:
            True once it completed; False if ``timeout`` seconds passed first.
        """
        core = self._core
        return core.notifications.elicitations.wait(elicitation_id, timeout, lambda: core.session.is_closed)

    def invalidate_cache(self) -> None:
        """Forget every cached result (2026 servers' ``ttlMs`` hints; see ``Client(cache=)``)."""
        if self._core.cache is not None:
            self._core.cache.invalidate()

    # tasks (the Tasks extension, and 2025-11-25, experimental)

    def task(self, task_id: str) -> ToolTask:
        """A handle for a task of this server by id (saved from ``future.task.task_id`` before a
        restart), nothing sent: the Tasks extension's if both sides declare it, else 2025-11-25's.

        Returns:
            A ``ToolTask`` (``.status()``, ``.result()``, ``.cancel()``, ``.wait()``); ``ValueError``
            if the Tasks extension is not declared and the server has no 2025-11-25 tasks.
        """
        return self._core.resume_task(task_id, self.server_extensions)

    def list_tasks(self, *, timeout: Any = DEFAULT) -> List[Task]:
        """Every task the server knows of for this client (``tasks/list``, all pages; ``tasks.list``).

        Returns:
            A list of ``Task``.
        """
        return _outcome(self._listing("tasks/list", "tasks", _types.Task.from_wire, timeout))

    def list_tasks_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[Task]]:
        """``list_tasks``, returning a ``CallFuture`` at once."""
        return self._listing("tasks/list", "tasks", _types.Task.from_wire, timeout)

    # skills (SEP-2640)

    def list_skills(self, *, timeout: Any = DEFAULT) -> List[Skill]:
        """The skills the server offers (``skills/list``, all pages): manifests only, no file is read.

        Returns:
            A list of ``Skill`` manifests.
        """
        return _outcome(self.list_skills_future(timeout=timeout))

    def list_skills_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[Skill]]:
        """``list_skills``, returning a ``CallFuture`` at once."""
        return self._core.skill_listing(self._core.deadline(timeout))

    def get_skill(self, uri: str, *, timeout: Any = DEFAULT) -> Skill:
        """One skill's manifest by its ``SKILL.md`` URI (``skills/get``; unlisted skills too).

        Returns:
            The ``Skill`` manifest.
        """
        return _outcome(self.get_skill_future(uri, timeout=timeout))

    def get_skill_future(self, uri: str, *, timeout: Any = DEFAULT) -> CallFuture[Skill]:
        """``get_skill``, returning a ``CallFuture`` at once."""
        return self._core.skill(uri, self._core.deadline(timeout))

    def load_skill(self, skill: Union[str, Skill], *, timeout: Any = DEFAULT) -> LoadedSkill:
        """Load a skill by name, ``SKILL.md`` URI, or ``Skill``: ``SKILL.md`` is read now and
        checked against the manifest (size, digest, frontmatter); ``read(path)`` serves only
        listed, verified files.

        Returns:
            A ``LoadedSkill``.

        Raises:
            SkillVerificationError: the content does not match the manifest (nothing else is read then).
        """
        return _outcome(self.load_skill_future(skill, timeout=timeout))

    def load_skill_future(self, skill: Union[str, Skill], *, timeout: Any = DEFAULT) -> CallFuture[LoadedSkill]:
        """``load_skill``, returning a ``CallFuture`` at once."""
        return self._core.load_skill(skill, self._core.deadline(timeout), timeout)


def _outcome(future: CallFuture[T]) -> T:
    """A blocking method's wait: ``result()`` on the future its ``_future`` twin returns. An
    interrupt while waiting (Ctrl-C) cancels the call, on the server too, before it goes on up."""
    try:
        return future.result()
    except BaseException:
        future.cancel()  # (nothing happens once it is done: then this is its outcome)
        raise
