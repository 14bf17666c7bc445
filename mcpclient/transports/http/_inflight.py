"""What an HTTP transport has in flight, and the three things that end a request early:
``close()``, a cancel (``cancel_request``) and its deadline.

Every HTTP request a transport sends is a ``Request`` registered in its ``InFlight`` table and
sent through ``InFlight.send``. While the answer's status line and headers are awaited, the
transport's own connections (``_connections``) tell the request the socket they are read from;
once they came, the response whose body is read takes its place. Ending a request shuts that
socket down (``_reading.shutdown``): a read blocked on it returns at once, whatever pace the
server keeps, which no read timeout can promise (``requests``' is per read: a server sending one
byte a second never meets it). Then ``InFlight.send`` raises ``Aborted``, which no policy retries,
and the failure is reported to nobody: the session already ended the call, or the transport is
closing.

The deadlines are kept by one thread per transport (``mcpclient-<n>-http-deadline``), started
by the first request that has one and woken only when the earliest deadline in flight comes
(a request that ends first costs it nothing). It ends a request still waiting for its answer's
headers; a body is read within its deadline by ``_reading``, and an event stream answering a
call is ended by the session's cancel, since progress may move a call's deadline.

``Inbox`` is what the session's reader takes from a transport; ``Closing`` runs ``close()`` once.
"""
from __future__ import annotations

import logging
import threading
from queue import SimpleQueue
from time import monotonic
from typing import Any, Callable, Dict, Optional, Set, TypeVar

from ..._util.threads import WAIT_MAX, start_thread
from ...errors import AuthError, ConnectionClosed, ProtocolError, TransportError
from ..base import CLOSE_BUDGET, DeliveryFailed
from ._reading import Response, abort, shutdown

__all__ = ["Aborted", "Closing", "InFlight", "Inbox", "Request", "current"]

R = TypeVar("R")

log = logging.getLogger("mcpclient.transport.http")

_NEVER = float("inf")
CLOSED = "the transport is closed"


class Aborted(ConnectionClosed):
    """A request ended by ``close()``, a cancel or its deadline: never sent again, reported to nobody."""


class _Current(threading.local):
    request: Optional["Request"] = None


#: The request this thread is sending (set by ``InFlight.send`` around one HTTP request): the
#: transport's connections tell it the socket they wait on (``Request.waiting_on``).
current = _Current()


class Request:
    """One HTTP request of a transport, from ``send()`` to its end.

    For a JSON-RPC request: its ``id``, ``body``, ``deadline`` (monotonic; the answer's headers
    must have come by then), routing ``headers``, whether it may be repeated (``idempotent``) and
    whether it opens the session (``setup``). For any request (a notification, a GET stream, a
    DELETE...): what ending it must reach (``sock``, then ``response``), ``due`` (when the deadline
    thread ends it; a cancel may bring it forward), ``cancelled`` (the session gave up on it) and
    ``ended`` (why it was ended, or None).
    """

    __slots__ = ("id", "body", "deadline", "headers", "idempotent", "setup", "due", "sock", "response",
                 "cancelled", "ended")

    def __init__(self, id: Any = None, body: bytes = b"", *, deadline: Optional[float] = None,
                 headers: Optional[Dict[str, str]] = None, idempotent: Optional[bool] = False,
                 setup: bool = False) -> None:
        self.id = id
        self.body = body
        self.deadline = deadline
        self.headers = headers
        self.idempotent = idempotent
        self.setup = setup
        self.due = deadline
        self.sock: Any = None
        self.response: Optional[Response] = None
        self.cancelled = False
        self.ended: Optional[str] = None

    def waiting_on(self, sock: Any) -> None:
        """Called by the connection (on the sending thread) before it waits for the answer's
        headers on ``sock``. (No lock: whichever of this and ``InFlight._end`` comes second shuts
        the socket down.)"""
        self.sock = sock
        if self.ended is not None:
            shutdown(sock)


