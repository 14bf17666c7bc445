"""The hook protocols features plug into the engine with: tracing (``CallTracer``, ``CallTrace``)
and what a tracer reads of its connection (``Traced``).

Nothing here imports ``opentelemetry``; the implementation (``mcpclient.tracing.otel``) loads at
the first ``connect()`` of a client that traces (``policies.tracing.wants_tracing``).

The engine sees only these small protocols. ``Session.call`` asks its ``tracer`` (None
when tracing is off: one ``is None`` test per call) for a ``CallTrace`` on the calling thread;
the session's rules (``rules.RPCRules.decorate``) put its ``meta`` into every round of the call;
the call ends it once, on the thread that completes it. ``Responder`` runs each server->client
request's handler through the tracer's ``serve``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Protocol

if TYPE_CHECKING:
    from ..transports.base import Transport

__all__ = ["CallTrace", "CallTracer", "Traced"]


class CallTrace(Protocol):
    """One request's span, as the engine sees it (made by ``CallTracer.start``)."""

    #: The context to propagate in each round (``traceparent``...; ``RPCRules.decorate`` puts it
    #: in the params), or None.
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
