"""Server -> client features against the official SDK's server (tests/servers/CONTRACT.md,
"Server → client extras"), over stdio and Streamable HTTP with SSE and with JSON responses:
sampling, form and URL elicitation, the -32042 error, roots, pings from the server, tools added at
run time, log levels, and resource updates after subscribe."""
from __future__ import annotations

import json
import threading
from typing import Any, Dict, Iterator, List

import pytest

from mcpclient import Client, CreateMessageResult, ElicitationRequest, ElicitationResult, HTTPTransport, Handlers, Root, URLElicitationRequired, accept_defaults

from conftest import LONG, OFFICIAL_SERVER, require_official_sdk

require_official_sdk()
from http_servers import official_http_server  # noqa: E402  (needs mcp)
from helpers import resource_updates

MODES = ["stdio", "http-sse", "http-json"]


@pytest.fixture(scope="module", params=MODES)
def mode_target(request) -> Iterator[Any]:
    if request.param == "stdio":
        yield request.param, OFFICIAL_SERVER
        return
    flags = ["--http"] + (["--json-response"] if request.param == "http-json" else [])
    with official_http_server(*flags) as url:
        yield request.param, url


def connect(mode_target, **options: Any) -> Client:
    """A handshake-era client: there the server sends its requests (2026: tests/protocol/test_stateless_era_interop.py)."""
    mode, target = mode_target
    transport = HTTPTransport(target) if isinstance(target, str) else target
    return Client(transport, timeout=LONG, protocol="2025-11-25", **options)


def test_a_tool_that_samples(mode_target):
    seen: List[Any] = []

    def sample(request):
        seen.append(request)
        return CreateMessageResult(f"echo: {request.messages[0].text}", "test-model")

    with connect(mode_target, handlers=Handlers(sampling=sample)) as client:
        result = client.call_tool("sample", {"prompt": "hello there", "max_tokens": 9})
    assert result.text == "test-model: echo: hello there"
    [request] = seen
    assert (request.max_tokens, request.system_prompt, request.model_hints) == (9, "Answer briefly.", ["claude"])
    assert request.model_preferences["intelligencePriority"] == 0.5


def test_a_tool_that_elicits_a_form(mode_target):
    with connect(mode_target, handlers=Handlers(elicitation=accept_defaults)) as client:
        result = client.call_tool("elicit_form", {"message": "Who are you?"})
    assert result.text == "accept " + json.dumps(
        {"age": 30, "color": "green", "name": "anon", "subscribe": True}, sort_keys=True)

    with connect(mode_target, handlers=Handlers(elicitation=lambda r: ElicitationResult.decline())) as client:
        assert client.call_tool("elicit_form", {"message": "Who?"}).text == "decline"


def test_a_tool_that_elicits_a_url_and_reports_completion(mode_target):
    asked: List[ElicitationRequest] = []

    def open_url(request):
        asked.append(request)
        return ElicitationResult.accept()

    with connect(mode_target, handlers=Handlers(elicitation=open_url, elicitation_modes=("form", "url"))) as client:
        result = client.call_tool("elicit_url", {"url": "https://example.com/login"})
        assert result.text == "url accept"
        [request] = asked
        assert (request.mode, request.url, request.message) == ("url", "https://example.com/login", "Please sign in")
        assert client.wait_for_elicitation(request.elicitation_id, timeout=LONG)


def test_url_elicitation_required_is_a_typed_error(mode_target):
    with connect(mode_target, handlers=Handlers(elicitation=accept_defaults, elicitation_modes=("url",))) as client:
        with pytest.raises(URLElicitationRequired) as info:
            client.call_tool("url_required", {"url": "https://example.com/x"})
    [pending] = info.value.elicitations
    assert (pending.url, pending.elicitation_id, pending.message) == ("https://example.com/x", "e-1", "Sign in first")
    assert info.value.code == -32042


def test_a_tool_that_reads_the_roots(mode_target):
    with connect(mode_target, handlers=Handlers(roots=[Root("file:///tmp/a", "A"), "file:///tmp/b"])) as client:
        assert json.loads(client.call_tool("roots").text) == [["file:///tmp/a", "A"], ["file:///tmp/b", None]]
        client.set_roots(lambda: ["file:///srv"])
        assert json.loads(client.call_tool("roots").text) == [["file:///srv", None]]


def test_the_server_pings_the_client(mode_target):
    with connect(mode_target) as client:
        assert client.call_tool("ping_client").text == "pong"


def test_tools_list_changed_after_a_tool_is_added(mode_target):
    mode = mode_target[0]
    name = f"late_{mode.replace('-', '_')}"
    got: List[List[str]] = []
    changed = threading.Event()

    with connect(mode_target) as client:
        def on_tools(event):  # (the notification thread: a blocking call works there)
            got.append([t.name for t in client.list_tools()])
            if name in got[-1]:
                changed.set()

        client.listen(tools=True, on_event=on_tools)
        assert name not in [t.name for t in client.list_tools()]
        assert client.call_tool("add_tool", {"name": name}).text == "added"
        assert changed.wait(LONG), f"no refreshed tool list with {name}: {got}"
        assert client.call_tool(name).text == f"I am {name}"


def test_log_messages_honour_set_logging_level(mode_target):
    if mode_target[0] == "http-json":
        pytest.skip("the SDK drops log notifications in --json-response mode (CONTRACT.md)")
    levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
    got: List[Dict[str, Any]] = []
    last = threading.Event()

    def on_log(level, logger, data):
        got.append({"level": level, "logger": logger, "data": data})
        if data == "the end":
            last.set()

    with connect(mode_target, handlers=Handlers(on_log=on_log)) as client:
        client.set_logging_level("warning")
        for level in levels:
            client.call_tool("log", {"level": level, "message": f"at {level}"})
        client.call_tool("log", {"level": "emergency", "message": "the end"})
        assert last.wait(LONG)
        client.set_logging_level("debug")
    assert [g["level"] for g in got] == ["warning", "error", "critical", "alert", "emergency", "emergency"]
    assert all(g["logger"] == "contract" for g in got)


def test_resource_updates_after_subscribe(mode_target):
    updated = threading.Event()
    uris: List[str] = []

    def on_updated(uri):
        uris.append(uri)
        updated.set()

    with connect(mode_target, handlers=Handlers(on_notification=resource_updates(on_updated))) as client:
        client.subscribe_resource("test://text")
        assert client.call_tool("touch", {"uri": "test://text"}).text == "touched"
        assert updated.wait(LONG)
    assert uris == ["test://text"]
