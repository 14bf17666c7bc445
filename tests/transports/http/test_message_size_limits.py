"""Memory bounds on HTTP bodies and SSE events: an answer over ``max_message_size`` fails its
call without being buffered, an event over it is skipped (the stream lives on), the limit
defaults to the stdio one, and the event parser never holds more than its limit however the
bytes are chunked. A raw-socket server on 127.0.0.1 sends the 50 MiB bodies.
"""
from __future__ import annotations

import json
import threading
from typing import Any, Dict, List

import pytest

from conftest import LONG
from hostile_http import Conn, Script, TIMEOUT, answer, client_for, hostile, tool_result  # noqa: F401  (fixtures: hostile)
from mcpclient import Client, HTTPTransport, Handlers, Limits
from mcpclient.errors import ProtocolError, RequestTimeout
from mcpclient.policies.retry import Retry


LIMIT = 1 << 20  # the max_message_size these tests set
HUGE = 50 << 20  # what the server sends


def huge_body(kind: str) -> Script:
    """A ``tools/call`` answer of ``HUGE`` bytes, sent from one 1 MiB block (the server itself stays
    small); ``echo`` calls get a normal answer. ``kind``: ``length`` (a JSON body with its
    Content-Length), ``chunked`` (no length given), ``sse`` (one data line of the whole size)."""
    block = b"x" * (1 << 20)

    def script(conn: Conn, message: Dict[str, Any]) -> bool:
        if message["params"]["name"] == "echo":
            return conn.reply(answer(message, tool_result("after")))
        if kind == "length":
            conn.head(length=HUGE)
        elif kind == "error":  # an error page without end (a proxy's): quoted from its first bytes only
            conn.head("text/plain", status="502 Bad Gateway")
        elif kind == "chunked":
            conn.head(chunked=True)
        else:
            conn.head("text/event-stream")
            conn.send(b'data: {"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"' % message["id"])
        for _ in range(HUGE // len(block)):
            if not conn.send(b"%x\r\n%s\r\n" % (len(block), block) if kind == "chunked" else block):
                break
        return False

    return script


@pytest.mark.parametrize("kind", ["length", "chunked", "sse", "error"])
def test_an_answer_over_max_message_size_fails_its_call_and_is_never_buffered(hostile, kind):
    import tracemalloc

    from mcpclient.errors import HTTPError, MessageTooLarge

    server = hostile(huge_body(kind))
    with client_for(server.url, max_message_size=LIMIT) as client:
        tracemalloc.start()
        try:
            with pytest.raises(HTTPError if kind == "error" else MessageTooLarge):
                client.call_tool("huge", {}, timeout=LONG * 3)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 8 * LIMIT, f"{peak / 2**20:.1f} MiB held for a {HUGE >> 20} MiB answer"
        assert issubclass(MessageTooLarge, ProtocolError)
        assert client.call_tool("echo", {}, timeout=LONG).content[0].text == "after"  # the connection lives on


def test_an_event_over_max_message_size_on_the_legacy_stream_is_skipped(started):
    # Legacy HTTP+SSE is bounded too. Its answers all come on the one GET stream: an event over
    # the bound is skipped (its call times out), the stream and later calls live on.
    from sse_scripted import ScriptedSSEServer
    from mcpclient.transports.http.sse import SSETransport

    def handle(msg: Dict[str, Any]) -> Any:
        text = "y" * (2 * LIMIT) if msg["params"]["name"] == "huge" else "after"
        return tool_result(text)

    server = started(ScriptedSSEServer(handle))
    with Client(SSETransport(server.url, max_message_size=LIMIT), validate_output="listed") as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("huge", {}, timeout=TIMEOUT)
        assert client.call_tool("echo", {}, timeout=LONG).content[0].text == "after"


def test_max_message_size_defaults_to_the_stdio_one_and_is_checked():
    from mcpclient.transports.base import DEFAULT_MAX_MESSAGE_SIZE
    from mcpclient.transports.http.sse import SSETransport
    from mcpclient.transports.stdio.transport import StdioTransport

    assert DEFAULT_MAX_MESSAGE_SIZE == 64 << 20
    assert HTTPTransport("http://127.0.0.1:1/mcp").max_message_size == DEFAULT_MAX_MESSAGE_SIZE
    assert SSETransport("http://127.0.0.1:1/sse").max_message_size == DEFAULT_MAX_MESSAGE_SIZE
    assert StdioTransport(["true"]).max_message_size == DEFAULT_MAX_MESSAGE_SIZE
    with pytest.raises(ValueError):
        HTTPTransport("http://127.0.0.1:1/mcp", max_message_size=0)
    with pytest.raises(ValueError):
        Client("http://127.0.0.1:1/mcp", limits=Limits(pages=0))


def test_the_event_parser_holds_no_more_than_its_limit_however_the_bytes_are_chunked():
    # The in-house SSE parser ("SSE data line ... ~900 MB"): an event over the limit is
    # reported once, as soon as it shows, and the events after it are parsed as usual; an
    # over-long comment is dropped silently; id and retry fields a server inflates are ignored.
    import random

    from mcpclient.transports.http._reading import parse_sse

    stream = (b"data: small\n\n"
              b"data: " + b"a" * 5000 + b"\n\n"  # one line over
              b": " + b"c" * 5000 + b"\n"  # a comment over: nobody's loss
              b"data: 1\ndata: " + b"b" * 2100 + b"\ndata: " + b"b" * 2100 + b"\n\n"  # lines that add up over
              b"id: " + b"i" * 2000 + b"\nretry: " + b"9" * 3000 + b"\ndata: last\n\n")
    rng = random.Random(12)
    for _ in range(50):
        cuts = sorted(rng.sample(range(1, len(stream)), rng.randrange(0, 200)))
        pieces = [stream[i:j] for i, j in zip([0] + cuts, cuts + [len(stream)])]
        events = [(e.oversized, e.data, e.id, e.retry) for e in parse_sse(iter(pieces), 4096)]
        assert events == [(False, "small", None, None), (True, None, None, None), (True, None, None, None),
                          (False, "last", None, None)], pieces


def test_an_event_over_max_message_size_on_the_get_stream_is_skipped_and_the_stream_lives_on(hostile):
    # On the Streamable HTTP GET stream an event over the bound is logged and skipped;
    # what the server sends after it still arrives.
    def get_stream(conn: Conn) -> None:
        conn.head("text/event-stream")
        notice = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
        conn.send(b"data: " + json.dumps(dict(notice, params={"level": "info", "data": "y" * 2 * LIMIT})).encode()
                  + b"\n\n")
        conn.send(b"data: " + json.dumps(notice).encode() + b"\n\n")
        conn.hold()

    logged: List[Any] = []
    arrived = threading.Event()

    def on_log(level: Any, logger: Any, data: Any) -> None:
        logged.append(data)
        arrived.set()

    server = hostile(lambda conn, message: conn.reply(answer(message, tool_result())), on_get=get_stream)
    with Client(HTTPTransport(server.url, retry=Retry(total=0), max_message_size=LIMIT), protocol="legacy", validate_output="listed", handlers=Handlers(on_log=on_log)) as client:
        assert arrived.wait(LONG)
        assert logged == ["x"]
        assert client.call_tool("echo", {}).content[0].text == "ok"
