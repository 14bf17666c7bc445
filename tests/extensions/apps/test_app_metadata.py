"""MCP Apps typing: ``Tool.ui``, ``ResourceContents.ui``/``is_app``/``html``,
``Resource.ui``, the CSP a host enforces, and the client's declaration.

Against both ``--apps`` servers of tests/servers/APPS.md over stdio: ours (``python -m
mcpclient.testing --apps``) and the official SDK's (``mcp.server.apps.Apps``), which also checks
our declaration with its own ``client_supports_apps``. The CSP builder and the lenient parsing
(malformed ``_meta.ui`` => ``None``, CSP injection attempts dropped) are checked on wire dicts.
"""
from __future__ import annotations

import base64
import importlib.util
import logging
import subprocess
import sys
from typing import Any, Dict, Iterator

import pytest

from mcpclient import Client
from mcpclient.types._ui import (APP_MIME_TYPE, DEFAULT_CSP, ToolUI, UICsp, UIPermissions, UIResourceMeta, csp_header,
                           is_app_mime)
from mcpclient.errors import RPCError
from mcpclient.testing import server_command
from mcpclient.testing.server.apps_html import APP_HTML, APP_URI
from mcpclient.types import Resource, ResourceContents, Tool

from conftest import LONG, OFFICIAL_SERVER
from helpers import declared_extensions

APPS = "io.modelcontextprotocol/ui"
#: The policy for the counter app (`csp` present, no foreign origins): APPS.md.
COUNTER_CSP = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
               "connect-src 'self'; img-src 'self' data:; font-src 'self'; media-src 'self' data:; frame-src 'none'; "
               "object-src 'none'; base-uri 'self'")
SERVERS = {"testing": server_command("--apps"), "official": OFFICIAL_SERVER + ["--apps"]}
needs_official = pytest.mark.skipif(importlib.util.find_spec("mcp") is None,
                                    reason="the official SDK's server needs Python 3.10+ (the test extra)")


def _declare() -> Dict[str, Any]:
    """``extensions={APPS: {}}`` once the registry exists, else nothing."""
    try:
        from mcpclient.extensions.registry import APPS as apps
    except ImportError:
        return {}
    return {"extensions": {apps: {}}}


@pytest.fixture(scope="module", params=[pytest.param(name, marks=needs_official if name == "official" else ())
                                        for name in sorted(SERVERS)])
def client(request: pytest.FixtureRequest) -> Iterator[Client]:
    """A client of each ``--apps`` server, declaring MCP Apps (official server: the 2026 era)."""
    with Client(SERVERS[request.param], timeout=LONG, **_declare()) as connected:
        connected.call_tool("counter")  # (its worker threads start here, not inside a test: leak guard)
        yield connected


# --- against the servers ----------------------------------------------------------------------------

def test_tool_ui_is_typed(client: Client) -> None:
    tools = {tool.name: tool for tool in client.list_tools()}
    counter, increment, secret = tools["counter"], tools["increment"], tools["lookup_secret"]
    assert counter.ui == ToolUI(APP_URI, ("model", "app")) and counter.model_visible and counter.ui.app_visible
    assert increment.ui == ToolUI(APP_URI, ("app",)) and not increment.model_visible and increment.ui.app_visible
    assert secret.ui == ToolUI(APP_URI, ("model",)) and secret.model_visible and not secret.ui.app_visible
    assert tools["echo"].ui is None and tools["echo"].model_visible


def test_ui_resource_is_typed(client: Client) -> None:
    (contents,) = client.read_resource(APP_URI)
    assert contents.is_app and contents.mime_type == APP_MIME_TYPE and contents.html == APP_HTML
    meta = contents.ui
    assert meta == UIResourceMeta(UICsp(), UIPermissions(clipboard_write=True), None, True)
    assert meta.csp_header() == COUNTER_CSP and meta.allow_attribute() == "clipboard-write"
    listed = {resource.uri: resource for resource in client.list_resources()}
    assert listed[APP_URI].ui == meta and listed[APP_URI].mime_type == APP_MIME_TYPE
    assert all(r.ui is None for uri, r in listed.items() if uri != APP_URI)
    assert client.server.capabilities["extensions"][APPS] == {}


def test_the_flag_only_adds() -> None:
    with Client(server_command(), timeout=LONG) as plain:
        assert not {"counter", "increment", "lookup_secret", "apps_supported"} & {t.name for t in plain.list_tools()}
        assert "extensions" not in plain.server.capabilities
        with pytest.raises(RPCError):
            plain.read_resource(APP_URI)


