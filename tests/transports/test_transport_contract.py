"""What a client, a tracer and a recording learn of a transport comes through the ``Transport``
interface, whose contract stays narrow (six methods and ``info``): where its server is
(``info.endpoint``), its session (``info.session_id``), the secrets it sends on its own and every
credential it sent since (``info.secrets``)."""
from __future__ import annotations

import inspect
from typing import List

from mcpclient import HTTPTransport, MemoryTransport, StdioTransport
from mcpclient.transports.base import Endpoint, Transport, TransportInfo


def test_the_transport_contract_is_six_methods_and_one_info_value():
    methods = {name for name, member in inspect.getmembers(Transport) if not name.startswith("_")
               and inspect.isfunction(member)}
    values = {name for name, member in inspect.getmembers(Transport) if not name.startswith("_")
              and not inspect.isfunction(member)}
    assert methods == {"start", "send", "receive", "close", "negotiated", "cancel_request"}
    assert len(methods) <= 6
    assert values == {"info"} and isinstance(Transport.__dict__["info"], property)


def test_a_stdio_transport_is_a_pipe_and_names_the_secrets_in_its_command_and_environment():
    transport = StdioTransport(["server", "--token=abcdef123", "--api-key", "kkkkkk456", "--name", "plain"],
                               env={"SERVICE_API_KEY": "zzzzzz789", "HOME_DIR": "/not/secret"})
    info = transport.info
    assert info.endpoint == Endpoint("pipe")
    assert info.session_id is None
    assert {"abcdef123", "kkkkkk456", "zzzzzz789"} <= info.secrets
    assert not {"plain", "/not/secret", "server"} & info.secrets
    assert "abcdef123" not in repr(info) and "zzzzzz789" not in repr(info)


def test_an_http_transport_is_tcp_to_its_host_and_names_its_headers_url_and_fixed_token():
    transport = HTTPTransport("https://user:pw123456@mcp.example:8443/mcp?api_key=qqqqqq777",
                              headers={"X-Api-Key": "hhhhhh888", "X-Tenant": "acme"}, auth="tttttt999")
    assert transport.info.endpoint == Endpoint("tcp", "http", "mcp.example", 8443)
    assert HTTPTransport("http://127.0.0.1/mcp").info.endpoint == Endpoint("tcp", "http", "127.0.0.1", 80)
    assert transport.info.session_id is None  # (no session before start)
    assert {"pw123456", "qqqqqq777", "hhhhhh888", "tttttt999"} <= transport.info.secrets
    assert "acme" not in transport.info.secrets


def test_every_credential_an_http_request_carries_joins_the_secrets_of_its_info():
    issued: List[str] = []

    def token() -> str:  # a new token each time it is asked for (a provider that renews)
        issued.append(f"renewed-token-{len(issued) + 1}")
        return issued[-1]

    transport = HTTPTransport("http://127.0.0.1:9/mcp", auth=token)
    assert transport.auth is not None
    before = transport.info
    sent = []
    for _ in range(2):
        value, headers = transport.auth.request_credentials("POST", transport.url)
        assert headers == {"Authorization": f"Bearer {value}"}
        sent.append(value)
    assert len(set(sent)) == 2 and set(sent) <= transport.info.secrets
    assert not set(sent) & before.secrets  # (a value: the one read before never changes)


def test_an_http_transports_info_names_who_its_requests_act_as_now_without_a_request_sent():
    user = ["alice-token-111"]
    transport = HTTPTransport("http://127.0.0.1:9/mcp", auth=lambda: user[0])
    alice = transport.info.credentials
    assert alice is not None and transport.info.credentials == alice
    user[0] = "bob-token-222"  # (a private cache entry of alice's must not be served to bob)
    assert transport.info.credentials not in (None, alice)
    assert "alice-token-111" not in (transport.info.credentials or "")


def test_a_transport_info_is_a_frozen_value():
    info = TransportInfo("srv", Endpoint("pipe"), "id", secrets={"s3cr3t-value"})
    try:
        info.name = "other"  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("a TransportInfo took a new name")
    assert info.replace(session_id="abc").session_id == "abc" and info.session_id is None
    assert info.replace() == info


def test_a_memory_transport_says_it_is_in_process():
    transport, _ = MemoryTransport.pair()
    assert transport.info.endpoint.kind == "memory" and transport.info.secrets == frozenset()
    assert transport.info.remake is None  # (used once: it cannot be made again)
