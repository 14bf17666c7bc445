"""The private attributes of ``requests`` and ``http.client`` the HTTP transports rely on (all in
``_reading.private``) are still where it expects them, and urllib3 still makes its connections
from the class the pool names (``_tracking``): these fail when a library moves them."""
from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest
import requests

from mcpclient.transports.http._connections import Connections
from mcpclient.transports.http._inflight import InFlight, Request
from mcpclient.transports.http._reading import body_socket, private


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = b"x" * 100
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if self.path == "/close":
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_socket_of_an_answer_urllib3_let_go_is_reached_through_http_client(url: str) -> None:
    with requests.Session() as http:
        response = http.get(url + "/close", stream=True)
        try:
            assert response.raw.connection.sock is None  # urllib3 let go of a Connection: close answer's socket
            assert isinstance(private(response), socket.socket)  # http.client's raw._fp.fp.raw._sock
            assert body_socket(response) is private(response)
        finally:
            response.close()


def test_a_pooled_answers_socket_is_urllib3s_own(url: str) -> None:
    with requests.Session() as http:
        response = http.get(url + "/keep", stream=True)
        try:
            assert isinstance(body_socket(response), socket.socket)
            assert body_socket(response) is response.raw.connection.sock
        finally:
            response.close()


def test_a_body_read_by_hand_becomes_the_responses_content(url: str) -> None:
    with requests.Session() as http:
        response = http.get(url + "/keep", stream=True)
        try:
            assert private(response, kept=True) is None  # requests has read nothing yet
            body = response.raw.read(decode_content=True)
            private(response, keep=body)
            assert response.content == body and response.text == "x" * 100  # requests' _content
            assert response._content_consumed is True  # so requests may pool the connection
            assert private(response, kept=True) == body
        finally:
            response.close()


class _Noted(Request):
    """A request that notes the sockets its connections say they wait on."""

    __slots__ = ("socks",)

    def __init__(self) -> None:
        super().__init__()
        self.socks: list = []

    def waiting_on(self, sock: Any) -> None:
        self.socks.append(sock)
        super().waiting_on(sock)


def test_a_session_the_transport_made_names_the_socket_each_answer_is_awaited_on(url: str) -> None:
    connections = Connections(None, name="test", connect_timeout=5.0)
    connections.open(url, 2)
    inflight = InFlight("test", lambda: "mcpclient-test-deadline")
    try:
        for _ in range(2):  # a new connection, then the pooled one again
            request = _Noted()
            inflight.add(request)
            response = inflight.send(request, connections.get, url + "/keep", {}, 5.0)
            try:
                assert request.socks == [body_socket(response)] and isinstance(request.socks[0], socket.socket)
                assert request.sock is None and request.response is response  # (its answer took its place)
            finally:
                response.close()
                inflight.remove(request)
    finally:
        inflight.stop(0.0)
        connections.close()
