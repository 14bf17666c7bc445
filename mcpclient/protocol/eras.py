"""The two protocol eras as strategies, one chosen at connect time: ``Handshake`` and ``Stateless``.

Everything that differs between a handshake-era server (2024-11-05 … 2025-11-25: ``initialize``,
a session, server-to-client requests) and a 2026-07-28 one (``server/discover``, no session,
``_meta`` and routing headers on every request, ``resultType`` with ``input_required`` rounds,
cache hints) lives here, so the ``Client`` façade has no ``if modern`` branches: it asks its era
to make each call, to name the ping method, to set the log level, to tell the server the roots
changed. Both strategies send through the one engine path, ``Session.call``.
"""
from __future__ import annotations

import logging
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Mapping, Optional, Tuple

from .cache import CACHEABLE, ResultCache
from ..errors import CapabilityError, InputRoundsExceeded, ProtocolError, RequestTimeout
from .._engine.deadline import Deadline
from .._engine.futures import Again, CallFuture, ProgressCallback, Transform
from .stateless import ToolHeaders, MRTR_METHODS, encode_header_value, NAMED_METHODS, request_meta, result_type, routing_headers, with_meta
from .spec import listen_capabilities, missing_capabilities, repeat_safety

if TYPE_CHECKING:
    from .rounds import Answer
    from .negotiation import Negotiated
    from .._engine.session import Session

__all__ = ["AsIs", "Era", "Handshake", "Resolver", "Stateless"]

log = logging.getLogger("mcpclient")

Params = Optional[Dict[str, Any]]
#: ``(kind, method, raw result) -> the final result, or a future of it``: how a declared extension
#: resolves a ``resultType`` it claims (``extensions.Registry.resolvers`` binds each to its context).
Resolver = Callable[[str, str, Dict[str, Any]], Any]
#: tool name -> its ``x-mcp-header`` arguments (see ``modern.header_params``)

#: Handshake-era methods the 2026 era removed, and what replaces them.
_REMOVED_IN_2026 = {"resources/subscribe": "subscribe_resource() or listen()",
                    "resources/unsubscribe": "unsubscribe_resource() or listen()"}


class AsIs:
    """The transform of a call that takes its result as it is, results of the extension result
    types ``kinds`` included: the eras hand those over unresolved (an extension's own future,
    ``Extension.call_future``, follows them itself, as the Tasks extension's does)."""

    __slots__ = ("kinds",)

    def __init__(self, kinds: FrozenSet[str]) -> None:
        self.kinds = kinds

    def __call__(self, raw: Any) -> Any:
        return raw


def _takes(transform: Optional[Transform], kind: str) -> bool:
    return type(transform) is AsIs and kind in transform.kinds


