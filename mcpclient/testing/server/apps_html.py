"""The MCP Apps surface of the test servers (``--apps``; contract ``tests/servers/APPS.md``): the
counter app's tool and resource definitions and its HTML, shared by ``python -m mcpclient.testing
--apps`` and ``tests/servers/official_server.py --apps`` so both serve the same bytes.

The HTML is ~40 lines of vanilla JavaScript speaking the MCP Apps postMessage protocol
(2026-01-26) to ``window.parent``: ``ui/initialize``, then ``ui/notifications/initialized``; it
shows the count of ``ui/notifications/tool-result`` in ``#count``; ``#increment`` calls the
app-only tool ``increment``; ``#forbidden`` calls the model-only tool ``lookup_secret`` (a host
must refuse it) and shows the JSON-RPC error code in ``#error``. ``#status`` says ``ready`` once
initialized. The element ids are part of the contract (the browser test clicks them).
"""
from __future__ import annotations

import json
from typing import Any, Dict, List


__all__ = ["APP_HTML", "APP_MIME_TYPE", "APP_RESOURCE", "APP_TOOLS", "APP_UI_META", "APP_URI", "SECRET", "count_result",
           "declared_apps"]

#: The extension id and the HTML MIME type, as the MCP Apps text gives them (written here, not taken
#: from the client's ``extensions``: the test server reads the spec on its own, and starts without
#: loading the client's engine).
APPS = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"
#: The counter app's UI resource.
APP_URI = "ui://counter/app.html"
#: What ``lookup_secret`` answers (model-only: an app must never get it).
SECRET = "the secret is 42"
#: The resource's ``_meta.ui``: no foreign origins, clipboard-write, a border.
APP_UI_META: Dict[str, Any] = {"csp": {"connectDomains": [], "resourceDomains": []},
                               "permissions": {"clipboardWrite": {}}, "prefersBorder": True}

_NO_ARGS: Dict[str, Any] = {"type": "object", "properties": {}}
_COUNT_SCHEMA: Dict[str, Any] = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}

#: The tools ``--apps`` adds (``tools/list`` entries): visibility omitted, app-only, model-only.
APP_TOOLS: List[Dict[str, Any]] = [
    {"name": "counter", "title": "Counter", "description": "Show the counter app; returns the current count.",
     "inputSchema": _NO_ARGS, "outputSchema": _COUNT_SCHEMA, "_meta": {"ui": {"resourceUri": APP_URI}}},
    {"name": "increment", "title": "Increment", "description": "Add `by` (default 1) to the count (app only).",
     "inputSchema": {"type": "object", "properties": {"by": {"type": "integer", "default": 1}}},
     "outputSchema": _COUNT_SCHEMA, "_meta": {"ui": {"resourceUri": APP_URI, "visibility": ["app"]}}},
    {"name": "lookup_secret", "title": "Lookup secret", "description": "Return a secret (model only).",
     "inputSchema": _NO_ARGS, "_meta": {"ui": {"resourceUri": APP_URI, "visibility": ["model"]}}},
    {"name": "apps_supported", "title": "Apps supported",
     "description": "Whether the client declared MCP Apps with mimeTypes containing text/html;profile=mcp-app.",
     "inputSchema": _NO_ARGS},
]

#: The ``resources/list`` entry ``--apps`` adds.
APP_RESOURCE: Dict[str, Any] = {"uri": APP_URI, "name": "counter-app", "title": "Counter app",
                                "description": "The counter MCP App", "mimeType": APP_MIME_TYPE,
                                "_meta": {"ui": APP_UI_META}}

APP_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>Counter</title></head>
<body>
<p>Count: <span id="count">?</span> <span id="status">connecting</span></p>
<button id="increment">Increment</button> <button id="forbidden">Lookup secret</button>
<p>Error: <span id="error"></span></p>
<script>
(function () {
  "use strict";
  var nextId = 1, pending = {};
  function $(id) { return document.getElementById(id); }
  function send(msg) { msg.jsonrpc = "2.0"; window.parent.postMessage(msg, "*"); }
  function request(method, params) {
    var id = nextId++;
    return new Promise(function (resolve, reject) {
      pending[id] = {resolve: resolve, reject: reject};
      send({id: id, method: method, params: params});
    });
  }
  function showCount(result) {
    var sc = result && result.structuredContent;
    if (sc && typeof sc.count === "number") { $("count").textContent = String(sc.count); }
  }
  function showError(error) { $("error").textContent = String(error && error.code); }
  window.addEventListener("message", function (event) {
    var msg = event.data;
    if (event.source !== window.parent || !msg || msg.jsonrpc !== "2.0") { return; }
    if (msg.method === undefined) {
      var waiter = pending[msg.id];
      delete pending[msg.id];
      if (waiter) { if (msg.error) { waiter.reject(msg.error); } else { waiter.resolve(msg.result); } }
    } else if (msg.method === "ui/notifications/tool-result") { showCount(msg.params);
    } else if (msg.id !== undefined && (msg.method === "ping" || msg.method === "ui/resource-teardown")) {
      send({id: msg.id, result: {}});
    } else if (msg.id !== undefined) { send({id: msg.id, error: {code: -32601, message: "Method not found"}}); }
  });
  $("increment").onclick = function () {
    request("tools/call", {name: "increment", arguments: {by: 1}}).then(showCount, showError);
  };
  $("forbidden").onclick = function () {
    request("tools/call", {name: "lookup_secret", arguments: {}})
      .then(function () { $("error").textContent = "allowed"; }, showError);
  };
  request("ui/initialize", {protocolVersion: "2026-01-26", appInfo: {name: "counter", version: "1.0.0"},
                            appCapabilities: {}}).then(function () {
    send({method: "ui/notifications/initialized", params: {}});
    $("status").textContent = "ready";
  }, function (error) { $("status").textContent = "init failed"; showError(error); });
})();
</script>
</body></html>
"""


def count_result(count: int) -> Dict[str, Any]:
    """The ``CallToolResult`` of ``counter`` and ``increment``: ``structuredContent {count}`` and its JSON as text."""
    data = {"count": count}
    return {"content": [{"type": "text", "text": json.dumps(data)}], "structuredContent": data}


def declared_apps(capabilities: Any) -> bool:
    """Whether client ``capabilities`` declare MCP Apps with ``APP_MIME_TYPE`` among ``mimeTypes``."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    settings = extensions.get(APPS) if isinstance(extensions, dict) else None
    mime_types = settings.get("mimeTypes") if isinstance(settings, dict) else None
    return isinstance(mime_types, list) and APP_MIME_TYPE in mime_types
