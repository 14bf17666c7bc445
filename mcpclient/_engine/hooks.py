"""OpenTelemetry tracing: the engine's hook interface, and what ``Client(tracing=)`` means.

Nothing here imports ``opentelemetry``: ``import mcpclient`` stays cheap with the ``otel`` extra
installed. ``Client(tracing=...)`` decides at ``connect()`` whether to load the implementation
(``mcpclient._otel``): by default it does when ``opentelemetry-api`` is importable
(``pip install 'mcpclient[otel]'``), ``tracing=False`` never does, ``tracing=True`` or a
``Tracing(...)`` insists (``MissingExtraError`` without the package).

The engine sees only the two small protocols below. ``Session.call`` asks its ``tracer`` (None
when tracing is off: one ``is None`` test per call) for a ``CallTrace`` on the calling thread;
every round of the call carries ``trace.meta`` in ``params._meta``; the call ends it once, on the
thread that completes it. ``Responder`` runs each server->client request's handler through the
tracer's ``serve``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Protocol, Union

if TYPE_CHECKING:
    from ..policies.tracing import Tracing
    from ..transports.base import Transport

__all__ = ["CallTrace", "CallTracer", "Traced", "TracingSetting", "missing_extra", "wants_tracing", "with_context"]


#: What ``Client(tracing=)`` takes: None (automatic), True, False, or a ``Tracing``.
TracingSetting = Union[None, bool, "Tracing"]


def wants_tracing(setting: TracingSetting) -> Optional[Tracing]:
    """The ``Tracing`` a ``Client(tracing=setting)`` uses, or None for no tracing (checked at
    construction, without importing anything: the package is loaded at ``connect()``).

    Args:
        setting: None (trace if ``opentelemetry`` is installed), True or a ``Tracing`` (trace;
            the package must be installed), or False (never).

    Returns:
        The options to trace with, or None.

    Raises:
        MissingExtraError: tracing was asked for and ``opentelemetry-api`` is not installed.
        TypeError: ``setting`` is none of the above.
    """
    if setting is False:
        return None
    from ..policies.tracing import Tracing  # deferred: import cost (a dataclass)

    if setting is not None and setting is not True and not isinstance(setting, Tracing):
        raise TypeError("tracing must be None, True, False or a Tracing")
    from importlib.util import find_spec  # deferred: only clients that may trace need it

    if find_spec("opentelemetry") is None:  # (a top-level name: found without importing it)
        if setting is None:
            return None
        raise missing_extra()
    return setting if isinstance(setting, Tracing) else Tracing()


def missing_extra() -> Exception:
    """The error for tracing asked for without ``opentelemetry-api``.

    Returns:
        A ``MissingExtraError`` naming the ``otel`` extra, to raise.
    """
    from ..errors import MissingExtraError  # (errors is loaded already: no import cost)

    return MissingExtraError("tracing needs the 'opentelemetry-api' package: pip install 'mcpclient[otel]'",
                             extra="otel", name="opentelemetry")


def with_context(params: Optional[Dict[str, Any]], context: Dict[str, str]) -> Dict[str, Any]:
    """A round's params with the trace ``context`` (``traceparent``...) in ``_meta``.

    Args:
        params: the round's params (not changed).
        context: the keys to add (``CallTrace.meta``).

    Returns:
        A copy of ``params`` whose ``_meta`` has them; a ``traceparent`` the caller put in
        ``_meta`` is kept, with the rest of the caller's keys.
    """
    params = dict(params or {})
    own = params.get("_meta")
    if not isinstance(own, dict):
        params["_meta"] = dict(context)
    elif "traceparent" not in own:
        params["_meta"] = {**context, **own}
    return params


class CallTrace(Protocol):
    """One request's span, as the engine sees it (made by ``CallTracer.start``)."""

    #: The context to propagate in each round's ``params._meta`` (``traceparent``...), or None.
    meta: Optional[Dict[str, str]]

    def end(self, value: Any, error: Optional[BaseException], request_id: Any) -> None:
        """End the span (only the first call counts) with the call's outcome.

        Args:
            value: the call's value (when ``error`` is None).
            error: what the call raised, or None.
            request_id: the JSON-RPC id of the call's last round (None if none was sent).
        """


    def run(self, fn: Callable[[Any], Any], arg: Any) -> Any:
        """``fn(arg)`` with the call's span current: the call's result transform, which runs the
        handlers of 2026 ``input_required`` rounds (their spans are then children of the call's).

        Args:
            fn: the transform.
            arg: the raw result it transforms.

        Returns:
            What ``fn`` returned.
        """


class Traced(Protocol):
    """What a tracer reads of the connection it traces, at each call (a reconnect or a fallback
    while connecting changes both)."""

    @property
    def transport(self) -> Transport:
        """The transport in use."""

    @property
    def protocol_version(self) -> Optional[str]:
        """The revision agreed with the server (None before the handshake)."""


class CallTracer(Protocol):
    """What the engine calls when tracing is on (``Session.tracer``, ``Responder.tracer``)."""

    def start(self, method: str, params: Optional[Dict[str, Any]]) -> Optional[CallTrace]:
        """Start the span of a request, on the calling thread (whose context is its parent).

        Args:
            method: the request's method.
            params: its params (read, never changed).

        Returns:
            The call's trace, or None to trace nothing.
        """

    def serve(self, method: str, params: Dict[str, Any], run: Callable[[], Any]) -> Any:
        """Run ``run()`` (the handler of a request from the server) inside a ``SERVER`` span.

        Args:
            method: the server's request method.
            params: its params (``_meta`` may carry the server's trace context).
            run: answers the request.

        Returns:
            What ``run()`` returned (what it raises goes through).
        """