class Era:
    """What the client does differently per era. ``negotiated`` is what connect() agreed on."""

    stateless = False
    ping_method = "ping"
    #: method -> resultType -> the resolver of the declared extension that claims it (set by
    #: the client when extensions are declared: see ``extensions.Registry.resolvers``)
    resolvers: Mapping[str, Mapping[str, Resolver]] = {}
    #: handshake-era methods sent with routing headers (set by the client; see ``headers``)
    routed: FrozenSet[str] = frozenset()

    def __init__(self, negotiated: "Negotiated") -> None:
        self.negotiated = negotiated
        self._missing = missing_capabilities(negotiated.capabilities, negotiated.version)

    def check(self, method: str, capabilities: bool = True) -> None:
        """Raise if ``method`` does not exist in this era, or (``capabilities``) if the server
        did not declare what it needs (``CapabilityError``; nothing is sent)."""
        if capabilities:
            self.check_capability(method)

    def check_capability(self, method: str) -> None:
        """``CapabilityError`` (nothing is sent) unless the server declared what ``method`` needs,
        whichever era carries it (2026: ``resources/subscribe`` rides on a listen)."""
        capability = self._missing.get(method)
        if capability is not None:
            raise CapabilityError(capability, method)

    def honoured(self, wanted: Dict[str, Any]) -> Dict[str, Any]:
        """The part of a listen filter the server declared capabilities for, in either era;
        ``CapabilityError`` (nothing is sent) if that is none of it."""
        kept, missing = listen_capabilities(wanted, self.negotiated.capabilities)
        if missing and not kept:
            raise CapabilityError(next(iter(missing.values())), "subscriptions/listen")  # (the first one asked for)
        if missing:
            log.debug("listen: the server did not declare %s; listening for the rest",
                      ", ".join(sorted(set(missing.values()))))
        return kept

    def call(self, session: "Session", method: str, params: Params, transform: Optional[Transform],
             deadline: Deadline, *, owned: bool, on_progress: Optional[ProgressCallback] = None,
             on_late: Optional[Callable[[Dict[str, Any]], Any]] = None) -> CallFuture:
        """Send ``method`` as this era sends requests, within ``deadline``; return its future."""
        claimed = self.resolvers.get(method)
        if claimed:
            transform = _resolving(method, claimed, transform, deadline)
        return session.call(method, params, deadline=deadline, transform=transform, owned=owned,
                            on_progress=on_progress, idempotent=repeat_safety(method), on_late=on_late,
                            headers=self.headers(method, params) if self.routed else None)

    def headers(self, method: str, params: Params) -> Optional[Dict[str, str]]:
        """Routing headers of one handshake-era request: ``Mcp-Method`` and ``Mcp-Name`` for the
        methods in ``routed`` (the Tasks extension's, over HTTP, once declared), else None."""
        if method not in self.routed:
            return None
        name = params.get(NAMED_METHODS[method]) if isinstance(params, dict) else None
        found = {"Mcp-Method": method}
        if isinstance(name, str):
            found["Mcp-Name"] = encode_header_value(name)
        return found

    def set_logging_level(self, session: "Session", level: str, send: Callable[..., CallFuture]) -> CallFuture:
        """Handshake era: the ``logging/setLevel`` request (``send`` makes it)."""
        return send("logging/setLevel", {"level": level})

    def roots_changed(self, session: "Session") -> None:
        """The user changed the roots: the handshake era tells the server."""
        session.notify("notifications/roots/list_changed")

    @property
    def tool_headers(self) -> Optional[ToolHeaders]:
        """The per-tool routing-header table to fill while listing tools (2026 over HTTP), or None."""
        return None


class Handshake(Era):
    """2024-11-05 … 2025-11-25: ``initialize`` opened a session; requests go as they are."""


class Stateless(Era):
    """2026-07-28: every request carries ``_meta`` (version, capabilities, client info, log
    level) and, over HTTP, routing headers; results carry ``resultType``; the three methods that
    may need input repeat themselves through ``input_required`` rounds; list and read results
    are reused while their ``ttlMs`` says they are fresh."""

    stateless = True
    ping_method = "server/discover"

    def __init__(self, negotiated: "Negotiated", capabilities: Dict[str, Any], client_info: Dict[str, Any],
                 answer: Answer, max_rounds: int, cache: Optional[ResultCache], sends_headers: bool) -> None:
        super().__init__(negotiated)
        self._capabilities = capabilities
        self._client_info = client_info
        self._answer = answer
        self._max_rounds = max_rounds
        self._cache = cache
        self._headers: Optional[ToolHeaders] = {} if sends_headers else None
        self.meta = request_meta(negotiated.version, capabilities, client_info)

    @property
    def tool_headers(self) -> Optional[ToolHeaders]:
        return self._headers

    def check(self, method: str, capabilities: bool = True) -> None:
        if method in _REMOVED_IN_2026:
            raise ProtocolError(f"{method} does not exist in MCP {self.negotiated.version} (this server speaks the "
                                f"2026 era); use {_REMOVED_IN_2026[method]}, which map onto subscriptions/listen")
        super().check(method, capabilities)

    def prepare(self, method: str, params: Params) -> Tuple[Dict[str, Any], Optional[Dict[str, str]]]:
        """What one round of ``method`` is sent with: ``_meta``, and routing headers over HTTP."""
        params = with_meta(params, self.meta)
        if self._headers is None:
            return params, None
        return params, routing_headers(method, params, self.negotiated.version, self._headers)

    def call(self, session: "Session", method: str, params: Params, transform: Optional[Transform],
             deadline: Deadline, *, owned: bool, on_progress: Optional[ProgressCallback] = None,
             on_late: Optional[Callable[[Dict[str, Any]], Any]] = None) -> CallFuture:
        cache = self._cache if method in CACHEABLE else None
        hit = cache.get(method, params) if cache is not None else None
        step = _Step(self, method, params, transform, cache, hit is not None, deadline)
        options: Dict[str, Any] = {}
        sent: Params
        if hit is None:
            sent, headers = self.prepare(method, params)
        else:  # nothing is sent for the first round (a later one is prepared by the session)
            sent, headers, options["known"] = params, None, hit
        return session.call(method, sent, deadline=deadline, transform=step, owned=owned, on_progress=on_progress,
                            prepare=self.prepare, headers=headers, idempotent=repeat_safety(method), on_late=on_late,
                            **options)

    def set_logging_level(self, session: "Session", level: str, send: Callable[..., CallFuture]) -> CallFuture:
        """No ``logging/setLevel`` in this era: the level rides in the ``_meta`` of every later
        request (and only those requests' log messages are sent). Nothing is sent now."""
        self.check("logging/setLevel")
        self.meta = request_meta(self.negotiated.version, self._capabilities, self._client_info, level)
        return CallFuture.completed(session, "logging/setLevel", None)

    def roots_changed(self, session: "Session") -> None:
        """Nothing to send: roots are asked for with each request that needs them."""


