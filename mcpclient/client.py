"""``Client``: the blocking, thread-safe MCP API.

Maps MCP methods to typed results, walks pagination, checks server capabilities before sending,
validates structured tool output, and routes server notifications (logs, progress, changes) to
the user's callbacks. The JSON-RPC machinery (ids, futures, reader thread) lives in ``session``;
the bytes live in ``transports``.
"""
from __future__ import annotations

import enum
import json
import logging
import re
import shlex
import threading
import time
from concurrent.futures import Future, InvalidStateError
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union, overload

from ._sentinel import DEFAULT
from ._version import __version__
from ._threads import Lane
from ._validation import validate_structured
from .errors import (
    CapabilityError, ClientClosedError, ConnectError, ConnectionClosed, HTTPError, InputRoundsExceeded, MCPError, MethodNotFound,
    ProtocolError, RequestCancelled, RequestTimeout, SchemaValidationError, TransportError, UnsupportedProtocolVersion,
)
from ._responder import Responder
from .cache import CACHEABLE, ResultCache
from .modern import META_SUBSCRIPTION, MRTR_METHODS, header_params, request_meta, result_type, with_meta
from .negotiation import (
    LEGACY, Discovered, era_setting, forget_era, fresh_discovery, keep_discovery, probe, remember_era, remembered_era,
)
from .notifications import Watchers
from .protocol import (
    LOG_LEVELS, check_server_version, initialize_params, missing_capabilities, server_has,
)
from .session import CallFuture, GuardedFuture, ProgressCallback, Session
from .transports.base import Transport
from .transports.stdio import StdioTransport
from .types import (
    Completion, Implementation, Prompt, PromptResult, Resource, ResourceContents, ResourceTemplate, Tool,
    ToolResult,
)

if TYPE_CHECKING:
    from typing import Literal

    from .handlers import ElicitationHandler, RootsSetting, SamplingHandler
    from .skills import LoadedSkill, Skill
    from .subscriptions import Event, Subscription
    from .tasks import Task, ToolTask

__all__ = ["DEFAULT", "Client"]

log = logging.getLogger("mcpclient")

T = TypeVar("T")
Target = Union[str, Sequence[str], Transport]
LogCallback = Callable[[str, Optional[str], Any], Any]
NotificationCallback = Callable[[str, Dict[str, Any]], Any]


class _State(enum.Enum):
    NEW = "new"  # constructed; no I/O yet
    CONNECTING = "connecting"  # connect() is running the handshake
    READY = "ready"  # calls allowed
    CLOSED = "closed"  # terminal: close() was called (a connection that died stays READY until then)



_PYTHON_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
                  "warning": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL,
                  "alert": logging.CRITICAL, "emergency": logging.CRITICAL}


def _make_transport(target: Target, headers: Optional[Dict[str, str]], auth: Any) -> Transport:
    if isinstance(target, Transport):
        if headers or auth:
            raise ValueError("headers= and auth= go to the transport when you pass one")
        return target
    if isinstance(target, str):
        if re.match(r"^https?://", target, re.I):
            from .transports.http import HTTPTransport

            return HTTPTransport(target, headers=headers, auth=auth)
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", target):
            raise ValueError(f"{target!r}: only http(s) URLs and commands are supported targets")
        if headers or auth:
            raise ValueError("headers= and auth= apply to HTTP targets only")
        argv = shlex.split(target)
        if not argv:
            raise ValueError("empty command")
        return StdioTransport(argv)
    if isinstance(target, (list, tuple)) and all(isinstance(a, str) for a in target):
        if headers or auth:
            raise ValueError("headers= and auth= apply to HTTP targets only")
        return StdioTransport(list(target))
    raise TypeError(f"target must be a command string, an argv list or a Transport, not {type(target).__name__}")


def _client_info(info: Any) -> Dict[str, Any]:
    if isinstance(info, Implementation):
        return dict(info.raw) or {"name": info.name, "version": info.version}
    if isinstance(info, dict):
        return dict(info)
    name, version = info
    return {"name": str(name), "version": str(version)}


def _page_items(result: Any, key: str, method: str) -> Tuple[list, Any]:
    if not isinstance(result, dict) or not isinstance(result.get(key), list):
        raise ProtocolError(f"{method} result has no {key!r} list")
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise ProtocolError(f"{method} result has a nextCursor that is not a string")
    return result[key], cursor


