"""``Client.listen()`` and resource subscriptions: change events from the server.

2026-07-28: one ``subscriptions/listen`` request stays open; the server acknowledges the filter
(``notifications/subscriptions/acknowledged``), then sends list-changed and resource-updated
notifications tagged with the request's id, and ends it with a result (or ``notifications/
cancelled`` on stdio). Closing the subscription cancels the request (stdio: a cancellation
notice; HTTP: the stream is closed). Handshake era: the same events come from unsolicited
list-changed notifications and ``resources/subscribe``; ``listen()`` subscribes and routes them,
so code written against ``listen()`` works with both. ``subscribe_resource`` keeps, in the 2026
era, one listen that carries every subscribed URI and replaces it on each change.

``SubscriptionRouter`` owns all of that state behind one small lock, never held across a
request, a wait or a user callback; what the user holds (``Event``, ``Subscription``) is in
``events``. With a ``Reconnect`` policy a lost connection suspends listens, and ``restore()``
opens them again on the next one.
"""
from __future__ import annotations

import functools
import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from ..errors import ClientClosedError, ConnectionClosed, MCPError, RequestTimeout, SubscriptionLost
from ..protocol.params import none
from .._engine.deadline import NEVER, Deadline
from .._engine.futures import CallFuture
from ..protocol.stateless import META_SUBSCRIPTION
from .._util.lazy import load

if TYPE_CHECKING:
    from types import ModuleType

    from .events import Event, Subscription
    from .._engine.requester import Requester
    from .._engine.session import Session

__all__ = ["SubscriptionRouter"]

log = logging.getLogger("mcpclient")


def _events() -> "ModuleType":
    """``events``, loaded by the first ``listen()``: following changes is a feature a program
    may never use, and ``Event``, a frozen dataclass, costs about 1 ms of a one-shot call to
    define (Python 3.11, benchmarks/cold.py). Every other use here has a subscription, so the
    module is loaded by then."""
    return load("mcpclient._client.events")  # listen(): an optional feature (see above)

_RELISTEN_MAX = 3  # a listen whose stream breaks this many times in a row without an event ends
_EARLY_KEPT = 16  # notifications of a listen not registered yet, kept per listen (and listens)
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


class _AckWait(CallFuture):
    """``subscribe_resource`` in the 2026 era: done once the server acknowledged a listen that
    carries the URI; ``RequestTimeout`` (and the URI dropped again) if none is in time. Its
    outcomes are settled on a worker thread, never on the reader or the timer."""

    def __init__(self, session: "Session", generation: int, deadline: Deadline,
                 on_timeout: Callable[[], None]) -> None:
        super().__init__(session, "subscriptions/listen")
        self.generation = generation
        self.deadline = deadline
        self._on_timeout = on_timeout

    def expired(self) -> None:
        """The timer: only hands the timeout over."""
        self.settle_later(_TIMED_OUT)

    def settle_later(self, outcome: Any) -> None:
        """``None``: acknowledged; ``_TIMED_OUT``; or the error that ended the listen."""
        if not self.done() and not self._session.continue_call(self, outcome):
            self.run_step(outcome)  # the workers are gone (closing): settle here

    def run_step(self, outcome: Any) -> None:
        if outcome is _TIMED_OUT:
            if self._settle(None, RequestTimeout("subscriptions/listen was not acknowledged in time",
                                                 method="subscriptions/listen")):
                self._on_timeout()  # only if the acknowledgement did not win meanwhile
        else:
            self._settle(None, outcome)


_TIMED_OUT = object()


def _resubscribed(uri: str, done: "CallFuture[Any]") -> None:
    """A worker: how ``resubscribe``'s request for ``uri`` ended (only a failure is worth a word)."""
    error = None if done.cancelled() else done.exception()
    if error is not None and not isinstance(error, ClientClosedError):
        log.warning("could not subscribe to %s again after the server forgot our session: %s", uri, error)


