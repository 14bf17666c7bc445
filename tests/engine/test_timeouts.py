"""Timeouts as arguments: a huge one is accepted and does not stop later timeouts from
firing (the timer thread survives a far deadline); one that ends before the request is even
written (zero) still ends the call; a negative or non-numeric one is an argument error
(``ValueError`` / ``TypeError``, not an ``MCPError``), and the connection stays usable.
"""
from __future__ import annotations

import sys
import threading
import time

import pytest

from conftest import LONG, SHORT, server_script, wait_until
from reaping import in_thread, reaper  # noqa: F401  (fixtures: reaper)
from mcpclient import Client
from mcpclient.errors import MCPError, RequestTimeout
from helpers import Twins


pytestmark = [
    pytest.mark.timeout(30),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc"),
]


MUTE = server_script("answers_only_ping")  # answers initialize and ping only


# ---------------------------------------------------------------- huge and invalid timeouts


@pytest.mark.timeout(20)
def test_a_huge_future_timeout_does_not_stop_later_timeouts(reaper):
    client = reaper.client(Client(MUTE, timeout=LONG).connect())
    try:
        forever = client.request_future("tools/call", {"name": "x"}, timeout=1e10)
    except Exception as exc:  # noqa: BLE001 - e.g. OverflowError from a lock or select timeout
        pytest.fail(f"request_future(timeout=1e10) raised {exc!r}")
    # give the timer thread (if there is one) time to reach its wait on the far deadline
    timers = [t for t in client._session.threads() if t.name.endswith("-timer")]
    assert not wait_until(lambda: any(not t.is_alive() for t in timers), SHORT), \
        "the timer thread died waiting for a timeout=1e10 deadline"
    started = time.monotonic()
    later = client.request_future("tools/call", {"name": "x"}, timeout=0.3)
    finished = threading.Event()
    later.add_done_callback(lambda f: finished.set())
    assert finished.wait(2.0), "a 0.3 s timeout never fired after a future with timeout=1e10 (timer thread dead?)"
    assert time.monotonic() - started < 2.0
    assert isinstance(later.exception(), RequestTimeout), later.exception()
    assert not forever.done()


@pytest.mark.timeout(20)
def test_a_huge_blocking_timeout_is_accepted(reaper):
    client = reaper.client(Client(MUTE, timeout=LONG).connect())
    answered = in_thread(reaper, lambda: client.ping(timeout=1e10), "test-ping")
    assert answered.done.wait(LONG), answered
    assert answered.error is None, f"ping(timeout=1e10) against a working server raised {answered.error!r}"


@pytest.mark.timeout(20)
@pytest.mark.parametrize("timeout", [-1, -0.5, "5", [1]], ids=["minus-1", "minus-half", "str", "list"])
@pytest.mark.parametrize("blocking", [True, False], ids=["ping", "ping_future"])
def test_a_negative_or_non_numeric_timeout_is_an_argument_error(reaper, timeout, blocking):
    client = reaper.client(Client(MUTE, timeout=LONG).connect())
    try:
        client.ping(timeout=timeout) if blocking else Twins(client).ping(timeout=timeout)
    except (ValueError, TypeError):
        pass
    except MCPError as exc:
        pytest.fail(f"timeout={timeout!r} raised {exc!r}, not ValueError/TypeError")
    else:
        pytest.fail(f"timeout={timeout!r} was accepted")
    client.ping(timeout=LONG)  # the connection is fine


@pytest.mark.timeout(20)
def test_a_zero_timeout_ends_the_call_though_it_passed_before_the_request_was_written(reaper):
    client = reaper.client(Client(MUTE, timeout=LONG).connect())
    for _ in range(20):  # (the timer meets some of them before they are sent, some after)
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.request("tools/call", {"name": "x"}, timeout=0)
        future = client.request_future("tools/call", {"name": "x"}, timeout=0)
        assert isinstance(future.exception(timeout=LONG), RequestTimeout)
        assert time.monotonic() - started < LONG / 2
    client.ping(timeout=LONG)  # the connection is fine
