"""The 2026-07-28 era's strategy, ``Stateless`` (the contract both eras share: ``eras``).

Every request carries ``_meta`` and, over HTTP, routing headers; every result's ``resultType``
is checked; ``input_required`` rounds repeat the three methods that may ask for input; fresh
list and read results are served from the cache. A connection that negotiates a handshake-era
revision never loads this module.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple

from .cache import CACHEABLE, ResultCache
from .eras import Era, Params, resolve_claimed, takes_as_is
from .rounds import Answer, next_round
from .spec import repeat_safety
from .stateless import MRTR_METHODS, ToolHeaders, request_meta, result_type, routing_headers, with_meta
from ..errors import InputRoundsExceeded, ProtocolError
from .._engine.deadline import Deadline
from .._engine.futures import CallFuture, ProgressCallback, Transform
from .._engine.replies import NextRound

if TYPE_CHECKING:
    from .negotiation import Negotiated
    from .._engine.session import Session

__all__ = ["Stateless"]

#: Handshake-era methods the 2026 era removed, and what replaces them.
_REMOVED_IN_2026 = {"resources/subscribe": "subscribe_resource() or listen()",
                    "resources/unsubscribe": "unsubscribe_resource() or listen()"}


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
             deadline: Deadline, *, on_progress: Optional[ProgressCallback] = None,
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
        return session.call(method, sent, deadline=deadline, transform=step, on_progress=on_progress,
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
                return NextRound(next_round(method, self.original, raw, self.era._answer))
            if kind != "complete" and not takes_as_is(self.transform, kind):
                resolver = self.era.resolvers.get(method, {}).get(kind)
                if resolver is None:
                    raise ProtocolError(f"{method}: unexpected resultType {kind!r:.50}")
                raw, self.fresh = resolve_claimed(resolver, kind, method, raw, self.deadline), False
            cache = self.cache
            if cache is not None and self.fresh:
                cache.put(method, self.params, raw)
            value = raw if self.transform is None else self.transform(raw)
            if type(value) is not NextRound:
                return value
            self.params, self.fresh = value.params, True  # the next page
            hit = cache.get(method, value.params) if cache is not None else None
            if hit is None:
                return value
            raw, self.fresh = hit, False
