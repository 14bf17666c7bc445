"""The OpenTelemetry side of ``mcpclient.tracing``: spans, the duration histogram, ``_meta`` propagation.

Imported only when a ``Client`` connects with tracing on (never by ``import mcpclient``).
Follows the OpenTelemetry semantic conventions for MCP (``docs/gen-ai/mcp.md`` of
open-telemetry/semantic-conventions-genai):

* each request: a ``CLIENT`` span ``"{mcp.method.name} {target}"`` (target: the tool or prompt
  name; never the resource URI, which the conventions keep out of span names by default),
  started on the calling thread (its current context is the parent) and ended when the call
  completes, on whichever thread completes it, before the caller is woken. It covers every
  round of a call (2026-07-28 ``input_required`` rounds, list pages). Its context goes in
  ``params._meta`` of each round (``traceparent``, ``tracestate``, ``baggage``: unprefixed, as
  SEP-414 says), unless the caller put a ``traceparent`` there already: that one is kept.
* the ``mcp.client.operation.duration`` histogram (seconds) with the low-cardinality attributes,
  for the requests that went out (a result served from the cache has a span, no measure).
* each request from the server (sampling, elicitation, roots; also those inside 2026
  ``input_required`` results): a ``SERVER`` span around its handler whose parent is the context in
  the request's ``params._meta`` when there is one (then the ambient context, if any and another,
  is a link), else the ambient context (for a 2026 input round: the span of the call that got
  it, current while its result is handled); the handler runs with its span current.

Errors: ``error.type`` is the JSON-RPC code for an error reply (also ``rpc.response.status_code``,
and the status description is the server's message), ``tool_error`` for an ``isError`` tool
result (or ``ToolError``), ``timeout`` for ``RequestTimeout``, ``cancelled`` for a cancelled call,
else the exception's class name; the status is then ``ERROR`` with the class name only (an
exception's text may quote arguments). A ``server/discover`` that a handshake-era server refuses
(method not found, an HTTP 4xx) is no error: the normal way to ``initialize``, recorded with
``mcp.protocol.fallback = "initialize"`` and no status. Attributes are computed only for spans
that record.
"""
from __future__ import annotations

import json
import logging
from time import monotonic as _monotonic
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import urlsplit, urlunsplit

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from .._version import __version__
from ..errors import RequestCancelled, RequestTimeout, RPCError, ToolError
from ..policies.tracing import Tracing
from ..protocol.negotiation import refused_discover
from ..types import ToolResult

if TYPE_CHECKING:
    from .._engine.hooks import Traced
    from ..transports.base import Transport

__all__ = ["ClientTracer"]

log = logging.getLogger("mcpclient")

SCOPE = "mcpclient"
#: The bucket boundaries the conventions give for the MCP duration histograms (seconds).
BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
#: Methods whose span is named after their target, and the param that names it.
_TARGETS = {"tools/call": ("name", "gen_ai.tool.name"), "prompts/get": ("name", "gen_ai.prompt.name")}
_URI_METHODS = ("resources/read", "resources/subscribe", "resources/unsubscribe")
_CLIENT, _SERVER = SpanKind.CLIENT, SpanKind.SERVER
_RECHECK = 1.0  # seconds between two looks for a provider set up meanwhile (see _configured)
try:  # what the global meter provider is until one is set (private: without it, always "configured")
    from opentelemetry.metrics._internal import _ProxyMeterProvider as _PROXY_METERS
except ImportError:  # pragma: no cover - another opentelemetry-api layout
    _PROXY_METERS = None  # type: ignore[assignment,misc]
_MAX_NAMES = 1000  # span names and attributes kept per connection (tools, prompts: a bounded set)


def _error_type(error: BaseException) -> str:
    if isinstance(error, RPCError):
        return str(error.code)
    if isinstance(error, ToolError):
        return "tool_error"
    if isinstance(error, RequestTimeout):
        return "timeout"
    if isinstance(error, RequestCancelled):
        return "cancelled"
    kind = type(error)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _tool_failed(value: Any) -> bool:
    """A tools/call value that reports ``isError`` (a ``ToolResult``, or a raw result dict)."""
    if type(value) is dict:
        return value.get("isError") is True
    return isinstance(value, ToolResult) and value.is_error


