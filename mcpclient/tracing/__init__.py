"""OpenTelemetry tracing (the ``otel`` extra): a span per request, the duration histogram, trace
context in ``params._meta``. ``otel`` imports ``opentelemetry``; it loads at the first
``connect()`` of a client that traces, never at ``import mcpclient``.

``Tracing`` (the options value) lives in ``mcpclient.policies`` and is importable from here.

Imports: ``protocol``, ``_engine`` and below; never ``extensions``, ``_client`` or ``client``.
"""
from ..policies.tracing import Tracing

__all__ = ["Tracing"]
