"""The ``*_future`` twins do what their blocking methods do, in both eras: the 2026 logging
level is set in ``_meta`` without a ``logging/setLevel`` request, against a scripted server and
the official SDK's, and a call's future carries the id of the request it sent.
"""
from __future__ import annotations

import pytest

from conftest import LONG, OFFICIAL_SERVER, require_official_sdk
from helpers import ScriptedServer, Twins
from mcpclient import Client


pytestmark = pytest.mark.timeout(60)


LOG_LEVEL = "io.modelcontextprotocol/logLevel"


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedServer(handle, **kwargs))


def test_set_logging_level_future_in_the_2026_era_sends_no_request_and_sets_the_level(scripted):
    """In the 2026 era the future twin, like the blocking method, sends no ``logging/setLevel``
    (removed in 2026) and changes the level carried in ``_meta``: against a server without that
    method it still completes."""
    # (tools/list answered: a first call lists the tools to learn their outputSchema)
    server = scripted(lambda method, params: {"content": []} if method == "tools/call" else
                      {"tools": []} if method == "tools/list" else None,
                      capabilities={"tools": {}, "logging": {}}, modern=True)
    with Client(server.transport, timeout=LONG) as client:
        assert client.server.protocol_version == "2026-07-28"
        assert Twins(client).set_logging_level("warning").result(timeout=5) is None
        client.call_tool("anything")
        call = server.wait_for(lambda m: m.get("method") == "tools/call")
        assert call["params"]["_meta"][LOG_LEVEL] == "warning"
        client.set_logging_level("error")  # the blocking twin does the same
        client.call_tool("anything")
        calls = [m for m in server.received if m.get("method") == "tools/call"]
        assert calls[-1]["params"]["_meta"][LOG_LEVEL] == "error"
        assert [m for m in server.received if m.get("method") == "logging/setLevel"] == []


def test_set_logging_level_future_works_against_the_official_2026_server():
    """Against the official SDK's 2026 server the future completes (no ``CapabilityError``)."""
    require_official_sdk()
    with Client(OFFICIAL_SERVER, timeout=LONG) as client:
        assert client.server.protocol_version == "2026-07-28"
        assert Twins(client).set_logging_level("warning").result(timeout=LONG) is None
        assert client.call_tool("echo", {"text": "x"}).text == "x"


def test_call_tool_future_has_a_request_id_in_both_eras(scripted):
    """``call_tool_future`` returns a future with a ``request_id`` in the 2026 era as in the
    handshake era."""
    for modern in (False, True):
        server = scripted(lambda method, params: {"content": []}, modern=modern)
        with Client(server.transport, timeout=LONG) as client:
            future = client.call_tool_future("t")
            future.result(timeout=LONG)
            sent = server.wait_for(lambda m: m.get("method") == "tools/call")
            assert future.request_id == sent["id"]