class SubscriptionRouter:
    """Owns every subscription of one client: 2026 listens by request id, handshake-era
    emulated ones, and the URIs ``subscribe_resource`` asked for. ``owner`` (the client's channel)
    sends the requests and holds the current session."""

    def __init__(self, owner: "Requester") -> None:
        self._owner = owner
        self._lock = threading.Lock()
        self._listens: Dict[Any, Subscription] = {}  # 2026: listen request id -> subscription
        self._early: Dict[Any, List[Any]] = {}  # its notifications before listen() registered it
        self._emulated: List[Subscription] = []  # handshake era: fed from unsolicited notifications
        self._subscribed: List[str] = []  # URIs subscribe_resource() asked for
        self._resource_listen: Optional[Subscription] = None  # 2026: what carries them
        self._generation = 0  # bumped by every change of _subscribed (2026)
        self._waiters: List[_AckWait] = []  # subscribe/unsubscribe futures waiting for an acknowledgement
        self._stateless = False  # the era subscriptions were made in (2026: resubscribe() has nothing to do)
        #: With a reconnect policy: a lost connection suspends 2026 listens (``restore()`` opens
        #: them again on the next connection) instead of ending them.
        self.keep_on_loss = False
        self._suspended: List[Subscription] = []
        self._closed = False  # end_all(None) ran: the client is closing
        self._restored_on: Optional["Session"] = None  # the session restore() last ran for

    def listen(self, stateless: bool, wanted: Dict[str, Any], on_event: Optional[Callable[[Event], Any]],
               deadline: Deadline = NEVER, carrier: bool = False) -> Subscription:
        """A subscription for ``wanted`` (``listen()``): a 2026 listen request, or (handshake era)
        the server's unsolicited notifications plus ``resources/subscribe`` for each URI, sent
        within ``deadline``."""
        self._stateless = stateless
        subscription: Subscription = _events().Subscription(wanted, on_event, self._end)
        subscription._carrier = carrier
        if not stateless:
            for uri in wanted.get("resourceSubscriptions") or []:
                self._owner.call("resources/subscribe", {"uri": uri}, None, deadline).result()
            subscription.acknowledge(dict(wanted))
            with self._lock:
                self._emulated.append(subscription)
            session = self._owner.session
            if session.is_closed:  # the connection died meanwhile: end_all() may have run already
                with self._lock:
                    if subscription in self._emulated:
                        self._emulated.remove(subscription)
                subscription.end(_events().ended_by(ConnectionClosed("the connection is closed")))
            return subscription
        self._open_listen(subscription)
        return subscription

    def _open_listen(self, subscription: Subscription) -> None:
        """2026: send the ``subscriptions/listen`` request that feeds ``subscription``."""
        request = self._owner.call("subscriptions/listen", {"notifications": subscription.wanted}, None, NEVER,
                                   check=False)  # open until either side ends it
        subscription.subscription_id, subscription.request = request.request_id, request
        with self._lock:
            self._listens[request.request_id] = subscription
            early = self._early.get(request.request_id)
            acknowledged = [p for m, p in early or () if m == ACKNOWLEDGED]
        for params in acknowledged:  # taken at once, as route_at_once() does
            self._route_listen(subscription, ACKNOWLEDGED, params)
        if early is not None and not self._owner.session.after_notifications(
                "early listen events", self._replay, subscription):
            self._replay(subscription)  # closing: nothing else will run them
        request.add_done_callback(lambda done: self._after_events(subscription, done))

    def _replay(self, subscription: Subscription) -> None:
        """Notification thread: the events that came before ``listen()`` registered the
        subscription, in order, and those queued behind them meanwhile (see ``_route``)."""
        with self._lock:
            early = self._early.pop(subscription.subscription_id, [])
        for method, params in early:
            if method != ACKNOWLEDGED:  # (taken by listen())
                self._route_listen(subscription, method, params)

    def _after_events(self, subscription: Subscription, done: "CallFuture") -> None:
        """The listen request finished: its end is handled on the notification thread, after the
        events that came before it (else a last event could find the listen gone)."""
        session = done._session
        if session.is_closed or not session.after_notifications("end of a listen", self._listen_done,
                                                                  subscription, done):
            self._listen_done(subscription, done)  # (the connection is gone: its lanes are stopping)

    def _listen_done(self, subscription: Subscription, done: "CallFuture") -> None:
        """The listen request finished (notification thread): a result is a quiet end."""
        error = None if done.cancelled() else done.exception()
        # The session the listen was sent on (not the current one: a reconnect may have replaced
        # it before this ran, on a busy worker, or on the closer of the old session).
        made_on = done._session
        with self._lock:
            self._listens.pop(subscription.subscription_id, None)
            self._early.pop(subscription.subscription_id, None)
            lost = made_on.is_closed  # its connection is lost, not just its stream
            interrupted = (self.keep_on_loss and not self._closed and not subscription._carrier
                           and not subscription.closed and lost
                           # lost; or its queued end dropped when the lost session was closed
                           and isinstance(error, (ConnectionClosed, ClientClosedError)))
            if interrupted:
                current = self._owner.session
                if not (current is not made_on and self._restored_on is current and not current.is_closed):
                    self._suspended.append(subscription)  # the connection is lost: restore() listens again
                    return
                # restore() has run for the new connection already: listen again here
            broken = (self.keep_on_loss and not self._closed and not lost and not subscription.closed
                      and isinstance(error, ConnectionClosed))  # only its stream broke (an idle bound, a proxy)
        if broken:
            broken = subscription.relistens < _RELISTEN_MAX
            subscription.relistens += 1
            if broken and subscription._carrier:
                log.info("the listen for subscribed resources broke (%s); listening again", error)
                self._change(None, None, NEVER)
                with self._lock:
                    if self._resource_listen is not None:  # (the count goes on with the new listen)
                        self._resource_listen.relistens = subscription.relistens
                return
        if interrupted or broken:
            try:
                self._open_listen(subscription)
                return
            except MCPError as exc:
                error = exc
        subscription.end(_events().ended_by(error))

    def active(self) -> bool:
        """Whether any subscription is open (one that a lost connection interrupts)."""
        return bool(self._subscribed or self._emulated or self._listens or self._suspended)

    def restore(self, stateless: bool) -> None:
        """After a reconnect: subscribe again (handshake era: ``resubscribe()``) or listen again
        (2026: the suspended listens, and one listen for the subscribed URIs)."""
        if not stateless:
            self.resubscribe()
            return
        with self._lock:
            suspended, self._suspended = self._suspended, []
            uris = list(self._subscribed)
            self._restored_on = self._owner.session  # a listen interrupted later is opened again at once
        for subscription in suspended:
            if subscription.closed:
                continue
            try:
                self._open_listen(subscription)
            except MCPError as exc:
                subscription.end(_events().ended_by(exc))
        if uris:
            try:
                self._change(None, None, NEVER)
            except MCPError as exc:
                log.warning("could not listen again for subscribed resources after reconnecting: %s", exc)

    def forked(self) -> None:
        """In a forked child (at-fork hook): new locks, the old ones may be held by parent threads."""
        self._lock = threading.Lock()
        for subscription in list(self._listens.values()) + self._emulated + self._suspended + \
                ([self._resource_listen] if self._resource_listen is not None else []):
            subscription._cond = threading.Condition()

    def _end(self, subscription: Subscription) -> None:
        """The user closed ``subscription``."""
        request = subscription.request
        if request is not None:
            with self._lock:
                if subscription in self._suspended:  # waiting for a reconnect: nothing to cancel
                    self._suspended.remove(subscription)
                    return
                # Sent on an earlier connection: lost (nothing to cancel), or, in a forked child,
                # the parent's, which must not be touched (on HTTP, cancelling shuts its socket down).
                earlier = request._session is not self._owner.session
                if earlier:
                    self._listens.pop(subscription.subscription_id, None)
                    self._early.pop(subscription.subscription_id, None)
            if not earlier:
                request.cancel()  # stdio: notifications/cancelled; 2026 HTTP: the stream is closed
            return
        with self._lock:
            if subscription in self._emulated:
                self._emulated.remove(subscription)
            still = set(self._subscribed)  # URIs the user, or another listen, still wants
            for other in self._emulated:
                still.update(other.wanted.get("resourceSubscriptions") or [])
        for uri in subscription.wanted.get("resourceSubscriptions") or []:
            if uri not in still and not self._owner.session.is_closed:
                try:
                    owner = self._owner
                    owner.call("resources/unsubscribe", {"uri": uri}, None, owner.deadline()).result()
                except MCPError as exc:
                    log.debug("unsubscribe %s failed: %s", uri, exc)

    def end_all(self, error: Optional[BaseException]) -> None:
        """The client closed (``error`` None: quietly), lost its connection without a reconnect
        policy, or gave up reconnecting: end handshake-era subscriptions and suspended listens,
        which no request of their own would end."""
        with self._lock:
            if error is None:
                self._closed = True  # no listen is suspended from now on (_listen_done)
            emulated, self._emulated = self._emulated, []
            suspended, self._suspended = self._suspended, []
        if not (emulated or suspended):
            return
        for subscription in emulated + suspended:
            subscription.end(None if error is None else _events().ended_by(error))

    def resubscribe(self) -> None:
        """The server forgot our session and a new one replaced it (or the client connected
        again): send ``resources/subscribe`` again for every URI subscribed in the handshake era
        (``subscribe_resource`` and ``listen(resource_uris=...)``), as futures, without waiting; a
        failure is logged. Nothing in the 2026 era: its subscriptions are requests (listens)."""
        with self._lock:
            if self._stateless:
                return
            uris = list(self._subscribed)
            for subscription in self._emulated:
                uris += [u for u in subscription.wanted.get("resourceSubscriptions") or [] if u not in uris]
        if not uris or self._owner.session.is_closed:
            return
        log.debug("subscribing again to %d resource(s) in the new session", len(uris))
        for uri in uris:
            try:
                future = self._owner.call("resources/subscribe", {"uri": uri}, None, self._owner.deadline())
            except MCPError as exc:  # closed meanwhile
                log.debug("could not subscribe to %s again: %s", uri, exc)
                return
            future.add_done_callback(functools.partial(_resubscribed, uri))

    # --- subscribe_resource ------------------------------------------------------------------------

    def change(self, method: str, uri: str, stateless: bool, deadline: Deadline) -> CallFuture:
        """``resources/subscribe`` or ``resources/unsubscribe`` ``uri`` (2026: a change of the
        one listen, see ``_change``)."""
        subscribe = method == "resources/subscribe"
        self._stateless = stateless
        if stateless:
            return self._change(uri, None, deadline) if subscribe else self._change(None, uri, deadline)
        if not subscribe:
            with self._lock:
                if uri in self._subscribed:
                    self._subscribed.remove(uri)
            return self._owner.call(method, {"uri": uri}, none, deadline)

        def added(_: Any) -> None:
            with self._lock:
                if uri not in self._subscribed:
                    self._subscribed.append(uri)
        return self._owner.call(method, {"uri": uri}, added, deadline)

    def _change(self, add: Optional[str], remove: Optional[str], deadline: Deadline) -> CallFuture:
        """2026: replace the one listen that carries every subscribed URI; the future is done
        once the server acknowledged it, or a later one that carries this change too (an update
        right after must not be missed)."""
        session = self._owner.session
        with self._lock:
            before = self._subscribed
            uris = [u for u in before if u != remove] + ([add] if add and add not in before else [])
            self._subscribed = uris
            old, self._resource_listen = self._resource_listen, None
            self._generation += 1
            generation = self._generation
            waiter = _AckWait(session, generation, deadline, lambda: self._give_up(add, generation))
            self._waiters.append(waiter)
        if old is not None:
            old.close()
        if not uris:  # nothing to listen for: this change, and every earlier one, is in force
            self._settled(generation, True, None)
            return waiter
        if deadline.remaining() is not None:
            session.watch(waiter)
        try:
            fresh = self.listen(True, {"resourceSubscriptions": uris}, None, carrier=True)
        except BaseException as exc:  # not sent (closed meanwhile): the changes waiting for it fail
            self._settled(generation, False, exc)
            raise
        fresh.on_settled = lambda acknowledged, error: self._settled(generation, acknowledged, error)
        with self._lock:
            current = self._generation == generation
            if current:
                self._resource_listen = fresh
        if not current:  # a later change replaced the set (ours included): its listen will do
            fresh.close()
        elif fresh.acknowledged is not None or fresh.closed:  # settled before the hook was set
            self._settled(generation, fresh.acknowledged is not None, None)
        return waiter

    def _settled(self, generation: int, acknowledged: bool, error: Optional[BaseException]) -> None:
        """The listen of ``generation`` was acknowledged (every change up to it is in force) or
        ended first (if it is still the latest, the changes waiting for it failed)."""
        with self._lock:
            if not acknowledged and generation != self._generation:
                return  # replaced: a later listen carries these changes
            done = [w for w in self._waiters if w.generation <= generation]
            self._waiters = [w for w in self._waiters if w.generation > generation]
        lost: Optional[BaseException] = None
        if acknowledged:
            pass
        elif isinstance(error, ClientClosedError) or (error is None and self._owner.session.is_closed):
            lost = ClientClosedError("subscribe_resource: the client was closed before the server acknowledged it")
        elif error is not None:
            lost = SubscriptionLost(f"the subscription ended before the server acknowledged it: {error}")
        else:
            lost = SubscriptionLost("the server ended the subscription before acknowledging it")
        for waiter in done:
            waiter.settle_later(lost)

    def _give_up(self, added: Optional[str], generation: int) -> None:
        """A change was not acknowledged in time: drop the URI it added (if no later change came)."""
        with self._lock:
            self._waiters = [w for w in self._waiters if w.generation != generation]
            if self._generation != generation or added is None:
                return
            self._subscribed = [u for u in self._subscribed if u != added]
        try:
            self._change(None, None, NEVER)  # listen again for the rest, without waiting
        except MCPError as exc:  # closed meanwhile
            log.debug("could not listen again after a subscription timed out: %s", exc)

    # --- routing (notification thread) --------------------------------------------------------------

    def route_at_once(self, method: str, params: Dict[str, Any]) -> None:
        """Reader thread: an acknowledgement is taken at once (a caller may wait for it on the
        notification thread, which then could not deliver it); it never blocks or runs user code."""
        if method == ACKNOWLEDGED:
            self._route(method, params)

    def route(self, method: str, params: Dict[str, Any]) -> None:
        """Give a notification to the subscription(s) it belongs to (notification thread)."""
        if method != ACKNOWLEDGED:  # taken on the reader already
            self._route(method, params)

    def _route(self, method: str, params: Dict[str, Any]) -> None:
        meta = params.get("_meta")
        sid = meta.get(META_SUBSCRIPTION) if isinstance(meta, dict) else None
        rid = params.get("requestId")
        if method == "notifications/cancelled" and type(rid) is int and self._owner.session.is_pending(rid):
            sid = rid  # stdio: the server ends a listen this way (maybe before listen() registered it)
        if sid is not None:
            with self._lock:
                subscription = self._listens.get(sid)
                if subscription is not None and sid in self._early and method != ACKNOWLEDGED:
                    self._early[sid].append((method, params))  # behind the early ones _replay() delivers
                    return
                if subscription is None:
                    # Its listen() may not have registered it yet: keep a few, briefly.
                    if sid not in self._early and len(self._early) >= _EARLY_KEPT:
                        self._early.pop(next(iter(self._early)))
                    early = self._early.setdefault(sid, [])
                    if len(early) < _EARLY_KEPT:
                        early.append((method, params))
                    return
            self._route_listen(subscription, method, params)
            return
        if self._emulated:
            events = _events()
            if method not in events.KINDS:
                return
            event = events.event_of(method, params)
            with self._lock:
                targets = [s for s in self._emulated if events.matches(s.wanted, event)]
            for subscription in targets:
                subscription.deliver(event)

    def _route_listen(self, subscription: Subscription, method: str, params: Dict[str, Any]) -> None:
        events = _events()
        if method == ACKNOWLEDGED:
            subscription.acknowledge(params.get("notifications"))  # (on the reader: see route_at_once)
        elif method in events.KINDS:
            subscription.deliver(events.event_of(method, params))
        elif method == "notifications/cancelled":  # stdio: the server ended the listen
            self._owner.session.forget(subscription.subscription_id)  # -> _listen_done: a quiet end