def _scrubbed_uri(uri: str) -> str:
    """A resource URI without what may be a secret: user info, query and fragment."""
    try:
        parts = urlsplit(uri)
    except ValueError:  # (an unclosed IPv6 bracket...): cut by hand, user info included
        uri = uri.split("?", 1)[0].split("#", 1)[0]
        scheme, sep, rest = uri.partition("://")
        if not sep:
            return uri
        authority, slash, path = rest.partition("/")
        return f"{scheme}://{authority.rpartition('@')[2]}{slash}{path}"
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def _json(value: Any) -> Optional[str]:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return None


def _network(transport: "Transport") -> Dict[str, Any]:
    """The connection's attributes that do not change per call (where the server is)."""
    where = transport.info.endpoint
    if where.kind == "pipe":
        return {"network.transport": "pipe"}
    if where.kind != "tcp":
        return {}
    attrs: Dict[str, Any] = {"network.transport": "tcp"}
    if where.protocol:
        attrs["network.protocol.name"] = where.protocol
    if where.host:
        attrs["server.address"] = where.host
        if where.port is not None:
            attrs["server.port"] = where.port
    return attrs


class _Propagated:
    """A call that only passes the caller's trace context on (no provider is set up)."""

    __slots__ = ("meta",)

    def __init__(self) -> None:
        meta: Dict[str, str] = {}
        propagate.inject(meta)
        self.meta = meta or None

    def end(self, value: Any, error: Optional[BaseException], request_id: Any) -> None:
        """Nothing to end."""

    def run(self, fn: Callable[[Any], Any], arg: Any) -> Any:
        """``fn(arg)``: the caller's context is not carried to other threads (no span to carry)."""
        return fn(arg)


class _Trace:
    """One request's span (``tracing.CallTrace``)."""

    __slots__ = ("meta", "_owner", "_span", "_method", "_started", "_base", "_once")

    def __init__(self, owner: "ClientTracer", span: Any, method: str, meta: Optional[Dict[str, str]],
                 base: Dict[str, Any]) -> None:
        self.meta = meta
        self._owner = owner
        self._span = span
        self._method = method
        self._base = base  # the histogram's attributes known at the start (shared: never changed)
        self._started = _monotonic()
        self._once = [True]  # popped by the first end() (list.pop is atomic)

    def run(self, fn: Callable[[Any], Any], arg: Any) -> Any:
        """``fn(arg)`` with this span current (on whichever thread runs the call's transform)."""
        token = otel_context.attach(trace.set_span_in_context(self._span))
        try:
            return fn(arg)
        finally:
            otel_context.detach(token)

    def end(self, value: Any, error: Optional[BaseException], request_id: Any) -> None:
        """End the span and record the duration (the first call only: a cancel may race the answer)."""
        try:
            self._once.pop()
        except IndexError:
            return
        try:
            self._end(value, error, request_id)
        except Exception:  # tracing must never fail a call (nor keep its caller from being woken)
            log.exception("could not end the span of %s", self._method)

    def _end(self, value: Any, error: Optional[BaseException], request_id: Any) -> None:
        duration = _monotonic() - self._started
        span = self._span
        attrs = self._base
        kind: Optional[str] = None
        fallback = error is not None and self._method == "server/discover" and refused_discover(error)
        if fallback:  # a handshake-era server: the normal path to initialize, not a failure
            error = None
        elif error is not None:
            kind = _error_type(error)
            attrs = dict(attrs, **{"error.type": kind})
            if isinstance(error, RPCError):
                attrs["rpc.response.status_code"] = kind
        elif self._method == "tools/call" and _tool_failed(value):
            kind = "tool_error"
            attrs = dict(attrs, **{"error.type": kind})
        if span.is_recording():
            if request_id is not None:
                span.set_attribute("jsonrpc.request.id", str(request_id))
            if fallback:
                span.set_attribute("mcp.protocol.fallback", "initialize")
            if kind is not None:
                span.set_attribute("error.type", kind)
                if isinstance(error, RPCError):
                    span.set_attribute("rpc.response.status_code", kind)
                    span.set_status(Status(StatusCode.ERROR, error.message))
                else:
                    span.set_status(Status(StatusCode.ERROR, None if error is None else kind))
            elif self._owner.options.record_results and self._method == "tools/call":
                raw = value if type(value) is dict else value.raw if isinstance(value, ToolResult) else None
                if isinstance(raw, dict):
                    shown = raw.get("structuredContent")
                    text = _json(shown if shown is not None else raw.get("content"))
                    if text is not None:
                        span.set_attribute("gen_ai.tool.call.result", text)
        span.end()
        if request_id is not None:  # (None: nothing was sent, a cache hit: no request to time)
            self._owner.duration.record(duration, attrs)


