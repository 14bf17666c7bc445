"""The MCP Apps host bridge (``mcpclient.extensions.apps.bridge.AppBridge``) driven with the counter app's
messages against the real test server (``python -m mcpclient.testing --apps``, contract
``tests/servers/APPS.md``) over stdio.

What reaches the server is read from the wire: the client's transport is wrapped in a
``RecordingTransport``, whose cassette lists every message sent, so "refused, nothing sent" is
checked on what actually crossed the pipe. The browser side is tests/deploy/test_app_browser.py.
"""
from __future__ import annotations

import json
import logging
import re
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

from mcpclient import Client, Handlers, StdioTransport
from mcpclient.extensions.apps.bridge import APP_PROTOCOL_VERSION, AppBridge, AppView
from mcpclient.errors import ProtocolError, RPCError
from mcpclient.extensions.registry import APPS
from mcpclient.testing import RecordingTransport, server_command
from mcpclient.testing.server.apps_html import APP_HTML, APP_URI

from helpers import ScriptedServer

CSP = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; connect-src 'self'; "
       "img-src 'self' data:; font-src 'self'; media-src 'self' data:; frame-src 'none'; object-src 'none'; "
       "base-uri 'self'")


class Wire:
    """The client of one ``--apps`` server and the cassette of what it sent."""

    def __init__(self, client: Client, cassette: Path) -> None:
        self.client = client
        self.cassette = cassette

    def events(self) -> List[Dict[str, Any]]:
        return [json.loads(line) for line in self.cassette.read_text().splitlines() if line.strip()]

    def sent(self, method: Optional[str] = None) -> List[Dict[str, Any]]:
        """The messages the client sent (``method``: only those), in order."""
        return [e["msg"] for e in self.events()
                if e.get("dir") == "send" and (method is None or e["msg"].get("method") == method)]

    def answer_to(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """The server's message answering ``request`` (as received)."""
        return next(e["msg"] for e in self.events() if e.get("dir") == "recv" and e["msg"].get("id") == request["id"]
                    and "method" not in e["msg"])


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wire]:
    cassette = tmp_path_factory.mktemp("bridge") / "wire.jsonl"
    with Client(RecordingTransport(StdioTransport(server_command("--apps")), cassette), timeout=10,
                extensions={APPS: {}}) as client:
        client.list_tools()  # the listing the bridge's tool checks read
        yield Wire(client, cassette)


def _call(bridge: AppBridge, method: str, params: Any = None, rid: Any = 7) -> Dict[str, Any]:
    message: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    answer = bridge.handle(message)
    assert answer is not None and answer["id"] == rid and answer["jsonrpc"] == "2.0", answer
    return answer


def _error(answer: Dict[str, Any]) -> Any:
    assert "result" not in answer, answer
    return answer["error"]["code"], answer["error"]["message"]


# --- the view -------------------------------------------------------------------------------------

def test_view_is_the_html_with_its_policy(wire: Wire):
    view = AppBridge(wire.client, APP_URI).view()
    assert isinstance(view, AppView)
    assert (view.uri, view.html, view.csp, view.allow, view.sandbox) == (APP_URI, APP_HTML, CSP, "clipboard-write",
                                                                          "allow-scripts")
    assert view.headers == {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                            "Referrer-Policy": "no-referrer"}
    assert view.meta.prefers_border is True and view.initial_messages == []
    meta = ('<meta http-equiv="Content-Security-Policy" content="' + CSP.replace("'", "&#x27;") + '">')
    srcdoc = view.srcdoc()
    assert srcdoc.startswith("<!doctype html>" + meta + '\n<html><head><meta charset="utf-8">')
    assert srcdoc.replace(meta, "", 1) == APP_HTML
    ready = view.sandbox_resource_ready()
    assert ready == {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-resource-ready",
                     "params": {"html": srcdoc, "sandbox": "allow-scripts",
                                "csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [],
                                        "baseUriDomains": []},
                                "permissions": {"clipboardWrite": {}}}}


