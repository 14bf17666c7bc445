"""The client makes the transports that replace one (``_client.transport_builder``): from the
recipe the transport carries (``info.remake``), only the way the situation calls for, and never
for a transport that carries none."""
from __future__ import annotations

from mcpclient import HTTPTransport, MemoryTransport, StdioTransport
from mcpclient._client import transport_builder
from mcpclient.errors import ConnectionClosed, HTTPError


def test_a_transport_without_a_recipe_is_used_once():
    transport, _ = MemoryTransport.pair()
    assert transport_builder.relaunch(transport) is None
    assert transport_builder.reopen(transport) is None
    assert transport_builder.fallback(transport, HTTPError(404)) is None


def test_a_stdio_transport_is_relaunched_and_reopened_with_its_command_settings_and_number():
    transport = StdioTransport(["server", "--flag"], env={"KEY": "value"}, cwd="/tmp", terminate_grace=0.5,
                               name="named")
    for fresh in (transport_builder.relaunch(transport), transport_builder.reopen(transport)):
        assert isinstance(fresh, StdioTransport) and fresh is not transport
        assert (fresh.argv, fresh.env, fresh.cwd, fresh.terminate_grace) == (["server", "--flag"], {"KEY": "value"},
                                                                          "/tmp", 0.5)
        assert fresh.info.name == "named" and fresh.info.instance == transport.info.instance
        assert fresh.info.identity == transport.info.identity
    assert transport_builder.fallback(transport, HTTPError(404)) is None  # (no legacy stdio transport)


def test_an_http_transport_is_reopened_never_relaunched_and_falls_back_only_after_a_legacy_refusal():
    transport = HTTPTransport("http://127.0.0.1:9/mcp", headers={"X-Key": "k"}, sse_fallback=True)
    fresh = transport_builder.reopen(transport)
    assert isinstance(fresh, HTTPTransport) and fresh.url == transport.url and fresh.headers == {"X-Key": "k"}
    assert fresh.info.instance == transport.info.instance
    assert transport_builder.relaunch(transport) is None
    # The server refused no setup POST here: neither a refusal's status nor another error is enough.
    assert transport_builder.fallback(transport, HTTPError(404)) is None
    assert transport_builder.fallback(transport, HTTPError(500)) is None
    assert transport_builder.fallback(transport, ConnectionClosed("gone")) is None
