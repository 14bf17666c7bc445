"""What a client, a tracer and a recording learn of a transport comes through the ``Transport``
interface: where its server is (``endpoint``), its session (``session_id``), the secrets it
sends on its own (``secrets``) and every credential it sends later (``observe_credentials``)."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from mcpclient import HTTPTransport, MemoryTransport, StdioTransport
from mcpclient.transports.base import Endpoint


def test_a_stdio_transport_is_a_pipe_and_names_the_secrets_in_its_command_and_environment():
    transport = StdioTransport(["server", "--token=abcdef123", "--api-key", "kkkkkk456", "--name", "plain"],
                               env={"SERVICE_API_KEY": "zzzzzz789", "HOME_DIR": "/not/secret"})
    assert transport.endpoint() == Endpoint("pipe")
    assert transport.session_id is None
    assert {"abcdef123", "kkkkkk456", "zzzzzz789"} <= transport.secrets()
    assert not {"plain", "/not/secret", "server"} & transport.secrets()


def test_an_http_transport_is_tcp_to_its_host_and_names_its_headers_url_and_fixed_token():
    transport = HTTPTransport("https://user:pw123456@mcp.example:8443/mcp?api_key=qqqqqq777",
                              headers={"X-Api-Key": "hhhhhh888", "X-Tenant": "acme"}, auth="tttttt999")
    assert transport.endpoint() == Endpoint("tcp", "http", "mcp.example", 8443)
    assert HTTPTransport("http://127.0.0.1/mcp").endpoint() == Endpoint("tcp", "http", "127.0.0.1", 80)
    assert transport.session_id is None  # (no session before start)
    assert {"pw123456", "qqqqqq777", "hhhhhh888", "tttttt999"} <= transport.secrets()
    assert "acme" not in transport.secrets()


def test_an_observer_is_told_every_credential_an_http_request_carries():
    seen: List[Tuple[Optional[str], Dict[str, str]]] = []
    tokens = iter(["first-token-1", "second-token-2"])
    transport = HTTPTransport("http://127.0.0.1:9/mcp", auth=lambda: next(tokens))
    transport.observe_credentials(lambda token, headers: seen.append((token, headers)))
    transport.observe_credentials(lambda token, headers: seen.append(("twice", {})))  # (observed once)
    assert transport.auth is not None
    for _ in range(2):
        transport.auth.request_credentials("POST", transport.url)
    assert seen == [("first-token-1", {"Authorization": "Bearer first-token-1"}),
                    ("second-token-2", {"Authorization": "Bearer second-token-2"})]


def test_a_memory_transport_says_it_is_in_process():
    transport, _ = MemoryTransport.pair()
    assert transport.endpoint().kind == "memory" and transport.secrets() == frozenset()
