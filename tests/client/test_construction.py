"""``Client(...)`` checks every argument when it is made and starts nothing; its first
``connect()`` starts the server, then builds the rest of the client (the engine loads while the
server boots): whatever fails from there on leaves no process behind.
"""
from __future__ import annotations

import sys

import pytest

from conftest import LONG, TESTING_SERVER, child_pids, wait_until
from mcpclient import Client, Handlers, Limits, Timeout

#: (what is wrong, the arguments (made when the case runs: a bad value fails as it is made), what
#: the error names).
BAD_ARGUMENTS = [
    ("workers", lambda: {"limits": Limits(workers=0)}, "workers"),
    ("pages", lambda: {"limits": Limits(pages=0)}, "pages"),
    ("server_text", lambda: {"limits": Limits(server_text=0)}, "server_text"),
    ("validate_output", lambda: {"validate_output": "sometimes"}, "validate_output"),
    ("protocol", lambda: {"protocol": "2099-01-01"}, "2099-01-01"),
    ("timeout", lambda: {"timeout": -1}, "timeout"),
    ("connect_timeout", lambda: {"timeout": Timeout(5, connect=-1)}, "connect timeout"),
    ("elicitation_modes", lambda: {"handlers": Handlers(elicitation_modes=("telepathy",))}, "elicitation_modes"),
    ("sampling", lambda: {"handlers": Handlers(sampling="not callable")}, "sampling"),
    ("capabilities", lambda: {"capabilities": ["not", "a", "dict"]}, "capabilities"),
    ("limits_type", lambda: {"limits": {"workers": 2}}, "limits must be a Limits"),
    ("handlers_type", lambda: {"handlers": {"sampling": print}}, "handlers must be a Handlers"),
    ("removed_keyword", lambda: {"max_workers": 2}, "max_workers"),
]


@pytest.mark.parametrize("what, arguments, named", BAD_ARGUMENTS, ids=[case[0] for case in BAD_ARGUMENTS])
def test_a_bad_argument_fails_at_construction_naming_it_and_starts_nothing(what, arguments, named):
    before = child_pids()
    with pytest.raises((TypeError, ValueError), match=named):
        Client(TESTING_SERVER, **arguments())
    assert child_pids() == before


def test_a_bad_connect_timeout_starts_nothing():
    before = child_pids()
    client = Client(TESTING_SERVER)
    with pytest.raises(ValueError):
        client.connect(timeout=-1)
    assert child_pids() == before
    assert client.state == "new"  # (nothing started: it can still connect)
    try:
        assert client.connect(timeout=LONG).state == "ready"
    finally:
        client.close()


def test_a_client_that_cannot_be_built_stops_the_server_it_launched(monkeypatch):
    """A fault no server can cause (making the client's connection fails after the spawn): the
    server the first ``connect()`` launched is stopped before the error reaches the caller."""
    from mcpclient._client import connection

    def broken(*args, **kwargs):
        raise RuntimeError("cannot build")

    before = child_pids()
    client = Client([sys.executable, "-m", "mcpclient.testing"])
    monkeypatch.setattr(connection.Connection, "__init__", broken)
    with pytest.raises(RuntimeError, match="cannot build"):
        client.connect()
    assert wait_until(lambda: child_pids() == before)


def test_close_from_a_signal_handler_while_connect_launches_the_server_stops_it():
    """A signal handler that calls ``close()`` runs on the thread inside ``connect()``, here
    just after the server was spawned: it neither deadlocks on the lock the connection is made
    under nor leaves the server running, and ``connect()`` reports the close."""
    from mcpclient import ClientClosedError

    before = child_pids()
    client = Client([sys.executable, "-m", "mcpclient.testing"])
    transport = client.transport
    start = transport.start

    def start_then_interrupted() -> None:
        start()
        assert child_pids() != before  # (the server runs: the handler comes after the spawn)
        client.close()  # what a SIGTERM handler of the application does

    transport.start = start_then_interrupted  # type: ignore[method-assign]
    with pytest.raises(ClientClosedError, match="closed"):
        client.connect()
    assert client.state == "closed"
    assert wait_until(lambda: child_pids() == before)
    with pytest.raises(ClientClosedError):
        client.connect()