class InFlight:
    """The requests of one transport in flight (JSON-RPC requests by id, and the others), and the
    thread that keeps their deadlines.

    Args:
        name: the server, as errors name it.
        thread_name: the deadline thread's name (asked when it starts: a transport's number may
            be set after it was made).
    """

    def __init__(self, name: str, thread_name: Callable[[], str]) -> None:
        self._name = name
        self._thread_name = thread_name
        # Guards everything below; held only for dict updates and socket shutdowns (never a wait).
        self._lock = threading.Lock()
        self._due = threading.Condition(self._lock)
        self._by_id: Dict[Any, Request] = {}
        self._others: Set[Request] = set()
        self._earliest = _NEVER  # when the deadline thread wakes next (a bound: it may find nothing due)
        self._watch: Optional[threading.Thread] = None
        self._ended = False  # end_all() ran: what registers later is ended at once
        self._stopped = False

    # --- registering --------------------------------------------------------------------------

    def add(self, request: Request) -> None:
        """Register ``request`` before it is sent; after ``end_all()`` it is ended at once."""
        with self._lock:
            self._register(request)
            if self._ended:
                self._end(request, CLOSED)

    def add_after_end(self, request: Request) -> None:
        """Register what ``close()`` still sends after ``end_all()`` (the session's DELETE): its
        deadline is kept until ``stop()``."""
        with self._lock:
            self._register(request)

    def _register(self, request: Request) -> None:
        if request.id is not None:
            self._by_id[request.id] = request
        else:
            self._others.add(request)
        due = request.due
        if due is not None and due < self._earliest:
            self._wake_at(due)

    def remove(self, request: Request) -> None:
        """``request`` is over (answered, failed or ended): forget it."""
        with self._lock:
            if request.id is None:
                self._others.discard(request)
            elif self._by_id.get(request.id) is request:
                del self._by_id[request.id]

    def unbound(self, request: Request) -> None:
        """No deadline thread for ``request`` from now on (its answer stream is resumed: the
        session's cancel ends it, since progress may have moved the call's deadline), unless it
        was cancelled already."""
        with self._lock:
            if not request.cancelled:
                request.due = None

    # --- sending ------------------------------------------------------------------------------

    def send(self, request: Request, call: Callable[..., R], *args: Any) -> R:
        """``call(*args)``: one HTTP request sent for ``request``, returning once the answer's
        headers came, with the socket it waits on known to ``request``; then the answer is
        registered as ``request``'s response. Raises ``Aborted`` if ``request`` was ended or given
        up (``cancel``) before it, or ended during it (the answer, if any, closed), else what
        ``call`` raises: a request given up is never sent again."""
        if request.ended is None and request.due is not None and monotonic() >= request.due:
            request.ended = f"{self._name} did not answer in time"  # (the deadline thread skipped it while
            # its last answer was read: it looks only at requests waiting for headers)
        if request.ended is None and request.cancelled:  # (given up, by a cancel or its deadline: a
            request.ended = "the request was given up"  # retry or a renewed session never sends it again)
        if request.ended is not None:
            raise Aborted(request.ended)
        request.response = None  # waiting for headers (again): the deadline thread looks at it
        current.request = request
        try:
            response = call(*args)
        except Exception as exc:
            request.sock = None  # (the connection was closed with the failure, never pooled)
            if request.ended is not None:
                raise Aborted(request.ended) from exc
            raise
        finally:
            current.request = None
        with self._lock:  # (before anything reads or closes the answer: its connection is ours still)
            request.sock = None
            request.response = response  # type: ignore[assignment]
            ended = request.ended
        if ended is not None:
            response.close()  # type: ignore[attr-defined]
            raise Aborted(ended)
        return response

    # --- ending -------------------------------------------------------------------------------

    def cancel(self, rid: Any, late: Optional[float]) -> None:
        """The session gave up on request ``rid``. ``late`` None: end it now (2026-07-28: closing
        its answer is the cancel). Else the answer being read is ended (nobody waits for it), but
        one whose headers are still awaited may come within ``late`` seconds (it may name what the
        request made: a task to cancel) and is read then, within that bound."""
        with self._lock:
            request = self._by_id.get(rid)
            if request is None:
                return
            request.cancelled = True
            if late is None:
                self._end(request, f"the request to {self._name} was cancelled")
                return
            if request.response is not None:
                abort(request.response)
            bound = monotonic() + late
            if request.due is None or bound < request.due:
                request.due = bound
                if bound < self._earliest:
                    self._wake_at(bound)

    def end_all(self) -> None:
        """``close()``: end every request in flight; one registered later is ended at once."""
        with self._lock:
            self._ended = True
            for request in (*self._by_id.values(), *self._others):
                self._end(request, CLOSED)

    def stop(self, deadline: float) -> None:
        """Stop the deadline thread (joined until ``deadline``)."""
        with self._lock:
            self._stopped = True
            self._due.notify()
            watch = self._watch
        if watch is not None and watch is not threading.current_thread():
            watch.join(max(0.0, deadline - monotonic()))

    def _end(self, request: Request, reason: str) -> None:
        """(Under the lock.) End ``request``: shut down the socket it waits on, or its answer's."""
        if request.ended is None:
            request.ended = reason
        sock = request.sock
        if sock is not None:
            shutdown(sock)
        response = request.response
        if response is not None:
            abort(response)

    # --- the deadline thread ------------------------------------------------------------------

    def _wake_at(self, when: float) -> None:
        """(Under the lock.) Have the deadline thread wake at ``when`` (earlier than planned)."""
        if self._stopped:
            return
        self._earliest = when
        if self._watch is None:
            self._watch = start_thread(self._keep_deadlines, self._thread_name())
        else:
            self._due.notify()

    def _keep_deadlines(self) -> None:
        with self._lock:
            while not self._stopped:
                now = monotonic()
                if now < self._earliest:
                    self._due.wait(None if self._earliest == _NEVER else min(self._earliest - now, WAIT_MAX))
                    continue
                earliest = _NEVER
                for request in (*self._by_id.values(), *self._others):
                    due = request.due
                    if due is None or request.ended is not None:
                        continue
                    if due > now:
                        earliest = min(earliest, due)
                    elif request.response is None:  # still waiting for its answer's headers
                        self._end(request, f"{self._name} did not answer in time")
                self._earliest = earliest


