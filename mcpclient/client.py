"""``Client``: the blocking, thread-safe MCP API — a thin façade over its collaborators.

Each request method builds params and a result transform (``_params``) and sends through
``_call``: the era chosen at connect time (``eras``) makes one ``Session.call``, a ``CallFuture``
whose ``result()`` is the blocking method (README, "How it is built").
"""
from __future__ import annotations

import logging
import time
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union, overload

from .protocol import params as _params
from ._client.extension_methods import ExtensionMethods, ExtensionsSetting, build_registry
from ._client.lifecycle import ConnectionHooks, release, weakly
from ._client.responder import Responder, _merged
from ._util.sentinel import DEFAULT
from ._client.tools import ToolRegistry
from ._version import __version__
from .protocol.cache import ResultCache
from ._client.connection import Connection, Connector, Target, client_identity, make_transport
from ._util.threads import FlightTimeout
from .errors import CapabilityError, MCPError, RequestTimeout
from ._engine.futures import CallFuture, ProgressCallback, Transform
from ._client.notifications import LogCallback, NotificationCallback, NotificationRouter
from ._engine.session import Session
from ._client.subscriptions import SubscriptionRouter
from ._engine.hooks import CallTracer, TracingSetting, wants_tracing
from .transports.base import Transport, encode_frame
from . import types as _types  # (its resources/prompts/completion types load on first use: see types)
from .types import Implementation, ResourceContents, Tool
from .types import ToolResult

if TYPE_CHECKING:
    from typing import Literal

    from .types.handlers import ElicitationHandler, RootsSetting, SamplingHandler
    from ._client.events import Event, Subscription
    from .policies.reconnect import Keepalive, Reconnect
    from .types import Completion, Prompt, PromptResult, Resource, ResourceTemplate
    from .extensions.tasks.core import ToolTask

__all__ = ["DEFAULT", "Client"]

log = logging.getLogger("mcpclient")