class ClientTracer:
    """A client's OpenTelemetry tracer (``tracing.CallTracer``): installed on its sessions and
    its responder at ``connect()``; reads the transport and the negotiated version from the
    connection at each call (a reconnect or a fallback changes them)."""

    def __init__(self, options: Tracing, conn: "Traced") -> None:
        self.options = options
        self._conn = conn
        self._tracer = trace.get_tracer(SCOPE, __version__, options.tracer_provider)
        if options.meter_provider is not None:
            meter = options.meter_provider.get_meter(SCOPE, __version__)
        else:
            meter = metrics.get_meter(SCOPE, __version__)
        self._live, self._recheck = True, 0.0  # see _configured
        try:
            self.duration = meter.create_histogram(
                "mcp.client.operation.duration", unit="s", explicit_bucket_boundaries_advisory=list(BUCKETS),
                description="The duration of the MCP request as observed on the sender from the time it was "
                            "sent until the response is received.")
        except TypeError:  # opentelemetry-api older than 1.23: no advisory
            self.duration = meter.create_histogram("mcp.client.operation.duration", unit="s")
        # (transport, protocol version, the attributes all their spans share, {(method, target): (name, attributes)})
        self._seen: Tuple[Any, Any, Dict[str, Any], Dict[Any, Tuple[str, Dict[str, Any]]]] = (None, None, {}, {})

    def _common(self) -> Tuple["Transport", Dict[str, Any], Dict[Any, Tuple[str, Dict[str, Any]]]]:
        """The current transport, the attributes every span and measure of it shares, and the
        names and attributes of the calls made on it so far (rebuilt after a reconnect)."""
        conn = self._conn
        transport, version = conn.transport, conn.protocol_version
        seen = self._seen
        if seen[0] is not transport or seen[1] != version:
            common = _network(transport)
            if version is not None:
                common["mcp.protocol.version"] = version
            self._seen = seen = (transport, version, common, {})
        return transport, seen[2], seen[3]

    def _named(self, method: str, params: Optional[Dict[str, Any]], common: Dict[str, Any],
               known: Dict[Any, Tuple[str, Dict[str, Any]]]) -> Tuple[str, Dict[str, Any]]:
        """A request's span name and low-cardinality attributes (kept per method and target)."""
        target = _TARGETS.get(method)
        value = params.get(target[0]) if target is not None and params else None
        if not isinstance(value, str):
            value = None
        found = known.get((method, value))
        if found is not None:
            return found
        base = dict(common)
        base["mcp.method.name"] = method
        name = method
        if target is not None:
            if value is not None:
                name = f"{method} {value}"
                base[target[1]] = value
            if method == "tools/call":
                base["gen_ai.operation.name"] = "execute_tool"
        found = (name, base)
        if len(known) < _MAX_NAMES:
            known[(method, value)] = found
        return found

    def _configured(self, now: float) -> bool:
        """Whether an OpenTelemetry SDK (or any provider) is set up to receive spans or measures.
        Without one, a call costs a clock read and a context lookup (checked again each second:
        a provider set up later is used from then on)."""
        if now < self._recheck:
            return self._live
        live = self.options.tracer_provider is not None or self.options.meter_provider is not None or \
            not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider) or \
            _PROXY_METERS is None or not isinstance(metrics.get_meter_provider(), _PROXY_METERS)
        self._live, self._recheck = live, now + _RECHECK
        return live

    def start(self, method: str, params: Optional[Dict[str, Any]]) -> Optional[Any]:
        """Start the ``CLIENT`` span of a request (``tracing.CallTracer.start``); None if that
        failed (the request then goes untraced, never refused)."""
        try:
            if not self._configured(_monotonic()):
                # No provider: no span to make, but a context the caller is in (extracted from an
                # incoming request by other instrumentation) still goes to the server.
                if not trace.get_current_span().get_span_context().is_valid:
                    return None
                return _Propagated()
            return self._start(method, params)
        except Exception:
            log.exception("could not start the span of %s", method)
            return None

    def _start(self, method: str, params: Optional[Dict[str, Any]]) -> _Trace:
        transport, common, known = self._common()
        name, base = self._named(method, params, common, known)
        span = self._tracer.start_span(name, kind=_CLIENT, attributes=base)
        try:
            return self._started(span, transport, method, params, base)
        except BaseException:  # (a failing propagator...: the call goes untraced, its span is not left open)
            span.end()
            raise

    def _started(self, span: Any, transport: "Transport", method: str, params: Optional[Dict[str, Any]],
                 base: Dict[str, Any]) -> _Trace:
        if span.is_recording():
            extra: Dict[str, Any] = {}
            session_id = transport.info.session_id
            if isinstance(session_id, str):
                extra["mcp.session.id"] = session_id
            if method in _URI_METHODS and params and isinstance(params.get("uri"), str):
                extra["mcp.resource.uri"] = _scrubbed_uri(params["uri"])
            if self.options.record_arguments and method == "tools/call" and params:
                text = _json(params.get("arguments") or {})
                if text is not None:
                    extra["gen_ai.tool.call.arguments"] = text
            if extra:
                span.set_attributes(extra)
        meta: Optional[Dict[str, str]] = None
        if span.get_span_context().is_valid:
            meta = {}
            propagate.inject(meta, context=trace.set_span_in_context(span))
        return _Trace(self, span, method, meta or None, base)

    def serve(self, method: str, params: Dict[str, Any], run: Callable[[], Any]) -> Any:
        """Run a server request's handler in a ``SERVER`` span (``tracing.CallTracer.serve``); a
        failing tracer or propagator never keeps the handler from running, nor changes its outcome."""
        try:
            span, token = self._serving(method, params)
        except Exception:
            log.exception("could not start the span of %s", method)
            return run()
        try:
            return run()
        except BaseException as exc:
            try:
                kind = _error_type(exc)
                if span.is_recording():
                    span.set_attribute("error.type", kind)
                    if isinstance(exc, RPCError):
                        span.set_attribute("rpc.response.status_code", kind)
                        span.set_status(Status(StatusCode.ERROR, exc.message))
                    else:
                        span.set_status(Status(StatusCode.ERROR, kind))
            except Exception:
                log.exception("could not record the outcome of %s", method)
            raise
        finally:
            try:
                otel_context.detach(token)
            finally:
                try:
                    span.end()
                except Exception:
                    log.exception("could not end the span of %s", method)

    def _serving(self, method: str, params: Dict[str, Any]) -> Tuple[Any, Any]:
        """The started ``SERVER`` span of a server request, and the token that made it current."""
        meta = params.get("_meta")
        parent = None
        links: Optional[List[Link]] = None
        if isinstance(meta, dict) and isinstance(meta.get("traceparent"), str):
            carrier = {k: v for k, v in meta.items() if type(v) is str}
            try:
                parent = propagate.extract(carrier)
            except (TypeError, ValueError):
                parent = None
            if parent is not None and not trace.get_current_span(parent).get_span_context().is_valid:
                parent = None  # a malformed traceparent: the ambient context is the parent
            ambient = trace.get_current_span().get_span_context()
            if parent is not None and ambient.is_valid and \
                    ambient.span_id != trace.get_current_span(parent).get_span_context().span_id:
                links = [Link(ambient)]
        _, common, _ = self._common()
        attrs = dict(common)
        attrs["mcp.method.name"] = method
        span = self._tracer.start_span(method, context=parent, kind=_SERVER, attributes=attrs, links=links)
        try:
            return span, otel_context.attach(trace.set_span_in_context(span))
        except BaseException:
            span.end()
            raise