class Client:
    """A blocking MCP client; every method is safe to call from many threads at once.

    Example::

        with Client("python -m mcpclient.testing") as client:
            print([t.name for t in client.list_tools()])
            print(client.call_tool("add", {"a": 1, "b": 2}).structured_content)

    Args:
        target: a command string (split with ``shlex``, run over stdio), an argv list, an
            ``http(s)://`` URL (Streamable HTTP), or a ``Transport``.
        headers: extra HTTP headers (URL targets only).
        auth: a bearer token, or a callable returning one per request (URL targets only).
        client_info: ``(name, version)``, a dict, or an ``Implementation`` sent in ``initialize``.
        protocol: ``"auto"``/``"legacy"`` (offer the newest handshake revision and accept any this
            client speaks) or an exact revision such as ``"2025-06-18"`` (offer and require it).
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
            experimental): declares the ``tasks`` capability for the configured handlers, answers
            such requests at once with a task, runs the handler on a task thread, and serves the
            server's ``tasks/get``/``result``/``list``/``cancel``.
        max_workers: threads for server-initiated requests (and for paging ``*_future`` calls).
        validate_output: validate ``structuredContent`` against the tool's ``outputSchema`` when the
            tool was seen in ``list_tools()``.
        probe_timeout: how long the ``server/discover`` probe waits on stdio (a silent server is
            taken for a handshake-era one).
        max_input_rounds: how many ``input_required`` rounds one 2026 request may take.
        cache: reuse list and read results while the server's ``ttlMs`` says they are fresh
            (2026 servers; private results only for the same credentials). ``invalidate_cache()``.

    Threads: ``sampling_handler``, ``elicitation_handler`` and a ``roots`` callable run on the
    connection's handler threads (``mcpclient-<n>-handler_<i>``, at most ``max_workers`` at once;
    more concurrent server requests are refused with a JSON-RPC error); they may block (a user
    typing an answer) and may call the client; with ``task_requests=True``, a task-augmented
    request's handler runs on a task thread (``mcpclient-<n>-task_<i>``) instead, and the server's
    ``tasks/*`` polls and ``ping`` are answered at once without using a handler thread.
    ``on_notification``, ``on_log``,
    ``on_resource_updated`` and ``on_progress`` run one at a time, in arrival order, on the
    notification thread (``mcpclient-<n>-notify``); they may call the client but should not
    block for long. ``on_*_changed`` run one at a time on the refresh thread
    (``mcpclient-<n>-refresh``). Futures' done-callbacks run on the reader thread
    (``mcpclient-<n>-reader``) and must not block; a blocking client call made there raises
    ``ReaderThreadError``. ``close()`` does not wait for a handler that ignores it: the answer
    it returns later is dropped.

    Every request method has a ``<name>_future`` twin that returns a ``concurrent.futures.Future``
    at once; ``future.cancel()`` cancels the request on the server too.
    """

    def __init__(
        self,
        target: Target,
        *,
        client_info: Any = ("mcpclient", __version__),
        protocol: str = "auto",
        timeout: Optional[float] = 60.0,
        headers: Optional[Dict[str, str]] = None,
        auth: Any = None,
        reset_timeout_on_progress: bool = False,
        max_total_timeout: Optional[float] = None,
        sampling_handler: Optional[SamplingHandler] = None,
        elicitation_handler: Optional[ElicitationHandler] = None,
        elicitation_modes: Sequence[str] = ("form",),
        roots: Optional[RootsSetting] = None,
        capabilities: Optional[Dict[str, Any]] = None,
        on_notification: Optional[NotificationCallback] = None,
        on_log: Optional[LogCallback] = None,
        on_tools_changed: Optional[Callable[[List[Tool]], Any]] = None,
        on_prompts_changed: Optional[Callable[[List[Prompt]], Any]] = None,
        on_resources_changed: Optional[Callable[[List[Resource]], Any]] = None,
        on_resource_updated: Optional[Callable[[str], Any]] = None,
        task_requests: bool = False,
        max_workers: int = 4,
        validate_output: bool = True,
        probe_timeout: float = 2.0,
        max_input_rounds: int = 10,
        cache: bool = True,
    ) -> None:
        self._era_mode, self._modern_offer, self._offer = era_setting(protocol)
        self._protocol = protocol
        self.probe_timeout = probe_timeout
        self.max_input_rounds = max_input_rounds
        self._modern = False
        self._meta: Dict[str, Any] = {}
        self._log_level: Optional[str] = None
        self._cache = ResultCache(self._credentials) if cache else None
        self._listens: Dict[Any, Subscription] = {}  # 2026: listen request id -> subscription
        self._early: Dict[Any, List[Tuple[str, Dict[str, Any]]]] = {}  # its notifications before it was known
        self._emulated: List[Subscription] = []  # handshake era: fed from unsolicited notifications
        self._listen_lock = threading.Lock()
        self._resource_listen: Optional[Subscription] = None  # 2026: what subscribe_resource maps onto
        self._subscribed: List[str] = []  # URIs subscribe_resource() asked for
        self._resubscribe_lock = threading.Lock()
        self.transport = _make_transport(target, headers, auth)
        self.timeout = _check_timeout(timeout)
        self.reset_timeout_on_progress = reset_timeout_on_progress
        self.max_total_timeout = max_total_timeout
        self.validate_output = validate_output
        self._client_info = _client_info(client_info)
        self._on_notification = on_notification
        self._on_log = on_log
        self._max_workers = max_workers
        self._session = self._new_session()
        tasks = None
        if task_requests:
            from .tasks import TaskStore  # imported only by clients that use tasks

            tasks = TaskStore(self._session.instance, max_workers)
        self._responder = Responder(sampling_handler, elicitation_handler, elicitation_modes, roots, capabilities,
                                    tasks)
        self._watchers = Watchers(
            self._session.instance,
            {"tools": on_tools_changed, "prompts": on_prompts_changed, "resources": on_resources_changed},
            {"tools": self.list_tools, "prompts": self.list_prompts, "resources": self.list_resources},
            on_resource_updated, self._invalidate)
        # Built here from a URL: an old HTTP+SSE server may be tried when Streamable HTTP is refused.
        self._may_fall_back = isinstance(target, str) and type(self.transport).__name__ == "HTTPTransport"
        self._state = _State.NEW
        self._state_lock = threading.Lock()
        self._pager: Optional[Lane] = None
        self._inputs: Optional[Lane] = None  # 2026 futures: input rounds (user handlers) run here
        self._tools: Dict[str, Tool] = {}
        self._missing: Dict[str, str] = {}
        self._version: Optional[str] = None
        self._init_result: Dict[str, Any] = {}
        self._server_info = Implementation("", "")
        self._server_log: logging.Logger = logging.getLogger(f"mcpclient.server.{self.transport.name}")

    # --- lifecycle ------------------------------------------------------------------------------

    def connect(self, timeout: Any = DEFAULT) -> "Client":
        """Start the transport and run the ``initialize`` handshake. Returns self.

        On failure everything started is torn down before the error is raised.
        """
        with self._state_lock:
            if self._state is not _State.NEW:
                raise ClientClosedError(f"connect() on a client that is {self._state.value}; make a new Client")
            self._state = _State.CONNECTING
        try:
            try:
                self._handshake(timeout)
            except HTTPError as exc:
                if not self._fall_back_to_sse(exc):
                    raise
                try:
                    self._handshake(timeout)
                except Exception as second:  # report the first failure; the fallback's is its cause
                    raise exc from second
        except BaseException as exc:
            closed_by_user = self._state is _State.CLOSED
            self.close()
            if closed_by_user and isinstance(exc, MCPError) and not isinstance(exc, ClientClosedError):
                raise ClientClosedError("the client was closed while connecting") from exc
            if isinstance(exc, TransportError) and not isinstance(exc, ConnectError):
                first_line = str(exc).partition("\n")[0]  # details stay on the cause
                raise ConnectError(f"the handshake with {self.transport.name} failed: {first_line}") from exc
            raise
        with self._state_lock:
            if self._state is _State.CONNECTING:
                self._state = _State.READY
        return self

    def _handshake(self, timeout: Any) -> None:
        """Start the session; ``server/discover`` (unless legacy is known or asked for), else
        ``initialize``/``notifications/initialized``."""
        self._session.start()
        key = self._era_key()
        if self.transport.handshake_only and self._era_mode == "modern":
            raise ProtocolError(f"{type(self.transport).__name__} carries only the handshake-era protocol")
        if self._era_mode != "legacy" and not self.transport.handshake_only and (
                self._era_mode == "modern" or remembered_era(key) != LEGACY):
            try:
                if self._discover(timeout):
                    return
            except ConnectionClosed:
                # Some handshake-era servers exit on any request before initialize: start it again.
                if self._era_mode == "modern" or not self._relaunch():
                    raise
                log.info("%s exited on server/discover: a handshake-era server; started it again", self.transport.name)
        params = initialize_params(self._offer, self._client_info, self._responder.capabilities())  # type: ignore[arg-type]
        try:
            result = self._session.request("initialize", params, timeout=self._timeout(timeout))
        except UnsupportedProtocolVersion:
            # A server we took for legacy (a slow probe, or a remembered verdict) is modern after all.
            forget_era(key)
            if self._era_mode == "legacy" or not self._discover(timeout):
                raise
            return
        if not isinstance(result, dict):
            raise ProtocolError("initialize result is not an object")
        if self._era_mode == "auto":
            remember_era(key, LEGACY)  # only now: the handshake worked
        self._version = check_server_version(self._offer, result.get("protocolVersion"), self._protocol)
        self._init_result = result
        self.transport.negotiated(self._version, False)
        self._missing = missing_capabilities(self.server_capabilities, self._version)
        self._server_info = Implementation.from_wire(result.get("serverInfo") or {})
        self._session.notify("notifications/initialized")

    def _discover(self, timeout: Any) -> bool:
        """Probe ``server/discover``; adopt the 2026 era and return True if the server speaks it."""
        wait = self._timeout(timeout)
        if not _is_http(self.transport) and wait is not None:
            wait = min(wait, self.probe_timeout)  # a legacy stdio server may never answer
        elif wait is None and not _is_http(self.transport):
            wait = self.probe_timeout
        # An HTTP server's DiscoverResult is reused while its ttlMs says it is fresh (same credentials).
        reuse = (self._era_key(), self._credentials()) if _is_http(self.transport) and self._cache else None
        found = fresh_discovery(reuse) if reuse is not None else None
        if found is None or (self._modern_offer and found.version != self._modern_offer):
            found = probe(self._session, self._responder.capabilities(), self._client_info, wait,
                          required=self._era_mode == "modern", version=self._modern_offer or "",
                          http=_is_http(self.transport))
            if found is None:
                return False
            if reuse is not None:
                keep_discovery(reuse, found)
        self._adopt(found)
        remember_era(self._era_key(), found.version)
        return True

    def _relaunch(self) -> bool:
        """Replace a stdio server that died on the probe with a fresh one (True if done)."""
        relaunched = getattr(self.transport, "relaunched", None)
        if relaunched is None:
            return False
        with self._state_lock:  # close() reads the session after setting CLOSED: it closes this one
            if self._state is not _State.CONNECTING:
                return False
            self._session.close()
            self.transport = relaunched()
            self._session = self._new_session()
        self._session.start()
        return True

    def _adopt(self, found: Discovered) -> None:
        self._modern = True
        self._version = found.version
        self._init_result = {"capabilities": found.capabilities, "instructions": found.instructions,
                             "serverInfo": found.server_info}
        self._server_info = Implementation.from_wire(found.server_info)
        self._missing = missing_capabilities(self.server_capabilities, self._version)
        self._meta = request_meta(found.version, self._responder.capabilities(), self._client_info)
        self.transport.negotiated(found.version, True)

    def _era_key(self) -> Optional[str]:
        url = getattr(self.transport, "url", None)
        if isinstance(url, str):
            return url
        argv = getattr(self.transport, "argv", None)
        if not argv:
            return None
        env = sorted((getattr(self.transport, "env", None) or {}).items())
        return f"{getattr(self.transport, 'cwd', None)}|{argv!r}|{env!r}"

    def _fall_back_to_sse(self, error: HTTPError) -> bool:
        """Streamable HTTP's ``initialize`` POST was refused as a server of the deprecated HTTP+SSE
        transport refuses it (400/404/405, no JSON-RPC body): swap in an ``SSETransport`` (once)."""
        if not self._may_fall_back or self._init_result or error.status not in (400, 404, 405) \
                or '"jsonrpc"' in str(error):  # a JSON-RPC error body: a Streamable HTTP server after all
            return False
        from .transports.sse import SSETransport

        self._may_fall_back = False
        first = self.transport
        self._session.close()  # the first attempt's threads
        sse = SSETransport(first.url, headers=first.headers, auth=first.auth,  # type: ignore[attr-defined]
                           name=first.name)
        with self._state_lock:  # close() reads the session after setting CLOSED: it closes this one
            if self._state is not _State.CONNECTING:
                return False
            self.transport = sse
            self._session = self._new_session()
        log.info("%s refused the Streamable HTTP initialize (%s); trying the HTTP+SSE transport", first.name, error)
        return True

    def _new_session(self) -> Session:
        session = Session(self.transport, on_request=self._handle_request,
                          on_notification=self._handle_notification, max_workers=self._max_workers)
        session.on_quick_request = self._quick_request
        session.on_lost = self._end_subscriptions
        return session

    def close(self) -> None:
        """Fail pending calls, stop the server and every thread. Idempotent, any thread, bounded (≤ ~5 s)."""
        with self._state_lock:
            self._state = _State.CLOSED
            pager, self._pager = self._pager, None
            inputs, self._inputs = self._inputs, None
        tasks = self._responder.tasks
        if tasks is not None:
            tasks.release()  # unfinished tasks end; nothing new is accepted
        self._watchers.elicitations.close()
        self._end_subscriptions(None)
        self._session.close()
        self._watchers.close(time.monotonic() + 0.5)
        if tasks is not None:
            tasks.close(time.monotonic() + 0.5)
        if pager is not None:
            pager.shutdown(deadline=time.monotonic() + 0.5)  # its pages failed with the session
        if inputs is not None:
            inputs.shutdown(deadline=time.monotonic() + 0.5)

    def __enter__(self) -> "Client":
        return self.connect()

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __getstate__(self) -> Any:
        raise TypeError("a Client holds a live connection and cannot be pickled")

    def __repr__(self) -> str:
        server = self._server_info.name or self.transport.name
        return f"<mcpclient.Client {server!r} {self._state.value}>"

    # --- negotiated state -----------------------------------------------------------------------

    @property
    def protocol_version(self) -> Optional[str]:
        """The revision agreed in the handshake (``None`` before ``connect()``)."""
        return self._version

    @property
    def server_info(self) -> Implementation:
        return self._server_info

    @property
    def server_capabilities(self) -> Dict[str, Any]:
        caps = self._init_result.get("capabilities")
        return caps if isinstance(caps, dict) else {}

    @property
    def instructions(self) -> Optional[str]:
        value = self._init_result.get("instructions")
        return value if isinstance(value, str) else None

    @property
    def is_closed(self) -> bool:
        """True once the client can make no more calls: closed, or its connection ended."""
        return self._state is _State.CLOSED or self._session.is_closed

    @property
    def session(self) -> Session:
        """The JSON-RPC engine (counters such as ``late_replies`` live there)."""
        return self._session

    # --- plumbing -------------------------------------------------------------------------------

    def _timeout(self, timeout: Any) -> Optional[float]:
        return self.timeout if timeout is DEFAULT else _check_timeout(timeout)

    def _options(self, method: str, timeout: Any, on_progress: Optional[ProgressCallback],
                 reset_timeout_on_progress: Optional[bool], check: bool) -> Dict[str, Any]:
        """Check the client can send ``method`` now, and resolve the per-call options."""
        if self._state is not _State.READY:
            if self._state is _State.CLOSED:
                raise ClientClosedError(f"{method}: the client is closed")
            raise ClientClosedError(f"{method}: the client is not connected; call connect() or use 'with'")
        if self._modern and method in _REMOVED_IN_2026:
            raise ProtocolError(f"{method} does not exist in MCP {self._version} (this server speaks the 2026 "
                                "era); use subscribe_resource() or listen(), which map onto subscriptions/listen")
        if check:
            capability = self._missing.get(method)
            if capability is not None:
                raise CapabilityError(capability, method)
        reset = self.reset_timeout_on_progress if reset_timeout_on_progress is None else reset_timeout_on_progress
        return {"timeout": self.timeout if timeout is DEFAULT else _check_timeout(timeout), "on_progress": on_progress,
                "reset_timeout_on_progress": reset, "max_total_timeout": self.max_total_timeout if reset else None}

    def _start(self, method: str, params: Optional[Dict[str, Any]], transform: Optional[Callable[[Any], Any]],
               timeout: Any, on_progress: Optional[ProgressCallback] = None,
               reset_timeout_on_progress: Optional[bool] = None, check: bool = True) -> CallFuture:
        """Send a request; return its future."""
        options = self._options(method, timeout, on_progress, reset_timeout_on_progress, check)
        if self._modern:
            if method in MRTR_METHODS:  # may take several rounds
                return self._start_rounds(method, params, transform, options)  # type: ignore[return-value]
            params, transform = with_meta(params, self._meta), _complete_only(method, transform)
        return self._session.start_request(method, params, transform=transform, **options)

    def _run(self, method: str, params: Optional[Dict[str, Any]], transform: Optional[Callable[[Any], Any]],
             timeout: Any, on_progress: Optional[ProgressCallback] = None,
             reset_timeout_on_progress: Optional[bool] = None, check: bool = True) -> Any:
        """Send a request; block for its (transformed) result."""
        options = self._options(method, timeout, on_progress, reset_timeout_on_progress, check)
        if self._modern:
            return self._rounds(method, params, transform, options)
        return self._session.request(method, params, transform=transform, **options)

    def _rounds(self, method: str, params: Optional[Dict[str, Any]], transform: Optional[Callable[[Any], Any]],
                options: Dict[str, Any]) -> Any:
        """A 2026 request: with ``_meta``; while the server answers ``input_required``, run the
        handlers for its input requests and repeat the request (new id) with their answers and
        its ``requestState``, within one overall timeout and ``max_input_rounds``."""
        cache = self._cache if method in CACHEABLE else None
        if cache is not None:
            hit = cache.get(method, params)
            if hit is not None:
                return transform(hit) if transform is not None else hit
        started = time.monotonic()
        raw = self._session.request(method, with_meta(params, self._meta), **options)
        kind = raw.get("resultType", "complete") if type(raw) is dict else result_type(raw)
        if kind == "complete":  # the common case: one round trip
            if cache is not None:
                cache.put(method, params, raw)  # (never the result of an input round)
            return transform(raw) if transform is not None else raw
        timeout = options["timeout"]
        deadline = None if timeout is None else started + timeout
        for _ in range(self.max_input_rounds):
            if kind != "input_required" or method not in MRTR_METHODS:
                raise ProtocolError(f"{method}: unexpected resultType {kind!r:.50}")
            ask = self._answer_inputs(method, params, raw)
            if deadline is not None:
                options = dict(options, timeout=max(0.0, deadline - time.monotonic()))
            raw = self._session.request(method, with_meta(ask, self._meta), **options)
            kind = result_type(raw)
            if kind == "complete":
                return transform(raw) if transform is not None else raw
        raise InputRoundsExceeded(f"{method}: the server still wanted input after {self.max_input_rounds} rounds")

    def _start_rounds(self, method: str, params: Optional[Dict[str, Any]], transform: Optional[Callable[[Any], Any]],
                      options: Dict[str, Any]) -> "Future[Any]":
        """The future twin of ``_rounds``, without a thread per call: each round is a request
        future; its done-callback (reader thread) finishes the outer future or hands the input
        requests to a worker, which runs the handlers and sends the next round. ``cancel()``
        cancels the round in flight on the server too."""
        outer = _RoundsFuture(self._session, method)
        cache = self._cache if method in CACHEABLE else None
        hit = cache.get(method, params) if cache is not None else None
        if hit is not None:
            _settle(outer, lambda: transform(hit) if transform is not None else hit)
            return outer
        timeout = options["timeout"]
        deadline = None if timeout is None else time.monotonic() + timeout

        def send(ask: Optional[Dict[str, Any]], number: int) -> None:
            if outer.cancelled():
                return
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                inner = self._session.start_request(method, with_meta(ask, self._meta), **dict(options, timeout=left))
            except BaseException as exc:
                _settle(outer, None, exc)
                return
            outer.current = inner
            if outer.cancelled():  # cancelled while this round was being sent
                inner.cancel()
            inner.add_done_callback(lambda done: landed(done, number))

        def landed(done: "Future[Any]", number: int) -> None:
            if outer.cancelled():
                return
            if done.cancelled():
                _settle(outer, None, RequestCancelled(f"{method} was cancelled"))
                return
            exc = done.exception()
            if exc is not None:
                _settle(outer, None, exc)
                return
            raw = done.result()
            try:
                kind = result_type(raw)
                if kind == "complete":
                    if cache is not None and number == 0:
                        cache.put(method, params, raw)
                    _settle(outer, lambda: transform(raw) if transform is not None else raw)
                    return
                if kind != "input_required":
                    raise ProtocolError(f"{method}: unexpected resultType {kind!r:.50}")
                if number >= self.max_input_rounds:
                    raise InputRoundsExceeded(f"{method}: the server still wanted input after "
                                              f"{self.max_input_rounds} rounds")
            except Exception as failure:
                _settle(outer, None, failure)
                return
            if not self._inputs_lane().try_submit(f"input round of {method}", answer, raw, number + 1):
                _settle(outer, None, ClientClosedError(f"{method} abandoned: the client was closed"))

        def answer(raw: Dict[str, Any], number: int) -> None:  # a worker: runs the user's handlers
            try:
                ask = self._answer_inputs(method, params, raw)
            except BaseException as exc:
                _settle(outer, None, exc)
                return
            send(ask, number)

        send(params, 0)
        return outer

    def _inputs_lane(self) -> Lane:
        with self._state_lock:
            if self._inputs is None:
                self._inputs = Lane(f"mcpclient-{self._session.instance}-inputs", self._max_workers, -1)
            return self._inputs

    def _answer_inputs(self, method: str, params: Optional[Dict[str, Any]], raw: Dict[str, Any]) -> Dict[str, Any]:
        """The retry of ``method``: the original params plus answers to ``raw``'s input requests."""
        requests = raw.get("inputRequests") or {}
        if not isinstance(requests, dict):
            raise ProtocolError(f"{method}: inputRequests is not an object")
        answers = {}
        for key, request in requests.items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise ProtocolError(f"{method}: input request {key!r:.50} has no method")
            inner = request.get("params") if isinstance(request.get("params"), dict) else {}
            try:
                answers[key] = self._responder.answer(request["method"], inner)
            except MethodNotFound:
                raise ProtocolError(f"{method}: the server asked for {request['method']}, which this client "
                                    "did not declare (configure its handler)") from None
        retry = {k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")}
        retry["inputResponses"] = answers
        if "requestState" in raw:
            retry["requestState"] = raw["requestState"]  # echoed exactly, never parsed
        return retry

    def _background(self, method: str, fn: Callable[[], T]) -> "Future[T]":
        """Run a multi-request operation (pagination) on a small pool and return its future.

        Its ``cancel()`` works only until it starts; each page has the call's timeout.
        """
        with self._state_lock:
            if self._state is _State.CLOSED:
                raise ClientClosedError(f"{method}: the client is closed")
            if self._pager is None:
                self._pager = Lane(f"mcpclient-{self._session.instance}-pager", self._max_workers, -1)
            return self._pager.submit(fn, GuardedFuture(self._session, method))

    # --- requests -------------------------------------------------------------------------------

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT) -> Any:
        """Send any request and return the raw ``result`` (the escape hatch; no capability check)."""
        return self._run(method, params, None, timeout, check=False)

    def request_future(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                       timeout: Any = DEFAULT) -> "Future[Any]":
        return self._start(method, params, None, timeout, check=False)

    def ping(self, *, timeout: Any = DEFAULT) -> None:
        """Check the server answers (``ping``; in the 2026 era, which has no ping, ``server/discover``)."""
        self._run("server/discover" if self._modern else "ping", None, _none, timeout)

    def ping_future(self, *, timeout: Any = DEFAULT) -> "Future[None]":
        return self._start("server/discover" if self._modern else "ping", None, _none, timeout)

    # tools

    def iter_tools(self, *, timeout: Any = DEFAULT) -> Iterator[Tool]:
        """Yield tools page by page (each page fetched when needed)."""
        routing = self._modern and hasattr(self.transport, "tool_headers")
        for raw in self._pages("tools/list", "tools", timeout):
            tool = Tool.from_wire(raw)
            if routing:  # 2026 HTTP: x-mcp-header arguments are mirrored into Mcp-Param-* headers
                try:
                    self.transport.tool_headers[tool.name] = header_params(tool.input_schema)  # type: ignore[attr-defined]
                except ValueError as exc:
                    log.warning("dropped tool %r: invalid x-mcp-header annotation: %s", tool.name, exc)
                    continue
            self._tools[tool.name] = tool  # remembered for output validation
            yield tool

    def list_tools(self, *, timeout: Any = DEFAULT) -> List[Tool]:
        """Every tool the server offers (all pages)."""
        return list(self.iter_tools(timeout=timeout))

    def list_tools_future(self, *, timeout: Any = DEFAULT) -> "Future[List[Tool]]":
        return self._background("list_tools", lambda: self.list_tools(timeout=timeout))

    def _tool_call(self, name: str, arguments: Optional[Dict[str, Any]], raise_on_error: bool,
                   meta: Optional[Dict[str, Any]]) -> Tuple[Dict[str, Any], Callable[[Any], ToolResult]]:
        if not isinstance(name, str):
            raise TypeError("tool name must be a string")
        if arguments is not None and not isinstance(arguments, dict):
            raise TypeError("tool arguments must be a dict")
        params: Dict[str, Any] = {"name": name, "arguments": arguments if arguments is not None else {}}
        if meta:
            params["_meta"] = dict(meta)
        known = self._tools.get(name) if self.validate_output else None
        schema = known.output_schema if known is not None else None

        def transform(raw: Any) -> ToolResult:
            result = ToolResult.from_wire(raw, name)
            if schema is not None and not result.is_error:
                if result.structured_content is None:
                    raise SchemaValidationError(f"tool {name!r} declares an outputSchema but returned no "
                                                "structuredContent", tool=name)
                validate_structured(result.structured_content, schema, name)
            if raise_on_error:
                result.raise_for_error()
            return result
        return params, transform

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
        ``result.raise_for_error()``) to get a ``ToolError``. ``on_progress(progress, total,
        message)`` receives the call's progress on the notification thread. Structured output is
        validated against the tool's ``outputSchema`` (``SchemaValidationError``) when known.

        ``task=True`` (or ``task={"ttl": ms}``) runs the call as a task (2025-11-25,
        experimental) and returns a ``ToolTask`` at once: ``.status()``, ``.result(timeout=)``,
        ``.cancel()``. The server must declare task support for tool calls and the tool must not
        forbid it (``Tool.task_support``), else ``CapabilityError``.
        """
        params, transform = self._tool_call(name, arguments, raise_on_error, meta)
        if task is True or isinstance(task, dict):
            return self._start_task(name, params, transform, task, timeout)
        if task not in (False, None):
            raise TypeError("task must be True, False or a dict such as {'ttl': 60000}")
        return self._run("tools/call", params, transform, timeout, on_progress,
                         reset_timeout_on_progress=reset_timeout_on_progress)

    def _start_task(self, name: str, params: Dict[str, Any], transform: Callable[[Any], ToolResult],
                    task: Union[bool, Dict[str, Any]], timeout: Any) -> ToolTask:
        if not server_has(self.server_capabilities, "tasks.requests.tools.call"):
            raise CapabilityError("tasks.requests.tools.call", "tools/call")
        if name not in self._tools:
            self.list_tools(timeout=timeout)
        known = self._tools.get(name)
        if known is not None and known.task_support == "forbidden":
            raise CapabilityError("execution.taskSupport", f"tools/call {name}")
        params["task"] = {} if task is True else dict(task)  # type: ignore[arg-type]

        def created(raw: Any) -> ToolTask:
            if not isinstance(raw, dict) or "task" not in raw:
                raise ProtocolError(f"tools/call {name} as a task: the server answered without a task")
            from .tasks import Task, ToolTask

            return ToolTask(self, name, Task.from_wire(raw["task"]), transform)
        return self._run("tools/call", params, created, timeout)

    def list_tasks(self, *, timeout: Any = DEFAULT) -> List[Task]:
        """Every task the server knows of for this client (``tasks/list``, all pages)."""
        from .tasks import Task

        return [Task.from_wire(raw) for raw in self._pages("tasks/list", "tasks", timeout)]

    def call_tool_future(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT,
                         on_progress: Optional[ProgressCallback] = None, raise_on_error: bool = False,
                         meta: Optional[Dict[str, Any]] = None,
                         reset_timeout_on_progress: Optional[bool] = None) -> "Future[ToolResult]":
        params, transform = self._tool_call(name, arguments, raise_on_error, meta)
        return self._start("tools/call", params, transform, timeout, on_progress,
                           reset_timeout_on_progress=reset_timeout_on_progress)

    # resources

    def iter_resources(self, *, timeout: Any = DEFAULT) -> Iterator[Resource]:
        for raw in self._pages("resources/list", "resources", timeout):
            yield Resource.from_wire(raw)

    def list_resources(self, *, timeout: Any = DEFAULT) -> List[Resource]:
        """Every resource the server lists (all pages)."""
        return list(self.iter_resources(timeout=timeout))

    def list_resources_future(self, *, timeout: Any = DEFAULT) -> "Future[List[Resource]]":
        return self._background("list_resources", lambda: self.list_resources(timeout=timeout))

    def iter_resource_templates(self, *, timeout: Any = DEFAULT) -> Iterator[ResourceTemplate]:
        for raw in self._pages("resources/templates/list", "resourceTemplates", timeout):
            yield ResourceTemplate.from_wire(raw)

    def list_resource_templates(self, *, timeout: Any = DEFAULT) -> List[ResourceTemplate]:
        """Every resource template (all pages)."""
        return list(self.iter_resource_templates(timeout=timeout))

    def list_resource_templates_future(self, *, timeout: Any = DEFAULT) -> "Future[List[ResourceTemplate]]":
        return self._background("list_resource_templates", lambda: self.list_resource_templates(timeout=timeout))

    def read_resource(self, uri: str, *, timeout: Any = DEFAULT) -> List[ResourceContents]:
        """Read a resource; text comes as ``.text``, binary as decoded ``.blob`` bytes."""
        return self._run("resources/read", {"uri": _uri(uri)}, _contents, timeout)

    def read_resource_future(self, uri: str, *, timeout: Any = DEFAULT) -> "Future[List[ResourceContents]]":
        return self._start("resources/read", {"uri": _uri(uri)}, _contents, timeout)

    def subscribe_resource(self, uri: str, *, timeout: Any = DEFAULT) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri`` (``on_resource_updated``,
        ``on_notification``). 2026 era: kept in one ``subscriptions/listen`` for all such URIs."""
        if self._modern:
            self._resubscribe(timeout, add=_uri(uri))
            return
        self._run("resources/subscribe", {"uri": _uri(uri)}, _none, timeout)
        with self._listen_lock:
            if _uri(uri) not in self._subscribed:
                self._subscribed.append(_uri(uri))

    def _resubscribe(self, timeout: Any, add: Optional[str] = None, remove: Optional[str] = None) -> None:
        """2026: replace the one listen that carries every subscribed URI (one change at a time)."""
        with self._resubscribe_lock:
            with self._listen_lock:
                before = list(self._subscribed)
                uris = [u for u in before if u != remove] + ([add] if add and add not in before else [])
                old, self._resource_listen = self._resource_listen, None
            if old is not None:
                old.close()
            fresh = self.listen(resource_uris=uris) if uris else None
            # Return once the server listens: an update right after this call must not be missed.
            if fresh is not None and not fresh.wait_acknowledged(self._timeout(timeout)):
                fresh.close()
                with self._listen_lock:
                    self._subscribed = [u for u in before if u != add]
                raise RequestTimeout(f"subscriptions/listen for {', '.join(uris)[:200]} was not acknowledged in time",
                                     method="subscriptions/listen")
            with self._listen_lock:
                self._subscribed, self._resource_listen = uris, fresh

    def subscribe_resource_future(self, uri: str, *, timeout: Any = DEFAULT) -> "Future[None]":
        if self._modern:
            return self._background("subscribe_resource", lambda: self.subscribe_resource(uri, timeout=timeout))
        return self._start("resources/subscribe", {"uri": _uri(uri)}, _none, timeout)

    def unsubscribe_resource(self, uri: str, *, timeout: Any = DEFAULT) -> None:
        if self._modern:
            self._resubscribe(timeout, remove=_uri(uri))
            return
        with self._listen_lock:
            if _uri(uri) in self._subscribed:
                self._subscribed.remove(_uri(uri))
        self._run("resources/unsubscribe", {"uri": _uri(uri)}, _none, timeout)

    def unsubscribe_resource_future(self, uri: str, *, timeout: Any = DEFAULT) -> "Future[None]":
        if self._modern:
            return self._background("unsubscribe_resource", lambda: self.unsubscribe_resource(uri, timeout=timeout))
        return self._start("resources/unsubscribe", {"uri": _uri(uri)}, _none, timeout)

    # prompts and completion

    def iter_prompts(self, *, timeout: Any = DEFAULT) -> Iterator[Prompt]:
        for raw in self._pages("prompts/list", "prompts", timeout):
            yield Prompt.from_wire(raw)

    def list_prompts(self, *, timeout: Any = DEFAULT) -> List[Prompt]:
        """Every prompt (all pages)."""
        return list(self.iter_prompts(timeout=timeout))

    def list_prompts_future(self, *, timeout: Any = DEFAULT) -> "Future[List[Prompt]]":
        return self._background("list_prompts", lambda: self.list_prompts(timeout=timeout))

    def get_prompt(self, name: str, arguments: Optional[Dict[str, str]] = None, *,
                   timeout: Any = DEFAULT) -> PromptResult:
        """Render a prompt with string ``arguments``."""
        return self._run("prompts/get", _prompt_params(name, arguments), PromptResult.from_wire, timeout)

    def get_prompt_future(self, name: str, arguments: Optional[Dict[str, str]] = None, *,
                          timeout: Any = DEFAULT) -> "Future[PromptResult]":
        return self._start("prompts/get", _prompt_params(name, arguments), PromptResult.from_wire, timeout)

    def complete(self, ref: Any, argument_name: str, argument_value: str,
                 context: Optional[Dict[str, str]] = None, *, timeout: Any = DEFAULT) -> Completion:
        """Suggest values for an argument of a prompt or resource template.

        ``ref`` is a ``Prompt``, a ``ResourceTemplate``/``Resource``, a wire dict
        (``{"type": "ref/prompt", "name": ...}``), a prompt name, or a URI (template).
        """
        return self._run("completion/complete", _complete_params(ref, argument_name, argument_value, context),
                         Completion.from_wire, timeout)

    def complete_future(self, ref: Any, argument_name: str, argument_value: str,
                        context: Optional[Dict[str, str]] = None, *, timeout: Any = DEFAULT) -> "Future[Completion]":
        return self._start("completion/complete", _complete_params(ref, argument_name, argument_value, context),
                           Completion.from_wire, timeout)

    def set_logging_level(self, level: str, *, timeout: Any = DEFAULT) -> None:
        """Ask the server to send log messages at ``level`` and above.

        In the 2026 era there is no ``logging/setLevel``: the level rides in the ``_meta`` of every
        later request instead (and only those requests' log messages are sent)."""
        if self._modern:
            self._options("logging/setLevel", timeout, None, None, True)
            self._log_level = _level(level)
            self._meta = request_meta(self._version or "", self._responder.capabilities(), self._client_info,
                                      self._log_level)
            return
        self._run("logging/setLevel", {"level": _level(level)}, _none, timeout)

    def set_logging_level_future(self, level: str, *, timeout: Any = DEFAULT) -> "Future[None]":
        return self._start("logging/setLevel", {"level": _level(level)}, _none, timeout)

    # skills (SEP-2640 extension)

    def list_skills(self, *, timeout: Any = DEFAULT) -> List[Skill]:
        """The skills the server offers (``skills/list``, all pages): manifests only, no file is read."""
        self._need_skills("skills/list")
        from .skills import Skill

        return [Skill.from_wire(raw) for raw in self._pages("skills/list", "skills", timeout)]

    def get_skill(self, uri: str, *, timeout: Any = DEFAULT) -> Skill:
        """One skill's manifest by its ``SKILL.md`` URI (``skills/get``; works for unlisted skills too)."""
        self._need_skills("skills/get")
        return self._run("skills/get", {"uri": _uri(uri)}, _skill_entry, timeout)

    def load_skill(self, skill: Union[str, Skill], *, timeout: Any = DEFAULT) -> LoadedSkill:
        """Load a skill: its name (from ``list_skills()``), ``SKILL.md`` URI, or ``Skill``. Reads
        ``SKILL.md`` only now, verifies its size, digest and frontmatter against the manifest, and
        returns a ``LoadedSkill`` whose ``read(path)`` serves only listed, verified files.
        ``SkillVerificationError`` if anything does not match (nothing else is read then)."""
        if isinstance(skill, str):
            if "://" in skill:
                skill = self.get_skill(skill, timeout=timeout)
            else:
                found = [s for s in self.list_skills(timeout=timeout) if s.name == skill]
                if len(found) != 1:
                    raise ValueError(f"{len(found)} skills are named {skill!r}; pass its URI or Skill")
                skill = found[0]
        from .skills import LoadedSkill, check_limits, verify_skill_md

        check_limits(skill)
        text = verify_skill_md(skill, self.read_resource(skill.uri, timeout=timeout))
        return LoadedSkill(skill, text, lambda uri: self.read_resource(uri, timeout=timeout))

    def _need_skills(self, method: str) -> None:
        extensions = self.server_capabilities.get("extensions")
        if not (isinstance(extensions, dict) and isinstance(extensions.get(_SKILLS), dict)):
            raise CapabilityError(f"extensions.{_SKILLS}", method)

    # subscriptions

    def listen(self, *, tools: bool = False, prompts: bool = False, resources: bool = False,
               resource_uris: Sequence[str] = (), on_event: Optional[Callable[[Event], Any]] = None) -> Subscription:
        """Receive change events: tools/prompts/resources list changes, updates of ``resource_uris``.

        Returns a ``Subscription``: iterate it (blocking) or ``get(timeout)``; ``on_event(event)``
        is also called for each, on the notification thread. ``close()`` (or ``with``) ends it.
        2026 era: a ``subscriptions/listen`` request (not subject to the call timeout); handshake
        era: the server's unsolicited notifications, plus ``resources/subscribe`` for each URI.
        """
        from .subscriptions import Subscription, filter_params

        uris = [_uri(u) for u in resource_uris]
        wanted = filter_params(tools, prompts, resources, uris)
        if not wanted:
            raise ValueError("listen() needs at least one of tools, prompts, resources or resource_uris")
        subscription = Subscription(wanted, on_event, self._end_listen)
        if not self._modern:
            self._options("subscriptions/listen", DEFAULT, None, None, False)  # connected?
            for uri in uris:
                self._run("resources/subscribe", {"uri": uri}, _none, DEFAULT)
            subscription.acknowledge(dict(wanted))
            with self._listen_lock:
                self._emulated.append(subscription)
            return subscription
        self._options("subscriptions/listen", None, None, None, False)  # connected?
        future = self._session.start_request("subscriptions/listen", with_meta({"notifications": wanted}, self._meta),
                                             timeout=None)  # open until either side ends it
        subscription.subscription_id = future.request_id
        subscription._future = future  # type: ignore[attr-defined]
        with self._listen_lock:
            self._listens[future.request_id] = subscription
            early = self._early.pop(future.request_id, [])
        for method, params in early:
            self._route_listen(subscription, method, params)
        future.add_done_callback(lambda f: self._listen_done(subscription, f))
        return subscription

    def _end_subscriptions(self, error: Optional[BaseException]) -> None:
        """The client closed (``error`` None: quietly) or lost its connection: end handshake-era
        subscriptions, which no request of their own would end."""
        with self._listen_lock:
            emulated, self._emulated = self._emulated, []
        for subscription in emulated:
            if error is None:
                subscription.end()
            else:
                from .subscriptions import ended_by

                subscription.end(ended_by(error))

    def _listen_done(self, subscription: Subscription, future: "Future[Any]") -> None:
        """The listen request finished (reader thread): a result is a quiet end, an error not."""
        from .subscriptions import ended_by

        with self._listen_lock:
            self._listens.pop(subscription.subscription_id, None)
            self._early.pop(subscription.subscription_id, None)
        exc = None if future.cancelled() else future.exception()
        subscription.end(ended_by(exc))

    def _end_listen(self, subscription: Subscription) -> None:
        future = getattr(subscription, "_future", None)
        if future is not None:
            future.cancel()  # stdio: notifications/cancelled; 2026 HTTP: the stream is closed
            return
        with self._listen_lock:
            if subscription in self._emulated:
                self._emulated.remove(subscription)
            still = set(self._subscribed)  # URIs the user, or another listen, still wants
            for other in self._emulated:
                still.update(other.wanted.get("resourceSubscriptions") or [])
        for uri in subscription.wanted.get("resourceSubscriptions") or []:
            if uri not in still and not self.is_closed:
                try:
                    self._run("resources/unsubscribe", {"uri": uri}, _none, DEFAULT)
                except MCPError as exc:
                    log.debug("unsubscribe %s failed: %s", uri, exc)

    def _route_listen(self, subscription: Subscription, method: str, params: Dict[str, Any]) -> None:
        from .subscriptions import KINDS, Event

        if method == "notifications/subscriptions/acknowledged":
            subscription.acknowledge(params.get("notifications"))
        elif method in KINDS:
            uri = params.get("uri") if isinstance(params.get("uri"), str) else None
            subscription.deliver(Event(KINDS[method], uri))
        elif method == "notifications/cancelled":  # stdio: the server ended the listen
            self._session.forget(subscription.subscription_id)  # -> _listen_done: a quiet end

    def _pages(self, method: str, key: str, timeout: Any) -> Iterator[Any]:
        """Walk every page of a list; stop (with a warning) if the server repeats a cursor."""
        seen = set()
        cursor = None
        while True:
            result = self._run(method, None if cursor is None else {"cursor": cursor}, None, timeout)
            items, cursor = _page_items(result, key, method)
            yield from items
            if cursor is None:
                return
            if cursor in seen:
                log.warning("%s: server repeated cursor %.80r; stopping pagination", method, cursor)
                return
            seen.add(cursor)

    # --- server → client ------------------------------------------------------------------------

    def set_roots(self, roots: RootsSetting) -> None:
        """Replace the roots and tell the server (``notifications/roots/list_changed``).

        The client must have been built with ``roots=`` (``roots=[]`` declares the capability
        with no roots yet); before ``connect()`` only the stored roots change.
        """
        if self._responder.roots is None:
            raise ValueError("this client did not declare roots; pass roots=[] to Client to allow set_roots()")
        if not callable(roots):
            from .handlers import roots_to_wire

            roots_to_wire(roots)
        with self._state_lock:
            if self._state is _State.CLOSED:
                raise ClientClosedError("set_roots: the client is closed")
            self._responder.roots = roots
            ready = self._state is _State.READY
        if ready and not self._modern:  # 2026: roots are asked for with each request that needs them
            self._session.notify("notifications/roots/list_changed")

    def wait_for_elicitation(self, elicitation_id: str, timeout: Optional[float] = None) -> bool:
        """Block until the server reports the URL elicitation ``elicitation_id`` complete
        (``notifications/elicitation/complete``); False if ``timeout`` seconds passed first.
        ``ClientClosedError`` if the client is closed or its connection lost meanwhile."""
        return self._watchers.elicitations.wait(elicitation_id, timeout, lambda: self._session.is_closed)

    def _quick_request(self, rid: Any, method: str, params: Dict[str, Any]) -> bool:
        return self._responder.quick(rid, method, params, self._session.reply)

    def _handle_request(self, method: str, params: Dict[str, Any]) -> Any:
        """Answer server-initiated requests (runs on a handler thread)."""
        return self._responder.answer(method, params)

    def invalidate_cache(self) -> None:
        """Forget every cached result (2026 servers' ``ttlMs`` hints; see ``Client(cache=)``)."""
        if self._cache is not None:
            self._cache.invalidate()

    def _credentials(self) -> Any:
        """Who the private cache entries belong to: a fingerprint of the token in use."""
        auth = getattr(self.transport, "auth", None)
        token = auth() if callable(auth) else auth  # a provider is called per request anyway
        headers = getattr(self.transport, "headers", None) or {}
        if token is None and not headers:
            return None
        import hashlib

        material = repr((token, sorted((str(k).lower(), str(v)) for k, v in dict(headers).items())))
        return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]

    def _invalidate(self, kind: str, uri: Optional[str] = None) -> None:
        if kind == "tools":
            self._tools = {}  # output schemas may have changed
        if self._cache is not None:
            for method, list_kind in CACHEABLE.items():
                if list_kind == kind:
                    self._cache.invalidate(method, uri)

    def _handle_notification(self, method: str, params: Dict[str, Any]) -> None:
        """Route server notifications (runs on the ordered notification thread)."""
        try:
            self._route_subscriptions(method, params)
            if method == "notifications/message":
                self._handle_log(params)
            else:
                self._watchers.route(method, params)
        except Exception:  # one failing callback must not silence on_notification
            log.exception("callback for %s failed", method)
        callback = self._on_notification
        if callback is not None:
            callback(method, params)

    def _route_subscriptions(self, method: str, params: Dict[str, Any]) -> None:
        """Give a notification to the ``listen()`` subscription(s) it belongs to."""
        meta = params.get("_meta")
        sid = meta.get(META_SUBSCRIPTION) if isinstance(meta, dict) else None
        if method == "notifications/cancelled" and params.get("requestId") in self._listens:
            sid = params.get("requestId")  # stdio: the server ends a listen this way
        if sid is not None:
            with self._listen_lock:
                subscription = self._listens.get(sid)
                if subscription is None:
                    # Its listen() may not have registered it yet: keep a few, briefly.
                    if sid not in self._early and len(self._early) >= 16:
                        self._early.pop(next(iter(self._early)))
                    early = self._early.setdefault(sid, [])
                    if len(early) < 16:
                        early.append((method, params))
                    return
            self._route_listen(subscription, method, params)
            return
        if self._emulated:
            from .subscriptions import KINDS, Event, matches

            kind = KINDS.get(method)
            if kind is not None:
                event = Event(kind, params.get("uri") if isinstance(params.get("uri"), str) else None)
                with self._listen_lock:
                    targets = [s for s in self._emulated if matches(s.wanted, event)]
                for subscription in targets:
                    subscription.deliver(event)

    def _handle_log(self, params: Dict[str, Any]) -> None:
        level = params.get("level") if isinstance(params.get("level"), str) else "info"
        logger_name = params.get("logger") if isinstance(params.get("logger"), str) else None
        data = params.get("data")
        if self._on_log is not None:
            self._on_log(level, logger_name, data)
            return
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=repr)
        prefix = f"[{logger_name}] " if logger_name else ""
        self._server_log.log(_PYTHON_LEVELS.get(level, logging.INFO), "%s%s", prefix, text)


