"""``Tracing``: how a ``Client`` traces its requests with OpenTelemetry (docs, "Tracing").

A value, like ``Retry`` and ``Reconnect``: ``Client(url, tracing=Tracing(record_arguments=True))``.
Loaded on first use (``import mcpclient`` does not build it); it never imports ``opentelemetry``.
``wants_tracing`` says what ``Client(tracing=)`` means: by default the client traces when the
application uses OpenTelemetry (has imported it; ``pip install 'mcpclient[otel]'``): decided at
``connect()``, and otherwise nothing of it is loaded; ``tracing=False`` never does,
``tracing=True`` or a ``Tracing(...)`` insists (``MissingExtraError`` without the package).
"""
from __future__ import annotations

import dataclasses
from importlib.util import find_spec
from typing import TYPE_CHECKING, Optional, Union

from ..errors import MissingExtraError
from ..types._base import _SLOTS

if TYPE_CHECKING:  # the otel extra's types (opentelemetry-api); nothing is imported at run time
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

__all__ = ["Tracing", "TracingSetting", "missing_extra", "wants_tracing"]


@dataclasses.dataclass(frozen=True, **_SLOTS)
class Tracing:
    """How a ``Client`` traces its requests with OpenTelemetry (``Client(tracing=Tracing(...))``).

    By default a client traces when the application uses OpenTelemetry (it has imported
    ``opentelemetry`` by ``connect()``: configured a provider, or an instrumentation did); this value turns it on
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

    record_arguments: bool = False
    record_results: bool = False
    tracer_provider: Optional["TracerProvider"] = None
    meter_provider: Optional["MeterProvider"] = None


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
    if setting is not None and setting is not True and not isinstance(setting, Tracing):
        raise TypeError("tracing must be None, True, False or a Tracing")
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
    return MissingExtraError("tracing needs the 'opentelemetry-api' package: pip install 'mcpclient[otel]'",
                             extra="otel", name="opentelemetry")
