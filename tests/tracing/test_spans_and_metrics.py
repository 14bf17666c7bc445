"""OpenTelemetry tracing: one CLIENT span per request with the semantic conventions'
attributes, the ``mcp.client.operation.duration`` histogram, and the span's context in the
``params._meta`` of every request, checked on the server side, over stdio and Streamable HTTP in
both eras; parents across threads and futures; errors; server->client requests; ``tracing=False``.

Uses the OpenTelemetry SDK's in-memory span exporter and metric reader, passed to the client with
``Tracing(tracer_provider=, meter_provider=)`` (the global providers stay untouched for the other
test modules). The stdio server is tests/servers/trace_echo.py; the HTTP one is a scripted server
on 127.0.0.1 answering with the same code, which records the requests it received.
"""
from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import wait
from typing import Any, Dict, Iterator, List

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the tracing tests need opentelemetry-sdk")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

from mcpclient import Client, Handlers, MissingExtraError, RPCError, RequestCancelled, RequestTimeout, ToolError, Tracing  # noqa: E402

from conftest import LONG, SERVERS, require_official_sdk  # noqa: E402
from http_scripted import Reply, ScriptedHTTPServer  # noqa: E402
from servers.trace_echo import Failure, answer  # noqa: E402

pytestmark = pytest.mark.timeout(60)

TRACE_ECHO = [sys.executable, str(SERVERS / "trace_echo.py")]
MODERN_DISCOVER = answer("server/discover", {})


