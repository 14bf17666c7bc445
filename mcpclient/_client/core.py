"""``ClientCore``: what a ``Client`` is made of, behind its public methods.

The façade checks a method's arguments, makes the call's one ``Deadline`` and hands the call
here; the core sends it the negotiated era's way (``call``), walks listings, learns a tool's
output schema before a call that needs it, and owns the collaborators: the connection, the
responder, the notification and subscription routers, the tool registry, the result cache, the
declared extensions and the tracer. The collaborators reach the client through this one object,
never the ``Client`` itself: the connection's threads, the routers and the extensions hold the
core, so a ``Client`` nobody references is collected, and its finalizer (``release``) closes
the core with a ``ResourceWarning``, as an unclosed file does.

It implements the small interfaces its collaborators declare: ``Requester`` (features that
send), ``ConnectionOwner`` (``_client.connection``), ``NotificationOwner`` (``_client.
notifications``), ``SubscriptionOwner`` (``_client.subscriptions``), ``Traced`` (the tracer).
"""
from __future__ import annotations

import logging
import sys
import time
import warnings
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, TypeVar, cast

from .._engine.deadline import Deadline, check_timeout
from .._engine.futures import CallFuture, ProgressCallback, Transform
from .._engine.session import CANCEL_GRACE, Session
from .._util.sentinel import DEFAULT
from .._util.threads import FlightTimeout, start_thread
from ..errors import CapabilityError, ClientClosedError, ConnectionClosed, MCPError, RequestTimeout
from ..policies.timeout import Limits, Timeout
from ..protocol import params as _params
from ..protocol.cache import ResultCache
from ..protocol.eras import Era
from ..protocol.spec import server_has
from ..transports.base import CLOSE_BUDGET, Transport
from .connection import Connection, Connector, era_for
from .notifications import NotificationRouter
from .options import Settings
from .subscriptions import SubscriptionRouter
from .tools import ToolRegistry

if TYPE_CHECKING:
    from .options import Options
    from ..types._tools import Tool
    from ..extensions.registry import Registry
    from ..extensions.tasks.core import ToolTask
    from ..policies.tracing import Tracing
    from ..protocol.negotiation import Negotiated
    from .._engine.hooks import CallTracer
    from .._engine.rules import RPCRules

__all__ = ["ClientCore", "declared_extensions"]

#: ``Client.page(kind)``: kind -> (method, result key, the name of its type in ``types``).
_LISTINGS = {"tools": ("tools/list", "tools", "Tool"), "resources": ("resources/list", "resources", "Resource"),
             "resource_templates": ("resources/templates/list", "resourceTemplates", "ResourceTemplate"),
             "prompts": ("prompts/list", "prompts", "Prompt")}

T = TypeVar("T")

log = logging.getLogger("mcpclient")


