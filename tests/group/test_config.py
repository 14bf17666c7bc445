"""Configuration files (``load_config``): the ``mcpServers`` and VS Code forms, variable
expansion, inferred transports, errors that name the server and the key without showing other
values, ``ServerConfig`` as a value whose repr hides what may be secret, and disabled entries.
"""
from __future__ import annotations

import json
import os

import pytest

from conftest import HAVE_OFFICIAL_SDK, TESTING_SERVER
from mcpclient import HTTPTransport, SSETransport, ServerConfig, ServerGroup, StdioTransport, load_config


ENV = {"TOKEN": "s3cret-token", "ROOT": "/srv/data"}


def test_mcp_servers_format_with_expansion_and_inferred_types(tmp_path):
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "fs-server", "${ROOT}", "~/notes"], "env": {"API_KEY": "${env:TOKEN}"},
                  "cwd": "~/work", "alwaysAllow": ["read"]},
        "web": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "timeout": 30},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "fallback": {"command": "srv", "args": ["${MISSING:-default}"], "disabled": True},
    }}))
    servers = load_config(path, environ=ENV)
    assert list(servers) == ["files", "web", "legacy", "fallback"]
    files = servers["files"]
    home = os.path.expanduser("~")
    assert (files.type, files.command, files.args) == ("stdio", "npx", ("-y", "fs-server", "/srv/data", home + "/notes"))
    assert files.env == {"API_KEY": "s3cret-token"} and files.cwd == home + "/work"
    assert files.extra == {"alwaysAllow": ["read"]} and files.enabled
    web = servers["web"]
    assert (web.type, web.timeout, web.headers) == ("http", 30.0, {"Authorization": "Bearer s3cret-token"})
    assert servers["legacy"].type == "sse" and servers["fallback"].args == ("default",)
    assert not servers["fallback"].enabled
    for config in servers.values():
        assert "s3cret" not in repr(config)
    assert isinstance(files.transport(), StdioTransport) and files.transport().env == {"API_KEY": "s3cret-token"}
    assert isinstance(web.transport(), HTTPTransport) and isinstance(servers["legacy"].transport(), SSETransport)


def test_vscode_servers_form_and_a_bare_dict():
    vscode = {"inputs": [], "servers": {"gh": {"type": "http", "url": "https://api.example.com/mcp/"},
                                        "local": {"type": "stdio", "command": "python", "args": ["s.py"]}}}
    servers = load_config(vscode, environ={})
    assert [(s.name, s.type) for s in servers.values()] == [("gh", "http"), ("local", "stdio")]
    assert load_config({"one": {"command": "x"}}, environ={})["one"].command == "x"
    assert ServerConfig.from_dict("w", {"url": "https://a/${P}"}, environ={"P": "mcp"}).url == "https://a/mcp"


@pytest.mark.parametrize("entry, message", [
    ({"command": "srv", "args": "not-a-list"}, "server 'bad': 'args' must be a list"),
    ({"command": "srv", "env": {"K": ["v"]}}, "server 'bad': env['K'] must be a string"),
    ({"args": ["x"]}, "server 'bad': needs a 'command'"),
    ({"type": "http"}, "server 'bad': 'url' is required"),
    ({"type": "websocket", "url": "ws://x"}, "server 'bad': 'type' must be one of"),
    ({"url": "ftp://x"}, "server 'bad': 'url' must be an http"),
    ({"command": "srv", "timeout": -1}, "server 'bad': 'timeout' must be a positive"),
    ({"command": "srv", "enabled": "yes"}, "server 'bad': 'enabled'"),
    ({"command": "srv", "env": {"K": "${input:token}"}}, "server 'bad': env['K'] uses ${input:token}, which only"),
    ({"url": "https://x/${NOPE}"}, "server 'bad': url uses ${NOPE}, but the environment variable NOPE is not set"),
])
def test_invalid_entries_name_the_server_and_the_key(entry, message):
    with pytest.raises(ValueError) as info:
        load_config({"mcpServers": {"bad": entry}}, environ=ENV)
    assert message in str(info.value)


def test_a_missing_variable_in_a_header_does_not_show_other_values():
    with pytest.raises(ValueError) as info:
        load_config({"mcpServers": {"w": {"url": "https://x", "headers": {"A": "${TOKEN}", "B": "${GONE}"}}}}, environ=ENV)
    assert "GONE" in str(info.value) and "s3cret" not in str(info.value)


def test_a_file_that_is_not_json_or_has_no_servers_is_refused(tmp_path):
    path = tmp_path / "c.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_config(str(path))
    path.write_text(json.dumps({"other": 1}))
    with pytest.raises(ValueError, match="no \"mcpServers\""):
        load_config(path)
    with pytest.raises(TypeError):
        load_config(42)  # type: ignore[arg-type]


def test_server_config_is_a_value():
    a = ServerConfig("x", "cmd", ("a",), {"K": "v"})
    assert a == ServerConfig("x", "cmd", ("a",), {"K": "v"}) and hash(a) == hash(ServerConfig("x", "cmd", ("a",)))


def test_a_server_configs_repr_leaves_out_what_may_be_a_secret():
    from mcpclient import load_config

    configs = load_config({"mcpServers": {
        "remote": {"url": "https://user:pw@mcp.example/mcp?api_key=SECRET1", "headers": {"X-Key": "SECRET2"}},
        "local": {"command": "npx", "args": ["srv", "--token", "SECRET3"], "env": {"KEY": "SECRET4"}},
    }})
    shown = repr(configs)
    assert "SECRET" not in shown and "pw" not in shown
    assert "mcp.example/mcp" in shown and "npx" in shown


HAVE_OFFICIAL = HAVE_OFFICIAL_SDK


def test_a_disabled_entry_needs_none_of_its_variables(tmp_path, monkeypatch):
    """Desktop hosts keep servers switched off with ``"disabled": true`` — often because their
    token is not set here. Such an entry must not make the whole file unusable."""
    from mcpclient import load_config

    monkeypatch.delenv("UNSET_DISABLED_ENTRY_TOKEN", raising=False)
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "t": {"command": TESTING_SERVER[0], "args": TESTING_SERVER[1:]},
        "off": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${UNSET_DISABLED_ENTRY_TOKEN}"},
                "disabled": True},
    }}))
    assert load_config(path)["off"].enabled is False
    with ServerGroup(path) as group:
        assert group.status["t"].state == "ready" and group.status["off"].state == "disabled"
    with pytest.raises(ValueError, match="UNSET_DISABLED_ENTRY_TOKEN"):  # enabled, it still names the variable
        load_config({"mcpServers": {"on": {"url": "https://example.com/mcp",
                                           "headers": {"Authorization": "Bearer ${UNSET_DISABLED_ENTRY_TOKEN}"}}}})