def test_srcdoc_puts_the_policy_into_documents_without_a_head():
    from mcpclient.types._ui import UIResourceMeta

    bare = AppView("ui://x/y", "<p>hi</p>", UIResourceMeta(), "default-src 'none'", "")
    assert bare.srcdoc().startswith('<meta http-equiv="Content-Security-Policy"')
    html_only = AppView("ui://x/y", "<HTML lang=en><p>hi</p></HTML>", UIResourceMeta(), "a", "")
    assert html_only.srcdoc() == '<meta http-equiv="Content-Security-Policy" content="a"><HTML lang=en><p>hi</p></HTML>'
    sneaky = AppView("ui://x/y", "<head>", UIResourceMeta(), 'x"><script>alert(1)</script>', "")
    assert "<script>" not in sneaky.srcdoc()


@pytest.mark.parametrize("html", [
    "<!doctype html><script>fetch('https://evil.example')</script><head></head>",  # a script before <head>
    "<!-- <head> --><script>1</script><html><head></head></html>",  # <head> in a comment
    "<title><head></title><script>1</script>",  # <head> as text
    "<body><img src=https://evil.example/x></body><head></head>",  # <head> after the body
    "\u00a0<!doctype html><head></head>",  # no doctype: NBSP is text (a body), not whitespace
    "<script>'<html>'</script>",
])
def test_srcdoc_policy_comes_before_anything_the_app_wrote(html: str):
    """A CSP ``<meta>`` binds only inside ``<head>`` and only what the parser meets after it: it
    must be the first element of the document (after a leading doctype), whatever the HTML
    pretends to be its head."""
    from mcpclient.types._ui import UIResourceMeta

    meta = '<meta http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;">'
    doc = AppView("ui://x/y", html, UIResourceMeta(), "default-src 'none'", "").srcdoc()
    assert re.fullmatch(r"(?i)[ \t\n\f\r]*(<!doctype[^>]*>)?", doc[:doc.index(meta)]), doc
    assert doc.replace(meta, "", 1) == html


@pytest.mark.parametrize("content", [
    {"uri": "ui://x/app.html", "mimeType": "text/html", "text": "<p>a plain page</p>"},
    {"uri": "test://x/app.html", "mimeType": "text/html;profile=mcp-app", "text": "<p>not ui://</p>"},
    {"uri": "ui://x/app.html", "mimeType": "text/html;profile=mcp-app", "blob": "/w=="},  # no UTF-8
    {"uri": "ui://x/app.html", "mimeType": "text/html;profile=mcp-app"},
])
def test_view_refuses_what_is_no_app(started, content: Dict[str, Any]):
    server = started(ScriptedServer(lambda method, params: {"contents": [content]}, capabilities={"resources": {}}))
    with Client(server.transport, timeout=10) as client:
        with pytest.raises(ProtocolError, match="no MCP App HTML"):
            AppBridge(client, "ui://x/app.html").view()


def test_view_reads_a_blob_and_applies_allow_domain(started):
    ui = {"csp": {"connectDomains": ["https://api.example.com", "https://evil.example", "https://cdn.example.com"],
                  "resourceDomains": ["https://cdn.example.com"]}, "permissions": {"camera": {}, "microphone": {}}}
    content = {"uri": "ui://x/app.html", "mimeType": "Text/HTML; profile=mcp-app", "blob": "PHA+aGk8L3A+",
               "_meta": {"ui": ui}}
    server = started(ScriptedServer(lambda method, params: {"contents": [content]}, capabilities={"resources": {}}))
    with Client(server.transport, timeout=10) as client:
        def allow(kind: str, origin: str) -> bool:
            return "evil" not in origin and (kind, origin) != ("connectDomains", "https://cdn.example.com")

        bridge = AppBridge(client, "ui://x/app.html", allow_domain=allow)
        view = bridge.view()
        assert view.html == "<p>hi</p>" and view.allow == "camera; microphone"
        assert "connect-src 'self' https://api.example.com;" in view.csp and "evil" not in view.csp
        assert view.sandbox_resource_ready()["params"]["csp"] == {
            "connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"],
            "frameDomains": [], "baseUriDomains": []}
        sandbox = _call(bridge, "ui/initialize", {})["result"]["hostCapabilities"]["sandbox"]
        assert sandbox["permissions"] == {"camera": {}, "microphone": {}}
        assert sandbox["csp"]["connectDomains"] == ["https://api.example.com"]