class Telemetry:
    """An SDK tracer provider and meter provider that keep everything in memory."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.metrics = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.metrics])
        self.tracer = self.tracer_provider.get_tracer("test")

    def tracing(self, **options: Any) -> Tracing:
        return Tracing(tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **options)

    def finished(self, name_prefix: str = "") -> List[Any]:
        return [s for s in self.spans.get_finished_spans() if s.name.startswith(name_prefix)]

    def durations(self) -> List[Any]:
        """The data points of ``mcp.client.operation.duration`` (cumulative since the start)."""
        points: List[Any] = []
        data = self.metrics.get_metrics_data()
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == "mcp.client.operation.duration":
                        assert metric.unit == "s"
                        points.extend(metric.data.data_points)
        return points


@pytest.fixture(scope="module")
def otel() -> Iterator[Telemetry]:
    telemetry = Telemetry()
    yield telemetry
    telemetry.tracer_provider.shutdown()
    telemetry.meter_provider.shutdown()


@pytest.fixture
def tel(otel: Telemetry) -> Telemetry:
    otel.spans.clear()
    return otel


def _handle(seen: Any, msg: Dict[str, Any]) -> Any:
    """The scripted HTTP server's answers: the stdio server's code (trace_echo.answer)."""
    try:
        result = answer(msg["method"], msg.get("params") or {})
    except Failure as exc:
        return Reply(200, {"jsonrpc": "2.0", "id": msg["id"], "error": exc.error})
    return result


@pytest.fixture(scope="module")
def http_servers() -> Iterator[Dict[str, ScriptedHTTPServer]]:
    servers = {"legacy": ScriptedHTTPServer(_handle), "2026": ScriptedHTTPServer(_handle, discover=MODERN_DISCOVER)}
    yield servers
    for server in servers.values():
        server.stop()


def _connect(kind: str, era: str, servers: Dict[str, ScriptedHTTPServer], **options: Any) -> Client:
    target = TRACE_ECHO if kind == "stdio" else servers[era].url
    return Client(target, protocol="legacy" if era == "legacy" else "auto", timeout=LONG, **options)


def _ids(traceparent: str) -> tuple:
    """(trace id, span id) of a W3C traceparent, as ints."""
    version, trace_id, span_id, flags = traceparent.split("-")
    return int(trace_id, 16), int(span_id, 16)


@pytest.mark.parametrize("kind", ["stdio", "http"])
@pytest.mark.parametrize("era", ["legacy", "2026"])
def test_a_tool_call_makes_one_client_span_and_the_server_gets_its_context(tel, http_servers, kind, era):
    with _connect(kind, era, http_servers, tracing=tel.tracing()) as client:
        client.list_tools()
        with tel.tracer.start_as_current_span("caller") as caller:
            result = client.call_tool("meta", {"secret": "hunter2"})
    [span] = tel.finished("tools/call")
    attrs = dict(span.attributes)
    version = "2025-11-25" if era == "legacy" else "2026-07-28"
    assert span.name == "tools/call meta" and span.kind is SpanKind.CLIENT
    assert span.parent.span_id == caller.get_span_context().span_id
    assert span.context.trace_id == caller.get_span_context().trace_id
    expected = {"mcp.method.name": "tools/call", "gen_ai.tool.name": "meta", "gen_ai.operation.name": "execute_tool",
                "mcp.protocol.version": version, "network.transport": "pipe" if kind == "stdio" else "tcp"}
    if kind == "http":
        server = http_servers[era]
        expected.update({"network.protocol.name": "http", "server.address": "127.0.0.1",
                         "server.port": server.httpd.server_address[1]})
        if era == "legacy":
            expected["mcp.session.id"] = server.sessions[-1]
    assert {k: attrs.get(k) for k in expected} == expected
    assert set(attrs) == set(expected) | {"jsonrpc.request.id"}  # no error, no arguments (not opted in)
    assert "hunter2" not in repr(attrs)
    assert span.status.status_code is StatusCode.UNSET
    # The server side: the context it received is this span's.
    if kind == "stdio":
        traceparent = result.structured_content["traceparent"]
    else:
        [request] = [s for s in http_servers[era].requests("tools/call")
                     if s.body["params"]["_meta"].get("traceparent", "").split("-")[1:2] ==
                     [format(span.context.trace_id, "032x")]]
        traceparent = request.body["params"]["_meta"]["traceparent"]
        assert str(request.body["id"]) == attrs["jsonrpc.request.id"]
    assert _ids(traceparent) == (span.context.trace_id, span.context.span_id)
    # The duration histogram: the same low-cardinality attributes, no request id or session id.
    [point] = [p for p in tel.durations() if p.attributes.get("gen_ai.tool.name") == "meta"
               and p.attributes.get("mcp.protocol.version") == version
               and p.attributes.get("network.transport") == expected["network.transport"]]
    assert point.count >= 1 and point.sum > 0
    assert "jsonrpc.request.id" not in point.attributes and "mcp.session.id" not in point.attributes


def test_32_threads_each_get_a_span_under_their_own_parent(tel):
    parents: Dict[int, Any] = {}
    echoed: Dict[int, str] = {}
    barrier = threading.Barrier(32)
    errors: List[BaseException] = []

    with Client(TRACE_ECHO, protocol="legacy", timeout=LONG, tracing=tel.tracing()) as client:
        def worker(n: int) -> None:
            try:
                with tel.tracer.start_as_current_span(f"thread-{n}") as parent:
                    parents[n] = parent.get_span_context()
                    barrier.wait(LONG)
                    echoed[n] = client.call_tool("meta").text
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(LONG)
    assert not errors
    spans = {s.context.span_id: s for s in tel.finished("tools/call meta")}
    assert len(spans) == 32
    for n in range(32):
        trace_id, span_id = _ids(echoed[n])
        span = spans[span_id]  # the server got this thread's call's own span...
        assert span.parent.span_id == parents[n].span_id  # ...whose parent is this thread's span
        assert trace_id == parents[n].trace_id


def test_a_future_span_covers_the_call_not_the_callers_wait(tel):
    with Client(TRACE_ECHO, protocol="legacy", timeout=LONG, tracing=tel.tracing()) as client:
        ended_when_done: List[int] = []
        with tel.tracer.start_as_current_span("caller") as caller:
            future = client.call_tool_future("meta")
            future.add_done_callback(lambda f: ended_when_done.append(len(tel.finished("tools/call"))))
        # (the caller's span is over: the call keeps the context it was started in)
        assert wait([future], LONG).done
        [span] = tel.finished("tools/call")  # ended already: before anyone asked for the result
        before_result = time.time_ns()
        assert _ids(future.result().text) == (span.context.trace_id, span.context.span_id)
    assert span.end_time <= before_result
    assert ended_when_done == [1]  # ended before the future completed (its callbacks see it ended)
    assert span.parent.span_id == caller.get_span_context().span_id


def test_errors_set_error_type_and_status(tel):
    with Client(TRACE_ECHO, protocol="legacy", timeout=LONG, tracing=tel.tracing()) as client:
        assert client.call_tool("fail").is_error
        with pytest.raises(ToolError):
            client.call_tool("fail", raise_on_error=True)
        with pytest.raises(RPCError):
            client.call_tool("boom")
        with pytest.raises(RequestTimeout):
            client.call_tool("hang", timeout=0.2)
        future = client.call_tool_future("hang")
        assert future.cancel()
        with pytest.raises(RequestCancelled):
            future.result()
    spans = tel.finished("tools/call")
    got = [(s.name, s.attributes.get("error.type"), s.attributes.get("rpc.response.status_code"), s.status.status_code,
            s.status.description) for s in spans]
    assert got == [
        ("tools/call fail", "tool_error", None, StatusCode.ERROR, None),
        ("tools/call fail", "tool_error", None, StatusCode.ERROR, "tool_error"),
        ("tools/call boom", "-32050", "-32050", StatusCode.ERROR, "boom"),  # the server's message
        ("tools/call hang", "timeout", None, StatusCode.ERROR, "timeout"),
        ("tools/call hang", "cancelled", None, StatusCode.ERROR, "cancelled"),
    ]
    errors = {p.attributes.get("error.type") for p in tel.durations() if p.attributes.get("gen_ai.tool.name") in
              ("fail", "boom", "hang")}
    assert {"tool_error", "-32050", "timeout", "cancelled"} <= errors


@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_the_discover_probe_of_a_handshake_era_server_is_recorded_without_an_error(tel, http_servers, kind):
    """A handshake-era server refuses ``server/discover`` (-32601 over stdio, HTTP 400 here): the
    normal way to ``initialize``, so its span says so and carries no error status or type."""
    target = [sys.executable, str(SERVERS / "minimal.py")] if kind == "stdio" else http_servers["legacy"].url
    with Client(target, protocol="auto", timeout=LONG, tracing=tel.tracing()) as client:
        assert client.server.protocol_version != "2026-07-28"
    [probe] = tel.finished("server/discover")
    assert probe.status.status_code is StatusCode.UNSET
    assert probe.attributes.get("mcp.protocol.fallback") == "initialize"
    assert "error.type" not in probe.attributes
    assert [s.status.status_code for s in tel.finished("initialize")] == [StatusCode.UNSET]
    points = [p for p in tel.durations() if p.attributes.get("mcp.method.name") == "server/discover"]
    assert points and all("error.type" not in p.attributes for p in points)


@pytest.mark.parametrize("era", ["legacy", "2026"])
def test_a_server_request_gets_a_server_span_under_the_context_it_carries(tel, era):
    seen_in_handler: List[Any] = []

    def sample(request: Any) -> Dict[str, Any]:
        seen_in_handler.append(trace.get_current_span().get_span_context())
        return {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}

    with Client(TRACE_ECHO, protocol="legacy" if era == "legacy" else "auto", timeout=LONG, tracing=tel.tracing(), handlers=Handlers(sampling=sample)) as client:
        with tel.tracer.start_as_current_span("caller"):
            result = client.call_tool("sample")
    assert result.text == "sampled"
    [call] = tel.finished("tools/call")  # one span, though the 2026 call took two rounds
    [served] = tel.finished("sampling/createMessage")
    assert served.kind is SpanKind.SERVER and served.attributes["mcp.method.name"] == "sampling/createMessage"
    assert served.parent.span_id == call.context.span_id  # the context the server put in its request
    assert served.context.trace_id == call.context.trace_id
    assert seen_in_handler == [served.context]  # the handler runs with that span current
    rounds = result.structured_content["rounds"]
    assert [_ids(r["traceparent"]) for r in rounds] == [(call.context.trace_id, call.context.span_id)] * len(rounds)
    assert not served.links  # (legacy: on a handler thread, no ambient context; 2026: the ambient one is the call's)
    assert len(rounds) == (1 if era == "legacy" else 2)


def test_an_input_round_without_a_context_is_served_under_the_calls_span(tel):
    """2026-07-28: the handlers of ``input_required`` rounds run while the call's result is
    handled, with the call's span current: a request that carries no context is its child."""
    def sample(request: Any) -> Dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}

    with Client(TRACE_ECHO, timeout=LONG, tracing=tel.tracing(), handlers=Handlers(sampling=sample)) as client:
        with tel.tracer.start_as_current_span("caller"):
            assert client.call_tool_future("sample", {"propagate": False}).result(LONG).text == "sampled"
    [call] = tel.finished("tools/call")
    [served] = tel.finished("sampling/createMessage")
    assert not served.parent.is_remote and served.parent.span_id == call.context.span_id
    assert served.end_time <= call.end_time


