"""Interop: the whole handshake-era API against real servers over real pipes.

Runs once per (server, protocol version): the official Python SDK's server (PyPI ``mcp``) and our
bundled ``mcpclient.testing``, both implementing ``tests/servers/CONTRACT.md``, at 2025-11-25 and
2025-06-18.
"""
from __future__ import annotations

import logging
import threading

import pytest

from mcpclient import Client, EmbeddedResource, Handlers, ImageContent, InvalidParams, Prompt, RPCError, TextContent, Timeout, ToolError
from mcpclient.testing import server_command

from conftest import HAVE_OFFICIAL_SDK, LONG, OFFICIAL_SERVER
from helpers import Twins

SERVERS = {"official": OFFICIAL_SERVER, "testing": server_command()}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


HAVE_OFFICIAL = HAVE_OFFICIAL_SDK
needs_official = pytest.mark.skipif(not HAVE_OFFICIAL, reason="the official `mcp` SDK needs Python 3.10+")


@pytest.fixture(params=[pytest.param(("official", "2025-11-25"), marks=needs_official),
                        pytest.param(("official", "2025-06-18"), marks=needs_official),
                        ("testing", "2025-11-25"), ("testing", "2025-06-18")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def server(request):
    return request.param


@pytest.fixture
def client(server):
    name, version = server
    with Client(SERVERS[name], protocol=version, timeout=LONG) as c:
        yield c


def test_handshake_exposes_negotiated_state(client, server):
    name, version = server
    assert client.server.protocol_version == version
    assert client.server.name == {"official": "contract-official", "testing": "mcpclient-testing"}[name]
    assert client.server.instructions
    for capability in ("tools", "resources", "prompts", "logging"):
        assert capability in client.server.capabilities
    assert client.server.capabilities["resources"].get("subscribe") is True
    client.ping()


def test_list_tools_returns_schemas_as_sent(client):
    tools = {t.name: t for t in client.list_tools()}
    assert {"echo", "add", "slow", "picture", "fail", "log"} <= set(tools)
    assert tools["echo"].input_schema["properties"]["text"]["type"] == "string"
    assert tools["add"].output_schema == {"type": "object", "properties": {"sum": {"type": "number"}},
                                          "required": ["sum"]}
    assert tools["echo"].output_schema is None
    assert tools["add"].raw["name"] == "add"


def test_call_tool_text_structured_and_image(client):
    client.list_tools()  # so outputSchemas are known and validated
    assert client.call_tool("echo", {"text": "héllo\nworld"}).text == "héllo\nworld"
    added = client.call_tool("add", {"a": 2, "b": 3.5})
    assert added.structured_content == {"sum": 5.5} and not added.is_error
    picture = client.call_tool("picture")
    images = [c for c in picture.content if isinstance(c, ImageContent)]
    assert len(images) == 1 and images[0].mime_type == "image/png" and images[0].data.startswith(PNG_MAGIC)
    assert picture.structured_content == {"width": 1, "height": 1}
    assert all(c.type in ("text", "image") for c in picture.content)


def test_failing_tool_is_data_unless_asked_to_raise(client):
    result = client.call_tool("fail", {"message": "kaboom"})
    assert result.is_error and "kaboom" in result.text
    with pytest.raises(ToolError, match="kaboom"):
        result.raise_for_error()
    with pytest.raises(ToolError) as info:
        client.call_tool("fail", {"message": "again"}, raise_on_error=True)
    assert info.value.result.is_error


def test_progress_reaches_the_callback_in_order(client):
    seen = []
    done = threading.Event()

    def on_progress(progress, total, message):
        seen.append((progress, total, message))
        if progress == 4:
            done.set()

    result = client.call_tool("slow", {"steps": 4, "delay": 0.01}, on_progress=on_progress)
    assert result.text == "done after 4 steps"
    assert done.wait(LONG)
    assert seen == [(i, 4, f"step {i}") for i in range(1, 5)]


def test_progress_resets_the_timeout(client):
    # 6 steps x 0.15 s = 0.9 s in all, longer than the 0.5 s timeout, but progress keeps it alive.
    result = client.call_tool("slow", {"steps": 6, "delay": 0.15}, timeout=Timeout(0.5, reset_on_progress=True))
    assert result.text == "done after 6 steps"


def test_server_logs_go_to_the_python_logger(client, server, caplog):
    # One logger per server for both its stderr and its log notifications, named after the command.
    name = client.transport.name
    assert name == {"official": "official_server", "testing": "mcpclient_testing"}[server[0]]
    got = threading.Event()

    class Flag(logging.Handler):
        def emit(self, record):
            if "from the server" in record.getMessage():
                got.set()

    # The flag sits on the root logger after caplog's handler, so once it is set caplog has the
    # record too (records are emitted on a notification worker, not on this thread).
    root = logging.getLogger()
    flag = Flag()
    root.addHandler(flag)
    try:
        with caplog.at_level(logging.DEBUG, logger="mcpclient.server"):
            client.set_logging_level("debug")
            assert client.call_tool("log", {"level": "warning", "message": "from the server"}).text == "logged"
            assert got.wait(LONG)
    finally:
        root.removeHandler(flag)
    records = [r for r in caplog.records if "from the server" in r.getMessage()]
    assert records[0].name == f"mcpclient.server.{name}"
    assert records[0].levelno == logging.WARNING and "contract" in records[0].getMessage()


def test_on_log_callback_replaces_the_logger(server):
    name, version = server
    got = []
    done = threading.Event()

    def on_log(level, logger, data):
        got.append((level, logger, data))
        done.set()

    with Client(SERVERS[name], protocol=version, timeout=LONG, handlers=Handlers(on_log=on_log)) as client:
        client.call_tool("log", {"level": "error", "message": "boom"})
        assert done.wait(LONG)
    assert got[0] == ("error", "contract", "boom")


def test_resources_templates_and_reads(client):
    resources = {r.uri: r for r in client.list_resources()}
    assert resources["test://text"].mime_type == "text/plain"
    assert "test://blob" in resources
    templates = client.list_resource_templates()
    assert [t.uri_template for t in templates] == ["test://greeting/{name}"]
    [text] = client.read_resource("test://text")
    assert text.text == "hello, world" and text.blob is None
    [blob] = client.read_resource("test://blob")
    assert blob.blob == b"\x00\x01\x02\xff" and blob.text is None
    [greeting] = client.read_resource("test://greeting/bob")
    assert greeting.text == "Hello, bob!"
    client.subscribe_resource("test://text")
    client.unsubscribe_resource("test://text")


def test_unknown_resource_is_a_server_error(client):
    with pytest.raises(RPCError) as info:
        client.read_resource("test://does-not-exist")
    assert info.value.code in (-32002, -32602) and info.value.method == "resources/read"


def test_prompts_and_completions(client):
    [greet] = [p for p in client.list_prompts() if p.name == "greet"]
    assert [(a.name, a.required) for a in greet.arguments] == [("name", True), ("style", False)]
    rendered = client.get_prompt("greet", {"name": "bob", "style": "formal"})
    assert rendered.description == "Greet someone"
    [message] = rendered.messages
    assert message.role == "user" and isinstance(message.content, TextContent)
    assert message.content.text == "Please greet bob in a formal way."
    assert client.complete(greet, "style", "f").values == ["formal", "friendly", "funny"]
    assert client.complete(Prompt("greet"), "style", "fu").values == ["funny"]
    assert client.complete("test://greeting/{name}", "name", "b").values == ["bob"]


def test_futures_run_concurrently_and_raw_request_works(client):
    futures = [client.call_tool_future("echo", {"text": str(i)}) for i in range(20)]
    assert [f.result(LONG).text for f in futures] == [str(i) for i in range(20)]
    assert [t.name for t in Twins(client).list_tools().result(LONG)][:2] == ["echo", "add"]
    assert Twins(client).read_resource("test://text").result(LONG)[0].text == "hello, world"
    assert client.request("tools/call", {"name": "echo", "arguments": {"text": "raw"}})["content"][0]["text"] == "raw"


def test_unknown_tool_is_an_error_of_some_kind(client, server):
    # The official SDK reports an unknown tool as an isError result; ours as -32602. Both are allowed.
    try:
        result = client.call_tool("no-such-tool")
    except InvalidParams as exc:
        assert exc.method == "tools/call"
    else:
        assert result.is_error


def test_embedded_and_unknown_content_from_the_bundled_server():
    with Client(server_command(), timeout=LONG) as client:
        result = client.call_tool("mixed")
    kinds = [c.type for c in result.content]
    assert kinds == ["text", "image", "audio", "resource_link", "resource", "hologram"]
    embedded = result.content[4]
    assert isinstance(embedded, EmbeddedResource) and embedded.resource.text == "hello, world"
    assert result.content[5].raw == {"type": "hologram", "data": "x"}


def test_pagination_walks_every_page():
    with Client(server_command("--page-size", "2"), timeout=LONG) as client:
        assert len(client.list_tools()) == 9
        assert len(client.list_resources()) == 2
        assert [p.name for p in client.list_prompts()] == ["greet"]

