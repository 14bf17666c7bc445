"""The pure parts of issue 11: configuration files (``load_config``), pinned tool definitions
(``tool_fingerprint``, ``ToolPins``) and tool search (``ToolIndex``)."""
from __future__ import annotations

import json
import os

import pytest

from mcpclient import (
    HTTPTransport, SSETransport, ServerConfig, StdioTransport, Tool, ToolIndex, ToolPins, load_config,
    tool_fingerprint,
)
from mcpclient.group.search import tokenize

ENV = {"TOKEN": "s3cret-token", "ROOT": "/srv/data"}


# --- config -------------------------------------------------------------------------------------

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


def test_bad_files(tmp_path):
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


# --- pins ---------------------------------------------------------------------------------------

TOOL = {"name": "lookup", "description": "Look a key up.", "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}}}}


def test_fingerprint_is_canonical():
    reordered = {"inputSchema": {"properties": {"key": {"type": "string"}}, "type": "object"},
                 "description": "Look a key up.", "name": "lookup", "_meta": {"ignored": True}}
    assert tool_fingerprint(TOOL) == tool_fingerprint(reordered) == tool_fingerprint(Tool.from_wire(TOOL))
    assert tool_fingerprint(dict(TOOL, description="Look a key up!")) != tool_fingerprint(TOOL)
    assert len(tool_fingerprint(TOOL)) == 64
    with pytest.raises(TypeError):
        tool_fingerprint("lookup")  # type: ignore[arg-type]


def test_pins_check_pin_update_and_atomic_file(tmp_path):
    path = tmp_path / "pins.json"
    pins = ToolPins(path)
    assert [(c.tool, c.kind) for c in pins.check("s", [TOOL])] == [("lookup", "added")]
    pins.pin("s", [TOOL])
    assert pins.check("s", [TOOL]) == [] and pins.pinned("s") == {"lookup": tool_fingerprint(TOOL)}
    assert [p.name for p in tmp_path.iterdir()] == ["pins.json"]  # no temporary file left

    other = {"name": "other", "description": "x"}
    changed = dict(TOOL, description="Look it up.", title="Lookup")
    changes = ToolPins(path).check("s", [changed, other])
    assert [(c.tool, c.kind) for c in changes] == [("lookup", "changed"), ("other", "added")]
    assert "description: 'Look a key up.' -> 'Look it up.'" in changes[0].diff
    assert "title: None -> 'Lookup'" in changes[0].diff
    assert [(c.tool, c.kind) for c in pins.check("s", [])] == [("lookup", "removed")]

    pins.update("s", [other])
    assert set(ToolPins(path).pinned("s")) == {"other"}
    pins.forget("s")
    assert ToolPins(path).pinned("s") == {}
    path.write_text("[]")
    with pytest.raises(ValueError, match="not a tool pins file"):
        ToolPins(path)


# --- search -------------------------------------------------------------------------------------

def _tool(name, description="", **properties):
    return Tool(name, description=description, input_schema={"type": "object", "properties": properties})


def test_tokenize_splits_snake_and_camel_case():
    assert tokenize("createGitHubIssue") == ["create", "git", "hub", "issue"]
    assert tokenize("read_file-v2 HTTPServer") == ["read", "file", "v", "2", "http", "server"]


def test_bm25_ranks_names_descriptions_and_parameters():
    tools = [_tool("gh_create_issue", "Open a new issue in a repository"),
             _tool("fs_read_file", "Read a file from disk", path={"description": "file path"}),
             _tool("web_fetch", "Fetch a URL", url={"description": "the page to download"}),
             _tool("slack_post", "Post a message to a channel")]
    index = ToolIndex(tools)
    assert [t.name for t in index.search("create issue", k=1)] == ["gh_create_issue"]
    assert index.search("download a page")[0].name == "web_fetch"  # parameter descriptions count
    assert [t.name for t in index.search("read file", k=5, always=["slack_post", "nope"])] == ["slack_post", "fs_read_file"]
    assert index.search("zebra") == [] and len(index) == 4
    with pytest.raises(ValueError):
        index.search("x", k=-1)


def test_the_pin_file_is_readable_by_others(tmp_path):
    """Pins are no secret (a team keeps them in its repository): 0644 (tokens stay 0600: test_auth)."""
    import stat

    from mcpclient.group.pins import ToolPins
    from mcpclient.types import Tool

    pins = ToolPins(str(tmp_path / "pins.json"))
    pins.pin("srv", [Tool.from_wire({"name": "echo", "inputSchema": {"type": "object"}})])
    assert stat.S_IMODE(os.stat(tmp_path / "pins.json").st_mode) == 0o644


def test_a_server_configs_repr_leaves_out_what_may_be_a_secret():
    from mcpclient import load_config

    configs = load_config({"mcpServers": {
        "remote": {"url": "https://user:pw@mcp.example/mcp?api_key=SECRET1", "headers": {"X-Key": "SECRET2"}},
        "local": {"command": "npx", "args": ["srv", "--token", "SECRET3"], "env": {"KEY": "SECRET4"}},
    }})
    shown = repr(configs)
    assert "SECRET" not in shown and "pw" not in shown
    assert "mcp.example/mcp" in shown and "npx" in shown
