"""HTTP transports: what the user configures reaches every request, once — credentials, a
``requests`` session, the retry policy, the redirect guard — against the scripted servers on
127.0.0.1."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from conftest import LONG
from http_scripted import ScriptedHTTPServer
from mcpclient import Client, ConnectError, HTTPTransport
from mcpclient.policies.retry import Retry
from mcpclient.transports.base import DeliveryFailed

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedHTTPServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedHTTPServer(handle, **kwargs))


def echo(seen: Any, msg: Dict[str, Any]) -> Dict[str, Any]:
    return {"content": [{"type": "text", "text": msg["params"]["arguments"]["text"]}]}


@pytest.mark.parametrize("own_session", [True, False], ids=["fast-path", "users-session"])
def test_a_token_source_is_called_once_per_request(scripted, own_session):
    """A token source is called once per request, not once for ``token()`` (to name a refused
    token) and again for ``headers()``: a vault-backed source must not run twice per request."""
    import requests

    calls: List[int] = []

    def token() -> Optional[str]:
        calls.append(1)
        return f"tok-{len(calls)}"

    server = scripted(echo)
    session = None if own_session else requests.Session()
    try:
        # validate_output="listed": a first call's tools/list would take tokens too
        with Client(HTTPTransport(server.url, auth=token, session=session), timeout=LONG,
                    validate_output="listed") as client:
            before = len(calls)
            assert client.call_tool("echo", {"text": "a"}).text == "a"
            assert len(calls) - before == 1
    finally:
        if session is not None:
            session.close()
    call = server.requests("tools/call")[0]
    assert call.headers["authorization"] == f"Bearer tok-{before + 1}"  # the one token it got


def test_a_request_that_never_reached_the_server_fails_with_connect_error():
    """A queued request's refused connection stays a ``ConnectError`` (nothing reached the server,
    safe to send again): it is not re-wrapped as ``ConnectionClosed`` ("may have arrived")."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now: connecting is refused
    transport = HTTPTransport(f"http://127.0.0.1:{port}/mcp", retry=Retry(total=0))
    transport.start()
    try:
        transport.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).post()  # (a poster thread exchanges it)
        failed = transport.receive()
        assert isinstance(failed, DeliveryFailed) and failed.request_id == 1
        assert type(failed.error) is ConnectError, repr(failed.error)
    finally:
        transport.close()
