"""OpenTelemetry spans always end: every span started is ended once, whatever the
call or the tracer does; a failing tracer never fails a call; the duration histogram measures
only requests that went out.

Real servers (tests/servers/trace_echo.py over stdio; a scripted 2026 HTTP server on 127.0.0.1
for cached results). Spans are counted at start and at end by an SDK span processor, so a span
that is never ended shows. The global propagator is replaced only inside a test, and restored.
"""
from __future__ import annotations

import collections
import sys
from typing import Any, Dict, Iterator, List

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the tracing tests need opentelemetry-sdk")

from opentelemetry import propagate  # noqa: E402
from opentelemetry.propagators.textmap import TextMapPropagator  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator  # noqa: E402

from mcpclient import Client, Handlers, Skills, Tracing  # noqa: E402

from conftest import LONG, SERVERS  # noqa: E402
from http_scripted import ScriptedHTTPServer  # noqa: E402
from servers.trace_echo import answer  # noqa: E402

pytestmark = pytest.mark.timeout(60)

TRACE_ECHO = [sys.executable, str(SERVERS / "trace_echo.py")]


class Counting(SpanProcessor):
    """Counts the spans started and ended, by name."""

    def __init__(self) -> None:
        self.started: List[str] = []
        self.ended: List[str] = []

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.started.append(span.name)

    def on_end(self, span: Any) -> None:
        self.ended.append(span.name)

    def open(self) -> Dict[str, int]:
        """The spans started and not ended (and, negative, those ended more often than started)."""
        started, ended = collections.Counter(self.started), collections.Counter(self.ended)
        started.subtract(ended)
        return {name: n for name, n in started.items() if n}


class Telemetry:
    def __init__(self) -> None:
        self.counting = Counting()
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(self.counting)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.metrics = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.metrics])

    def tracing(self) -> Tracing:
        return Tracing(tracer_provider=self.tracer_provider, meter_provider=self.meter_provider)

    def durations(self, method: str) -> List[Any]:
        data = self.metrics.get_metrics_data()
        return [p for r in (data.resource_metrics if data else ()) for s in r.scope_metrics for m in s.metrics
                if m.name == "mcp.client.operation.duration" for p in m.data.data_points
                if p.attributes.get("mcp.method.name") == method]


@pytest.fixture
def tel() -> Iterator[Telemetry]:
    telemetry = Telemetry()
    yield telemetry
    telemetry.tracer_provider.shutdown()
    telemetry.meter_provider.shutdown()


class _Broken(TextMapPropagator):
    """A propagator that fails (a buggy vendor propagator): on inject, or on extract only."""

    def __init__(self, inject: bool) -> None:
        self._inject = inject
        self._good = TraceContextTextMapPropagator()

    def inject(self, carrier: Any, context: Any = None, setter: Any = None) -> None:
        if self._inject:
            raise RuntimeError("broken propagator")
        self._good.inject(carrier, context)

    def extract(self, carrier: Any, context: Any = None, getter: Any = None) -> Any:
        raise RuntimeError("broken propagator")

    @property
    def fields(self) -> set:
        return self._good.fields


@pytest.fixture
def broken_propagator() -> Iterator[Any]:
    old = propagate.get_global_textmap()
    yield lambda inject: propagate.set_global_textmap(_Broken(inject))
    propagate.set_global_textmap(old)


def _sample(request: Any) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}


def test_a_propagator_failing_on_inject_leaves_no_span_open(tel, broken_propagator):
    """The span is started before the context is injected: when injecting fails, the call goes
    on untraced, and the span it started must be ended all the same (else it leaks)."""
    broken_propagator(True)
    with Client(TRACE_ECHO, protocol="legacy", timeout=LONG, tracing=tel.tracing()) as client:
        assert client.call_tool("meta").structured_content == {}
    assert tel.counting.started  # (spans were started)
    assert tel.counting.open() == {}


