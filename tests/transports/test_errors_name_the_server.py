"""Every transport error says which server it is about: the host and port of an HTTP server (never
its credentials), the command of a stdio one."""
from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from conftest import LONG
from mcpclient import AuthError, Client, ConnectError, Timeout
from mcpclient.transports import HTTPTransport, SSETransport

from recording_http import Recorder, servers  # noqa: F401  (servers: a fixture)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("make", [HTTPTransport, SSETransport], ids=["streamable", "sse"])
def test_a_refused_connection_names_the_host_and_port_and_what_the_os_said(make) -> None:
    port = closed_port()
    with pytest.raises(ConnectError) as caught:
        Client(make(f"http://user:hunter2@127.0.0.1:{port}/mcp?key=sekrit"), timeout=LONG).connect()
    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message and "Connection refused" in message
    assert "hunter2" not in message and "sekrit" not in message and "user" not in message


@pytest.mark.parametrize("make", [HTTPTransport, SSETransport], ids=["streamable", "sse"])
def test_a_401_names_the_host_and_port(servers, make) -> None:  # noqa: F811
    server: Recorder = servers(lambda method, path, body: (401, {"Content-Type": "text/plain"}, b"no"))
    port = int(server.base.rsplit(":", 1)[1])
    with pytest.raises((AuthError, ConnectError)) as caught:
        Client(make(f"{server.base}/mcp", headers={"Authorization": "Bearer tok-123"}), timeout=LONG).connect()
    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message and "HTTP 401" in message
    assert "tok-123" not in message


def test_an_ipv6_host_is_bracketed() -> None:
    assert HTTPTransport("http://[::1]:8123/mcp").name == "[::1]:8123"
    assert HTTPTransport("https://example.com/mcp").name == "example.com:443"
    assert HTTPTransport("http://127.0.0.1:1/mcp", name="mine").name == "mine"


def test_a_command_that_cannot_start_is_named() -> None:
    with pytest.raises(ConnectError) as caught:
        Client("definitely-not-a-command-4242 --flag", timeout=LONG).connect()
    assert "definitely-not-a-command-4242" in str(caught.value)


def _connect_error_of(script: Path, source: str) -> str:
    script.write_text(source)
    with pytest.raises(ConnectError) as caught:
        Client([sys.executable, str(script)], timeout=LONG).connect()
    return str(caught.value)


def test_a_server_that_exits_is_named_by_its_script(tmp_path) -> None:
    assert "exits_at_once" in _connect_error_of(tmp_path / "exits_at_once.py", "import sys; sys.exit(3)\n")


def test_a_server_that_fails_to_start_says_why_in_the_message(tmp_path) -> None:
    """The reason is in the server's stderr: the message carries its last lines, for code that
    logs ``str(error)`` only."""
    said = _connect_error_of(tmp_path / "needs_a_module.py", "import no_such_module_for_this_test\n")
    assert "No module named 'no_such_module_for_this_test'" in said


def test_a_server_that_prints_a_banner_and_never_answers_is_quoted_with_what_to_do(tmp_path) -> None:
    script = tmp_path / "banner.py"
    script.write_text("import sys, time\nprint('Welcome to FooServer 1.0 (token=abcdef123456)', flush=True)\n"
                      "time.sleep(60)\n")
    with pytest.raises(ConnectError) as caught:
        Client([sys.executable, str(script), "--token=abcdef123456"], timeout=Timeout(LONG, connect=1.0)).connect()
    message = str(caught.value)
    assert "Welcome to FooServer 1.0" in message and "stderr" in message
    assert "abcdef123456" not in message  # (a secret of its command line, masked)