def test_options_record_arguments_and_results_and_a_callers_own_traceparent_is_kept(tel):
    own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with Client(TRACE_ECHO, protocol="legacy", timeout=LONG,
                tracing=tel.tracing(record_arguments=True, record_results=True)) as client:
        client.call_tool("meta", {"q": "x"})
        kept = client.call_tool("meta", meta={"traceparent": own})
    first, second = tel.finished("tools/call")
    assert first.attributes["gen_ai.tool.call.arguments"] == '{"q":"x"}'
    assert first.attributes["gen_ai.tool.call.result"].startswith('{"traceparent":"00-')
    assert kept.structured_content == {"traceparent": own}  # never overwritten


def test_tracing_false_makes_no_spans_and_sends_no_context(tel):
    with Client(TRACE_ECHO, protocol="legacy", timeout=LONG, tracing=False) as client:
        with tel.tracer.start_as_current_span("caller"):
            assert client.call_tool("meta").structured_content == {}
    assert [s.name for s in tel.finished()] == ["caller"]


def test_without_the_package_tracing_is_off_by_default_and_refused_when_asked_for(monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # as if opentelemetry-api were not installed
    with pytest.raises(MissingExtraError) as caught:
        Client(TRACE_ECHO, tracing=True)
    assert caught.value.extra == "otel" and "mcpclient[otel]" in str(caught.value)
    assert Client(TRACE_ECHO)._channel._tracing is None  # (nothing started: constructing does no I/O)


def test_import_and_construction_do_not_import_opentelemetry():
    code = ("import sys, mcpclient; c = mcpclient.Client(['x']); "
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=LONG, check=True)
    assert out.stdout.strip() == "[]"


def test_a_program_that_does_not_use_opentelemetry_does_not_load_it_on_connect():
    """``opentelemetry-api`` installed (here, as often, by another package) but never imported by
    the program: automatic tracing stays off, and connecting and calling load none of it."""
    code = ("import sys, mcpclient; from mcpclient.testing import server_command\n"
            "with mcpclient.Client(server_command()) as c:\n"
            "    c.call_tool('echo', {'text': 'x'})\n"
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')), c._channel.tracer)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=LONG, check=True)
    assert out.stdout.strip() == "[] None", out.stderr


def test_a_program_that_imported_opentelemetry_is_traced_by_default():
    """The program set a tracer provider up before connecting: the client's spans go to it, as
    with ``tracing=True``."""
    code = ("from opentelemetry import trace\n"
            "from opentelemetry.sdk.trace import TracerProvider\n"
            "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
            "from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter\n"
            "exporter = InMemorySpanExporter(); provider = TracerProvider()\n"
            "provider.add_span_processor(SimpleSpanProcessor(exporter)); trace.set_tracer_provider(provider)\n"
            "import mcpclient; from mcpclient.testing import server_command\n"
            "with mcpclient.Client(server_command()) as c:\n"
            "    c.call_tool('echo', {'text': 'x'})\n"
            "print([s.name for s in exporter.get_finished_spans()])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=LONG, check=True)
    assert "tools/call echo" in out.stdout, out.stdout + out.stderr


def test_the_official_sdk_server_gets_the_context_and_hands_it_back_in_its_sampling_request(tel):
    """The official SDK's server extracts ``params._meta``'s context (its own OpenTelemetry
    middleware) and injects it into the sampling request it sends while handling the call."""
    require_official_sdk()
    from conftest import OFFICIAL_SERVER

    def sample(request: Any) -> Dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}

    with Client(OFFICIAL_SERVER, protocol="legacy", timeout=LONG, tracing=tel.tracing(), handlers=Handlers(sampling=sample)) as client:
        assert client.call_tool("sample", {"prompt": "p"}).text == "m: sampled"
    [call] = tel.finished("tools/call")
    [served] = tel.finished("sampling/createMessage")
    assert served.parent.is_remote and served.parent.span_id == call.context.span_id
    assert served.context.trace_id == call.context.trace_id


def test_by_default_the_callers_context_reaches_the_server_even_without_an_sdk(tel):
    """``tracing`` left automatic with the global providers unset (no SDK configured): no span
    is made, but a context the caller is in (here: one a web framework would have extracted from
    an incoming request) still goes to the server."""
    incoming = trace.SpanContext(0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331, is_remote=True,
                                 trace_flags=trace.TraceFlags(1))
    with Client(TRACE_ECHO, protocol="legacy", timeout=LONG) as client:
        if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):  # (no other test set one up)
            assert client.call_tool("meta").structured_content == {}  # no context: nothing sent
        with trace.use_span(trace.NonRecordingSpan(incoming)):
            echoed = client.call_tool("meta").text
    assert _ids(echoed)[0] == incoming.trace_id
    assert tel.finished() == []  # (the test's own provider is not the global one)
