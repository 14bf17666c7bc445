"""The protocol eras as strategies, one chosen at connect time: ``Handshake`` here, ``Stateless``
(2026-07-28) in ``stateless_era``, loaded only by a connection that negotiates it.

Everything that differs between a handshake-era server (2024-11-05 … 2025-11-25: ``initialize``,
a session, server-to-client requests) and a 2026-07-28 one (``server/discover``, no session,
``_meta`` and routing headers on every request, ``resultType`` with ``input_required`` rounds,
cache hints) lives in the two strategies, so the ``Client`` façade has no ``if modern``
branches: it asks its era to make each call, to name the ping method, to set the log level, to
tell the server the roots changed. Both strategies send through the one engine path,
``Session.call``.
"""
from __future__ import annotations

import logging
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Mapping, Optional

from ..errors import CapabilityError, ProtocolError, RequestTimeout
from .._engine.deadline import Deadline
from .._engine.futures import CallFuture, ProgressCallback, Transform, stepping_call
from .stateless import ToolHeaders, encode_header_value, NAMED_METHODS
from .spec import listen_capabilities, missing_capabilities, repeat_safety

if TYPE_CHECKING:
    from .negotiation import Negotiated
    from .._engine.session import Session

__all__ = ["AsIs", "Era", "Handshake", "Params", "Resolver", "resolve_claimed", "takes_as_is"]

log = logging.getLogger("mcpclient")

Params = Optional[Dict[str, Any]]
#: ``(kind, method, raw result) -> the final result, or a future of it``: how a declared extension
#: resolves a ``resultType`` it claims (``extensions.Registry.resolvers`` binds each to its context).
Resolver = Callable[[str, str, Dict[str, Any]], Any]


class AsIs:
    """The transform of a call that takes its result as it is, results of the extension result
    types ``kinds`` included: the eras hand those over unresolved (an extension's own future,
    ``Extension.call_future``, follows them itself, as the Tasks extension's does)."""

    __slots__ = ("kinds",)

    def __init__(self, kinds: FrozenSet[str]) -> None:
        self.kinds = kinds

    def __call__(self, raw: Any) -> Any:
        return raw


def takes_as_is(transform: Optional[Transform], kind: str) -> bool:
    """Whether ``transform`` takes results of the extension result type ``kind`` unresolved."""
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
             deadline: Deadline, *, on_progress: Optional[ProgressCallback] = None,
             on_late: Optional[Callable[[Dict[str, Any]], Any]] = None) -> CallFuture:
        """Send ``method`` as this era sends requests, within ``deadline``; return its future."""
        claimed = self.resolvers.get(method)
        if claimed:
            transform = _resolving(method, claimed, transform, deadline)
        return session.call(method, params, deadline=deadline, transform=transform,
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


def resolve_claimed(resolver: Resolver, kind: str, method: str, raw: Dict[str, Any], deadline: Deadline) -> Any:
    """Run ``resolver`` on a result of a claimed ``kind`` and wait (within the call's
    ``deadline``) for a future it returns; the final result must be ``complete``.
    On expiry the future is cancelled and ``RequestTimeout`` raised; an interrupt while waiting
    cancels it too."""
    value = resolver(kind, method, raw)
    if isinstance(value, Future):
        call = stepping_call()
        if call is not None:  # a cancel of the call (a Ctrl-C in its blocking method) stops it too
            call.cancel_with_it(value)
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
        if isinstance(kind, str) and kind in claimed and not takes_as_is(transform, kind):
            raw = resolve_claimed(claimed[kind], kind, method, raw, deadline)
        return raw if transform is None else transform(raw)
    return step
