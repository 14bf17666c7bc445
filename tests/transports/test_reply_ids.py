"""One rule for which request a reply answers, over every transport (``mcpclient._util.ids``).

A reply answers request 11 when its id is the JSON number 11, written ``11`` or ``11.0``; never
``true`` (Python's ``True == 1``) nor the string ``"11"``. A scripted stdio server and a scripted
Streamable HTTP server write the ids (no real server can be made to send a hostile one).
"""
from __future__ import annotations

import json
import sys
import time
from typing import Any, Dict

import pytest

from conftest import LONG, SERVERS
from http_scripted import Reply, ScriptedHTTPServer
from mcpclient import Client, ProtocolError, RequestTimeout, StdioTransport

HOSTILE = [sys.executable, str(SERVERS / "hostile_stdio.py")]
RESULT = '"result":{"content":[{"type":"text","text":"answered"}]}'


def test_a_reply_whose_id_is_the_same_number_written_as_a_float_answers_the_call_over_stdio():
    with Client(StdioTransport(HOSTILE), timeout=LONG) as client:
        template = '{"jsonrpc":"2.0","id":ID.0,' + RESULT + '}'
        assert client.call_tool("raw_reply", {"template": template}).text == "answered"
        assert client.call_tool_future("raw_reply", {"template": template}).result(LONG).text == "answered"


@pytest.mark.parametrize("wrong", ["true", '"ID"', "ID.5"])
def test_a_reply_whose_id_only_looks_like_the_calls_does_not_answer_it_over_stdio(wrong):
    with Client(StdioTransport(HOSTILE), timeout=LONG) as client:
        client.call_tool("echo", {"text": "first"})  # (request 1 answered: `true` cannot name a pending one)
        template = '{"jsonrpc":"2.0","id":' + wrong + ',' + RESULT + '}'
        with pytest.raises(RequestTimeout):
            client.call_tool("raw_reply", {"template": template}, timeout=0.3)
        assert client.call_tool("echo", {"text": "next"}).text == "next"


def _scripted(id_for: Any) -> ScriptedHTTPServer:
    def handle(seen: Any, msg: Dict[str, Any]) -> Any:
        if msg["method"] == "tools/list":
            return {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        body = json.dumps({"jsonrpc": "2.0", "id": id_for(msg["id"]),
                           "result": {"content": [{"type": "text", "text": "answered"}]}})
        return Reply(200, body.encode())

    return ScriptedHTTPServer(handle)


def test_a_reply_whose_id_is_the_same_number_written_as_a_float_answers_the_call_over_http():
    server = _scripted(float)
    try:
        with Client(server.url, protocol="legacy", timeout=LONG) as client:
            assert client.call_tool("echo", {}).text == "answered"
            assert client.call_tool_future("echo", {}).result(LONG).text == "answered"
    finally:
        server.stop()


@pytest.mark.parametrize("id_for", [lambda rid: True, str, lambda rid: rid + 0.5], ids=["true", "string", "fraction"])
def test_a_reply_whose_id_only_looks_like_the_calls_fails_it_at_once_over_http(id_for):
    """The POST's answer is not the call's response: the call fails then, not at its timeout."""
    server = _scripted(id_for)
    try:
        with Client(server.url, protocol="legacy", timeout=LONG) as client:
            started = time.monotonic()
            with pytest.raises(ProtocolError, match="not its response"):
                client.call_tool("echo", {})
            assert time.monotonic() - started < 2.0
    finally:
        server.stop()