@pytest.mark.parametrize("era", ["legacy", "2026"])
def test_a_propagator_failing_on_extract_does_not_fail_the_servers_request(tel, broken_propagator, era):
    """The sampling request carries a ``traceparent``; extracting it raises: the handler must still
    run (untraced) and the call succeed."""
    broken_propagator(False)
    with Client(TRACE_ECHO, protocol="legacy" if era == "legacy" else "auto", timeout=LONG, tracing=tel.tracing(), handlers=Handlers(sampling=_sample)) as client:
        assert client.call_tool("sample").text == "sampled"
    assert tel.counting.open() == {}


def test_cache_hits_make_no_duration_measures(tel):
    """2026 results served from the cache send nothing: the histogram (time from sending to the
    answer) must not get near-zero measures for them."""
    def handle(seen: Any, msg: Dict[str, Any]) -> Any:
        result = answer(msg["method"], msg.get("params") or {})
        return dict(result, ttlMs=60000, cacheScope="public") if msg["method"] == "tools/list" else result

    server = ScriptedHTTPServer(handle, discover=answer("server/discover", {}))
    try:
        with Client(server.url, timeout=LONG, tracing=tel.tracing()) as client:
            for _ in range(3):
                client.list_tools()
        assert len(server.requests("tools/list")) == 1  # (two cache hits)
    finally:
        server.stop()
    [point] = tel.durations("tools/list")
    assert point.count == 1
    assert tel.counting.open() == {}


def test_a_resource_uri_that_does_not_parse_loses_its_user_info_too(tel):
    """``mcp.resource.uri`` drops user info, query and fragment; a URI ``urlsplit`` refuses (an
    unclosed IPv6 bracket) must not keep its credentials."""
    def handle(seen: Any, msg: Dict[str, Any]) -> Any:
        uri = msg["params"]["uri"]
        return {"contents": [{"uri": uri, "text": "x"}]}

    server = ScriptedHTTPServer(handle, capabilities={"resources": {}})
    try:
        with Client(server.url, protocol="legacy", timeout=LONG, tracing=tel.tracing()) as client:
            client.read_resource("db://user:s3cret@[db/table?token=t0k")
    finally:
        server.stop()
    [span] = [s for s in tel.spans.get_finished_spans() if s.name == "resources/read"]
    uri = span.attributes["mcp.resource.uri"]
    assert "s3cret" not in uri and "user" not in uri and "t0k" not in uri
    assert uri.startswith("db://") and uri.endswith("/table")


def test_a_cancelled_futures_span_is_ended_before_its_callbacks_run(tel):
    """As for a call that completes, a cancelled call's span ends before anyone is told: a done
    callback (or a waiter) sees it ended."""
    with Client(TRACE_ECHO, protocol="legacy", timeout=LONG, tracing=tel.tracing()) as client:
        future = client.call_tool_future("hang")
        seen: List[int] = []
        future.add_done_callback(lambda f: seen.append(len(
            [s for s in tel.spans.get_finished_spans() if s.name == "tools/call hang"])))
        assert future.cancel()
    assert seen == [1]
    [span] = [s for s in tel.spans.get_finished_spans() if s.name == "tools/call hang"]
    assert span.attributes["error.type"] == "cancelled"
    assert tel.counting.open() == {}


def test_a_task_augmented_sampling_request_is_served_in_a_span_under_its_context(tel):
    """A sampling request the server sends as a task (``task_requests=True``) runs on a task
    thread: it gets its ``SERVER`` span too, child of the context in its ``_meta``, current in the
    handler (as for a plain request). (The in-memory scripted server: a real one asking for a
    task-augmented sampling needs the tasks venv.)"""
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind

    from helpers import ScriptedServer

    seen: List[Any] = []

    def sample(request: Any) -> Dict[str, Any]:
        seen.append(trace.get_current_span().get_span_context())
        return _sample(request)

    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    request = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5,
               "task": {"ttl": 10000}, "_meta": {"traceparent": traceparent}}
    srv = ScriptedServer(lambda method, params: {})
    try:
        with Client(srv.transport, timeout=LONG, tracing=tel.tracing(), handlers=Handlers(sampling=sample, task_requests=True)):
            task = srv.ask("sampling/createMessage", request)["result"]["task"]
            result = srv.ask("tasks/result", {"taskId": task["taskId"]})["result"]
            assert result["content"]["text"] == "sampled"
    finally:
        srv.stop()
    [served] = [s for s in tel.spans.get_finished_spans() if s.name == "sampling/createMessage"]
    assert served.kind is SpanKind.SERVER
    assert served.parent.is_remote and served.parent.span_id == 0xB7AD6B7169203331
    assert seen == [served.context]