# --- small pure helpers used as transforms -------------------------------------------------------

_REMOVED_IN_2026 = frozenset(("resources/subscribe", "resources/unsubscribe"))  # subscribe_resource maps them
_SKILLS = "io.modelcontextprotocol/skills"  # the extension's id (skills.SKILLS_EXTENSION)

class _RoundsFuture(GuardedFuture):
    """A 2026 request that may take input rounds; ``cancel()`` also cancels the round in flight."""

    current: Optional[CallFuture] = None

    def cancel(self) -> bool:
        current = self.current
        if not super().cancel():
            return False
        if current is not None:
            current.cancel()
        return True


def _settle(future: "Future[Any]", make: Optional[Callable[[], Any]], error: Optional[BaseException] = None) -> None:
    """Finish ``future`` with ``make()`` (or its exception) or ``error``, unless it is already done."""
    if error is None and make is not None:
        try:
            value = make()
        except BaseException as exc:
            error = exc
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)
    except InvalidStateError:
        pass  # cancelled meanwhile


def _is_http(transport: Transport) -> bool:
    return isinstance(getattr(transport, "url", None), str)


def _skill_entry(raw: Any) -> Skill:
    if not isinstance(raw, dict):
        raise ProtocolError("skills/get result is not an object")
    from .skills import Skill

    return Skill.from_wire(raw.get("skill"))


