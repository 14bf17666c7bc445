"""The 2026-07-28 era against the official SDK's dual-era server, over stdio and Streamable HTTP
(SSE and JSON responses): auto mode picks it, and the whole API works the same as in the
handshake era. The same tests against our handshake-only server show the fallback, and what it
costs."""
from __future__ import annotations

import logging
import threading
from typing import Any, Iterator, List

import pytest

from mcpclient import Client, HTTPTransport, Handlers, ImageContent
from mcpclient._client.connection import ERAS
from mcpclient.testing import server_command

from conftest import LONG, OFFICIAL_SERVER, require_official_sdk

require_official_sdk()
from http_servers import official_http_server  # noqa: E402  (needs mcp)
from helpers import Twins, resource_updates


@pytest.fixture(scope="module", params=["stdio", "http-sse", "http-json", "legacy-stdio"])
def target(request) -> Iterator[Any]:
    if request.param == "stdio":
        yield request.param, OFFICIAL_SERVER
    elif request.param == "legacy-stdio":  # mcpclient.testing: a handshake-only server
        yield request.param, server_command()
    else:
        flags = ["--http"] + (["--json-response"] if request.param == "http-json" else [])
        with official_http_server(*flags) as url:
            yield request.param, url


@pytest.fixture(scope="module", params=["stdio", "http-sse", "http-json"])
def official(request) -> Iterator[Any]:
    """The official server only (the tests that use its extra tools)."""
    if request.param == "stdio":
        yield request.param, OFFICIAL_SERVER
    else:
        flags = ["--http"] + (["--json-response"] if request.param == "http-json" else [])
        with official_http_server(*flags) as url:
            yield request.param, url


def connect(target, **options: Any) -> Client:
    mode, where = target
    return Client(HTTPTransport(where) if isinstance(where, str) else where, timeout=LONG, **options)


def test_auto_mode_picks_the_newest_era_the_server_speaks(target):
    mode, _ = target
    with connect(target) as client:
        expected = "2025-11-25" if mode.startswith("legacy") else "2026-07-28"
        assert client.server.protocol_version == expected
        assert client.server.name in ("contract-official", "mcpclient-testing")
        assert client.server.instructions and "tools" in client.server.capabilities


def test_the_whole_api_in_either_era(target):
    with connect(target) as client:
        tools = {t.name: t for t in client.list_tools()}
        assert {"echo", "add", "slow", "picture", "fail", "log"} <= set(tools)
        assert client.call_tool("echo", {"text": "héllo"}).text == "héllo"
        assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"sum": 5}
        picture = client.call_tool("picture")
        assert isinstance(picture.content[0], ImageContent) and picture.content[0].data.startswith(b"\x89PNG")
        assert client.call_tool("fail", {"message": "nope"}).is_error
        assert client.call_tool_future("echo", {"text": "later"}).result(LONG).text == "later"
        assert {"test://text", "test://blob"} <= {r.uri for r in client.list_resources()}
        assert client.list_resource_templates()[0].uri_template == "test://greeting/{name}"
        [blob] = client.read_resource("test://blob")
        assert blob.blob == b"\x00\x01\x02\xff"
        assert Twins(client).read_resource("test://greeting/bob").result(LONG)[0].text == "Hello, bob!"
        assert "greet" in [p.name for p in client.list_prompts()]
        assert client.get_prompt("greet", {"name": "x"}).messages[0].content.text == "Please greet x in a friendly way."
        assert client.complete({"type": "ref/prompt", "name": "greet"}, "style", "f").values == ["formal", "friendly", "funny"]
        client.ping()


def test_progress_and_log_levels_in_either_era(target):
    if target[0] == "http-json":
        pytest.skip("the SDK sends no notifications with --json-response answers (CONTRACT.md)")
    logs: List[Any] = []
    last = threading.Event()

    def on_log(level, logger, data):
        logs.append(level)
        if data == "the end":
            last.set()

    with connect(target, handlers=Handlers(on_log=on_log)) as client:
        seen: List[Any] = []
        assert client.call_tool("slow", {"steps": 3}, on_progress=lambda *a: seen.append(a)).text == "done after 3 steps"
        assert [s[0] for s in seen] == [1, 2, 3]
        client.set_logging_level("warning")
        for level in ("debug", "info", "warning", "error"):
            client.call_tool("log", {"level": level, "message": level})
        client.call_tool("log", {"level": "critical", "message": "the end"})
        assert last.wait(LONG)
    assert logs == ["warning", "error", "critical"]


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_listen_delivers_list_changes_and_resource_updates_in_either_era(official, protocol):
    target = official
    mode, _ = target
    if mode == "http-json" and protocol != "auto":
        pytest.skip("handshake era with --json-response: the SDK sends no notifications")
    events: List[Any] = []
    with connect(target, protocol=protocol) as client:
        with client.listen(tools=True, resource_uris=["test://text"], on_event=events.append) as subscription:
            assert subscription.wait_acknowledged(LONG)
            assert subscription.acknowledged.get("toolsListChanged") is True
            name = f"listened_{mode.replace('-', '_')}_{protocol.replace('-', '_')}"
            client.call_tool("add_tool", {"name": name})
            first = subscription.get(LONG)
            client.call_tool("touch", {"uri": "test://text"})
            second = subscription.get(LONG)
        assert subscription.closed and subscription.get(0) is None
    assert (first.kind, second.kind, second.uri) == ("tools_changed", "resource_updated", "test://text")
    assert events[:2] == [first, second]