class Inbox:
    """What the session's reader takes from a transport (``get``): messages, a request that
    failed (``DeliveryFailed``), ``None`` at the end."""

    def __init__(self, name: str, closing: threading.Event) -> None:
        self._name = name
        self._closing = closing
        queue: "SimpleQueue[Any]" = SimpleQueue()
        self.put = queue.put
        self.get = queue.get

    def fail(self, request: Request, exc: BaseException) -> None:
        """Fail the call ``request`` with ``exc`` (the reader lands it), unless nobody waits for it:
        the transport is closing, the session gave up on it, or its deadline passed (the session
        reports that call's timeout). mcpclient's own errors keep their type (``ConnectError``: it
        never reached the server); anything else becomes ``ConnectionClosed`` naming only its type."""
        if self._closing.is_set() or request.cancelled or request.ended is not None:
            return
        deadline = request.deadline
        if deadline is not None and monotonic() >= deadline:
            return
        error = exc
        if not isinstance(exc, (TransportError, AuthError, ProtocolError)):
            error = ConnectionClosed(f"a request to {self._name} failed: {type(exc).__name__}")
            error.__cause__ = exc
        self.put(DeliveryFailed(request.id, error))


class Closing:
    """``close()`` once, from any thread: the first caller does the work; a second one waits for
    it. ``event`` is set first thing: every loop and wait of the transport checks it."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._done = threading.Event()
        self._lock = threading.Lock()

    def begin(self, deadline: Optional[float]) -> Optional[float]:
        """The deadline of this close (default ``CLOSE_BUDGET`` from now), or ``None`` if another
        close ran or is running (then this waits for it, until ``deadline``)."""
        deadline = monotonic() + CLOSE_BUDGET if deadline is None else deadline
        with self._lock:
            first = not self.event.is_set()
            self.event.set()
        if not first:
            self._done.wait(max(0.0, deadline - monotonic()))
            return None
        return deadline

    def done(self) -> None:
        self._done.set()
