"""``Channel``: the one object a ``Client`` holds, and the one its collaborators reach it through.

The ``Client`` façade checks a method's arguments, builds its params and its one ``Deadline``
and sends through ``Channel.call``. The channel owns the collaborators: the transport and its
connection, the responder to the server's requests, the notification and subscription routers,
the tool registry, the result cache, the declared extensions and the tracer. They hold the
channel, never the ``Client``: a ``Client`` nobody references is collected, and its finalizer
(``release``) closes the channel with a ``ResourceWarning``, as an unclosed file does.

It implements the small interfaces its collaborators declare: ``Requester`` (features that
send), ``ExtensionOwner`` (extension contexts), ``TasksOwner``, ``ConnectionOwner``
(``_client.connection``), ``NotificationOwner`` (``_client.notifications``), the subscription
router's ``Requester``. It has none of the ``Client``'s request methods: those are the façade's.

Cold start: ``Client(...)`` checks every argument and makes the channel without the
connection (a ``Timeout`` or ``Limits`` left out is read from a stand-in: ``settings``); the
first ``open()`` starts the transport (``Transport.start``: a stdio server is spawned), then
makes the subscription router and loads the engine to make the connection, so that the server
boots meanwhile (benchmarks/cold.py, one-shot: loading all of it before the launch cost about
a quarter of a stdio one-shot call). Before that open, ``subscriptions`` is not set.
"""
from __future__ import annotations

import logging
import sys
import threading
import time
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, TypeVar, Union, cast

from .._engine.deadline import Deadline, check_timeout
from .._engine.futures import CallFuture, ProgressCallback, Transform
from .._util import fork as _fork
from .._util.sentinel import DEFAULT
from .._util.lazy import load
from .._util.threads import start_thread
from ..errors import CapabilityError, ClientClosedError, ConnectionClosed, MCPError
from .. import policies
from ..protocol import params as _params
from ..protocol.cache import ResultCache
from ..protocol.spec import era_setting, server_has
from ..transports.base import CLOSE_BUDGET, Transport
from .notifications import NotificationRouter
from .responder import Responder
from .server_text import TextLimit
from .settings import (
    DEFAULT_LIMITS, NO_HANDLERS, Seconds, checked_kind, checked_timeout, client_identity, declared_extensions,
    extension_registry,
)
from .tools import ToolRegistry, list_tools

if TYPE_CHECKING:
    from .connection import Connection
    from .._engine.hooks import CallTracer
    from .._engine.rules import RPCRules
    from .._engine.session import Session
    from ..extensions.registry import Registry
    from ..extensions.tasks.core import ToolTask
    from ..policies.handlers import Handlers
    from ..policies.reconnect import Keepalive, Reconnect
    from ..policies.timeout import Limits, Timeout
    from ..policies.tracing import Tracing
    from .settings import _DefaultLimits
    from .subscriptions import SubscriptionRouter
    from ..protocol.eras import Era
    from ..protocol.negotiation import Negotiated

__all__ = ["Channel"]

T = TypeVar("T")

log = logging.getLogger("mcpclient")


