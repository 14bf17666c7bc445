"""The pytest plugin: ``mcp_cassette`` records a session, replays it with the server gone and
refuses a missing cassette as ``--mcp-record`` says; a failed test keeps no recording; no two
tests share a cassette; a client closed after its test leaves no stray recording; the plugin is a
``pytest11`` entry point, and naming it again with ``-p`` or ``pytest_plugins`` is harmless."""
from __future__ import annotations

import configparser
import sys
import textwrap
from pathlib import Path

import pytest

from mcpclient.testing import server_command

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]


INNER_TESTS = textwrap.dedent("""
    import os, pytest
    from mcpclient import Client

    @pytest.mark.parametrize("word", ["a b", "c/d"])
    def test_echo(mcp_cassette, word):
        with Client(mcp_cassette(os.environ["INNER_SERVER"]), protocol="legacy") as client:
            assert client.call_tool("echo", {"text": word}).text == word
        assert mcp_cassette.recording == (os.environ["INNER_EXPECT"] == "record")

    def test_fails_while_recording(mcp_cassette):
        with Client(mcp_cassette(os.environ["INNER_SERVER"]), protocol="legacy") as client:
            client.ping()
        assert os.environ["INNER_EXPECT"] != "record", "a failed test keeps no recording"
""")


def _run(pytester, monkeypatch, server: str, expect: str, *args: str):
    monkeypatch.setenv("INNER_SERVER", server)
    monkeypatch.setenv("INNER_EXPECT", expect)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the installed entry point, if any, too
    return pytester.runpytest("-p", "mcpclient.testing.pytest_plugin", "-p", "no:cacheprovider", *args)


def test_the_pytest_plugin_records_then_replays_then_refuses_a_missing_cassette(pytester, monkeypatch):
    pytester.makepyfile(test_inner=INNER_TESTS)
    real = " ".join(server_command())
    first = _run(pytester, monkeypatch, real, "record")  # default --mcp-record=missing: records
    first.assert_outcomes(passed=2, failed=1)
    where = pytester.path / "cassettes" / "test_inner"
    names = sorted(p.name for p in where.iterdir())  # "[a b]" is not "[a_b]": a hash of the id tells them apart
    assert [n.rsplit("-", 1)[0] for n in names] == ["test_echo_a_b", "test_echo_c_d"] and names[0].endswith(".jsonl")
    # Replay only, with a server command that cannot start: any spawn would fail the tests.
    second = _run(pytester, monkeypatch, "/nonexistent/server", "replay", "--mcp-record=none", "-k", "test_echo")
    second.assert_outcomes(passed=2)
    third = _run(pytester, monkeypatch, "/nonexistent/server", "replay", "--mcp-record=none", "-k", "recording")
    third.assert_outcomes(failed=1)
    third.stdout.fnmatch_lines(["*no cassette*test_fails_while_recording.jsonl*--mcp-record=missing*"])
    pytester.makeini("[pytest]\nmcp_record = all\n")  # the ini option: record everything again
    fourth = _run(pytester, monkeypatch, real, "record", "-k", "test_echo")
    fourth.assert_outcomes(passed=2)


def test_the_plugin_is_declared_as_a_pytest11_entry_point():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    entries = config["options.entry_points"]["pytest11"].split("\n")
    assert "mcpclient.testing.pytest_plugin = mcpclient.testing.pytest_plugin" in [e.strip() for e in entries]


def test_naming_the_plugin_explicitly_too_does_not_register_it_twice(pytester, monkeypatch):
    """CI that disables autoload names the plugin (``-p`` or ``pytest_plugins``); the same suite run
    where the entry point autoloads must not fail with "Plugin already registered under a
    different name" (the entry point is named as the module, which pytest then finds)."""
    from importlib.metadata import entry_points
    found = [e for e in entry_points(group="pytest11") if e.value == "mcpclient.testing.pytest_plugin"] \
        if sys.version_info >= (3, 10) else \
        [e for e in entry_points().get("pytest11", ()) if e.value == "mcpclient.testing.pytest_plugin"]
    if not found:
        pytest.skip("mcpclient is not installed with its entry points (pip install -e .)")
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    pytester.makeconftest("pytest_plugins = ['mcpclient.testing.pytest_plugin']\n")
    pytester.makepyfile(test_twice="def test_fixture(mcp_cassette):\n    assert mcp_cassette.mode == 'none'\n")
    result = pytester.runpytest("-p", "mcpclient.testing.pytest_plugin", "-p", "no:cacheprovider",
                                "--mcp-record=none")
    result.assert_outcomes(passed=1)


COLLIDING_TESTS = textwrap.dedent("""
    import os, pytest
    from mcpclient import Client

    @pytest.mark.parametrize("word", ["a b", "a_b", "a/b"])
    def test_echo(mcp_cassette, word):
        with Client(mcp_cassette(os.environ["INNER_SERVER"]), protocol="legacy") as client:
            assert client.call_tool("echo", {"text": word}).text == word
""")


def test_parametrizations_whose_names_sanitize_alike_get_their_own_cassettes(pytester, monkeypatch):
    """``[a b]``, ``[a_b]`` and ``[a/b]`` all sanitize to ``a_b``: each test still records (and
    then replays) its own cassette, not another test's."""
    pytester.makepyfile(test_inner=COLLIDING_TESTS)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("INNER_SERVER", " ".join(server_command()))
    args = ("-p", "mcpclient.testing.pytest_plugin", "-p", "no:cacheprovider")
    pytester.runpytest(*args).assert_outcomes(passed=3)
    assert len(list((pytester.path / "cassettes" / "test_inner").glob("*.jsonl"))) == 3
    monkeypatch.setenv("INNER_SERVER", "/nonexistent/server")
    pytester.runpytest(*args, "--mcp-record=none").assert_outcomes(passed=3)


OUTLIVING_TESTS = textwrap.dedent("""
    import os
    from mcpclient import Client

    KEPT = []

    def test_keeps_its_client_open(mcp_cassette):
        client = Client(mcp_cassette(os.environ["INNER_SERVER"]), protocol="legacy")
        KEPT.append(client.__enter__())
        assert client.call_tool("echo", {"text": "kept"}).text == "kept"

    def test_closes_it_later():
        for client in KEPT:
            client.close()
""")


def test_a_client_closed_after_its_test_leaves_no_stray_recording(pytester, monkeypatch):
    """A test's client closed only later (by another test, a session fixture): the cassette is
    the one moved in place when the test passed, and no headerless ``.recording`` is left."""
    pytester.makepyfile(test_inner=OUTLIVING_TESTS)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("INNER_SERVER", " ".join(server_command()))
    args = ("-p", "mcpclient.testing.pytest_plugin", "-p", "no:cacheprovider")
    pytester.runpytest(*args).assert_outcomes(passed=2)
    where = pytester.path / "cassettes" / "test_inner"
    assert sorted(p.name for p in where.iterdir()) == ["test_keeps_its_client_open.jsonl"]
    monkeypatch.setenv("INNER_SERVER", "/nonexistent/server")
    pytester.runpytest(*args, "--mcp-record=none").assert_outcomes(passed=2)
