"""Every message path survives any bytes a server can send.

Real hostile servers: a scripted stdio server (``tests/servers/hostile_stdio.py``) started as a
process, scripted Streamable HTTP servers (``tests/http_scripted.py``) and a scripted legacy
HTTP+SSE server on 127.0.0.1. Each test sends the bad input, then makes a later call on the same
connection (it must succeed), checks that the reader / listener threads still run, and that any
failure is typed (``ProtocolError`` / ``SchemaValidationError``, never ``TypeError`` & co).
"""
from __future__ import annotations

import json
import logging
import queue
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List

import pytest

from conftest import LONG, SERVERS
from http_scripted import Reply, ScriptedHTTPServer
from mcpclient import Client, Handlers, HTTPTransport, ProtocolError, SSETransport, StdioTransport
from mcpclient._util.wire import format_message, redact
from mcpclient.errors import SchemaValidationError
from mcpclient.extensions.tasks.core import Task
from mcpclient.transports.base import decode_frame
from helpers import tool_changes

HOSTILE = [sys.executable, str(SERVERS / "hostile_stdio.py")]

#: Lines that are JSON but not a message (`null` was taken for end of stream).
NOT_MESSAGES = ["null", "42", '"text"', "true", "[]", "[1, 2]", "[null]", "{}", '{"jsonrpc": "2.0"}',
                '{"jsonrpc": "2.0", "id": null}', '{"jsonrpc": "2.0", "method": 5}', '{"id": [1]}',
                # messages with fields of the wrong types: skipped (logged), or handled as well as can be
                '{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": [1], "progress": "x"}}',
                '{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {}}}',
                '{"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": [], "data": ' + "[" * 400
                + "]" * 400 + "}}",
                '{"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": 5}',
                '{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', '{"jsonrpc": "2.0", "id": 3, "method": ["x"]}']


def _alive(suffix: str) -> bool:
    return any(t.name.endswith(suffix) and t.is_alive() for t in threading.enumerate())


@pytest.fixture
def hostile() -> Iterator[Client]:
    with Client(StdioTransport(HOSTILE), timeout=LONG) as client:
        yield client


# ---------------------------------------------------------------- the frame decoder


