"""How a ``Client`` is wired to its connection, and released: the façade's lifecycle glue.

The connection's threads (reader, timer, notification thread, a background reconnect) call
back into the client: for a new session, an era, a lost or restored connection, a fork. They
reach it only through ``weakly()`` methods, so a client nobody references is collected, and its
finalizer, ``release()``, closes it with a ``ResourceWarning`` like an unclosed file's. A mixin
of ``Client`` (as ``_extensions`` is), so ``client.py`` keeps the protocol's methods.
"""
from __future__ import annotations

import logging
import warnings
import weakref
from time import monotonic as _monotonic
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple

from .responder import Responder
from .._util.threads import start_thread
from .connection import Connection, era_for
from ..errors import ClientClosedError, ConnectionClosed, MCPError
from .notifications import NotificationRouter
from .._engine.session import Session
from .subscriptions import SubscriptionRouter
from .._engine.hooks import CallTracer, missing_extra
from ..transports.base import CLOSE_BUDGET, Transport

if TYPE_CHECKING:
    from ..extensions.registry import Registry
    from .tools import ToolRegistry
    from ..policies.tracing import Tracing
    from ..protocol.cache import ResultCache

__all__ = ["ConnectionHooks", "release", "weakly"]

log = logging.getLogger("mcpclient")


