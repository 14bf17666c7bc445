"""OpenTelemetry tracing: the ``Tracing`` setting and the engine's hook interface.

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

from typing import Any, Callable, Dict, Optional, Protocol, Union

__all__ = ["AUTOMATIC", "CallTrace", "CallTracer", "Tracing", "TracingSetting", "missing_extra", "wants_tracing"]


class Tracing:
    """How a ``Client`` traces its requests with OpenTelemetry (``Client(tracing=Tracing(...))``).

    By default a client traces when ``opentelemetry-api`` is installed; this value turns it on
    explicitly (``MissingExtraError`` at construction if the package is missing) and tunes it.
    What is recorded: one ``CLIENT`` span per request, named and attributed per the OpenTelemetry
    semantic conventions for MCP, the ``mcp.client.operation.duration`` histogram, one ``SERVER``
    span per request the server sends the client (sampling, elicitation, roots), and the W3C
    trace context (``traceparent``/``tracestate``/``baggage``) in every request's ``params._meta``.
    Never recorded unless asked for: tool arguments and results, prompt arguments, headers,
    credentials.

    Args:
        record_arguments: add a tool call's arguments to its span as ``gen_ai.tool.call.arguments``
            (JSON). They may hold personal data or secrets: off by default.
        record_results: add a successful tool call's result (its structured content, else its
            content list) as ``gen_ai.tool.call.result`` (JSON). Off by default, for the same reason.
        tracer_provider: the OpenTelemetry ``TracerProvider`` to use (default: the global one).
        meter_provider: the ``MeterProvider`` for the duration histogram (default: the global one).
    """

    __slots__ = ("record_arguments", "record_results", "tracer_provider", "meter_provider")
    _FIELDS = __slots__

    record_arguments: bool
    record_results: bool
    tracer_provider: Any
    meter_provider: Any

    def __init__(self, *, record_arguments: bool = False, record_results: bool = False, tracer_provider: Any = None,
                 meter_provider: Any = None) -> None:
        # (a plain immutable class, not a dataclass: building one costs ~1 ms of import time)
        for name, value in zip(self._FIELDS, (bool(record_arguments), bool(record_results), tracer_provider,
                                              meter_provider)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Tracing is immutable; make a new one")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Tracing:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._FIELDS)

    def __hash__(self) -> int:
        return hash(tuple(id(getattr(self, f)) if f.endswith("provider") else getattr(self, f) for f in self._FIELDS))

    def __repr__(self) -> str:
        return "Tracing(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS) + ")"


#: What ``Client(tracing=)`` takes: None (automatic), True, False, or a ``Tracing``.
TracingSetting = Union[None, bool, Tracing]
#: ``wants_tracing(None)`` with the package found: tracing goes quietly off if it cannot be imported.
AUTOMATIC = Tracing()


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
    if setting is not None and setting is not True and not isinstance(setting, Tracing):
        raise TypeError("tracing must be None, True, False or a Tracing")
    from importlib.util import find_spec  # deferred: only clients that may trace need it

    if find_spec("opentelemetry") is None:  # (a top-level name: found without importing it)
        if setting is None:
            return None
        raise missing_extra()
    return setting if isinstance(setting, Tracing) else AUTOMATIC if setting is None else Tracing()


def missing_extra() -> Exception:
    """The error for tracing asked for without ``opentelemetry-api``.

    Returns:
        A ``MissingExtraError`` naming the ``otel`` extra, to raise.
    """
    from .errors import MissingExtraError  # (errors is loaded already: no import cost)

    return MissingExtraError("tracing needs the 'opentelemetry-api' package: pip install 'mcpclient[otel]'",
                             extra="otel", name="opentelemetry")


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