def test_load_skills_later_requests_are_children_of_the_callers_span_too(tel):
    """``Skills.load`` chains requests: the manifest, then ``SKILL.md``, read from a worker thread.
    Every span of the chain must be a child of the caller's span (one trace), not a new root."""
    import hashlib

    from helpers import ScriptedServer

    uri, text = "skill://pdf/SKILL.md", "---\nname: pdf\ndescription: 'Fill PDF forms'\n---\n\nUse it.\n"
    data = text.encode()
    listed = {"uri": uri, "frontmatter": {"name": "pdf", "description": "Fill PDF forms"},
              "resources": [{"uri": uri, "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}]}

    def handle(method: str, params: Dict[str, Any]) -> Any:
        if method == "skills/list":
            return {"skills": [listed]}
        if method == "resources/read":
            return {"contents": [{"uri": params["uri"], "mimeType": "text/markdown", "text": text}]}
        return {}

    srv = ScriptedServer(handle, capabilities={"resources": {}, "extensions": {"io.modelcontextprotocol/skills": {}}})
    tracer = tel.tracer_provider.get_tracer("test")
    try:
        with Client(srv.transport, timeout=LONG, tracing=tel.tracing()) as client:
            with tracer.start_as_current_span("caller") as caller:
                assert client.extension(Skills).load("pdf").text == text
    finally:
        srv.stop()
    spans = {s.name: s for s in tel.spans.get_finished_spans() if s.name in ("skills/list", "resources/read")}
    assert set(spans) == {"skills/list", "resources/read"}
    for span in spans.values():
        assert span.parent is not None and span.parent.span_id == caller.get_span_context().span_id, span.name
        assert span.context.trace_id == caller.get_span_context().trace_id


def test_a_group_call_to_a_lost_server_keeps_the_callers_parent(tel):
    """``ServerGroup.call_tools`` makes the call to a lost server (which reconnects first) on a
    thread of its own: its span (and the reconnect's) must still be the caller's children."""
    from mcpclient import ServerGroup

    from conftest import wait_until

    options = {"protocol": "legacy", "timeout": LONG, "reconnect": True, "tracing": tel.tracing()}
    tracer = tel.tracer_provider.get_tracer("test")
    with ServerGroup({"t": TRACE_ECHO}, client_options=options) as group:
        proc = group.client("t").transport._proc
        proc.kill()
        proc.wait(LONG)
        assert wait_until(lambda: group.status["t"].state == "lost")
        tel.spans.clear()
        with tracer.start_as_current_span("caller") as caller:
            [result] = group.call_tools([("t_meta", None)], timeout=LONG)
    assert result.text.startswith("00-")
    [span] = [s for s in tel.spans.get_finished_spans() if s.name == "tools/call meta"]
    assert span.parent is not None and span.parent.span_id == caller.get_span_context().span_id
    assert span.context.trace_id == caller.get_span_context().trace_id


def test_a_groups_parallel_connect_keeps_the_callers_parent(tel):
    """``ServerGroup.connect()`` (and ``list_tools(refresh=True)``) work on a thread pool: the
    ``initialize`` and ``tools/list`` spans must be the caller's children."""
    from mcpclient import ServerGroup

    options = {"protocol": "legacy", "timeout": LONG, "tracing": tel.tracing()}
    tracer = tel.tracer_provider.get_tracer("test")
    group = ServerGroup({"a": TRACE_ECHO, "b": TRACE_ECHO}, client_options=options)
    try:
        with tracer.start_as_current_span("caller") as caller:
            group.connect()
            group.list_tools(refresh=True)
    finally:
        group.close()
    spans = [s for s in tel.spans.get_finished_spans() if s.name in ("initialize", "tools/list")]
    assert len(spans) >= 4
    assert [s.name for s in spans if s.parent is None or s.parent.span_id != caller.get_span_context().span_id] == []
