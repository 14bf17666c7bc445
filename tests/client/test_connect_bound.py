"""``connect(timeout=T)`` is a bound: whatever the server does (a stdio server that never
answers, an HTTP endpoint that accepts and stays silent), ``connect()`` raises ``ConnectError``
within ``T`` and the teardown's margin, names the step its time ran out in, and leaves no
server process or thread of the client behind."""
from __future__ import annotations

import socket
import sys
import threading
import time
from typing import List

import pytest

from conftest import child_pids, wait_until
from mcpclient import Client, ConnectError
from mcpclient._client.connection import TEARDOWN

#: What a busy 2-core machine may add to the bound (scheduling, a process's exit).
SLACK = 0.7
SILENT_STDIO = [sys.executable, "-c", "import time; time.sleep(60)"]


class SilentHTTP:
    """Accepts connections and reads what comes; answers nothing (a hung server)."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/mcp"
        self._socks: List[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, name="test-silent-accept", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.server.accept()
            except OSError:
                return
            self._socks.append(sock)  # (never read from or answered: the client's bytes sit unread)

    def stop(self) -> None:
        try:
            self.server.shutdown(socket.SHUT_RDWR)  # (wakes the accept())
        except OSError:
            pass
        self.server.close()
        for sock in self._socks:
            sock.close()
        self._thread.join(5)


@pytest.fixture
def silent_http():
    server = SilentHTTP()
    yield server
    server.stop()


def _client_threads() -> List[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("mcpclient-"))


def _connect_fails_in_time(client: Client, timeout: float, phase: str) -> None:
    threads_before = _client_threads()
    started = time.monotonic()
    with pytest.raises(ConnectError) as caught:
        client.connect(timeout=timeout)
    took = time.monotonic() - started
    assert took < timeout + TEARDOWN + SLACK, f"connect(timeout={timeout}) took {took:.2f} s"
    assert took >= timeout - 0.05
    message = str(caught.value)
    assert f"ran out of time ({timeout:g} s) in {phase}" in message, message
    # Nothing the connect started outlives it for long: its threads are gone within the margin.
    assert wait_until(lambda: _client_threads() == threads_before, timeout=TEARDOWN + SLACK), _client_threads()


@pytest.mark.parametrize("protocol, phase", [("auto", "the server/discover probe"),
                                             ("legacy", "the initialize handshake"),
                                             ("2026-07-28", "the server/discover probe")])
def test_a_stdio_server_that_never_answers_ends_connect_within_its_timeout(protocol, phase):
    children = child_pids()
    _connect_fails_in_time(Client(SILENT_STDIO, protocol=protocol), 1.0, phase)
    assert wait_until(lambda: child_pids() <= children, timeout=TEARDOWN + SLACK), "the server outlived connect()"


@pytest.mark.parametrize("protocol, phase", [("auto", "the server/discover probe"),
                                             ("legacy", "the initialize handshake")])
def test_an_http_server_that_never_answers_ends_connect_within_its_timeout(silent_http, protocol, phase):
    _connect_fails_in_time(Client(silent_http.url, protocol=protocol), 2.0, phase)


def test_the_clients_own_connect_timeout_is_the_same_bound():
    client = Client(SILENT_STDIO, timeout=1.5)
    started = time.monotonic()
    with pytest.raises(ConnectError, match=r"ran out of time \(1\.5 s\)"):
        client.connect()
    assert time.monotonic() - started < 1.5 + TEARDOWN + SLACK