def test_decode_frame_refuses_what_is_not_a_message_and_never_raises_untyped():
    """`null` is refused as not a message (not decoded to None, which means end of stream); deep
    nesting is refused typed, never a RecursionError."""
    for text in ("null", "1", '"s"', "true", "[]"):
        with pytest.raises(ProtocolError):
            decode_frame(text)
    with pytest.raises(ProtocolError, match="deep"):
        decode_frame("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ProtocolError, match="deep"):
        decode_frame(b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    assert decode_frame(b'{"jsonrpc":"2.0","id":1,"result":{}}') == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert decode_frame("[{}]") == [{}]


def test_logging_a_deep_or_huge_message_is_bounded_and_never_raises():
    """Redaction does not recurse: logging a 600-deep skipped message is bounded and never raises
    (it would kill the reader)."""
    deep: Any = 1
    for _ in range(5000):
        deep = [deep, {"token": "s3cr3t"}]
    text = format_message(deep, 200)
    assert len(text) <= 260 and "s3cr3t" not in text
    assert format_message({"x": "y" * 10_000_000}, 200).endswith("(truncated)")
    assert redact({"password": "p", "a": [{"api_key": "k"}]}) == {"password": "***", "a": [{"api_key": "***"}]}
    assert "s3cr3t" not in format_message({"a": {"b": {"c": {"authorization": "s3cr3t"}}}})


# ---------------------------------------------------------------- stdio


@pytest.mark.parametrize("line", NOT_MESSAGES, ids=lambda line: line[:60])
def test_stdio_a_line_that_is_not_a_message_is_skipped_and_the_connection_lives(hostile, line, caplog):
    """A `null` line is skipped: it does not end the connection (ConnectionClosed for every call)."""
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        assert hostile.call_tool("emit", {"lines": [line, line]}).text == "emitted"
    assert hostile.call_tool("echo", {"text": "still here"}).text == "still here"
    assert _alive("-reader")


@pytest.mark.parametrize("deep", [[100_000, "list"], [100_000, "dict"], [600, "list"], [600, "dict"],
                                  [950, "list"], [950, "dict"]])
def test_stdio_a_deeply_nested_line_is_skipped_and_the_reader_lives(hostile, deep, caplog):
    """A line 100,000 deep raises no RecursionError in the decoder, and one 600 deep does not kill
    the reader while the skipped message is logged (redaction does not recurse)."""
    with caplog.at_level(logging.DEBUG, logger="mcpclient"):  # the wire log formats every message too
        assert hostile.call_tool("emit", {"deep": deep, "lines": ["[" + "[" * deep[0] + "]" * deep[0] + "]"]}
                                 ).text == "emitted"
    assert hostile.call_tool("echo", {"text": "after"}).text == "after"
    assert _alive("-reader")
    assert all(len(r.getMessage()) < 3000 for r in caplog.records)


@pytest.mark.parametrize("template", [
    '{"jsonrpc":"2.0","id":ID,"result":{"content":[]},"error":{"code":1,"message":"m"}}',
    '{"jsonrpc":"2.0","id":ID,"error":"boom"}',
    '{"jsonrpc":"2.0","id":ID,"error":{"code":"1","message":"m"}}',
    '{"jsonrpc":"2.0","id":ID,"error":{"code":1.5,"message":"m"}}',
    '{"jsonrpc":"2.0","id":ID,"error":{"code":true,"message":"m"}}',
    '{"jsonrpc":"2.0","id":ID,"error":{"code":1,"message":["m"]}}',
    '{"jsonrpc":"2.0","id":ID,"error":{"code":1}}',
    '{"jsonrpc":"2.0","id":ID}',
])
def test_stdio_a_malformed_reply_fails_only_its_call_with_protocol_error(hostile, template):
    """A reply with the call's id but a malformed shape fails that call, typed."""
    with pytest.raises(ProtocolError):
        hostile.call_tool("raw_reply", {"template": template})
    future = hostile.call_tool_future("raw_reply", {"template": template})
    assert isinstance(future.exception(LONG), ProtocolError)
    assert hostile.call_tool("echo", {"text": "next"}).text == "next"
    assert _alive("-reader")


# ---------------------------------------------------------------- result parsing


def test_a_ping_answered_with_a_task_is_a_protocol_error(hostile):
    """A request that cannot create a task answered with one: invalid, not "answered"."""
    _override(hostile, "ping", {"resultType": "task", "task": {"taskId": "t1", "status": "working"}})
    with pytest.raises(ProtocolError, match="'task'"):
        hostile.ping()
    _override(hostile, "ping", None)
    hostile.ping()


def _override(client: Client, method: str, result: Any) -> None:
    client.call_tool("override", {"method": method, "result": result})


BAD_TOOLS = [
    {"tools": [{"name": ["a", "list"]}]},
    {"tools": [{"name": 5}]},
    {"tools": [{"name": None}]},
    {"tools": ["tool"]},
    {"tools": [{"name": "t", "inputSchema": [1]}]},
    {"tools": [{"name": "t", "annotations": ["x"], "title": 5}]},
    {"tools": [{"name": "t", "inputSchema": {"properties": {"a": {"x-mcp-header": 5}}}}]},
    {"tools": 7},
    {"tools": [], "nextCursor": ["c"]},
]


@pytest.mark.parametrize("result", BAD_TOOLS)
def test_a_malformed_tool_listing_raises_only_documented_errors(hostile, result):
    """A tool whose `name` is a list raises a documented error from list_tools, not
    `TypeError: unhashable type`."""
    _override(hostile, "tools/list", result)
    try:
        tools = hostile.list_tools()
    except ProtocolError:
        pass
    else:  # what was tolerated is of the declared types
        for tool in tools:
            assert isinstance(tool.name, str) and isinstance(tool.input_schema, dict)
            assert tool.title is None or isinstance(tool.title, str)
            assert tool.annotations is None or isinstance(tool.annotations, dict)
            assert isinstance(tool.display_name, str)
    _override(hostile, "tools/list", None)
    assert {t.name for t in hostile.list_tools()} >= {"echo"}


def test_a_cursor_that_cannot_be_sent_back_is_a_protocol_error(hostile):
    """A nextCursor holding a lone surrogate (JSON's "\\ud800") is a ProtocolError when the next
    page is requested, not an untyped UnicodeEncodeError."""
    hostile.call_tool("override", {"method": "tools/list", "json": '{"tools": [], "nextCursor": "\\ud800"}'})
    with pytest.raises(ProtocolError, match="nextCursor"):
        hostile.list_tools()
    _override(hostile, "tools/list", None)
    assert {t.name for t in hostile.list_tools()} >= {"echo"}


@pytest.mark.parametrize("arguments", [{"text": "\ud800"}, {"text": float("nan")}, {"text": {1, 2}}])
def test_arguments_json_cannot_carry_are_refused_typed_and_the_connection_lives(hostile, arguments):
    """What JSON cannot carry (a lone surrogate, NaN, a set) is an UnsendableMessage (also a
    ValueError), not a bare UnicodeEncodeError, ValueError or TypeError, and nothing is sent."""
    from mcpclient.errors import UnsendableMessage

    with pytest.raises(UnsendableMessage):
        hostile.call_tool("echo", arguments)
    with pytest.raises(ValueError):  # (what json itself raises for NaN and surrogates)
        hostile.call_tool("echo", arguments)
    assert hostile.call_tool("echo", {"text": "after"}).content[0].text == "after"


@pytest.mark.parametrize("schema", [{"$schema": 5}, {"$schema": ["x"]}, {"$schema": {"a": 1}},
                                    {"type": 7}, {"$schema": "https://example.invalid/unknown"}])
def test_an_unusable_output_schema_is_a_schema_validation_error(hostile, schema):
    """`$schema` a number or a list is a SchemaValidationError, not an AttributeError/TypeError
    from jsonschema."""
    tools = [{"name": "echo", "inputSchema": {"type": "object"}, "outputSchema": schema}]
    _override(hostile, "tools/list", {"tools": tools})
    hostile.list_tools()
    _override(hostile, "tools/call", {"content": [], "structuredContent": {"a": 1}})
    try:
        hostile.call_tool("echo", {"text": "x"})
    except SchemaValidationError:
        pass
    error = hostile.call_tool_future("echo", {"text": "x"}).exception(LONG)
    assert error is None or isinstance(error, SchemaValidationError), repr(error)
    _override(hostile, "tools/call", None)
    _override(hostile, "tools/list", None)
    hostile.list_tools()
    assert hostile.call_tool("echo", {"text": "ok"}).text == "ok"


PROMPTS = [{"prompts": [{"name": "p", "arguments": 5}]}, {"prompts": [{"name": "p", "arguments": [5]}]},
           {"prompts": [{"name": "p", "arguments": [{"name": ["n"]}]}]}, {"prompts": [{"name": {"n": 1}}]},
           {"prompts": [{"name": "p", "arguments": [{"name": "a", "required": "no"}]}]}, {"prompts": [7]}]
RESOURCES = [{"resources": [{"uri": 5, "name": "r"}]}, {"resources": [{"uri": "u", "name": ["r"], "size": "big"}]},
             {"resources": [{"uri": "u", "name": "r", "mimeType": 3, "annotations": "x"}]}, {"resources": [None]}]
TEMPLATES = [{"resourceTemplates": [{"uriTemplate": ["t"], "name": "t"}]},
             {"resourceTemplates": [{"uriTemplate": "t/{x}", "name": 5, "title": []}]}]
READS = [{"contents": [{"uri": 5}]}, {"contents": [{"uri": "u", "text": 5, "mimeType": []}]},
         {"contents": [{"uri": "u", "blob": 5}]}, {"contents": [{"uri": "u", "blob": "!!"}]}, {"contents": [3]}]
PROMPT_GETS = [{"messages": 5}, {"messages": [{"role": 5, "content": {"type": "text", "text": "t"}}]},
               {"messages": [{"role": "user", "content": 5}]}, {"messages": [], "description": 5},
               {"messages": [{"role": "user", "content": {"type": "text", "text": 5}}]}]
COMPLETIONS = [{"completion": 5}, {"completion": {"values": 5}}, {"completion": {"values": [[1]], "total": "x"}},
               {"completion": {"values": ["a"], "hasMore": "yes", "total": 1.5}}]
CALLS = [{"content": 5}, {"content": [5]}, {"content": [{"type": "image", "data": 5}]},
         {"content": [{"type": "resource_link", "uri": ["u"], "name": 5}]},
         {"content": [{"type": "resource", "resource": {"uri": "u", "text": 5}}]},
         {"content": [{"type": 5}, {"type": "text", "text": "t", "annotations": 5, "_meta": []}], "_meta": 5},
         {"content": [], "isError": "yes"}, 5, None, [], "result"]


def _typed(call: Any) -> Any:
    """Run ``call``: only a ``ProtocolError`` may come out (any other exception fails the test)."""
    try:
        return call()
    except ProtocolError:
        return None


@pytest.mark.parametrize("method,result,call", (
    [("prompts/list", r, lambda c: c.list_prompts()) for r in PROMPTS]
    + [("resources/list", r, lambda c: c.list_resources()) for r in RESOURCES]
    + [("resources/templates/list", r, lambda c: c.list_resource_templates()) for r in TEMPLATES]
    + [("resources/read", r, lambda c: c.read_resource("u")) for r in READS]
    + [("prompts/get", r, lambda c: c.get_prompt("p")) for r in PROMPT_GETS]
    + [("completion/complete", r, lambda c: c.complete("p", "a", "x")) for r in COMPLETIONS]
    + [("tools/call", r, lambda c: c.call_tool("echo", {"text": "x"})) for r in CALLS]))
def test_malformed_results_raise_only_protocol_error(hostile, method, result, call):
    """Every wrong-typed field (a prompt whose `arguments` is a number, and so on) is a
    ProtocolError (required) or dropped (optional), never a TypeError."""
    _override(hostile, method, result)
    value = _typed(lambda: call(hostile))
    items = value if isinstance(value, list) else [value] if value is not None else []
    for item in items:  # tolerated: the declared types hold
        for name in ("name", "uri", "uri_template", "role"):
            assert not hasattr(item, name) or isinstance(getattr(item, name), str)
        for name in ("title", "description", "mime_type", "text"):
            assert getattr(item, name, None) is None or isinstance(getattr(item, name), str)
        for name in ("annotations", "meta"):
            assert getattr(item, name, None) is None or isinstance(getattr(item, name), dict)
        assert getattr(item, "size", None) is None or type(getattr(item, "size")) is int
        for arg in getattr(item, "arguments", []):
            assert isinstance(arg.name, str) and type(arg.required) is bool
        for block in getattr(item, "content", []) or []:
            assert getattr(block, "annotations", None) is None or isinstance(block.annotations, dict)
        if hasattr(item, "values"):
            assert all(isinstance(v, str) for v in item.values) and type(item.has_more) is bool
            assert item.total is None or type(item.total) is int
    _override(hostile, method, None)
    assert hostile.call_tool("echo", {"text": "after"}).text == "after"
    assert _alive("-reader")


def test_a_task_state_with_wrong_typed_fields_keeps_its_declared_types():
    """A task state whose fields have the wrong types keeps its declared types: a `pollInterval`
    that is a string is dropped, never meeting arithmetic in the poll loop (TypeError)."""
    task = Task.from_wire({"taskId": "t", "status": "working", "pollInterval": "soon", "ttl": [1],
                           "statusMessage": 5, "_meta": "m"})
    assert (task.poll_interval, task.ttl, task.status_message, task.meta) == (None, None, None, None)
    assert Task.from_wire({"taskId": "t", "status": "working", "pollInterval": 250.0}).poll_interval == 250
    with pytest.raises(ProtocolError):
        Task.from_wire({"taskId": 5, "status": "working"})


# ---------------------------------------------------------------- Streamable HTTP

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_600 = '{"a":' * 600 + "1" + "}" * 600
ECHO = {"content": [{"type": "text", "text": "fine"}]}


def _ids(value: Any) -> str:
    text = value.decode() if isinstance(value, bytes) else str(value)
    return text if len(text) < 20 else f"deep{len(text)}"


def _raw_sse(*datas: str) -> Reply:
    body = "".join(f"event: message\ndata: {d}\n\n" for d in datas)
    return Reply(200, body.encode(), {"Content-Type": "text/event-stream"})


@pytest.fixture
def scripted(started):
    return lambda handle, **kwargs: started(ScriptedHTTPServer(handle, **kwargs))


@pytest.mark.parametrize("body", [b"null", b"42", b"[]", b'"x"', DEEP.encode(), DEEP_600.encode(), b"[1]"], ids=_ids)
def test_http_a_post_body_that_is_not_a_message_fails_only_its_call(scripted, body):
    """A `null` JSON body fails only its call: it is not taken for end of stream (every later call
    would fail)."""
    def handle(seen, msg):
        if msg.get("params", {}).get("name") == "bad":
            return Reply(200, body, {"Content-Type": "application/json"})
        return ECHO

    server = scripted(handle)
    with Client(HTTPTransport(server.url), timeout=LONG) as client:
        for _ in range(2):  # at once, not at the timeout: the body cannot hold the answer
            with pytest.raises(ProtocolError):
                client.call_tool("bad", {})
            error = client.call_tool_future("bad", {}).exception(LONG)
            assert isinstance(error, ProtocolError), repr(error)
            assert client.call_tool("echo", {}).text == "fine"
        assert _alive("-reader")


@pytest.mark.parametrize("bad", ["null", "7", DEEP, DEEP_600, "[[[]]]", "{}"], ids=_ids)
def test_http_a_bad_event_on_the_post_stream_is_skipped_and_the_answer_still_arrives(scripted, bad):
    """A `null` / deep event on a POST's SSE stream."""
    def handle(seen, msg):
        answer = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": ECHO})
        return _raw_sse(bad, answer) if msg.get("params", {}).get("name") == "bad" else ECHO

    server = scripted(handle)
    with Client(HTTPTransport(server.url), timeout=LONG) as client:
        assert client.call_tool("bad", {}).text == "fine"
        assert client.call_tool_future("bad", {}).result(LONG).text == "fine"
        assert client.call_tool("echo", {}).text == "fine"
        assert _alive("-reader")


@pytest.mark.parametrize("bad", ["null", DEEP, DEEP_600, "5"], ids=_ids)
def test_http_a_bad_event_on_the_get_stream_does_not_kill_the_listener(scripted, bad):
    """A deep event does not kill the GET listener thread: later server messages still arrive."""
    gets: List[int] = []
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    def on_get(seen):
        gets.append(1)
        if len(gets) == 1:
            return _raw_sse(bad, bad)
        return _raw_sse(note) if len(gets) == 2 else Reply(405)

    changed = threading.Event()
    server = scripted(lambda seen, msg: {"tools": []} if msg["method"] == "tools/list" else ECHO, on_get=on_get)
    with Client(HTTPTransport(server.url), timeout=LONG,
                handlers=Handlers(on_notification=tool_changes(changed.set))) as client:
        assert changed.wait(LONG), "the notification after the bad event never arrived"
        assert client.call_tool("echo", {}).text == "fine"
        assert _alive("-reader")


# ---------------------------------------------------------------- legacy HTTP+SSE


class HostileSSEServer:
    """GET /sse: an ``endpoint`` event, then the raw ``data`` strings queued in ``events``; POST
    /messages: 202, and the answer (``answer(msg)``: a list of raw data strings) on the stream."""

    def __init__(self) -> None:
        self.events: "queue.Queue[str]" = queue.Queue()
        self.stopped = threading.Event()
        self.bad: List[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(b"event: endpoint\ndata: /messages\n\n")
                self.wfile.flush()
                while not outer.stopped.is_set():
                    try:
                        data = outer.events.get(timeout=0.05)
                    except queue.Empty:
                        continue
                    self.wfile.write(b"event: message\ndata: " + data.encode() + b"\n\n")
                    self.wfile.flush()

            def do_POST(self) -> None:  # noqa: N802
                msg: Dict[str, Any] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                if "id" not in msg or "method" not in msg:
                    return
                if msg["method"] == "initialize":
                    result: Any = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                                   "serverInfo": {"name": "hostile-sse", "version": "1"}}
                else:
                    result = ECHO
                    for bad in outer.bad:
                        outer.events.put(bad)
                outer.events.put(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/sse"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="test-hostile-sse", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(LONG)


@pytest.mark.parametrize("bad", ["null", "3", DEEP, DEEP_600, "[]"], ids=_ids)
def test_legacy_sse_a_bad_event_is_skipped_and_the_connection_lives(started, bad):
    """A `null` event on the legacy SSE stream is skipped: the connection lives on."""
    server = started(HostileSSEServer())
    with Client(SSETransport(server.url), timeout=LONG) as client:
        server.bad = [bad, bad]
        assert client.call_tool("echo", {}).text == "fine"
        server.bad = []
        assert client.call_tool("echo", {}).text == "fine"
        assert _alive("-reader") and _alive("-sse")
