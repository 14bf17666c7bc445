"""``Tracing``: how a ``Client`` traces its requests with OpenTelemetry (README, "Tracing").

A value, like ``Retry`` and ``Reconnect``: ``Client(url, tracing=Tracing(record_arguments=True))``.
Loaded on first use (``import mcpclient`` does not build it); it never imports ``opentelemetry``.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ..types import _SLOTS

__all__ = ["Tracing"]


@dataclasses.dataclass(frozen=True, **_SLOTS)
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

    record_arguments: bool = False
    record_results: bool = False
    tracer_provider: Any = None
    meter_provider: Any = None