def test_app_tools_work_again_after_the_server_changed_its_tools(started):
    """``notifications/tools/list_changed`` empties the client's listing: the bridge lists again
    (once) when the listing it relied on is gone, instead of refusing every app call for good;
    an unknown name with a current listing still sends nothing."""
    from conftest import wait_until

    app_tool = {"name": "bump", "inputSchema": {"type": "object"},
                "_meta": {"ui": {"resourceUri": "ui://x/app.html", "visibility": ["app"]}}}

    def handle(method: str, params: Dict[str, Any]) -> Any:
        if method == "tools/list":
            return {"tools": [app_tool]}
        if method == "tools/call":
            return {"content": [{"type": "text", "text": "bumped"}]}
        return {"contents": [{"uri": "ui://x/app.html", "mimeType": "text/html;profile=mcp-app", "text": "<p>"}]}

    server = started(ScriptedServer(handle, capabilities={"tools": {"listChanged": True}, "resources": {}}))
    with Client(server.transport, timeout=10) as client:
        bridge = AppBridge(client, "ui://x/app.html")
        bridge.view()
        assert _call(bridge, "tools/call", {"name": "bump"})["result"]["content"][0]["text"] == "bumped"
        server.notify("notifications/tools/list_changed")
        assert wait_until(lambda: client._known_tool("bump") is None)
        assert _call(bridge, "tools/call", {"name": "bump"})["result"]["content"][0]["text"] == "bumped"
        lists = [m for m in server.received if m.get("method") == "tools/list"]
        assert len(lists) == 2
        assert _error(_call(bridge, "tools/call", {"name": "nope"}))[0] == -32602
        assert [m for m in server.received if m.get("method") == "tools/list"] == lists  # nothing sent
        assert len([m for m in server.received if m.get("method") == "tools/call"]) == 2


def test_the_first_view_lists_the_tools_unless_the_bridge_tool_is_known(tmp_path):
    cassette = tmp_path / "wire.jsonl"
    with Client(RecordingTransport(StdioTransport(server_command("--apps")), cassette), timeout=10) as client:
        fresh = Wire(client, cassette)
        bridge = AppBridge(client, APP_URI)
        bridge.view()
        bridge.view()
        assert len(fresh.sent("tools/list")) == 1
        assert _call(bridge, "tools/call", {"name": "increment"})["result"]["structuredContent"] == {"count": 1}
        AppBridge(client, tool="counter").view()  # its tool is known: no second listing
        assert len(fresh.sent("tools/list")) == 1


def test_a_bridge_that_never_viewed_lists_once_before_refusing(tmp_path):
    """A web back end with several processes: the page's view was made in one, the app's
    ``tools/call`` reaches a bridge in another whose client never listed the tools. It lists once
    (without the listing it would refuse every app call), and still sends no ``tools/call`` for a
    tool it refuses."""
    cassette = tmp_path / "wire.jsonl"
    with Client(RecordingTransport(StdioTransport(server_command("--apps")), cassette), timeout=10) as client:
        fresh = Wire(client, cassette)
        bridge = AppBridge(client, APP_URI)
        assert _call(bridge, "tools/call", {"name": "increment"})["result"]["structuredContent"] == {"count": 1}
        assert _error(_call(bridge, "tools/call", {"name": "lookup_secret"}))[0] == -32602
        assert _error(_call(AppBridge(client, APP_URI), "tools/call", {"name": "nope"}))[0] == -32602
        assert len(fresh.sent("tools/list")) == 2 and len(fresh.sent("tools/call")) == 1  # one listing per bridge