class Client(ConnectionHooks, ExtensionMethods):
    """A blocking MCP client; every method is safe to call from many threads at once.

    Example::

        with Client("python -m mcpclient.testing") as client:
            print([t.name for t in client.list_tools()])
            print(client.call_tool("add", {"a": 1, "b": 2}).structured_content)

    Args:
        target: a command string (split with ``shlex``, or by the Windows rules on Windows; run
            over stdio), an argv list, an ``http(s)://`` URL (Streamable HTTP, falling back to
            HTTP+SSE), or a ``Transport``.
        headers / auth: HTTP headers, and a bearer token, a callable returning one, or an
            ``AuthProvider`` such as ``mcpclient.auth.OAuth`` (URL targets only).
        client_info: ``(name, version)``, a dict, or an ``Implementation`` sent to the server.
        protocol: ``"auto"`` (probe ``server/discover``, else the ``initialize`` handshake),
            ``"legacy"`` (handshake only), ``"modern"``, or an exact revision such as ``"2025-06-18"``.
        timeout: default per-request timeout in seconds; ``None`` waits forever. Every method takes
            ``timeout=`` too (omitted = this default).
        reset_timeout_on_progress: a progress notification restarts a call's timeout, up to
            ``max_total_timeout`` seconds in all (``None`` = no hard cap).
        sampling_handler: ``(CreateMessageRequest) -> CreateMessageResult | dict``: answers the
            server's ``sampling/createMessage`` (declares the ``sampling`` capability).
        elicitation_handler: ``(ElicitationRequest) -> ElicitationResult | dict``: answers
            ``elicitation/create`` (declares ``elicitation``); ``accept_defaults`` is ready-made.
        elicitation_modes: the elicitation modes declared: ``("form",)`` (default), ``("url",)``
            or both. A request in another mode is refused with -32602 before the handler runs.
        roots: the roots the server may ask for (``roots/list``): a list of ``Root``/``file://``
            URI strings, or a callable returning one per request; ``set_roots()`` changes them.
        capabilities: extra ``ClientCapabilities`` merged into the declared ones (e.g.
            ``{"sampling": {"tools": {}}}`` to receive sampling requests with tools).
        on_notification: ``(method, params)`` for every server notification.
        on_log: ``(level, logger, data)`` for server log messages; without it they go to the
            Python logger ``mcpclient.server.<server name>``.
        on_tools_changed / on_prompts_changed / on_resources_changed: called with the new list
            (all pages, re-fetched by the client) after the server says it changed.
        on_resource_updated: ``(uri)`` after ``subscribe_resource(uri)``, when the resource changes.
        task_requests: let the server ask for sampling / elicitation as tasks (2025-11-25,
            experimental): the handler runs on a task thread; the server polls ``tasks/*``.
        max_workers: threads for server-initiated requests, and for results of ``*_future`` calls.
        validate_output: check ``structuredContent`` against the tool's ``outputSchema``
            (``SchemaValidationError``). ``True`` (default): a call to a tool not seen in a listing
            since the tools last changed lists them first (once, shared by every thread calling
            then; the call's timeout covers it), as the official SDK does; a tool the listing does
            not name is called unvalidated. ``"listed"``: only against schemas already listed
            (``list_tools()``), never an extra request. ``False``: never.
        probe_timeout: how long ``server/discover`` waits on stdio (silence means handshake era);
            not applied with ``protocol="2026-07-28"``, where the call's ``timeout`` is the limit.
        max_input_rounds: how many ``input_required`` rounds one 2026 request may take.
        max_pages: how many pages one listing (``list_*``, ``iter_*``) may take before it fails
            with ``TooManyPages`` (a server handing out new cursors for ever). A ``list_*``
            call's ``timeout`` covers all its pages; an ``iter_*`` page's covers that page.
        cache: reuse list and read results while the server's ``ttlMs`` says they are fresh
            (2026 servers; private results only for the same credentials). ``invalidate_cache()``.
        reconnect: a ``Reconnect`` policy (or ``True`` for the default one): after the
            connection is lost, the next call opens a new one (calls in flight still fail), and
            in a forked child a new connection is opened on first use. Off by default: a new
            connection is a new server session (README, "Using mcpclient in web apps and workers").
        keepalive: seconds (or a ``Keepalive``): ping an idle connection that often; unanswered
            pings mark it lost.
        on_reconnect: ``(client)`` after a reconnect, once subscriptions are restored (on the
            notification thread).
        tracing: OpenTelemetry tracing (README, "Tracing"): ``None`` (default) traces when
            ``opentelemetry-api`` is installed (``pip install 'mcpclient[otel]'``); ``False``
            never; ``True`` or a ``Tracing(...)`` (options: recording tool arguments and results,
            providers) insists (``MissingExtraError`` here without the package). A span per
            request, the ``mcp.client.operation.duration`` histogram, and the trace context in
            every request's ``params._meta``; opentelemetry is imported at ``connect()``.
        extensions: protocol extensions to declare (README, "Extensions"): id -> settings dict,
            ``True`` (``{}``), ``False`` (not declared), or an ``Extension`` (handlers, result
            types). ``TASKS`` runs tool calls the server answers as tasks; ``APPS`` declares MCP
            Apps. None are declared by default; an id also in ``capabilities["extensions"]`` is a
            ``ValueError``.

    Threads (README, "Threads: who runs what"): handlers run on a pool of ``max_workers``;
    ``on_notification``, ``on_log``, ``on_resource_updated`` and ``on_progress`` in arrival order on
    one thread; futures' results and done-callbacks on workers, never the reader. Blocking calls
    work in all of them; ``close()`` does not wait for a handler that ignores it.

    Every request method has a ``<name>_future`` twin that returns a ``CallFuture`` (a
    ``concurrent.futures.Future``) at once; ``future.cancel()`` cancels the request on the server.
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
        max_input_rounds: int = 10, max_pages: int = _params.DEFAULT_MAX_PAGES, cache: bool = True,
        reconnect: Union[None, bool, Reconnect] = None,
        keepalive: Union[None, float, Keepalive] = None, on_reconnect: Optional[Callable[["Client"], Any]] = None,
        tracing: TracingSetting = None, extensions: ExtensionsSetting = None,
    ) -> None:
        transport = make_transport(target, headers, auth)
        self._tracing = wants_tracing(tracing)
        self._tracing_asked = tracing is not None  # (automatic tracing goes quietly off if it cannot load)
        self._tracer: Optional[CallTracer] = None  # made at the first connect() (imports opentelemetry)
        if reconnect is not None and reconnect is not False:
            from .policies.reconnect import Reconnect  # deferred: import cost (two dataclasses); only clients that reconnect need it

            if reconnect is True:
                reconnect = Reconnect()
            elif not isinstance(reconnect, Reconnect):
                raise TypeError("reconnect must be a Reconnect, True, False or None")
        if keepalive is not None:
            from .policies.reconnect import Keepalive  # deferred: import cost (two dataclasses); only clients that ping need it

            keepalive = Keepalive.of(keepalive)
        self.timeout = _params.check_timeout(timeout)
        self.reset_timeout_on_progress = reset_timeout_on_progress
        self.max_total_timeout = max_total_timeout
        if validate_output not in (True, False, "listed"):
            raise ValueError(f"validate_output must be True, False or 'listed', not {validate_output!r}")
        self.validate_output = validate_output
        self.max_input_rounds = max_input_rounds
        if not isinstance(max_pages, int) or max_pages < 1:
            raise ValueError(f"max_pages must be a positive number, not {max_pages!r}")
        self.max_pages = max_pages
        self._client_info = client_identity(client_info)
        self._max_workers = max_workers
        self.on_reconnect = on_reconnect
        self._refresh: Optional[Any] = None  # (session, its refresh lane): see _refresh_lane
        # The connection's threads reach the client only through weakly(): see _release.
        self._cache = ResultCache(weakly(self._credentials)) if cache else None
        self._tools = ToolRegistry()
        self._subscriptions = SubscriptionRouter(weakly(self._call), weakly(self._current_session))
        self._notifications = NotificationRouter(
            logging.getLogger(f"mcpclient.server.{transport.name}"), on_notification, on_log,
            {"tools": on_tools_changed, "prompts": on_prompts_changed, "resources": on_resources_changed},
            on_resource_updated, {"tools": weakly(self.list_tools), "prompts": weakly(self.list_prompts),
                                  "resources": weakly(self.list_resources)},
            self._subscriptions.route, weakly(self._invalidate), weakly(self._refresh_lane))
        tasks = None
        if task_requests:
            from .extensions.tasks.core import TaskStore  # deferred: import cost (only clients that use tasks need it)

            tasks = TaskStore(transport.instance, max_workers)
        self._ext = build_registry(extensions, capabilities)
        if self._ext is not None and (capabilities is None or isinstance(capabilities, dict)):
            capabilities = _merged(capabilities or {}, self._ext.capabilities())
        self._responder = Responder(sampling_handler, elicitation_handler, elicitation_modes, roots, capabilities,
                                    tasks)
        if self._ext is not None:
            self._install_extensions(self._ext)
            self._ext_call = weakly(self._call)  # what an extension sends a claimed call with (never the Client)
        connector = Connector(protocol, self._client_info, self._responder.capabilities, probe_timeout,
                              reuse_discovery=cache)
        self._conn = Connection(transport, weakly(self._new_session), connector, weakly(self._make_era),
                                reconnect=reconnect or None, keepalive=keepalive,
                                timeout=weakly(self._default_timeout), on_lost=weakly(self._lost),
                                on_restored=weakly(self._restored), on_forked=weakly(self._forked))
        self._subscriptions.keep_on_loss = reconnect is not None and reconnect is not False
        self._finalizer = weakref.finalize(self, release, self._conn, self._responder, self._notifications,
                                           self._subscriptions, True, self._ext)
        self._finalizer.atexit = False  # at exit the stdio transport's own finalizer stops the server

    # --- lifecycle ------------------------------------------------------------------------------

    def connect(self, timeout: Any = DEFAULT) -> "Client":
        """Start the transport and negotiate with the server.

        On failure everything started is torn down before the error is raised. ``with Client(...)``
        calls it for you.

        Args:
            timeout: seconds for the whole connection (omitted: the client's default).

        Returns:
            This client, ready for calls.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            ConnectError: the server could not be started or the handshake failed (safe to retry with a new client).
            UnsupportedProtocolVersion: the server speaks none of the revisions asked for.
        """
        if self._tracing is not None and self._tracer is None:
            self._start_tracing()
        self._conn.open(self._timeout(timeout))
        self._bind_extensions()
        return self

    def close(self) -> None:
        """Fail pending calls, stop the server and every thread. Idempotent, any thread; returns
        within ``CLOSE_BUDGET`` (5 s) whatever the server or a callback does. In a process forked
        from the one that made the client, only this process's side is released."""
        self._finalizer.detach()
        release(self._conn, self._responder, self._notifications, self._subscriptions)
        if self._ext is not None:
            self._ext.close()

    def __enter__(self) -> "Client":
        return self.connect()

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __getstate__(self) -> Any:
        raise TypeError("a Client holds a live connection and cannot be pickled")

    def __repr__(self) -> str:
        return f"<mcpclient.Client {self.server_info.name or self.transport.name!r} {self._conn.state}>"

    # --- negotiated state -----------------------------------------------------------------------

    @property
    def transport(self) -> Transport:
        """The transport in use (a relaunch or a fallback while connecting replaces it)."""
        return self._conn.transport

    @property
    def protocol_version(self) -> Optional[str]:
        """The revision agreed with the server (``None`` before ``connect()``)."""
        return self._conn.negotiated.version if self._conn.negotiated else None

    @property
    def server_info(self) -> Implementation:
        """The server's ``Implementation`` (name, version, ...); empty fields before ``connect()``."""
        return self._conn.negotiated.server_info if self._conn.negotiated else Implementation("", "")

    @property
    def server_capabilities(self) -> Dict[str, Any]:
        """The capabilities the server declared (``{}`` before ``connect()``)."""
        return self._conn.negotiated.capabilities if self._conn.negotiated else {}

    @property
    def instructions(self) -> Optional[str]:
        """The server's ``instructions`` for the model, if it sent any (``None`` before ``connect()``)."""
        return self._conn.negotiated.instructions if self._conn.negotiated else None

    @property
    def state(self) -> str:
        """``"new"``, ``"connecting"``, ``"ready"``, ``"lost"`` (the connection ended: ``connect()``
        or a ``Reconnect`` policy opens a new one), ``"forked"`` (inherited by a forked process)
        or ``"closed"``."""
        return self._conn.state

    @property
    def is_closed(self) -> bool:
        """True once the client can make no more calls: closed, or its connection ended."""
        return self._conn.is_closed

    @property
    def session(self) -> Session:
        """The JSON-RPC engine (counters such as ``late_replies`` live there)."""
        return self._conn.session

    # --- the one way to send ----------------------------------------------------------------------

    def _timeout(self, timeout: Any) -> Optional[float]:
        return self.timeout if timeout is DEFAULT else _params.check_timeout(timeout)

    def _call(self, method: str, params: Optional[Dict[str, Any]] = None, transform: Optional[Transform] = None, *,
              timeout: Any = DEFAULT, owned: bool, check: bool = True, on_progress: Optional[ProgressCallback] = None,
              reset: Optional[bool] = None) -> CallFuture:
        """Send ``method`` the way the negotiated era does; ``owned``: the caller waits in
        ``result()`` at once (a blocking method). ``check``: refuse (``CapabilityError``)
        what the server did not declare."""
        timeout = self._timeout(timeout)
        era = self._conn.ready(method, timeout)
        era.check(method, capabilities=check)
        reset = self.reset_timeout_on_progress if reset is None else reset
        return era.call(self._conn.session, method, params, transform, owned=owned, timeout=timeout,
                        on_progress=on_progress, reset=reset, max_total=self.max_total_timeout if reset else None)

    def _iter(self, method: str, key: str, parse: Callable[[Any], Any], timeout: Any) -> Iterator[Any]:
        return _params.iterate(lambda params, step: self._call(method, params, step, timeout=timeout, owned=True),
                               method, key, parse, self.max_pages)

    def _list(self, method: str, key: str, parse: Callable[[Any], Any], timeout: Any, owned: bool) -> CallFuture:
        try:
            return self._call(method, None, _params.pages(method, key, parse, self.max_pages), timeout=timeout,
                              owned=owned)
        except CapabilityError as exc:
            if owned:
                raise
            return CallFuture.failed(self._conn.session, method, exc)  # a listing's future reports it

    # --- requests -------------------------------------------------------------------------------

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT) -> Any:
        """Send any request and return the raw ``result`` (the escape hatch; no capability check).

        Args:
            method: the JSON-RPC method, e.g. ``"tools/list"``.
            params: its ``params`` object, sent as is.
            timeout: seconds (omitted: the client's default; ``None``: no limit).

        Returns:
            The server's ``result`` object, unparsed (a dict).

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
        """
        return self._call(method, params, timeout=timeout, owned=True, check=False).result()

    def request_future(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                       timeout: Any = DEFAULT) -> CallFuture[Any]:
        """``request``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is the raw ``result`` or raises what ``request`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._call(method, params, timeout=timeout, owned=False, check=False)

    def ping(self, *, timeout: Any = DEFAULT) -> None:
        """Check the server answers (``ping``; in the 2026 era, which has no ping, ``server/discover``).

        Args:
            timeout: seconds (omitted: the client's default).

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
        """
        self._call(self._conn.ready("ping").ping_method, None, _params.none, timeout=timeout, owned=True).result()

    def ping_future(self, *, timeout: Any = DEFAULT) -> CallFuture[None]:
        """``ping``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is ``None`` or raises what ``ping`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._call(self._conn.ready("ping").ping_method, None, _params.none, timeout=timeout, owned=False)

    # tools

    def _tool_parser(self) -> Callable[[Any], Optional[Tool]]:
        tools = self._tools  # (not self: a detached future must not keep the client alive)
        generation, headers = tools.generation(), self._conn.ready("tools/list").tool_headers
        return lambda raw: tools.parse(raw, generation, headers)

    def iter_tools(self, *, timeout: Any = DEFAULT) -> Iterator[Tool]:
        """Yield tools page by page (each page fetched when needed, with its own ``timeout``).

        Yields:
            Each tool, parsed.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``tools`` (nothing was sent).
        """
        return self._iter("tools/list", "tools", self._tool_parser(), timeout)

    def list_tools(self, *, timeout: Any = DEFAULT) -> List[Tool]:
        """Every tool the server offers (all pages, one ``timeout`` for all of them).

        Returns:
            A list of ``Tool``; their output schemas are remembered for validating calls.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``tools`` (nothing was sent).
        """
        return self._list("tools/list", "tools", self._tool_parser(), timeout, True).result()  # type: ignore[no-any-return]

    def list_tools_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[Tool]]:
        """``list_tools``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a list of ``Tool`` or raises what ``list_tools`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._list("tools/list", "tools", self._tool_parser(), timeout, False)

    def _tool_call(self, name: str, arguments: Optional[Dict[str, Any]], raise_on_error: bool,
                   meta: Optional[Dict[str, Any]], timeout: Any, on_progress: Optional[ProgressCallback],
                   reset: Optional[bool], owned: bool) -> CallFuture:
        known, learn = None, None
        if self.validate_output and isinstance(name, str):
            known = self._tools.get(name)
            if known is None and self.validate_output is True:  # (a known tool costs nothing more)
                known, learn, timeout = self._unlisted_tool(name, arguments, timeout, owned)
        params, transform = _params.tool_call(name, arguments, raise_on_error, meta, known, learn)
        taken = None if self._ext is None else self._ext.call_future(  # (a blocking call waits on it too)
            self._ext_call, "tools/call", params, transform, timeout=timeout, on_progress=on_progress, reset=reset)
        return taken if taken is not None else self._call("tools/call", params, transform, timeout=timeout, owned=owned,
                                   on_progress=on_progress, reset=reset)

    def _unlisted_tool(self, name: str, arguments: Any, timeout: Any, owned: bool
                       ) -> Tuple[Optional[Tool], Optional[Callable[[], Optional[Tool]]], Any]:
        """A call to ``name``, which no listing since the tools changed has shown: ``(tool,
        learn, timeout)``. A blocking call lists now (``tool``) and keeps what is left of its
        ``timeout``; a future returns at once, and its worker lists once the answer came
        (``learn``), within the call's timeout from then (progress may have moved its deadline)."""
        seconds = self._timeout(timeout)
        if not owned:
            learn_tool = weakly(self._learn_tool)  # (a detached future must not keep the client alive)
            return None, lambda: learn_tool(name, seconds, None if seconds is None else time.monotonic() + seconds), \
                timeout
        if isinstance(arguments, dict):
            encode_frame(arguments)  # arguments that cannot be sent are refused before the listing
        deadline = None if seconds is None else time.monotonic() + seconds
        known = self._learn_tool(name, seconds, deadline)
        return known, None, None if deadline is None else max(0.0, deadline - time.monotonic())

    def _learn_tool(self, name: str, seconds: Optional[float], deadline: Optional[float]) -> Optional[Tool]:
        """List the tools to learn ``name``'s ``outputSchema`` (``ToolRegistry.lookup``) by
        ``deadline`` (monotonic; ``seconds``: the call's timeout, for the message). Returns the
        tool, or None: the listing does not name it, or it failed (the call then goes ahead
        unvalidated). ``RequestTimeout`` if the deadline passed first."""
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            known = self._tools.lookup(name, lambda wait: self.list_tools(timeout=wait), left)
        except (RequestTimeout, FlightTimeout):
            raise RequestTimeout(f"tools/call {name!r}: no outputSchema known and the tools could not be listed "
                                 f"within the call's timeout ({seconds} s; validate_output='listed' never lists)",
                                 method="tools/call") from None
        except MCPError as exc:  # refused, malformed, or the connection failed: the call goes ahead
            log.debug("tools/call %r: could not list the tools (%s); its output is not validated", name,
                      type(exc).__name__)
            return None
        if known is None:
            log.debug("tools/call %r: no listed tool of that name; its output is not validated", name)
        return known

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
        """Call a tool and return its ``ToolResult``.

        A tool that fails reports ``is_error=True`` as data; pass ``raise_on_error=True`` (or call
        ``result.raise_for_error()``) to get a ``ToolError``. Structured output is validated against
        the tool's ``outputSchema`` (see ``Client(validate_output=)``: an unlisted tool makes the
        client list the tools once).

        ``task=True`` (or ``task={"ttl": ms}``) runs the call as a task (2025-11-25, experimental)
        and returns a ``ToolTask`` at once: ``.status()``, ``.result(timeout=)``, ``.cancel()``. The
        server must declare task support for tool calls and the tool must not forbid it
        (``Tool.task_support``).

        Args:
            name: the tool's name.
            arguments: its arguments (a JSON object).
            timeout: seconds (omitted: the client's default).
            on_progress: ``(progress, total, message)``, called on the notification thread.
            raise_on_error: raise ``ToolError`` instead of returning a result with ``is_error``.
            meta: ``_meta`` sent with the request.
            reset_timeout_on_progress: overrides the client's setting for this call.
            task: run as a task (``True`` or ``{"ttl": milliseconds}``).

        Returns:
            The ``ToolResult`` (``.text``, ``.content``, ``.structured_content``, ``.is_error``), or a
            ``ToolTask`` when ``task`` is set.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``tools`` (nothing was sent).
            ToolError: the tool reported an error and ``raise_on_error`` is set.
            SchemaValidationError: the structured output does not match the tool's ``outputSchema``.
            UnsendableMessage: the arguments cannot be encoded as JSON (nothing was sent).
            URLElicitationRequired: the server needs the user to complete URL elicitations first.
        """
        if task is True or isinstance(task, dict):
            return self._task(name, arguments, raise_on_error, meta, task, timeout)
        if task not in (False, None):
            raise TypeError("task must be True, False or a dict such as {'ttl': 60000}")
        return self._tool_call(name, arguments, raise_on_error, meta, timeout, on_progress,  # type: ignore[no-any-return]
                               reset_timeout_on_progress, True)._join()

    def call_tool_future(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT,
                         on_progress: Optional[ProgressCallback] = None, raise_on_error: bool = False,
                         meta: Optional[Dict[str, Any]] = None,
                         reset_timeout_on_progress: Optional[bool] = None) -> CallFuture[ToolResult]:
        """``call_tool``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is the ``ToolResult`` (tasks have no future twin) or raises what ``call_tool`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._tool_call(name, arguments, raise_on_error, meta, timeout, on_progress,
                               reset_timeout_on_progress, False)

    # resources

    def iter_resources(self, *, timeout: Any = DEFAULT) -> Iterator[Resource]:
        """Yield resources page by page (each page fetched when needed, with its own ``timeout``).

        Yields:
            Each resource, parsed.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``resources`` (nothing was sent).
        """
        return self._iter("resources/list", "resources", _types.Resource.from_wire, timeout)

    def list_resources(self, *, timeout: Any = DEFAULT) -> List[Resource]:
        """Every resource the server lists (all pages, one ``timeout`` for all).

        Returns:
            A list of ``Resource``.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``resources`` (nothing was sent).
        """
        return self._list("resources/list", "resources", _types.Resource.from_wire, timeout, True).result()  # type: ignore[no-any-return]

    def list_resources_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[Resource]]:
        """``list_resources``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a list of ``Resource`` or raises what ``list_resources`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._list("resources/list", "resources", _types.Resource.from_wire, timeout, False)

    def iter_resource_templates(self, *, timeout: Any = DEFAULT) -> Iterator[ResourceTemplate]:
        """Yield resource templates page by page (each page fetched when needed, with its own ``timeout``).

        Yields:
            Each resource template, parsed.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``resources`` (nothing was sent).
        """
        return self._iter("resources/templates/list", "resourceTemplates", _types.ResourceTemplate.from_wire, timeout)

    def list_resource_templates(self, *, timeout: Any = DEFAULT) -> List[ResourceTemplate]:
        """Every resource template (all pages, one ``timeout`` for all).

        Returns:
            A list of ``ResourceTemplate``.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``resources`` (nothing was sent).
        """
        return self._list("resources/templates/list", "resourceTemplates", _types.ResourceTemplate.from_wire, timeout,  # type: ignore[no-any-return]
                          True).result()

    def list_resource_templates_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[ResourceTemplate]]:
        """``list_resource_templates``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a list of ``ResourceTemplate`` or raises what ``list_resource_templates`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._list("resources/templates/list", "resourceTemplates", _types.ResourceTemplate.from_wire, timeout, False)

    def read_resource(self, uri: str, *, timeout: Any = DEFAULT) -> List[ResourceContents]:
        """Read a resource; text comes as ``.text``, binary as decoded ``.blob`` bytes.

        Args:
            uri: the resource's URI.
            timeout: seconds (omitted: the client's default).

        Returns:
            A list of ``ResourceContents`` (one resource may have several parts).

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``resources`` (nothing was sent).
            ResourceNotFound: no such resource (handshake-era servers; 2026 servers answer ``InvalidParams``).
        """
        return self._call("resources/read", {"uri": _params.uri(uri)}, _params.contents, timeout=timeout,  # type: ignore[no-any-return]
                          owned=True).result()

    def read_resource_future(self, uri: str, *, timeout: Any = DEFAULT) -> CallFuture[List[ResourceContents]]:
        """``read_resource``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a list of ``ResourceContents`` or raises what ``read_resource`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._call("resources/read", {"uri": _params.uri(uri)}, _params.contents, timeout=timeout, owned=False)

    def subscribe_resource(self, uri: str, *, timeout: Any = DEFAULT) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri``.

        Updates reach ``on_resource_updated`` and ``on_notification``. 2026 era: kept in one
        ``subscriptions/listen`` stream for all such URIs.

        Args:
            uri: the resource's URI.
            timeout: seconds (omitted: the client's default).

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``resources.subscribe`` (nothing was sent).
        """
        self._subscription("resources/subscribe", uri, timeout, True).result()

    def subscribe_resource_future(self, uri: str, *, timeout: Any = DEFAULT) -> CallFuture[None]:
        """``subscribe_resource``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is ``None`` or raises what ``subscribe_resource`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._subscription("resources/subscribe", uri, timeout, False)

    def unsubscribe_resource(self, uri: str, *, timeout: Any = DEFAULT) -> None:
        """Stop the updates ``subscribe_resource(uri)`` asked for.

        Args:
            uri: the resource's URI.
            timeout: seconds (omitted: the client's default).

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``resources.subscribe`` (nothing was sent).
        """
        self._subscription("resources/unsubscribe", uri, timeout, True).result()

    def unsubscribe_resource_future(self, uri: str, *, timeout: Any = DEFAULT) -> CallFuture[None]:
        """``unsubscribe_resource``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is ``None`` or raises what ``unsubscribe_resource`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._subscription("resources/unsubscribe", uri, timeout, False)

    def _subscription(self, method: str, uri: str, timeout: Any, owned: bool) -> CallFuture:
        era = self._conn.ready(method)
        return self._subscriptions.change(method, _params.uri(uri), era.stateless, self._timeout(timeout), owned)

    # prompts and completion

    def iter_prompts(self, *, timeout: Any = DEFAULT) -> Iterator[Prompt]:
        """Yield prompts page by page (each page fetched when needed, with its own ``timeout``).

        Yields:
            Each prompt, parsed.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``prompts`` (nothing was sent).
        """
        return self._iter("prompts/list", "prompts", _types.Prompt.from_wire, timeout)

    def list_prompts(self, *, timeout: Any = DEFAULT) -> List[Prompt]:
        """Every prompt (all pages, one ``timeout`` for all).

        Returns:
            A list of ``Prompt``.

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``prompts`` (nothing was sent).
        """
        return self._list("prompts/list", "prompts", _types.Prompt.from_wire, timeout, True).result()  # type: ignore[no-any-return]

    def list_prompts_future(self, *, timeout: Any = DEFAULT) -> CallFuture[List[Prompt]]:
        """``list_prompts``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a list of ``Prompt`` or raises what ``list_prompts`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._list("prompts/list", "prompts", _types.Prompt.from_wire, timeout, False)

    def get_prompt(self, name: str, arguments: Optional[Dict[str, str]] = None, *,
                   timeout: Any = DEFAULT) -> PromptResult:
        """Render a prompt with string ``arguments``.

        Args:
            name: the prompt's name.
            arguments: its arguments, strings only.
            timeout: seconds (omitted: the client's default).

        Returns:
            A ``PromptResult`` (``.description``, ``.messages``).

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``prompts`` (nothing was sent).
        """
        return self._call("prompts/get", _params.prompt_params(name, arguments), _types.PromptResult.from_wire,  # type: ignore[no-any-return]
                          timeout=timeout, owned=True).result()

    def get_prompt_future(self, name: str, arguments: Optional[Dict[str, str]] = None, *,
                          timeout: Any = DEFAULT) -> CallFuture[PromptResult]:
        """``get_prompt``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a ``PromptResult`` or raises what ``get_prompt`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._call("prompts/get", _params.prompt_params(name, arguments), _types.PromptResult.from_wire,
                          timeout=timeout, owned=False)

    def complete(self, ref: Any, argument_name: str, argument_value: str,
                 context: Optional[Dict[str, str]] = None, *, timeout: Any = DEFAULT) -> Completion:
        """Suggest values for an argument of a prompt or resource template.

        Args:
            ref: a ``Prompt``, a ``ResourceTemplate``/``Resource``, a wire dict
                (``{"type": "ref/prompt", "name": ...}``), a prompt name, or a URI (template).
            argument_name: the argument being completed.
            argument_value: what the user has typed so far.
            context: the values of the other arguments already chosen.
            timeout: seconds (omitted: the client's default).

        Returns:
            A ``Completion`` (``.values``, ``.total``, ``.has_more``).

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``completions`` (nothing was sent).
        """
        return self._call("completion/complete", _params.complete_params(ref, argument_name, argument_value, context),  # type: ignore[no-any-return]
                          _types.Completion.from_wire, timeout=timeout, owned=True).result()

    def complete_future(self, ref: Any, argument_name: str, argument_value: str,
                        context: Optional[Dict[str, str]] = None, *, timeout: Any = DEFAULT) -> CallFuture[Completion]:
        """``complete``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is a ``Completion`` or raises what ``complete`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        return self._call("completion/complete", _params.complete_params(ref, argument_name, argument_value, context),
                          _types.Completion.from_wire, timeout=timeout, owned=False)

    def set_logging_level(self, level: str, *, timeout: Any = DEFAULT) -> None:
        """Ask the server to send log messages at ``level`` and above.

        In the 2026 era there is no ``logging/setLevel``: the level rides in the ``_meta`` of every
        later request instead (and only those requests' log messages are sent).

        Args:
            level: a syslog level name: ``"debug"``, ``"info"``, ... ``"emergency"``.
            timeout: seconds (omitted: the client's default).

        Raises:
            RequestTimeout: no answer within ``timeout`` (the request is cancelled on the server).
            MCPError: any other failure: ``RPCError`` (the server's error, by code), ``TransportError``,
                ``AuthError``, ``ProtocolError``, ``ClientClosedError`` (see *Errors* in the docs).
            CapabilityError: the server did not declare ``logging`` (nothing was sent).
            ValueError: ``level`` is not a level name.
        """
        self.set_logging_level_future(level, timeout=timeout).result()

    def set_logging_level_future(self, level: str, *, timeout: Any = DEFAULT) -> CallFuture[None]:
        """``set_logging_level``, returning at once (``future.cancel()`` cancels the request on the server).

        Returns:
            A ``CallFuture``; its ``result()`` is ``None`` or raises what ``set_logging_level`` raises.

        Raises:
            ClientClosedError: the client is closed (other errors come from ``result()``).
        """
        level = _params.level(level)
        return self._conn.ready("logging/setLevel").set_logging_level(
            self._conn.session, level, lambda method, params: self._call(method, params, _params.none, timeout=timeout,
                                                                    owned=False))

    # subscriptions and the server's side

    def listen(self, *, tools: bool = False, prompts: bool = False, resources: bool = False,
               resource_uris: Sequence[str] = (), on_event: Optional[Callable[[Event], Any]] = None) -> Subscription:
        """Receive change events: tools/prompts/resources list changes, updates of ``resource_uris``.

        Iterate the subscription (blocking) or ``get(timeout)``; ``on_event(event)`` is also called
        for each, on the notification thread. ``close()`` (or ``with``) ends it. 2026 era: a
        ``subscriptions/listen`` request (not subject to the call timeout); handshake era: the server's
        unsolicited notifications, plus ``resources/subscribe`` for each URI.

        Args:
            tools: receive changes of the tool list.
            prompts: receive changes of the prompt list.
            resources: receive changes of the resource list.
            resource_uris: resources whose updates to receive.
            on_event: ``(Event)`` for each event, on the notification thread.

        Returns:
            A ``Subscription`` of ``Event`` objects.

        Raises:
            ValueError: nothing was asked for.
            ClientClosedError: the client is closed.
            CapabilityError: (handshake era) ``resource_uris`` given, and the server did not declare
                ``resources.subscribe``.
            MCPError: (handshake era) what ``subscribe_resource`` raises for one of ``resource_uris``.
            SubscriptionLost: (from the subscription's ``get()`` or iteration) its stream broke
                without the server ending it.
        """
        from ._client.events import filter_params  # deferred: import cost (events); only listen() needs it

        wanted = filter_params(tools, prompts, resources, [_params.uri(u) for u in resource_uris])
        if not wanted:
            raise ValueError("listen() needs at least one of tools, prompts, resources or resource_uris")
        return self._subscriptions.listen(self._conn.ready("subscriptions/listen").stateless, wanted, on_event)

    def set_roots(self, roots: RootsSetting) -> None:
        """Replace the roots and tell the server (``notifications/roots/list_changed``).

        The client must have been built with ``roots=`` (``roots=[]`` declares the capability with no
        roots yet); before ``connect()`` only the stored roots change.

        Args:
            roots: a list of ``Root`` or ``file://`` URI strings, or a callable returning one per request.

        Raises:
            ClientClosedError: the client is closed.
            ValueError: the client declared no roots (build it with ``roots=``), or a URI is not a
                local ``file://`` path.
            TypeError: ``roots`` is not a list of ``Root`` objects, URI strings or dicts.
        """
        era = self._conn.era_if_ready("set_roots")  # ClientClosedError once closed
        self._responder.set_roots(roots)
        if era is not None:
            era.roots_changed(self._conn.session)

    def wait_for_elicitation(self, elicitation_id: str, timeout: Optional[float] = None) -> bool:
        """Block until the server reports the URL elicitation ``elicitation_id`` complete.

        The server says so with ``notifications/elicitation/complete``; then repeat the request that
        raised ``URLElicitationRequired``.

        Args:
            elicitation_id: the ``ElicitationRequest.elicitation_id`` to wait for.
            timeout: seconds; ``None`` waits for ever.

        Returns:
            True once it completed; False if ``timeout`` seconds passed first.

        Raises:
            ClientClosedError: the client was closed, or its connection lost, meanwhile.
        """
        return self._notifications.elicitations.wait(elicitation_id, timeout, lambda: self._conn.session.is_closed)

    def invalidate_cache(self) -> None:
        """Forget every cached result (2026 servers' ``ttlMs`` hints; see ``Client(cache=)``).

        Raises:
            Nothing: it only clears this side's memory.
        """
        if self._cache is not None:
            self._cache.invalidate()

    def _invalidate(self, kind: str, uri: Optional[str] = None) -> None:
        """A notification said ``kind`` changed: forget what it made stale."""
        if kind == "tools":
            self._tools.forget()  # output schemas may have changed
        if self._cache is not None:
            self._cache.forget(kind, uri)