class _Step:
    """One 2026 call's transform: checks ``resultType``, runs ``input_required`` rounds for the
    methods that may ask for input, stores fresh cacheable results and serves further pages of a
    list from the cache when they are fresh there."""

    __slots__ = ("era", "method", "original", "params", "transform", "cache", "fresh", "rounds", "deadline")

    def __init__(self, era: Stateless, method: str, params: Params, transform: Optional[Transform],
                 cache: Optional[ResultCache], from_cache: bool, deadline: Deadline) -> None:
        self.era = era
        self.method = method
        self.original = self.params = params
        self.transform = transform
        self.cache = cache
        self.fresh = not from_cache  # a result from the server (not the cache, not after input rounds)
        self.rounds = 0
        self.deadline = deadline

    def __call__(self, raw: Any) -> Any:
        method = self.method
        while True:
            kind = raw.get("resultType", "complete") if type(raw) is dict else result_type(raw)
            if kind == "input_required" and method in MRTR_METHODS:
                self.rounds += 1
                if self.rounds > self.era._max_rounds:
                    raise InputRoundsExceeded(f"{method}: the server still wanted input after "
                                              f"{self.era._max_rounds} rounds")
                self.fresh = False  # the result of an input round is never cached
                from .rounds import next_round  # deferred: import cost (only input_required rounds need it)

                return Again(next_round(method, self.original, raw, self.era._answer))
            if kind != "complete" and not _takes(self.transform, kind):
                resolver = self.era.resolvers.get(method, {}).get(kind)
                if resolver is None:
                    raise ProtocolError(f"{method}: unexpected resultType {kind!r:.50}")
                raw, self.fresh = _resolved(resolver, kind, method, raw, self.deadline), False
            cache = self.cache
            if cache is not None and self.fresh:
                cache.put(method, self.params, raw)
            value = raw if self.transform is None else self.transform(raw)
            if type(value) is not Again:
                return value
            self.params, self.fresh = value.params, True  # the next page
            hit = cache.get(method, value.params) if cache is not None else None
            if hit is None:
                return value
            raw, self.fresh = hit, False


def _resolved(resolver: Resolver, kind: str, method: str, raw: Dict[str, Any], deadline: Deadline) -> Any:
    """Run ``resolver`` on a result of a claimed ``kind`` and wait (within the call's
    ``deadline``) for a future it returns; the final result must be ``complete``.
    On expiry the future is cancelled and ``RequestTimeout`` raised; an interrupt while waiting
    cancels it too."""
    value = resolver(kind, method, raw)
    if isinstance(value, Future):
        try:
            value = value.result(deadline.remaining())
        except FutureTimeout:
            value.cancel()
            raise RequestTimeout(f"{method}: no final result within the call's timeout (resultType {kind!r:.50})",
                                 method=method) from None
        except BaseException:
            value.cancel()  # interrupted while waiting (KeyboardInterrupt): stopped on the server too
            raise  # (done, it is the outcome: then cancel() does nothing)
    final = value.get("resultType", "complete") if isinstance(value, dict) else None
    if final != "complete":
        raise ProtocolError(f"{method}: resolving resultType {kind!r:.50} gave no complete result")
    return value


def _resolving(method: str, claimed: Mapping[str, Resolver], transform: Optional[Transform],
               deadline: Deadline) -> Transform:
    """Handshake era: ``transform`` preceded by the resolution of a claimed ``resultType`` (not
    of those an ``AsIs`` transform takes: an extension's own future takes them as they are)."""
    def step(raw: Any) -> Any:
        kind = raw.get("resultType") if type(raw) is dict else None
        if isinstance(kind, str) and kind in claimed and not _takes(transform, kind):
            raw = _resolved(claimed[kind], kind, method, raw, deadline)
        return raw if transform is None else transform(raw)
    return step