def test_open_runs_the_tool_and_queues_its_input_and_result(wire: Wire):
    calls = len(wire.sent("tools/call"))
    view = AppBridge(wire.client, tool="counter").open()
    assert view.uri == APP_URI and view.html == APP_HTML
    sent = wire.sent("tools/call")[calls:]
    assert [m["params"]["name"] for m in sent] == ["counter"]
    result = wire.answer_to(sent[0])["result"]
    assert view.initial_messages == [
        {"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {}}},
        {"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": result}]
    assert isinstance(result["structuredContent"]["count"], int)


def test_a_bridge_needs_a_ui_resource(wire: Wire):
    with pytest.raises(ValueError, match="resource_uri= .* or tool="):
        AppBridge(wire.client)
    with pytest.raises(ValueError, match="ui:// URI"):
        AppBridge(wire.client, "test://static/hello")
    with pytest.raises(ValueError, match="no UI resource") as caught:
        AppBridge(wire.client, tool="echo").view()
    assert "declare" not in str(caught.value)  # (this client declares MCP Apps)
    with pytest.raises(ValueError, match="'no_such_tool' is not in the server's listing"):  # a typo is not "no UI"
        AppBridge(wire.client, tool="no_such_tool").view()
    with pytest.raises(ValueError, match="tool="):
        AppBridge(wire.client, APP_URI).open()


def test_a_missing_app_tool_names_the_missing_declaration():
    """A server may keep app tools from a client that did not declare MCP Apps: the error says so."""
    with Client(server_command(), timeout=10) as client:  # no --apps, no declaration
        with pytest.raises(ValueError, match=r"'counter' is not in .*does not declare MCP Apps"):
            AppBridge(client, tool="counter").view()


# --- the app's requests ---------------------------------------------------------------------------

def test_ui_initialize_answer(wire: Wire):
    bridge = AppBridge(wire.client, tool="counter", host_context={"theme": "dark"})
    bridge.view()
    answer = _call(bridge, "ui/initialize", {"protocolVersion": "2026-01-26", "appInfo": {"name": "counter",
                                                                                         "version": "1.0.0"},
                                             "appCapabilities": {}})["result"]
    assert answer["protocolVersion"] == APP_PROTOCOL_VERSION == "2026-01-26"
    assert answer["hostInfo"]["name"] == "mcpclient" and isinstance(answer["hostInfo"]["version"], str)
    assert answer["hostCapabilities"] == {
        "serverTools": {}, "serverResources": {}, "logging": {},
        "sandbox": {"permissions": {"clipboardWrite": {}},
                    "csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []}}}
    assert answer["hostContext"]["theme"] == "dark"
    assert answer["hostContext"]["toolInfo"]["tool"]["name"] == "counter"
    assert not bridge.initialized
    assert bridge.handle({"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}) is None
    assert bridge.initialized
    with_links = AppBridge(wire.client, APP_URI, on_open_link=lambda url: True)
    caps = _call(with_links, "ui/initialize", {})["result"]["hostCapabilities"]
    assert caps["openLinks"] == {} and caps["sandbox"] == {} and "toolInfo" not in _call(
        with_links, "ui/initialize", {})["result"]["hostContext"]


def test_tools_call_of_an_app_tool_is_relayed_and_answered_with_the_raw_result(wire: Wire):
    bridge = AppBridge(wire.client, APP_URI)
    before = len(wire.sent("tools/call"))
    answer = _call(bridge, "tools/call", {"name": "increment", "arguments": {"by": 2},
                                          "_meta": {"progressToken": "from-the-app"}}, rid="a-1")
    sent = wire.sent("tools/call")[before:]
    assert len(sent) == 1 and sent[0]["params"]["name"] == "increment"
    assert sent[0]["params"]["arguments"] == {"by": 2}
    assert "from-the-app" not in json.dumps(sent[0])  # the app's _meta is not forwarded
    assert answer == {"jsonrpc": "2.0", "id": "a-1", "result": wire.answer_to(sent[0])["result"]}
    count = answer["result"]["structuredContent"]["count"]
    again = _call(bridge, "tools/call", {"name": "increment"})  # arguments may be left out
    assert again["result"]["structuredContent"] == {"count": count + 1}


@pytest.mark.parametrize("name", ["lookup_secret", "no_such_tool", "echo"])
def test_tools_the_app_may_not_call_are_refused_and_nothing_is_sent(wire: Wire, name: str):
    bridge = AppBridge(wire.client, tool="counter")  # (its tool in the client's listing: that listing is current)
    before = len(wire.sent())
    code, message = _error(_call(bridge, "tools/call", {"name": name, "arguments": {"text": "hi"}}))
    assert (code, message) == (-32602, f"tool {name!r} is not available to this app")
    assert wire.sent()[before:] == []
    assert "secret is" not in json.dumps(wire.events()[-3:])


def test_plain_tools_only_with_allow_plain_tools(wire: Wire):
    bridge = AppBridge(wire.client, APP_URI, allow_plain_tools=True)
    assert _call(bridge, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})["result"]["content"] == [
        {"type": "text", "text": "hi"}]
    assert _error(_call(bridge, "tools/call", {"name": "lookup_secret"}))[0] == -32602  # ui without "app": never


@pytest.mark.parametrize("method", ["resources/list", "tools/list", "prompts/list", "prompts/get",
                                    "sampling/createMessage", "completion/complete", "logging/setLevel",
                                    "ui/whatever", "initialize"])
def test_methods_an_app_may_not_use_are_refused_and_nothing_is_sent(wire: Wire, method: str):
    bridge = AppBridge(wire.client, APP_URI)
    before = len(wire.sent())
    code, _ = _error(_call(bridge, method, {}))
    assert code == -32601
    assert wire.sent()[before:] == []


def test_resources_read_is_relayed_and_server_errors_pass_through(wire: Wire):
    bridge = AppBridge(wire.client, APP_URI)
    answer = _call(bridge, "resources/read", {"uri": APP_URI})["result"]
    assert answer["contents"][0]["text"] == APP_HTML
    with pytest.raises(RPCError) as direct:
        wire.client.read_resource("test://no-such-thing")
    error = _call(bridge, "resources/read", {"uri": "test://no-such-thing"})["error"]
    assert (error["code"], error["message"], error.get("data")) == (direct.value.code, direct.value.message,
                                                                    direct.value.data)
    assert _error(_call(bridge, "resources/read", {"uri": 5}))[0] == -32602


def test_a_timeout_is_an_internal_error_with_a_fixed_message(wire: Wire):
    # A client of its own: the cancellation starts the client's sender thread, which lives as
    # long as the client (the leak guard checks each test's threads).
    with Client(server_command("--apps"), timeout=10) as client:
        client.list_tools()
        bridge = AppBridge(client, APP_URI, allow_plain_tools=True, timeout=0.05)
        assert _error(_call(bridge, "tools/call", {"name": "slow", "arguments": {"steps": 2, "delay": 0.25}})) == (
            -32603, "the MCP server did not answer in time")


def test_host_requests(wire: Wire):
    bridge = AppBridge(wire.client, APP_URI)
    before = len(wire.sent())
    assert _call(bridge, "ping")["result"] == {}
    assert _call(bridge, "ui/request-display-mode", {"mode": "fullscreen"})["result"] == {"mode": "inline"}
    for method, params in [("ui/open-link", {"url": "https://example.com"}),
                           ("ui/message", {"role": "user", "content": {"type": "text", "text": "hi"}}),
                           ("ui/update-model-context", {"content": []})]:
        assert _error(_call(bridge, method, params)) == (-32000, f"{method}: denied")
    assert wire.sent()[before:] == []
    opened: List[str] = []
    messages: List[Dict[str, Any]] = []
    allowing = AppBridge(wire.client, APP_URI, on_open_link=lambda url: opened.append(url) or url.startswith("https:"),
                         on_message=lambda params: messages.append(params) is None)
    assert _call(allowing, "ui/open-link", {"url": "https://example.com"})["result"] == {}
    assert _error(_call(allowing, "ui/open-link", {"url": "javascript:alert(1)"}))[0] == -32000
    assert _error(_call(allowing, "ui/open-link", {"url": 3}))[0] == -32602
    assert _call(allowing, "ui/message", {"role": "user", "content": []})["result"] == {}
    assert opened == ["https://example.com", "javascript:alert(1)"] and messages == [{"role": "user", "content": []}]


# --- malformed messages ---------------------------------------------------------------------------

@pytest.mark.parametrize("body, code", [
    ("{", -32700), (b"\xff\xfe", -32700), ("", -32700), ("[]", -32600), ('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600),
    ("3", -32600), ('{"id": 1, "method": "ping"}', -32600), ('{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
    ('{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600), ('{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600),
    ('{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600), ('{"jsonrpc": "2.0", "id": {}, "method": "ping"}', -32600),
    ('{"jsonrpc": "2.0", "method": 5}', -32600), ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 3}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "increment", "arguments": [1]}}', -32602),
])
def test_malformed_messages(wire: Wire, body: Any, code: int):
    bridge = AppBridge(wire.client, APP_URI)
    before = len(wire.sent())
    answer = json.loads(bridge.handle_json(body))
    assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] == code, answer
    assert answer["id"] == (1 if code == -32602 or '"params": [1]' in str(body) else None)  # a valid id is echoed
    assert wire.sent()[before:] == []


def test_size_limit_responses_and_notifications(wire: Wire, caplog: pytest.LogCaptureFixture):
    bridge = AppBridge(wire.client, APP_URI, max_message_bytes=100)
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 100}})
    assert json.loads(bridge.handle_json(big))["error"]["code"] == -32600
    assert bridge.handle_json('{"jsonrpc": "2.0", "id": 4, "result": {}}') == ""  # a response: nothing to say
    assert bridge.handle_json('{"jsonrpc": "2.0", "method": "ui/notifications/size-changed", '
                              '"params": {"width": 1, "height": 2}}') == ""
    with caplog.at_level(logging.DEBUG, logger="mcpclient.app"):
        assert bridge.handle({"jsonrpc": "2.0", "method": "notifications/message",
                              "params": {"level": "warning", "data": {"password": "hunter2", "note": "hi"}}}) is None
    record = next(r for r in caplog.records if r.name == "mcpclient.app")
    assert record.levelno == logging.WARNING and "hunter2" not in record.getMessage() and "hi" in record.getMessage()
    logged: List[Dict[str, Any]] = []
    AppBridge(wire.client, APP_URI, on_log=logged.append).handle(
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}})
    assert logged == [{"level": "info", "data": "x"}]