def test_subscribe_resource_works_in_either_era(official):
    target = official
    updated = threading.Event()
    with connect(target, handlers=Handlers(on_notification=resource_updates(lambda uri: updated.set()))) as client:
        client.subscribe_resource("test://text")
        client.call_tool("touch", {"uri": "test://text"})
        assert updated.wait(LONG)
        client.unsubscribe_resource("test://text")


class WireRequests(logging.Handler):
    """Counts the requests mcpclient writes (the wire log at DEBUG)."""

    def __init__(self) -> None:
        super().__init__()
        self.methods: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if text.startswith("-> ") and '"id"' in text and '"method": "' in text:
            self.methods.append(text.split('"method": "', 1)[1].split('"', 1)[0])


def test_auto_mode_costs_one_round_trip_on_a_legacy_server_once_per_target():
    argv = server_command("--name", "round-trips")
    wire = logging.getLogger("mcpclient.wire")
    counter = WireRequests()
    old = wire.level
    wire.setLevel(logging.DEBUG)
    wire.addHandler(counter)
    ERAS.forget(Client(argv).transport.info.identity)
    try:
        with Client(argv, timeout=LONG) as client:
            client.list_tools()
        first = list(counter.methods)
        counter.methods.clear()
        with Client(argv, timeout=LONG) as client:  # the verdict is remembered: no probe now
            client.list_tools()
        second = list(counter.methods)
        counter.methods.clear()
        with Client(argv, timeout=LONG, protocol="legacy") as client:
            client.list_tools()
        legacy = list(counter.methods)
    finally:
        wire.removeHandler(counter)
        wire.setLevel(old)
    assert first == ["server/discover", "initialize", "tools/list"]
    assert second == legacy == ["initialize", "tools/list"]


def test_input_required_rounds_run_the_same_handlers_as_server_requests(official):
    """The official server's mrtr_* tools (CONTRACT.md): in the 2026 era they answer
    input_required and mcpclient repeats the call with the answers; in the handshake era they
    send ordinary server->client requests. The user's handlers are the same either way."""
    target = official
    from mcpclient import CreateMessageResult, ElicitationResult, Root

    answers = iter([ElicitationResult.accept({"name": "a"}), ElicitationResult.cancel()])
    with connect(target, handlers=Handlers(sampling=lambda r: CreateMessageResult(f"re: {r.messages[0].text}", "m-1"), elicitation=lambda r: ElicitationResult.accept({"name": "Ada"}), roots=[Root("file:///w", "work")])) as client:
        assert client.call_tool("mrtr_elicit", {"message": "Who?"}).text == 'accept {"name": "Ada"}'
        assert client.call_tool("mrtr_sample", {"prompt": "hi"}).text == "m-1: re: hi"
        assert client.call_tool("mrtr_roots").text == '[["file:///w", "work"]]'
        assert client.call_tool_future("mrtr_elicit", {"message": "again"}).result(LONG).text == 'accept {"name": "Ada"}'
        assert "Ada" in client.get_prompt("mrtr_prompt").messages[0].content.text
        assert "Ada" in client.read_resource("test://mrtr")[0].text
    with connect(target, handlers=Handlers(elicitation=lambda r: next(answers))) as client:
        text = client.call_tool("mrtr_two_rounds").text
    assert text == 'first: accept {"name": "a"}; second: cancel'


def test_a_handshake_era_listen_ends_when_the_client_closes(official):
    client = connect(official, protocol="2025-11-25").connect()
    subscription = client.listen(tools=True)
    ended: List[Any] = []
    reader = threading.Thread(target=lambda: ended.append(list(subscription)))
    reader.start()
    client.close()
    reader.join(LONG)
    assert not reader.is_alive() and ended == [[]] and subscription.closed
