"""A bearer token and an API key a client sends never appear in what a failure leaves behind:
the exception's text and repr, its chained causes, its traceback, or a log record at DEBUG,
whatever failed (a refused or reset connection, 401, 403, a 5xx whose body echoes the request's
headers, a redirect to another origin), over Streamable HTTP and the legacy HTTP+SSE transport."""
from __future__ import annotations

import logging
import socket
import traceback
from typing import Callable, List

import pytest

from conftest import LONG
from http_scripted import DROP, Reply, ScriptedHTTPServer
from mcpclient import Client, HTTPTransport, MCPError, Retry, SSETransport

TOKEN = "canary-token-71c3e0"
API_KEY = "canary-secret-9d52ab"


def _everything_said(error: BaseException, records: List[logging.LogRecord]) -> str:
    said = "".join(traceback.format_exception(type(error), error, error.__traceback__)) + repr(error)
    cause = error.__cause__ or error.__context__
    while cause is not None:
        said += repr(cause) + str(cause)
        cause = cause.__cause__ or cause.__context__
    for record in records:
        said += record.getMessage()
        if record.exc_info:
            said += "".join(traceback.format_exception(*record.exc_info))
    return said


def _echo(seen, msg) -> Reply:
    """A server whose error page quotes the request it got, credentials and all."""
    said = f"{seen.headers.get('authorization')} {seen.headers.get('x-api-key')}"
    return Reply(500, f"internal error for {said}".encode(), {"Content-Type": "text/plain"})


def _forbidden_echo(seen, msg) -> Reply:
    return Reply(403, {"error": "forbidden", "got": seen.headers.get("authorization"), "key": seen.headers.get("x-api-key")})


def _redirect_elsewhere(seen, msg) -> Reply:
    return Reply(307, b"", {"Location": "http://localhost:9/elsewhere"})


SCRIPTS = {"reset": lambda seen, msg: DROP, "500-echo": _echo, "403-echo": _forbidden_echo,
           "redirect": _redirect_elsewhere}


def _client(make: Callable[..., object], url: str) -> Client:
    return Client(make(url, auth=TOKEN, headers={"X-Api-Key": API_KEY}, retry=Retry(total=0)),  # type: ignore[operator]
                  protocol="legacy", timeout=LONG, validate_output="listed")


@pytest.fixture
def debug_records(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog.records


@pytest.mark.parametrize("make", [HTTPTransport, SSETransport], ids=["streamable", "sse"])
def test_a_refused_connection_says_nothing_secret(make, debug_records):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(MCPError) as caught:
        _client(make, f"http://127.0.0.1:{port}/mcp").connect()
    said = _everything_said(caught.value, debug_records)
    assert TOKEN not in said and API_KEY not in said


@pytest.mark.parametrize("fault", sorted(SCRIPTS))
def test_a_failed_call_says_nothing_secret(fault, debug_records):
    server = ScriptedHTTPServer(SCRIPTS[fault])
    try:
        with _client(HTTPTransport, server.url) as client:
            with pytest.raises(MCPError) as caught:
                client.call_tool("echo", {"text": "x"})
        said = _everything_said(caught.value, debug_records)
        assert server.requests("tools/call"), "the call reached the server"
        assert TOKEN not in said and API_KEY not in said, fault
    finally:
        server.stop()


def test_a_refused_token_says_nothing_secret(debug_records):
    server = ScriptedHTTPServer(lambda seen, msg: {}, authorization="Bearer the-right-one")
    try:
        with pytest.raises(MCPError) as caught:
            _client(HTTPTransport, server.url).connect()
        said = _everything_said(caught.value, debug_records)
        assert "401" in str(caught.value)
        assert TOKEN not in said and API_KEY not in said
    finally:
        server.stop()