def test_a_failing_callback_still_gets_the_app_an_answer(wire: Wire, caplog: pytest.LogCaptureFixture):
    def broken(url: str) -> bool:
        raise RuntimeError("boom")

    bridge = AppBridge(wire.client, APP_URI, on_open_link=broken)
    with caplog.at_level(logging.ERROR, logger="mcpclient.app"):
        answer = json.loads(bridge.handle_json('{"jsonrpc": "2.0", "id": 9, "method": "ui/open-link", '
                                               '"params": {"url": "https://x"}}'))
    assert answer == {"jsonrpc": "2.0", "id": 9, "error": {"code": -32603, "message": "internal error"}}  # the app's id
    logging_fails = AppBridge(wire.client, APP_URI, on_log=lambda params: broken("x"))
    with caplog.at_level(logging.ERROR, logger="mcpclient.app"):  # a notification is never answered
        assert logging_fails.handle_json('{"jsonrpc": "2.0", "method": "notifications/message", "params": {}}') == ""


@pytest.mark.parametrize("body", ["[" * 100_000, '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": '
                                  + "[" * 100_000 + "]" * 100_000 + "}}"], ids=["bare", "in-params"])
def test_deep_nesting_is_a_parse_error_not_an_exception(wire: Wire, body: str):
    bridge = AppBridge(wire.client, APP_URI)
    before = len(wire.sent())
    answer = bridge.handle(body)  # handle itself raises only what a callback raises
    assert answer is not None and answer["error"]["code"] == -32700 and answer["id"] is None
    assert wire.sent()[before:] == []


def test_the_size_limit_counts_bytes_not_characters(wire: Wire):
    bridge = AppBridge(wire.client, APP_URI, max_message_bytes=100)
    wide = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "\u00e9" * 30}}, ensure_ascii=False)
    assert len(wide) < 100 < len(wide.encode("utf-8"))
    assert json.loads(bridge.handle_json(wide))["error"]["code"] == -32600
    assert json.loads(bridge.handle_json(wide.encode("utf-8")))["error"]["code"] == -32600
    assert _call(bridge, "ping")["result"] == {}


def test_one_bridge_serves_many_threads(wire: Wire):
    bridge = AppBridge(wire.client, APP_URI)
    answers: List[Dict[str, Any]] = []
    lock = threading.Lock()

    def app(n: int) -> None:
        answer = bridge.handle({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "increment"}})
        with lock:
            answers.append(answer or {})

    threads = [threading.Thread(target=app, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    counts = sorted(a["result"]["structuredContent"]["count"] for a in answers)
    assert len(counts) == 8 and counts == list(range(counts[0], counts[0] + 8))