def test_declaration_reaches_the_server(client: Client) -> None:
    """``Client(extensions={APPS: {}})`` declares ``{"mimeTypes": [APP_MIME_TYPE]}``: the servers'
    ``apps_supported`` (official: the SDK's own ``client_supports_apps``) say yes."""
    if not _declare():
        pytest.skip("no extension registry yet (mcpclient.extensions.registry)")
    assert declared_extensions(client)[APPS] == {"mimeTypes": [APP_MIME_TYPE]}
    assert client.call_tool("apps_supported").text == "true"


@needs_official
def test_declaration_in_the_handshake_era_and_without() -> None:
    """The official SDK reads the declaration from ``initialize`` too; undeclared, the servers say no."""
    if not _declare():
        pytest.skip("no extension registry yet (mcpclient.extensions.registry)")
    with Client(SERVERS["official"], timeout=LONG, protocol="2025-11-25", **_declare()) as declared:
        assert declared.call_tool("apps_supported").text == "true"
    with Client(SERVERS["testing"], timeout=LONG) as plain:
        assert plain.call_tool("apps_supported").text == "false"


# --- parsing and the CSP, on wire dicts ------------------------------------------------------------

def _contents(ui: Any, **extra: Any) -> ResourceContents:
    return ResourceContents.from_wire({"uri": APP_URI, "mimeType": APP_MIME_TYPE, "text": "<p>", "_meta": {"ui": ui},
                                       **extra})


