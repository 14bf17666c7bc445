"""``Client(...)`` checks every argument when it is made and starts nothing; its first
``connect()`` starts the server, then builds the rest of the client (the engine loads while the
server boots): whatever fails from there on leaves no process behind.
"""
from __future__ import annotations

import sys

import pytest

from conftest import LONG, TESTING_SERVER, child_pids, wait_until
from mcpclient import Client

BAD_ARGUMENTS = [
    {"max_workers": 0},
    {"max_pages": 0},
    {"validate_output": "sometimes"},
    {"protocol": "2099-01-01"},
    {"timeout": -1},
    {"elicitation_modes": ("telepathy",)},
    {"max_server_text": 0},
    {"sampling_handler": "not callable"},
    {"capabilities": ["not", "a", "dict"]},
]


@pytest.mark.parametrize("arguments", BAD_ARGUMENTS, ids=lambda a: next(iter(a)))
def test_a_bad_argument_fails_at_construction_and_starts_nothing(arguments):
    before = child_pids()
    with pytest.raises((TypeError, ValueError)):
        Client(TESTING_SERVER, **arguments)
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
    """A fault no server can cause (building the client's core fails after the spawn): the
    server the first ``connect()`` launched is stopped before the error reaches the caller."""
    from mcpclient._client import core

    def broken(*args, **kwargs):
        raise RuntimeError("cannot build")

    before = child_pids()
    client = Client([sys.executable, "-m", "mcpclient.testing"])
    monkeypatch.setattr(core.ClientCore, "__init__", broken)
    with pytest.raises(RuntimeError, match="cannot build"):
        client.connect()
    assert wait_until(lambda: child_pids() == before)