class ClientCore:
    """One client's inside (see the module docstring), made on the client's first use
    (``_client.first_use``), from the arguments ``Client.__init__`` checked (``Options``)."""

    def __init__(self, client: Any, options: Options) -> None:
        """Wire the collaborators from ``Client(...)``'s checked ``options`` (``client``, the
        ``Client`` being built, is not kept: nothing here may keep it alive)."""
        self._tracing: Optional[Tracing] = options.tracing  # the options, until the first connect() makes the tracer
        self._tracing_auto = options.tracing_auto  # automatic: decided at connect() (see Options)
        self.tracer: Optional[CallTracer] = None
        self.settings = Settings(Timeout.of(options.timeout), options.limits or Limits(), options.validate_output)
        registry = self.extensions = options.registry
        self.responder = options.responder
        self.text = options.text
        self.tools = ToolRegistry(self.text)
        self.cache = ResultCache(self.credentials) if options.cache else None
        self.subscriptions = SubscriptionRouter(self)
        self.subscriptions.keep_on_loss = bool(options.reconnect)
        self.notifications = NotificationRouter(
            options.server_log, self, on_notification=options.on_notification, on_log=options.on_log)
        self.on_reconnect = options.on_reconnect
        self._features: Dict[Any, Any] = {}  # Client.extension(kind): kind -> its object
        if registry is not None:
            self._install(registry)
        connector = Connector(options.protocol, options.client_info, self.responder.capabilities,
                              self.settings.timeout.probe, reuse_discovery=options.cache)
        self.conn = Connection(options.transport, connector, self, reconnect=options.reconnect,
                               keepalive=options.keepalive)

    # --- the one way to send (``Requester``) ----------------------------------------------------

    def deadline(self, timeout: Any = DEFAULT) -> Deadline:
        """The deadline of a call made now with ``timeout=``: ``DEFAULT`` (the client's
        ``Timeout``), a ``Timeout``, or seconds (reset on progress as the client's says)."""
        policy = self.settings.timeout
        if isinstance(timeout, Timeout):
            policy, seconds = timeout, timeout.call
        else:
            seconds = policy.call if timeout is DEFAULT else check_timeout(timeout)
        resets = policy.reset_on_progress
        return Deadline(seconds, resets=resets, max_total=policy.total if resets else None)

    @property
    def session(self) -> Session:
        """The current session (a reconnect replaces it)."""
        return self.conn.session

    def call(self, method: str, params: Optional[Mapping[str, object]], transform: Optional[Transform], deadline: Deadline,
             *, check: bool = True, on_progress: Optional[ProgressCallback] = None,
             on_late: Optional[Callable[[Dict[str, Any]], Any]] = None) -> CallFuture[Any]:
        """Send ``method`` the way the negotiated era does, within ``deadline`` (a reconnect
        spends it too). ``check``: refuse (``CapabilityError``, nothing sent) what the server did not declare."""
        era = self.conn.ready(method, deadline)
        era.check(method, capabilities=check)
        if isinstance(params, Mapping) and not isinstance(params, dict):
            params = dict(params)
        return era.call(self.conn.session, method, cast(Optional[Dict[str, Any]], params), transform, deadline, on_progress=on_progress,
                        on_late=on_late)

    def ping(self, deadline: Deadline) -> CallFuture[None]:
        """``ping`` (the 2026 era has none: ``server/discover``)."""
        return self.call(self.conn.ready("ping", deadline).ping_method, None, _params.none, deadline)

    def subscription(self, method: str, uri: str, deadline: Deadline) -> CallFuture[None]:
        """``resources/subscribe`` or ``resources/unsubscribe`` (2026: a change of the one listen)."""
        era = self.conn.ready(method, deadline)
        era.check_capability(method)  # (both eras: 2026 carries it on a listen)
        return self.subscriptions.change(method, uri, era.stateless, deadline)

    def listen(self, tools: bool, prompts: bool, resources: bool, uris: List[str],
               on_event: Optional[Callable[[Any], Any]]) -> Any:
        """``Client.listen``: a ``Subscription`` (its handshake-era subscribes within the client's timeout)."""
        from .events import filter_params  # deferred: import cost (events); only listen() needs it

        wanted = filter_params(tools, prompts, resources, uris)
        if not wanted:
            raise ValueError("listen() needs at least one of tools, prompts, resources or resource_uris")
        deadline = self.deadline()
        era = self.conn.ready("subscriptions/listen", deadline)
        return self.subscriptions.listen(era.stateless, era.honoured(wanted), on_event, deadline)

    def set_logging_level(self, level: str, deadline: Deadline) -> CallFuture[None]:
        """``logging/setLevel``, or (2026) the level in every later request's ``_meta``."""
        return self.conn.ready("logging/setLevel", deadline).set_logging_level(
            self.session, level, lambda method, params: self.call(method, params, _params.none, deadline))

    def set_roots(self, roots: Any) -> None:
        """Replace the roots; once connected, the handshake era tells the server."""
        era = self.conn.era_if_ready("set_roots")  # ClientClosedError once closed
        self.responder.set_roots(roots)
        if era is not None:
            era.roots_changed(self.session)

    def listing(self, method: str, key: str, parse: Callable[[Any], Optional[T]],
                deadline: Deadline) -> CallFuture[List[T]]:
        """A whole listing (every page, within one deadline) as one call."""
        try:
            return self.call(method, None, _params.pages(method, key, parse, self.settings.limits.pages), deadline)
        except CapabilityError as exc:
            return CallFuture.failed(self.conn.session, method, exc)  # a listing's future reports it

    def page(self, kind: str, cursor: Optional[str], deadline: Deadline) -> CallFuture[Any]:
        """``Client.page``: one page of a listing from ``cursor``."""
        from .. import types  # (the catalog types load on first use: see types)

        listing = _LISTINGS.get(kind) if isinstance(kind, str) else None
        if listing is None:
            raise ValueError(f"kind must be one of {', '.join(map(repr, _LISTINGS))}, not {kind!r}")
        method, key, type_name = listing
        parse = self.tool_parser(deadline) if kind == "tools" else getattr(types, type_name).from_wire
        if cursor is not None and not isinstance(cursor, str):
            raise TypeError("cursor must be a string, or None for the first page")
        return self.call(method, None if cursor is None else {"cursor": cursor}, _params.one_page(method, key, parse),
                         deadline)

    # --- tools ----------------------------------------------------------------------------------

    def tool_parser(self, deadline: Deadline) -> Callable[[Any], Optional[Tool]]:
        """How a listing's tools are parsed (and remembered: output schemas, routing headers)."""
        tools = self.tools  # (not self: a future nobody waits on must not keep the core's client alive)
        generation, headers = tools.generation(), self.conn.ready("tools/list", deadline).tool_headers
        return lambda raw: tools.parse(raw, generation, headers)

    def list_tools(self, deadline: Deadline) -> CallFuture[List[Tool]]:
        """``tools/list``, every page (the tools are remembered: ``tools``)."""
        return self.listing("tools/list", "tools", self.tool_parser(deadline), deadline)

    def tool_call(self, name: str, arguments: Optional[Mapping[str, object]], raise_on_error: bool,
                  meta: Optional[Mapping[str, object]], deadline: Deadline,
                  on_progress: Optional[ProgressCallback]) -> CallFuture[Any]:
        """``tools/call``: validated against the tool's ``outputSchema`` (when none is known, the
        tools are listed once the answer came, within the call's deadline, as the official SDKs
        do: ``Client(validate_output=)``), taken over by a declared extension that claims it (the
        Tasks extension)."""
        known, learn = None, None
        validate = self.settings.validate_output
        if validate and isinstance(name, str):
            known = self.tools.get(name)
            if known is None and validate is True:  # (a known tool costs nothing more)
                learn = lambda: self._learn_tool(name, deadline)  # noqa: E731
        params, transform = _params.tool_call(name, arguments, raise_on_error, meta, known, learn)
        registry = self.extensions
        taken = None if registry is None else registry.call_future(
            "tools/call", params, transform, deadline, on_progress)
        if taken is not None:
            return taken
        return self.call("tools/call", params, transform, deadline, on_progress=on_progress)

    def _learn_tool(self, name: str, deadline: Deadline) -> Optional[Tool]:
        """List the tools to learn ``name``'s ``outputSchema`` (``ToolRegistry.lookup``) within
        the call's ``deadline`` (moved by its progress, where it resets). Returns the tool, or
        None: the listing does not name it, or it failed (the call then goes ahead unvalidated).
        ``RequestTimeout`` if the deadline passed first. (On a worker, the wait for another
        thread's listing lets the pool grow by one: that listing's answer may need a worker.)"""
        try:
            with self.session.worker_waits():
                known = self.tools.lookup(name, lambda within: self.list_tools(within).result(), deadline)
        except (RequestTimeout, FlightTimeout):
            raise RequestTimeout(f"tools/call {name!r}: no outputSchema known and the tools could not be listed "
                                 f"within the call's timeout ({deadline.seconds} s; validate_output='listed' never "
                                 "lists)", method="tools/call") from None
        except MCPError as exc:  # refused, malformed, or the connection failed: the call goes ahead
            log.debug("tools/call %r: could not list the tools (%s); its output is not validated", name,
                      type(exc).__name__)
            return None
        if known is None:
            log.debug("tools/call %r: no listed tool of that name; its output is not validated", name)
        return known

    # --- what the routers ask (``NotificationOwner``, ``SubscriptionOwner``) ----------------------

    def invalidate(self, kind: str, uri: Optional[str] = None) -> None:
        """A notification said ``kind`` changed: forget what it made stale."""
        if kind == "tools":
            self.tools.forget()  # output schemas may have changed
        if self.cache is not None:
            self.cache.forget(kind, uri)

    def route(self, method: str, params: Dict[str, Any]) -> None:
        """A notification for the subscriptions (``listen()``)."""
        self.subscriptions.route(method, params)

    def credentials(self) -> Optional[str]:
        """A fingerprint of the credentials in use (the cache keeps private results per identity)."""
        return self.conn.transport.info.credentials

    # --- what the connection asks (``ConnectionOwner``) -----------------------------------------

    @property
    def handshake_timeout(self) -> Optional[float]:
        """The most a reconnect's handshake may take, even for a caller without a limit."""
        return self.settings.timeout.connect

    def new_session(self, transport: Transport, rules: RPCRules) -> Session:
        responder = self.responder
        session = Session(transport, rules=rules, on_request=responder.answer,
                          on_notification=self.notifications.handle,
                          on_notification_read=self.subscriptions.route_at_once,
                          max_workers=self.settings.limits.workers)
        session.tracer = self.tracer  # (None until the first connect() with tracing on)
        declared = responder.capabilities().get("extensions")
        if isinstance(declared, dict) and declared:
            session.declared_extensions = frozenset(declared)
        requests = session.requests
        requests.on_request_read = lambda rid, method, params: responder.take_at_once(rid, method, params, requests.reply)
        session.on_session_renewed = self.subscriptions.resubscribe
        return session

    def make_era(self, negotiated: Negotiated, transport: Transport) -> Era:
        era = era_for(negotiated, self.responder.capabilities(), self.conn.connector.client_info,
                      self.responder.answer, self.settings.limits.input_rounds, self.cache, transport.info.sends_headers)
        if self.extensions is not None:
            self.extensions.extend(era, transport.info.sends_headers)
        return era

    def lost(self, error: MCPError) -> None:
        """The connection was lost (reader or timer thread): subscriptions end, or with a
        reconnect policy wait for the next connection, which, while any are open, is made at
        once (on a thread of its own) rather than by the next call. The tools learned for output
        validation are forgotten: the next connection may reach a restarted server."""
        self.tools.forget()
        conn, subscriptions = self.conn, self.subscriptions
        if conn.reconnect is None:
            subscriptions.end_all(error)
        elif subscriptions.active():
            start_thread(lambda: _reconnect_now(conn, subscriptions), f"mcpclient-{conn.session.instance}-reconnect")

    def restored(self, era: Era) -> None:
        """A reconnect succeeded: the tools are learned again (a new server session, maybe a
        restarted server: its output schemas may differ), subscriptions again, then ``on_reconnect``."""
        self.tools.forget()
        self.subscriptions.restore(era.stateless)
        if self.extensions is not None:
            self.extensions.bind()
        if self.on_reconnect is not None:
            self.conn.session.after_notifications("on_reconnect callback", self.on_reconnect)

    def forked(self) -> None:
        """At-fork hook, in the child before any other code: the locks a thread of the parent
        (the notification thread, a caller) may have held at the fork are replaced, as
        ``Connection`` replaces its own; the child's first call, reconnect and close take them."""
        self.subscriptions.forked()
        self.notifications.forked()
        self.tools.forked()
        if self.cache is not None:
            self.cache.forked()

    # --- lifecycle ------------------------------------------------------------------------------

    def connect(self, timeout: Any) -> None:
        """``Client.connect``: the whole connection within ``timeout``."""
        if self.tracer is None and (self._tracing is not None or (self._tracing_auto and "opentelemetry" in sys.modules)):
            self._start_tracing()
        self.conn.open(self._connect_deadline(timeout))
        if self.extensions is not None:
            try:
                self.extensions.bind()  # (it logs what an extension's bind() raises and goes on)
            except BaseException:  # Ctrl-C, SystemExit: nothing this connect started stays running
                self.release()
                raise

    def _connect_deadline(self, timeout: Any) -> Deadline:
        """``connect(timeout=)``'s deadline: ``DEFAULT`` (the client's ``Timeout.connect``), a
        ``Timeout`` (its ``connect``) or seconds."""
        if timeout is DEFAULT:
            return Deadline(self.settings.timeout.connect)
        return Deadline(timeout.connect if isinstance(timeout, Timeout) else check_timeout(timeout))

    def _start_tracing(self) -> None:
        """At the first ``connect()`` with tracing on: make the OpenTelemetry tracer (this imports
        ``opentelemetry``) and install it on the session and the responder; later sessions get it
        in ``new_session``. Automatic tracing goes quietly off if the package cannot be imported."""
        if self._tracing is None:  # automatic, and the application has imported OpenTelemetry
            from ..policies.tracing import wants_tracing  # deferred: import cost (a dataclass)

            self._tracing = wants_tracing(None)
            if self._tracing is None:
                return
        try:
            from ..tracing.otel import ClientTracer  # deferred: opentelemetry loads only for a client that traces
        except ImportError as exc:
            if not self._tracing_auto:
                from ..policies.tracing import missing_extra  # (loaded already: tracing was asked for)

                raise missing_extra() from exc
            log.debug("tracing is off: opentelemetry cannot be imported (%s)", exc)
            self._tracing, self._tracing_auto = None, False
            return
        self.tracer = ClientTracer(self._tracing, self.conn)  # type: ignore[arg-type]
        self.responder.tracer = self.conn.session.tracer = self.tracer

    def release(self, collected: bool = False) -> None:
        """Close everything: ``Client.close()``, or the collection of a client nobody closed
        (then a ``ResourceWarning`` says so, as for an unclosed file). Within ``CLOSE_BUDGET``."""
        conn = self.conn
        if collected and conn.state in ("connecting", "ready", "lost"):  # (not "forked": the parent's)
            warnings.warn(f"unclosed mcpclient.Client of {conn.transport.info.name!r} (use close() or 'with')",
                          ResourceWarning, stacklevel=2)
        deadline = time.monotonic() + CLOSE_BUDGET
        if not collected and conn.state == "ready":  # the cancellations decided already go out first
            grace = min(deadline, time.monotonic() + CANCEL_GRACE)
            conn.session.drain(grace)
            if self.extensions is not None:
                self.extensions.wind_down(grace)  # (the Tasks extension: its tasks/cancel answered)
        session = conn.mark_closed()  # from here on every call is refused
        tasks = self.responder.tasks
        if tasks is not None:
            tasks.release()  # unfinished tasks end; nothing new is accepted
        self.notifications.elicitations.close()
        self.subscriptions.end_all(None)
        if session is not None:  # (None in a forked child: the connection is the parent's)
            session.close(deadline)
        if tasks is not None:
            tasks.close(deadline)
        if self.extensions is not None:
            self.extensions.close()

    # --- tasks (loaded on first use) -----------------------------------------------------------

    def start_task(self, name: str, arguments: Optional[Dict[str, Any]], raise_on_error: bool,
                   meta: Optional[Dict[str, Any]], task: Any, deadline: Deadline) -> ToolTask:
        """``Tasks.call_tool`` (2025-11-25): learn whether the tool allows tasks, then start one."""
        from ..extensions.tasks import core as tasks  # deferred: import cost (tasks); only task users need it

        capabilities = self.server_capabilities()
        if isinstance(name, str) and self.tools.get(name) is None and server_has(capabilities,
                                                                                 "tasks.requests.tools.call"):
            self.list_tools(deadline).result()  # to learn whether the tool allows tasks
        known = self.tools.get(name) if isinstance(name, str) else None
        params, transform = _params.tool_call(name, arguments, raise_on_error, meta,
                                              known if self.settings.validate_output else None)
        return tasks.start(self, capabilities, known, params, transform, task, deadline)

    def resume_task(self, task_id: str) -> ToolTask:
        """``Tasks.task(task_id)``: the Tasks extension's handle, or a 2025-11-25 one."""
        if self.conn.era_if_ready("tasks/get") is None and not self.server_capabilities():  # closed: raises
            raise ClientClosedError("Tasks.task(): the client is not connected; call connect() or use 'with'")
        from ..extensions.base import TASKS  # deferred: import cost (the Tasks extension)
        from ..extensions.tasks.extension import resume

        registry = self.extensions
        ext = registry.extensions.get(TASKS) if registry is not None else None
        capabilities = self.server_capabilities()
        return resume(ext, declared_extensions(capabilities), capabilities, self, task_id)

    # --- extensions -----------------------------------------------------------------------------

    def _install(self, registry: Registry) -> None:
        """Plug the registry's tables into the responder and the notification router, and give
        each extension its context (``ExtensionContext``: this core, never the ``Client``)."""
        self.responder.extension_requests = registry.requests
        if registry.notifications:
            self.notifications.extensions = registry.notify
        registry.attach(self)

    def feature(self, kind: Any) -> Any:
        """``Client.extension(kind)``: the object of a feature (``Tasks``, ``Skills``: made once,
        bound to this core), or of an extension this client declared (by class or id)."""
        found = self._features.get(kind)
        if found is not None:
            return found
        from ..extensions.base import Extension, Feature  # deferred: import cost (extensions)

        if isinstance(kind, type) and issubclass(kind, Feature):
            return self._features.setdefault(kind, kind.for_client(self))
        registry = self.extensions
        declared = list(registry.extensions.values()) if registry is not None else []
        if isinstance(kind, str):
            found = registry.extensions.get(kind) if registry is not None else None
        elif isinstance(kind, type) and issubclass(kind, Extension):
            found = next((ext for ext in declared if isinstance(ext, kind)), None)
        else:
            raise TypeError(f"extension() takes a feature or Extension class, or an extension id, not {kind!r}")
        if found is None:
            raise LookupError(f"this client does not declare the extension {kind!r}: declare it with "
                              "Client(extensions={id: settings})")
        return found

    def server_info(self) -> Any:
        """``Client.server``: a ``ServerInfo`` (``None`` before ``connect()``)."""
        negotiated = self.conn.negotiated
        if negotiated is None:
            return None
        from ..types import ServerInfo  # (loaded: the types load at connect())

        capabilities = negotiated.capabilities
        return ServerInfo(negotiated.server_info, negotiated.version, capabilities,
                          self.text.cut(negotiated.instructions, "instructions"), declared_extensions(capabilities),
                          negotiated.raw)

    def server_capabilities(self) -> Dict[str, Any]:
        """What the server declared (``{}`` before connect)."""
        negotiated = self.conn.negotiated
        return negotiated.capabilities if negotiated is not None else {}

    @property
    def stateless(self) -> bool:
        """Whether the connection speaks the 2026 era (False once the client is closed)."""
        conn = self.conn
        era = conn.era
        return era is not None and era.stateless and conn.state != "closed"

    @staticmethod
    def extensions_of(capabilities: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
        """The ``extensions`` of a capabilities object (``declared_extensions``)."""
        return declared_extensions(capabilities)

    def answer(self, method: str, params: Dict[str, Any]) -> Any:
        """Answer a server request with the client's own handlers (sampling, elicitation, roots)."""
        return self.responder.answer(method, params)


def declared_extensions(capabilities: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The ``extensions`` of a capabilities object: id -> settings (entries that are no object left out)."""
    found = capabilities.get("extensions")
    return {k: dict(v) for k, v in found.items() if isinstance(v, dict)} if isinstance(found, dict) else {}


def _reconnect_now(conn: Connection, subscriptions: SubscriptionRouter) -> None:
    """The background reconnect (while subscriptions are open). It holds the connection, never
    the client: a client dropped meanwhile is still collected, and its close() ends this."""
    while True:
        try:
            conn.ready("reconnect", Deadline(None))
            return
        except ClientClosedError:
            return
        except MCPError as exc:
            if conn.gave_up:
                log.warning("gave up reconnecting to %s: %s", conn.transport.info.name, exc)
                subscriptions.end_all(exc)  # their consumers must not wait forever
                return
        except BaseException as exc:  # user code run meanwhile (an auth hook...) raised, sys.exit() too:
            log.exception("reconnecting to %s failed", conn.transport.info.name)  # end, never hang
            subscriptions.end_all(ConnectionClosed(f"reconnecting failed: {type(exc).__name__}"))
            return