def test_csp_rules() -> None:
    assert UIResourceMeta().csp_header() == DEFAULT_CSP == csp_header(None) == (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; media-src 'self' data:; connect-src 'none';")
    meta = _contents({"csp": {"connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
                              "resourceDomains": ["https://*.cdn.example"],
                              "frameDomains": ["https://maps.example"], "baseUriDomains": ["https://base.example"]},
                      "permissions": {"camera": {}, "microphone": {}, "geolocation": {}, "clipboardWrite": {}},
                      "domain": "a1b2.claudemcpcontent.com"}).ui
    assert meta is not None and meta.domain == "a1b2.claudemcpcontent.com" and meta.prefers_border is None
    r = "https://*.cdn.example"
    assert meta.csp_header() == (
        f"default-src 'none'; script-src 'self' 'unsafe-inline' {r}; style-src 'self' 'unsafe-inline' {r}; "
        f"connect-src 'self' https://api.example.com wss://live.example.com:8443; img-src 'self' data: {r}; "
        f"font-src 'self' {r}; media-src 'self' data: {r}; frame-src https://maps.example; object-src 'none'; "
        "base-uri https://base.example")
    assert meta.allow_attribute() == "camera; microphone; geolocation; clipboard-write"
    vetoed = meta.csp_header(allow=lambda kind, origin: kind != "connectDomains" and "maps" not in origin)
    assert "connect-src 'self';" in vetoed and "frame-src 'none';" in vetoed and r in vetoed


INJECTIONS = ["https://a.example; script-src *", "https://a.example 'unsafe-eval'", "https://a.example'",
              "https://a.example\n", "javascript:alert(1)", "data:", "*", "'unsafe-inline'", "https://a.example/path",
              "https://user@a.example", "ftp://a.example", "https://", "https://a.example:port", " https://a.example"]


def test_csp_injection_attempts_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    kept = ["https://ok.example", "http://localhost:3000", "https://*.ok.example"]
    with caplog.at_level(logging.DEBUG, logger="mcpclient"):
        meta = _contents({"csp": {key: INJECTIONS + kept for key in
                                  ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")}}).ui
    assert meta is not None and meta.csp == UICsp(*(tuple(kept),) * 4)
    assert "no plain origin" in caplog.text
    header = meta.csp_header()
    assert header.count(";") == 9 and "'unsafe-eval'" not in header and "*;" not in header and "\n" not in header
    # A UICsp built by hand gets the same filter in the header.
    assert csp_header(UICsp(connect_domains=tuple(INJECTIONS))) == csp_header(UICsp())


@pytest.mark.parametrize("ui", ["x", [], {"csp": []}, {"csp": {"connectDomains": "https://a.example"}},
                                {"csp": {"resourceDomains": [1]}}, {"permissions": "all"},
                                {"permissions": {"camera": "yes"}}, {"prefersBorder": "yes"}, {"domain": 5}])
def test_malformed_resource_ui_is_none(ui: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="mcpclient"):
        assert _contents(ui).ui is None
        assert Resource.from_wire({"uri": APP_URI, "name": "app", "_meta": {"ui": ui}}).ui is None
    assert "ignored its _meta.ui" in caplog.text


@pytest.mark.parametrize("meta", [{"ui": "x"}, {"ui": {"resourceUri": "https://a.example/app.html"}},
                                  {"ui": {"resourceUri": 5}}, {"ui/resourceUri": "file:///etc/passwd"}])
def test_malformed_tool_ui_is_none(meta: Dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="mcpclient"):
        tool = Tool.from_wire({"name": "t", "_meta": meta})
        assert tool.ui is None and tool.model_visible  # a listing never fails over it
    assert "ignored its _meta.ui" in caplog.text


@pytest.mark.parametrize("meta, visibility", [
    ({"ui": {"resourceUri": "https://a.example/app.html", "visibility": ["app"]}}, ("app",)),
    ({"ui": {"resourceUri": 5, "visibility": ["app"]}}, ("app",)),
    ({"ui": {"resourceUri": "ui://x", "visibility": "app"}}, ()),  # malformed: neither (fail closed)
    ({"ui": {"visibility": ["app", 1]}}, ()),
])
def test_a_bad_part_of_tool_ui_never_widens_visibility(meta: Dict[str, Any], visibility: Any,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    """A bad ``resourceUri`` is dropped, not the well-formed ``visibility`` beside it (an app-only
    tool must not reach the model over its URI; with no visibility either, the ``ui`` is None, as
    above); a malformed ``visibility`` shows the tool to neither the model nor the app (a listing
    still never fails)."""
    with caplog.at_level(logging.DEBUG, logger="mcpclient"):
        tool = Tool.from_wire({"name": "t", "_meta": meta})
        ui = tool.ui
    assert ui is not None and ui.visibility == visibility and tool.model_visible is ("model" in visibility)
    assert ui.resource_uri == ("ui://x" if "ui://x" in str(meta) else None)
    assert "ignored" in caplog.text


def test_tool_ui_forms() -> None:
    def ui(meta: Dict[str, Any]) -> Any:
        return Tool.from_wire({"name": "t", "_meta": meta}).ui

    assert ui({"ui/resourceUri": "ui://old/app.html"}) == ToolUI("ui://old/app.html")  # deprecated flat key
    assert ui({"ui": {"visibility": ["model"]}, "ui/resourceUri": "ui://old"}) == ToolUI("ui://old", ("model",))
    assert ui({"ui": {"resourceUri": "ui://new"}, "ui/resourceUri": "ui://old"}) == ToolUI("ui://new")
    assert ui({"ui": {}}) == ToolUI() and ui({"ui": {"visibility": []}}).model_visible is False
    assert ui({"other": 1}) is None and Tool.from_wire({"name": "t"}).ui is None


@pytest.mark.parametrize("mime, app", [(APP_MIME_TYPE, True), ("TEXT/HTML;PROFILE=MCP-APP", True),
                                       ('text/html; charset=utf-8; profile="mcp-app"', True),
                                       ("text/html", False), ("text/plain;profile=mcp-app", False),
                                       ("text/html;profile=mcp-app-x", False), (None, False)])
def test_is_app_mime(mime: Any, app: bool) -> None:
    assert is_app_mime(mime) is app
    raw: Dict[str, Any] = {"uri": APP_URI, "text": ""}
    if mime is not None:
        raw["mimeType"] = mime
    assert ResourceContents.from_wire(raw).is_app is app


def test_html_from_text_or_blob() -> None:
    def blob(data: bytes) -> ResourceContents:
        return ResourceContents.from_wire({"uri": APP_URI, "mimeType": APP_MIME_TYPE,
                                           "blob": base64.b64encode(data).decode()})

    assert blob("<p>héllo</p>".encode()).html == "<p>héllo</p>"
    assert blob(b"\xff\xfe<p>").html is None
    assert _contents({}).html == "<p>" and ResourceContents.from_wire({"uri": APP_URI}).html is None


def test_the_types_are_frozen_records() -> None:
    import dataclasses

    for value in (ToolUI(), UICsp(), UIPermissions(), UIResourceMeta()):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, dataclasses.fields(value)[0].name, None)
        assert hash(value) == hash(dataclasses.replace(value))


def test_import_mcpclient_does_not_load_ui() -> None:
    code = ("import sys, mcpclient; from mcpclient.types import Tool; Tool.from_wire({'name': 't'});"
            "print('mcpclient.types._ui' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=LONG, check=True)
    assert out.stdout.strip() == "False"