class Channel:
    """One client's connection and everything around it (see the module docstring): made by
    ``Client(...)`` from its checked arguments (their meanings are ``Client``'s)."""

    _live: "weakref.WeakSet[Channel]" = weakref.WeakSet()

    # Made by the first open(), once the transport started (see the module docstring).
    subscriptions: SubscriptionRouter

    def __init__(self, transport: Transport, *, timeout: Any, protocol: str, limits: Optional[Limits],
                 handlers: Optional[Handlers], reconnect: Union[None, bool, Reconnect],
                 keepalive: Union[None, float, Keepalive], extensions: Any, tracing: Any,
                 validate_output: Union[bool, str], cache: bool, capabilities: Optional[Mapping[str, object]],
                 client_info: Any) -> None:
        """Check every argument (``TypeError``/``ValueError`` naming it) and make what needs no
        connection; nothing is started."""
        # A Timeout or Limits the caller made is kept as it is; seconds, or none, are read from
        # a stand-in with the same fields (``settings``: their classes cost a one-shot call).
        timeout = checked_timeout(timeout)
        self.timeout: Union[Timeout, Seconds] = Seconds(timeout) if timeout is None or isinstance(timeout, (int, float)) \
            else timeout
        self.limits: Union[Limits, _DefaultLimits] = DEFAULT_LIMITS if limits is None \
            else checked_kind(limits, "limits", policies.Limits)
        if handlers is not None:  # (its class is loaded only for a value given: the caller made it)
            handlers = checked_kind(handlers, "handlers", policies.Handlers)
        given = handlers if handlers is not None else NO_HANDLERS
        if validate_output not in (True, False, "listed"):
            raise ValueError(f"validate_output must be True, False or 'listed', not {validate_output!r}")
        self.validate_output = validate_output
        if not isinstance(cache, bool):
            raise TypeError("cache must be True or False")
        # Automatic tracing (tracing=None) is decided at open(): on only once the application
        # uses OpenTelemetry (has imported it), so that it costs nothing otherwise; it goes
        # quietly off if the package cannot be loaded.
        self._tracing: Optional[Tracing] = None
        if tracing is not None and tracing is not False:
            from ..policies.tracing import wants_tracing  # tracing: loaded by a client that asks for it

            self._tracing = wants_tracing(tracing)
        self._tracing_auto = tracing is None
        self.tracer: Optional[CallTracer] = None
        self.reconnect: Optional[Reconnect] = None
        self.keepalive: Optional[Keepalive] = None
        if (reconnect is not None and reconnect is not False) or keepalive is not None:
            from ..policies.reconnect import Keepalive, Reconnect  # loaded by a client that reconnects or pings

            self.reconnect, self.keepalive = Reconnect.of(reconnect), Keepalive.of(keepalive)
        if isinstance(capabilities, Mapping) and not isinstance(capabilities, dict):
            capabilities = dict(capabilities)
        given_capabilities = cast(Optional[Dict[str, Any]], capabilities)  # checked by the registry and the responder
        self.extensions: Optional[Registry] = extension_registry(extensions, given_capabilities)
        registry = self.extensions
        self.responder = Responder(given.sampling, given.elicitation, given.elicitation_modes,
                                   given.roots, given_capabilities, given.task_requests, transport.info.instance,
                                   self.limits.workers, registry.capabilities() if registry is not None else None)
        era_setting(protocol)  # (checked now; the connector reads it again)
        self._protocol = protocol
        self.client_info = client_identity(client_info)
        self.transport = transport  # the one the connection starts with (a relaunch or a fallback replaces it)
        self.text = TextLimit(self.limits.server_text, transport.info.name)  # of the instructions and tool descriptions
        self.tools = ToolRegistry(self.text)
        self.cache = ResultCache(self.credentials) if cache else None
        self.notifications = NotificationRouter(
            logging.getLogger(f"mcpclient.server.{transport.info.name}"), self,
            on_notification=given.on_notification, on_log=given.on_log)
        self.on_reconnect = given.on_reconnect
        self.features: Dict[Any, Any] = {}  # Client.extension(kind): kind -> its object
        if registry is not None:
            self.responder.extension_requests = registry.requests
            if registry.notifications:
                self.notifications.extensions = registry.notify
            registry.attach(self)  # each extension's context: this channel, never the Client
        #: The connection, made by the first ``open()`` (None before, and if closed before).
        self.conn: Optional[Connection] = None
        self._era_for: Any = None  # ``connection.era_for``, loaded with it
        self._closed = False  # release() ran before a connection was made
        self._lock = threading.RLock()  # the connection is made under it (a signal handler's close() may come in)
        Channel._live.add(self)

    # --- the one way to send (``Requester``) ----------------------------------------------------

    def deadline(self, timeout: Any = DEFAULT) -> Deadline:
        """The deadline of a call made now with ``timeout=``: ``DEFAULT`` (the client's
        ``Timeout``), a ``Timeout``, or seconds (reset on progress as the client's says)."""
        policy: Union[Timeout, Seconds] = self.timeout
        if timeout is DEFAULT:
            seconds = policy.call
        elif _made_timeout(timeout):
            policy, seconds = timeout, timeout.call
        else:
            seconds = check_timeout(timeout)
        resets = policy.reset_on_progress
        return Deadline(seconds, resets=resets, max_total=policy.total if resets else None)

    def ready(self, method: str, deadline: Deadline) -> Era:
        """The negotiated era's strategy, if calls are allowed now (a reconnect within
        ``deadline`` first, where a policy says so); else the error that says why, naming ``method``."""
        conn = self.conn
        if conn is None:
            raise self._not_open(method)
        return conn.ready(method, deadline)

    @property
    def session(self) -> Session:
        """The current session (a reconnect replaces it)."""
        conn = self.conn
        if conn is None:
            raise self._not_open("the session")
        return conn.session

    def call(self, method: str, params: Optional[Mapping[str, object]], transform: Optional[Transform], deadline: Deadline,
             *, check: bool = True, on_progress: Optional[ProgressCallback] = None,
             on_late: Optional[Callable[[Dict[str, Any]], Any]] = None) -> CallFuture[Any]:
        """Send ``method`` the way the negotiated era does, within ``deadline`` (a reconnect
        spends it too). ``check``: refuse (``CapabilityError``, nothing sent) what the server did not declare."""
        conn = self.conn
        if conn is None:
            raise self._not_open(method)
        era = conn.ready(method, deadline)
        era.check(method, capabilities=check)
        if params is not None and type(params) is not dict and isinstance(params, Mapping):
            params = dict(params)
        return era.call(conn.session, method, params, transform, deadline,  # type: ignore[arg-type]
                        on_progress=on_progress, on_late=on_late)

    def listing(self, method: str, key: str, parse: Callable[[Any], Optional[T]],
                deadline: Deadline) -> CallFuture[List[T]]:
        """A whole listing (every page, within one deadline) as one call; ``CapabilityError``
        is reported by its future."""
        try:
            return self.call(method, None, _params.pages(method, key, parse, self.limits.pages), deadline)
        except CapabilityError as exc:
            return CallFuture.failed(self.session, method, exc)

    def era_if_ready(self, what: str) -> Optional[Era]:
        """The era strategy once connected, None before; ``ClientClosedError`` once closed."""
        conn = self.conn
        if conn is None:
            if self._closed:
                raise ClientClosedError(f"{what}: the client is closed")
            return None
        return conn.era_if_ready(what)

    def _not_open(self, what: str) -> ClientClosedError:
        if self._closed:
            return ClientClosedError(f"{what}: the client is closed")
        return ClientClosedError(f"{what}: the client is not connected; call connect() or use 'with'")

    # --- what the connection is ------------------------------------------------------------------

    @property
    def state(self) -> str:
        """``Client.state``."""
        conn = self.conn
        if conn is None:
            return "closed" if self._closed else "new"
        return conn.state

    @property
    def current_transport(self) -> Transport:
        """The transport in use (a relaunch or a fallback while connecting replaces it)."""
        conn = self.conn
        return self.transport if conn is None else conn.transport

    @property
    def is_closed(self) -> bool:
        """No call can be made: closed, or the connection ended with no policy to reopen it."""
        conn = self.conn
        return self._closed if conn is None else conn.is_closed

    @property
    def negotiated(self) -> Optional[Negotiated]:
        """What the handshake (or discovery) settled on; None before ``connect()``."""
        conn = self.conn
        return None if conn is None else conn.negotiated

    def server_capabilities(self) -> Dict[str, Any]:
        """What the server declared (``{}`` before connect)."""
        negotiated = self.negotiated
        return negotiated.capabilities if negotiated is not None else {}

    @property
    def stateless(self) -> bool:
        """Whether the connection speaks the 2026 era (False once the client is closed)."""
        conn = self.conn
        if conn is None:
            return False
        era = conn.era
        return era is not None and era.stateless and conn.state != "closed"

    def answer(self, method: str, params: Dict[str, Any]) -> Any:
        """Answer a server request with the client's own handlers (sampling, elicitation, roots)."""
        return self.responder.answer(method, params)

    @staticmethod
    def extensions_of(capabilities: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
        """The ``extensions`` of a capabilities object (``declared_extensions``)."""
        return declared_extensions(capabilities)

    # --- what the routers ask (``NotificationOwner``, ``SubscriptionRouter``) ----------------------

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
        return self.current_transport.info.credentials

    # --- what the connection asks (``ConnectionOwner``) -----------------------------------------

    @property
    def handshake_timeout(self) -> Optional[float]:
        """The most a reconnect's handshake may take, even for a caller without a limit."""
        return self.timeout.connect

    def new_session(self, transport: Transport, rules: RPCRules) -> Session:
        from .._engine.session import Session  # (loaded: the connection module imports it)

        responder = self.responder
        session = Session(transport, rules=rules, on_request=responder.answer,
                          on_notification=self.notifications.handle,
                          on_notification_read=self.subscriptions.route_at_once,
                          max_workers=self.limits.workers)
        session.tracer = self.tracer  # (None until the first connect() with tracing on)
        declared = responder.capabilities().get("extensions")
        if isinstance(declared, dict) and declared:
            session.declared_extensions = frozenset(declared)
        requests = session.requests
        requests.on_request_read = lambda rid, method, params: responder.take_at_once(rid, method, params, requests.reply)
        session.on_session_renewed = self.subscriptions.resubscribe
        return session

    def make_era(self, negotiated: Negotiated, transport: Transport) -> Era:
        era = self._era_for(negotiated, self.responder.capabilities(), self.client_info, self.responder.answer,
                            self.limits.input_rounds, self.cache, transport.info.sends_headers)
        if self.extensions is not None:
            self.extensions.extend(era, transport.info.sends_headers)
        return era  # type: ignore[no-any-return]

    def lost(self, error: MCPError) -> None:
        """The connection was lost (reader or timer thread): subscriptions end, or with a
        reconnect policy wait for the next connection, which, while any are open, is made at
        once (on a thread of its own) rather than by the next call. The tools learned for output
        validation are forgotten: the next connection may reach a restarted server."""
        self.tools.forget()
        conn, subscriptions = self.conn, self.subscriptions
        if conn is None:
            return
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
            self.session.after_notifications("on_reconnect callback", self.on_reconnect)

    def forked(self) -> None:
        """At-fork hook, in the child before any other code: the locks a thread of the parent
        (the notification thread, a caller) may have held at the fork are replaced, as
        ``Connection`` replaces its own; the child's first call, reconnect and close take them."""
        if self.conn is not None:
            self.subscriptions.forked()
        self.notifications.forked()
        self.tools.forked()
        if self.cache is not None:
            self.cache.forked()

    @classmethod
    def _renew_locks(cls) -> None:
        for channel in list(cls._live):
            channel._lock = threading.RLock()

    # --- lifecycle ------------------------------------------------------------------------------

    def open(self, timeout: Any) -> None:
        """``Client.connect``: the whole connection within ``timeout``. The first one starts the
        transport, then makes the connection (see the module docstring); a failure before the
        connection opened stops the server it launched."""
        if timeout is not DEFAULT:
            checked_timeout(timeout)  # (a wrong timeout starts nothing)
        first = self.conn is None
        conn = self._launch() if self.conn is None else self.conn
        try:
            if self.tracer is None and (self._tracing is not None or
                                        (self._tracing_auto and "opentelemetry" in sys.modules)):
                self._start_tracing()
            conn.open(self._connect_deadline(timeout))
        except BaseException:
            if first and conn.state == "new":  # (a failure inside the connect has torn everything down)
                self.release()
            raise
        if self.extensions is not None:
            try:
                self.extensions.bind()  # (it logs what an extension's bind() raises and goes on)
            except BaseException:  # Ctrl-C, SystemExit: nothing this connect started stays running
                self.release()
                raise

    def _launch(self) -> Connection:
        """Start the transport, then make the connection (once: a concurrent first ``open()``
        finds it made). If making it fails, the transport is closed again."""
        with self._lock:
            if self.conn is not None:
                return self.conn
            if self._closed:
                raise ClientClosedError("connect() on a client that is closed; make a new Client")
            transport = self.transport
            try:
                transport.start()
            except MCPError:  # (the session starts it again, and meets the same error there)
                pass
            try:
                # What needs dataclasses, and the engine, load now, while the server boots (see
                # the module docstring).
                from .connection import Connection, Connector, era_for
                from .subscriptions import SubscriptionRouter

                load("mcpclient.types._tools")  # (and the types of a tool's result: the first call parses one)

                self.subscriptions = SubscriptionRouter(self)
                self.subscriptions.keep_on_loss = self.reconnect is not None
                self._era_for = era_for
                connector = Connector(self._protocol, self.client_info, self.responder.capabilities,
                                      self.timeout.probe, reuse_discovery=self.cache is not None)
                conn = Connection(transport, connector, self, reconnect=self.reconnect, keepalive=self.keepalive)
            except BaseException:
                transport.close()
                raise
            if self._closed:  # a signal handler's close() came in meanwhile
                conn.close(time.monotonic() + CLOSE_BUDGET)
                raise ClientClosedError("the client was closed while connecting")
            self.conn = conn
            return conn

    def _connect_deadline(self, timeout: Any) -> Deadline:
        """``connect(timeout=)``'s deadline: ``DEFAULT`` (the client's ``Timeout.connect``), a
        ``Timeout`` (its ``connect``) or seconds."""
        if timeout is DEFAULT:
            return Deadline(self.timeout.connect)
        return Deadline(timeout.connect if _made_timeout(timeout) else check_timeout(timeout))

    def _start_tracing(self) -> None:
        """At the first ``connect()`` with tracing on: make the OpenTelemetry tracer (this imports
        ``opentelemetry``) and install it on the session and the responder; later sessions get it
        in ``new_session``. Automatic tracing goes quietly off if the package cannot be imported."""
        from ..policies.tracing import missing_extra, wants_tracing  # tracing: loaded by a client that traces

        if self._tracing is None:  # automatic, and the application has imported OpenTelemetry
            self._tracing = wants_tracing(None)
            if self._tracing is None:
                return
        try:
            from ..tracing.otel import ClientTracer  # optional extra: opentelemetry loads only for a client that traces
        except ImportError as exc:
            if not self._tracing_auto:
                raise missing_extra() from exc
            log.debug("tracing is off: opentelemetry cannot be imported (%s)", exc)
            self._tracing, self._tracing_auto = None, False
            return
        self.tracer = ClientTracer(self._tracing, self.conn)  # type: ignore[arg-type]
        self.responder.tracer = self.session.tracer = self.tracer

    def release(self, collected: bool = False) -> None:
        """Close everything: ``Client.close()``, or the collection of a client nobody closed
        (then a ``ResourceWarning`` says so, as for an unclosed file). Within ``CLOSE_BUDGET``."""
        with self._lock:  # (re-entrant: a signal handler's close() while this thread makes the connection)
            self._closed = True
            conn = self.conn
        if conn is not None and collected and conn.state in ("connecting", "ready", "lost"):  # (not "forked")
            warnings.warn(f"unclosed mcpclient.Client of {conn.transport.info.name!r} (use close() or 'with')",
                          ResourceWarning, stacklevel=2)
        deadline = time.monotonic() + CLOSE_BUDGET
        if conn is not None and not collected and conn.state == "ready":  # the cancellations decided already go out
            grace = min(deadline, time.monotonic() + _cancel_grace())
            conn.session.drain(grace)
            if self.extensions is not None:
                self.extensions.wind_down(grace)  # (the Tasks extension: its tasks/cancel answered)
        session = conn.mark_closed() if conn is not None else None  # from here on every call is refused
        tasks = self.responder.tasks
        if tasks is not None:
            tasks.release()  # unfinished tasks end; nothing new is accepted
        self.notifications.elicitations.close()
        if conn is not None:
            self.subscriptions.end_all(None)
        if session is not None:  # (None in a forked child: the connection is the parent's)
            session.close(deadline)
        if tasks is not None:
            tasks.close(deadline)
        if self.extensions is not None:
            self.extensions.close()

    def ended(self) -> bool:
        """Whether nothing more will come from the server: closed, or the session ended."""
        conn = self.conn
        return self._closed if conn is None else conn.session.is_closed

    # --- features and extensions ---------------------------------------------------------------

    def feature(self, kind: Any) -> Any:
        """``Client.extension(kind)``: the object of a feature (``Tasks``, ``Skills``: made once,
        bound to this channel), or of an extension this client declared (by class or id)."""
        found = self.features.get(kind)
        if found is not None:
            return found
        from ..extensions.base import Extension, Feature  # extensions: loaded by a client that uses one

        if isinstance(kind, type) and issubclass(kind, Feature):
            return self.features.setdefault(kind, kind.for_client(self))
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

    # --- tasks (the ``Tasks`` feature's object sends through these) -------------------------------

    def start_task(self, name: str, arguments: Optional[Dict[str, Any]], raise_on_error: bool,
                   meta: Optional[Dict[str, Any]], task: Any, deadline: Deadline) -> ToolTask:
        """``Tasks.call_tool`` (2025-11-25): learn whether the tool allows tasks, then start one."""
        from ..extensions.tasks import core as tasks  # extension: only task users load it

        capabilities = self.server_capabilities()
        if isinstance(name, str) and self.tools.get(name) is None and server_has(capabilities,
                                                                                 "tasks.requests.tools.call"):
            list_tools(self, deadline).result()  # to learn whether the tool allows tasks
        known = self.tools.get(name) if isinstance(name, str) else None
        params, transform = _params.tool_call(name, arguments, raise_on_error, meta,
                                              known if self.validate_output else None)
        return tasks.start(self, capabilities, known, params, transform, task, deadline)

    def resume_task(self, task_id: str) -> ToolTask:
        """``Tasks.task(task_id)``: the Tasks extension's handle, or a 2025-11-25 one."""
        if self.era_if_ready("tasks/get") is None and not self.server_capabilities():  # closed: raises
            raise ClientClosedError("Tasks.task(): the client is not connected; call connect() or use 'with'")
        from ..extensions.tasks.extension import TASKS, resume  # extension: only task users load it

        registry = self.extensions
        ext = registry.extensions.get(TASKS) if registry is not None else None
        capabilities = self.server_capabilities()
        return resume(ext, declared_extensions(capabilities), capabilities, self, task_id)


_fork.in_child(Channel._renew_locks)


def _cancel_grace() -> float:
    from .._engine.session import CANCEL_GRACE  # (loaded: the connection module imports it)

    return CANCEL_GRACE


def _made_timeout(timeout: Any) -> bool:
    """Whether a ``timeout=`` is a ``Timeout`` (its class is looked at only for what is no
    number: a caller who made one loaded it; seconds never load it)."""
    return timeout is not None and not isinstance(timeout, (int, float)) and isinstance(timeout, policies.Timeout)


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