def _complete_only(method: str, transform: Optional[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    """A 2026 future's transform: the result must be ``complete`` (only MRTR methods may ask for input)."""
    def check(raw: Any) -> Any:
        kind = result_type(raw)
        if kind != "complete":
            raise ProtocolError(f"{method}: unexpected resultType {kind!r:.50}")
        return transform(raw) if transform is not None else raw
    return check


def _check_timeout(timeout: Any) -> Optional[float]:
    """A timeout is ``None`` (wait forever) or a number of seconds >= 0."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, not {type(timeout).__name__}")
    if not timeout >= 0:  # also rejects NaN
        raise ValueError(f"timeout must be >= 0, got {timeout!r}")
    return float(timeout)


def _none(_: Any) -> None:
    return None


def _contents(raw: Any) -> List[ResourceContents]:
    if not isinstance(raw, dict) or not isinstance(raw.get("contents"), list):
        raise ProtocolError("resources/read result has no 'contents' list")
    return [ResourceContents.from_wire(c) for c in raw["contents"]]


def _uri(uri: Any) -> str:
    if not isinstance(uri, str) or not uri:
        raise TypeError("uri must be a non-empty string")
    return uri


def _level(level: str) -> str:
    if level not in LOG_LEVELS:
        raise ValueError(f"level must be one of {', '.join(LOG_LEVELS)}; got {level!r}")
    return level


def _prompt_params(name: str, arguments: Optional[Dict[str, str]]) -> Dict[str, Any]:
    if not isinstance(name, str):
        raise TypeError("prompt name must be a string")
    params: Dict[str, Any] = {"name": name}
    if arguments:
        params["arguments"] = {str(k): str(v) for k, v in arguments.items()}
    return params


def _complete_params(ref: Any, name: str, value: str, context: Optional[Dict[str, str]]) -> Dict[str, Any]:
    if isinstance(ref, Prompt):
        wire: Dict[str, Any] = {"type": "ref/prompt", "name": ref.name}
    elif isinstance(ref, ResourceTemplate):
        wire = {"type": "ref/resource", "uri": ref.uri_template}
    elif isinstance(ref, Resource):
        wire = {"type": "ref/resource", "uri": ref.uri}
    elif isinstance(ref, dict):
        wire = dict(ref)
    elif isinstance(ref, str):
        wire = {"type": "ref/resource", "uri": ref} if ("://" in ref or "{" in ref) else {"type": "ref/prompt", "name": ref}
    else:
        raise TypeError("ref must be a Prompt, ResourceTemplate, Resource, dict or str")
    params: Dict[str, Any] = {"ref": wire, "argument": {"name": name, "value": value}}
    if context:
        params["context"] = {"arguments": dict(context)}
    return params
