"""The environment a stdio server gets: the allow-list is exact (case-sensitive on POSIX,
function-like values dropped) and, on Windows, matches names whatever their case.
"""
from __future__ import annotations

import os
import sys

import pytest

from mcpclient.transports.stdio import transport as stdio
from mcpclient.transports.stdio.transport import StdioTransport


POSIX = os.name == "posix"
PRINT_ENV = [sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)), flush=True)"]


@pytest.mark.skipif(not POSIX, reason="POSIX names are case-sensitive")
def test_the_env_allow_list_is_case_sensitive_and_drops_function_like_values(monkeypatch):
    """A lowercase ``path`` passed the allow-list, and so did a shellshock-style value."""
    monkeypatch.setenv("path", "/attacker/bin")
    monkeypatch.setenv("home", "/attacker")
    monkeypatch.setenv("TZ", "() { :;}; echo pwned")
    monkeypatch.setenv("LANG", "C.UTF-8")
    transport = StdioTransport(PRINT_ENV, env={"EXPLICIT": "() { given; }"})
    transport.start()
    try:
        env = transport.receive()
    finally:
        transport.close()
    assert "path" not in env and "home" not in env and "TZ" not in env
    assert env["LANG"] == "C.UTF-8" and env["PATH"] == os.environ["PATH"]
    assert env["EXPLICIT"] == "() { given; }"  # what the caller passes in env= is theirs


def test_on_windows_env_names_match_whatever_their_case(monkeypatch):
    """Windows environment names are case-insensitive: ``Path`` is PATH there."""
    monkeypatch.setattr(stdio, "_POSIX", False)
    monkeypatch.setattr(os, "environ", {"Path": r"C:\bin", "SystemRoot": r"C:\Windows", "SECRET": "x",
                                        "TEMP": "() { :;}; echo pwned"})
    env = StdioTransport(["srv"])._child_env()
    assert env == {"Path": r"C:\bin", "SystemRoot": r"C:\Windows"}