def weakly(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` of a client, without keeping the client alive: the connection's threads hold
    only these, so a client nobody references is collected (and closed: ``release``)."""
    ref = weakref.WeakMethod(method)  # type: ignore[arg-type]

    def call(*args: Any, **kwargs: Any) -> Any:
        bound = ref()
        if bound is None:
            raise ClientClosedError("the client was garbage-collected")
        return bound(*args, **kwargs)
    return call


def release(conn: Connection, responder: Responder, notifications: NotificationRouter,
             subscriptions: SubscriptionRouter, collected: bool = False, extensions: Optional[Registry] = None) -> None:
    """Close a client's connection: ``close()``, or the collection of a client nobody closed
    (then a ``ResourceWarning`` says so, as for an unclosed file; its declared ``extensions``
    are closed too: ``close()`` does that itself)."""
    if collected and conn.state in ("connecting", "ready", "lost"):  # (not "forked": the parent's)
        warnings.warn(f"unclosed mcpclient.Client of {conn.transport.name!r} (use close() or 'with')",
                      ResourceWarning, stacklevel=2)
    deadline = _monotonic() + CLOSE_BUDGET
    session = conn.mark_closed()  # from here on every call is refused
    tasks = responder.tasks
    if tasks is not None:
        tasks.release()  # unfinished tasks end; nothing new is accepted
    notifications.elicitations.close()
    subscriptions.end_all(None)
    if session is not None:  # (None in a forked child: the connection is the parent's)
        session.close(deadline)
    if tasks is not None:
        tasks.close(deadline)
    if extensions is not None:
        extensions.close()


def _reconnect_now(conn: Connection, subscriptions: SubscriptionRouter) -> None:
    """The background reconnect (while subscriptions are open). It holds the connection, never
    the client: a client dropped meanwhile is still collected, and its close() ends this."""
    while True:
        try:
            conn.ready("reconnect", None)
            return
        except ClientClosedError:
            return
        except MCPError as exc:
            if conn.gave_up:
                log.warning("gave up reconnecting to %s: %s", conn.transport.name, exc)
                subscriptions.end_all(exc)  # their consumers must not wait forever
                return
        except BaseException as exc:  # user code run meanwhile (an auth hook...) raised, sys.exit() too:
            log.exception("reconnecting to %s failed", conn.transport.name)  # end, never hang
            subscriptions.end_all(ConnectionClosed(f"reconnecting failed: {type(exc).__name__}"))
            return


class ConnectionHooks:
    """What the connection asks of its client; mixed into ``Client``, which provides the below."""

    if TYPE_CHECKING:
        _conn: Connection
        _responder: Responder
        _notifications: NotificationRouter
        _subscriptions: SubscriptionRouter
        _tools: ToolRegistry
        _cache: Optional[ResultCache]
        _client_info: Dict[str, Any]
        _max_workers: int
        _refresh: Optional[Tuple[Session, Any]]
        _tracer: Optional[CallTracer]
        _tracing: Optional[Tracing]
        _tracing_asked: bool
        max_input_rounds: int
        timeout: Optional[float]
        on_reconnect: Optional[Callable[[Any], Any]]

        @property
        def transport(self) -> Transport: ...

        def _extend_era(self, era: Any, sends_headers: bool) -> Any: ...

        def _bind_extensions(self) -> None: ...

    def _new_session(self, transport: Transport) -> Session:
        responder = self._responder
        session = Session(transport, on_request=responder.answer, on_notification=self._notifications.handle,
                          max_workers=self._max_workers)
        session.tracer = self._tracer  # (None until the first connect() with tracing on)
        requests = session.requests
        requests.on_quick_request = lambda rid, method, params: responder.quick(rid, method, params, requests.reply)
        session.on_quick_notification = self._subscriptions.route_quick
        transport.on_session_renewed = self._subscriptions.resubscribe
        return session

    def _make_era(self, negotiated: Any, transport: Transport) -> Any:
        return self._extend_era(era_for(negotiated, self._responder.capabilities(), self._client_info,
                                        self._responder.answer, self.max_input_rounds, self._cache,
                                        transport.sends_headers), transport.sends_headers)

    def _lost(self, error: MCPError) -> None:
        """The connection was lost (reader or timer thread): subscriptions end, or with a
        reconnect policy wait for the next connection, which, while any are open, is made at
        once (on a thread of its own) rather than by the next call. The tools learned for output
        validation are forgotten: the next connection may reach a restarted server."""
        self._tools.forget()
        if self._conn.reconnect is None:
            self._subscriptions.end_all(error)
        elif self._subscriptions.active():
            conn, subscriptions = self._conn, self._subscriptions  # (the thread must not hold self)
            start_thread(lambda: _reconnect_now(conn, subscriptions), f"mcpclient-{conn.session.instance}-reconnect")

    def _restored(self, era: Any) -> None:
        """A reconnect succeeded: the tools are learned again (a new server session, maybe a
        restarted server: its output schemas may differ), subscriptions again, then ``on_reconnect``."""
        self._tools.forget()
        self._subscriptions.restore(era.stateless)
        self._bind_extensions()
        if self.on_reconnect is not None:
            self._conn.session.after_notifications("on_reconnect callback", self.on_reconnect, self)

    def _forked(self) -> None:
        """At-fork hook, in the child before any other code: the locks a thread of the parent
        (the notification thread, a caller) may have held at the fork are replaced, as
        ``Connection`` replaces its own; the child's first call, reconnect and close take them."""
        self._subscriptions.forked()
        self._notifications.forked()
        self._tools.forked()
        if self._cache is not None:
            self._cache.forked()

    def _start_tracing(self) -> None:
        """At the first ``connect()`` with tracing on: make the OpenTelemetry tracer (this imports
        ``opentelemetry``) and install it on the session and the responder; later sessions get it
        in ``_new_session``. Automatic tracing goes quietly off if the package cannot be imported."""
        try:
            from ..tracing.otel import ClientTracer  # deferred: opentelemetry loads only for a client that traces
        except ImportError as exc:
            if self._tracing_asked:
                raise missing_extra() from exc
            log.debug("tracing is off: opentelemetry cannot be imported (%s)", exc)
            self._tracing = None
            return
        self._tracer = ClientTracer(self._tracing, self._conn)  # type: ignore[arg-type]
        self._responder.tracer = self._conn.session.tracer = self._tracer

    def _current_session(self) -> Session:
        return self._conn.session

    def _credentials(self) -> Optional[str]:
        return self.transport.credentials()

    def _refresh_lane(self) -> Any:
        """The current session's refresh lane (one per session: a reconnect closes the old one)."""
        session = self._conn.session
        made = self._refresh
        if made is None or made[0] is not session:
            self._refresh = made = (session, session.lane("refresh", 1))
        return made[1]

    def _default_timeout(self) -> Optional[float]:
        return self.timeout
