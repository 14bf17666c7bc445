"""Choosing the protocol: the version check of an ``initialize`` answer, the offer a
``protocol=`` setting makes (unknown settings refused), the capability table, the era settings,
a required 2026-07-28 era that waits for a stdio server slow to answer ``server/discover``, and
an ``initialize`` that is never cancelled (a handshake that times out sends no cancellation).
"""
from __future__ import annotations

import sys

import pytest

from conftest import LONG
from helpers import ScriptedServer
from mcpclient import Client, MemoryTransport, ProtocolError, Timeout
from mcpclient.errors import ConnectError, RequestTimeout
from mcpclient.protocol.spec import era_setting
from mcpclient.protocol.spec import check_server_version, choose_offer, required_capability, server_has
from mcpclient.protocol.stateless import mutual_version


@pytest.mark.parametrize("offered,answered,protocol,ok", [
    ("2025-11-25", "2025-11-25", "auto", True),
    ("2025-11-25", "2024-11-05", "auto", True),
    ("2025-11-25", "1999-01-01", "auto", False),
    ("2025-11-25", None, "auto", False),
    ("2025-06-18", "2025-06-18", "2025-06-18", True),
    ("2025-06-18", "2025-11-25", "2025-06-18", False),
])
def test_the_answered_version_must_be_one_the_offer_allows(offered, answered, protocol, ok):
    if ok:
        assert check_server_version(offered, answered, protocol) == answered
    else:
        with pytest.raises(ProtocolError, match=offered):
            check_server_version(offered, answered, protocol)


def test_choose_offer_rejects_unknown_settings():
    assert choose_offer("auto") == "2025-11-25"
    assert choose_offer("2024-11-05") == "2024-11-05"
    with pytest.raises(ValueError):
        choose_offer("2099-01-01")


def test_server_capabilities_and_the_capability_each_method_requires():
    caps = {"tools": {}, "resources": {"subscribe": False}, "logging": {}}
    assert server_has(caps, "tools") and server_has(caps, "logging")
    assert not server_has(caps, "resources.subscribe") and not server_has(caps, "prompts")
    assert required_capability("completion/complete", "2025-06-18") == "completions"
    assert required_capability("completion/complete", "2024-11-05") is None
    assert required_capability("ping", "2025-11-25") is None


def test_the_mutual_version_and_each_protocol_settings_era():
    assert mutual_version(["2026-07-28", "2025-11-25"]) == "2026-07-28"
    assert mutual_version(["2025-11-25"]) is None and mutual_version("x") is None
    assert era_setting("auto") == ("auto", "2026-07-28", "2025-11-25")
    assert era_setting("legacy") == ("legacy", None, "2025-11-25")
    assert era_setting("2026-07-28") == ("modern", "2026-07-28", None)
    assert era_setting("2025-06-18") == ("legacy", None, "2025-06-18")
    with pytest.raises(ValueError):
        era_setting("2099-01-01")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(30)
def test_a_required_2026_era_waits_for_a_stdio_server_slow_to_answer_discover(started):
    """With ``protocol="2026-07-28"`` the stdio probe's short wait (``probe_timeout``: silence
    means a handshake-era server) does not apply: a server slow to start (the official SDK under
    a loaded CI runner took over 2 s) is waited for; the call does not fail with "the server
    does not speak the 2026-07-28 protocol" after ``probe_timeout``."""
    server = started(ScriptedServer(lambda method, params: None, modern=True, discover_delay=0.5))
    with Client(server.transport, protocol="2026-07-28", timeout=Timeout(LONG, probe=0.05)) as client:
        assert client.server.protocol_version == "2026-07-28"


def test_initialize_is_never_cancelled():
    # A server that never answers initialize: the handshake times out, and no cancellation is sent.
    transport, peer = MemoryTransport.pair()
    try:
        with pytest.raises(ConnectError) as caught:
            Client(transport, timeout=0.2, protocol="legacy").connect()
        assert isinstance(caught.value.__cause__, RequestTimeout)
        assert "in the initialize handshake" in str(caught.value)
        assert "cancelled" not in str(caught.value)
        sent = []
        msg = peer.receive(timeout=LONG)
        while msg is not None:
            sent.append(msg["method"])
            msg = peer.receive(timeout=0.05)
        assert sent == ["initialize"]
    finally:
        peer.close()
