"""A header value HTTP cannot carry (a token read from a file with its newline, a CR/LF, a
character outside Latin-1) is refused before anything is sent, with a typed error that names the
header and never its value: not in the message, the repr, the chained causes or the traceback
(http.client and requests would quote it, token and all, into Django error mails and Sentry)."""
from __future__ import annotations

import traceback

import pytest

from conftest import LONG, require_official_sdk
from http_scripted import ScriptedHTTPServer
from mcpclient import AuthError, Client, HTTPTransport, SSETransport

SECRET = "canary-secret-4f2a9c"
BAD_VALUES = [SECRET + "\n", SECRET + "\r\nX-Injected: 1", "\u20ac" + SECRET, SECRET + "\0"]


def _everything_said(error: BaseException) -> str:
    return "".join(traceback.format_exception(type(error), error, error.__traceback__)) + repr(error)


@pytest.fixture
def server():
    scripted = ScriptedHTTPServer(lambda seen, msg: {"tools": []})
    yield scripted
    scripted.stop()


@pytest.mark.parametrize("make", [HTTPTransport, SSETransport], ids=["streamable", "sse"])
@pytest.mark.parametrize("value", BAD_VALUES, ids=["newline", "crlf", "non-latin-1", "nul"])
def test_a_token_that_cannot_be_a_header_value_is_refused_unsent_and_unquoted(server, make, value):
    with pytest.raises(AuthError, match="'Authorization' header cannot be sent") as info:
        Client(make(server.url, auth=value), timeout=LONG).connect()
    assert SECRET not in _everything_said(info.value)
    assert server.seen == []


@pytest.mark.parametrize("make, flag", [(HTTPTransport, "--http"), (SSETransport, "--sse")], ids=["streamable", "sse"])
def test_a_token_source_that_gives_a_bad_value_later_is_refused_the_same_way(make, flag):
    require_official_sdk()
    from http_servers import official_http_server

    spoiled = []
    with official_http_server(flag) as url, Client(make(url, auth=lambda: SECRET + "\n" if spoiled else "good-token"),
                                                   protocol="legacy", timeout=LONG) as client:
        client.list_tools()
        spoiled.append(True)  # (the vault hands out a token read from a file, newline and all)
        with pytest.raises(AuthError) as info:
            client.list_tools()
    assert SECRET not in _everything_said(info.value)


@pytest.mark.parametrize("make", [HTTPTransport, SSETransport], ids=["streamable", "sse"])
@pytest.mark.parametrize("value", BAD_VALUES + [" " + SECRET], ids=["newline", "crlf", "non-latin-1", "nul", "leading-space"])
def test_a_static_header_that_cannot_be_sent_is_refused_when_the_transport_is_made(make, value):
    with pytest.raises(ValueError, match=r"headers\['X-Api-Key'\]") as info:
        make("http://127.0.0.1:9/mcp", headers={"X-Api-Key": value})
    assert SECRET not in _everything_said(info.value)
