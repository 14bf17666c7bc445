"""An MCP App in a Flask page: the counter app of ``python -m mcpclient.testing --apps``, embedded
the way the MCP Apps extension asks a web host to (a sandbox proxy on a second origin).

    python examples/mcp_app_flask.py            # then open http://127.0.0.1:8000/

Two origins, two servers: the **host page** (port 8000) and the **sandbox proxy** (port 8001; a
different port is a different origin). The page frames the proxy (``sandbox="allow-scripts
allow-same-origin"``); the proxy says ``ui/notifications/sandbox-proxy-ready``; the page fetches
``/app/view`` (``AppBridge.open()``: the app's HTML with its CSP ``<meta>``, and the counter
tool's result) and answers ``ui/notifications/sandbox-resource-ready``; the proxy puts the HTML
into an inner ``sandbox="allow-scripts"`` iframe (``srcdoc``) and passes messages both ways. Every
message the app sends reaches the back end as ``POST /app/rpc``, answered by
``bridge.handle_json(body)``: the app can call the app-visible ``increment`` tool, but the
model-only ``lookup_secret`` is refused (``-32602``) without anything sent to the MCP server.
Both pages check ``event.source`` and ``event.origin`` of every message they take.

``Servers(client, host_port=0, proxy_port=0).start()`` runs both on free ports (the browser test,
tests/deploy/test_app_browser.py, does this).
"""
from __future__ import annotations

import json
import threading
from typing import Any, List, Optional

from flask import Flask, Response, abort, request
from werkzeug.serving import make_server

from mcpclient import APPS, Client
from mcpclient.extensions.apps import AppBridge
from mcpclient.testing import server_command

HOST_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>MCP App host</title>
<style>iframe { width: 100%; height: 220px; border: 1px solid #888; }</style></head>
<body>
<h1>Counter app</h1>
<p>Host: <span id="status">loading</span></p>
<div id="slot"></div>
<p>Last relayed result: <code id="last-result"></code></p>
<script>
(function () {
  "use strict";
  var PROXY_ORIGIN = __PROXY_ORIGIN__, initial = [];
  var frame = document.createElement("iframe");
  frame.id = "proxy";
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
  function toApp(msg) { frame.contentWindow.postMessage(msg, PROXY_ORIGIN); }
  function backEnd(path, msg) {
    return fetch(path, msg === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"},
                                                   body: JSON.stringify(msg)})
      .then(function (r) { return r.text(); }).then(function (t) { return t ? JSON.parse(t) : null; });
  }
  window.addEventListener("message", function (event) {
    if (event.source !== frame.contentWindow || event.origin !== PROXY_ORIGIN) { return; }
    var msg = event.data;
    if (!msg || msg.jsonrpc !== "2.0") { return; }
    if (msg.method === "ui/notifications/sandbox-proxy-ready") {
      backEnd("/app/view").then(function (view) {
        initial = view.initial_messages;
        toApp(view.sandbox_resource_ready);
      });
      return;
    }
    backEnd("/app/rpc", msg).then(function (answer) {
      if (msg.method === "ui/notifications/initialized") {
        initial.forEach(toApp);  // tool-input, tool-result: only once the app is initialized
        initial = [];
        document.getElementById("status").textContent = "app ready";
      }
      if (answer) {
        toApp(answer);
        if (msg.method === "tools/call") {
          document.getElementById("last-result").textContent = JSON.stringify(answer.result || answer);
        }
      }
    });
  });
  frame.src = PROXY_ORIGIN + "/sandbox";
  document.getElementById("slot").appendChild(frame);
})();
</script>
</body></html>
"""

PROXY_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>MCP App sandbox proxy</title>
<style>html, body { margin: 0; height: 100%; } iframe { border: 0; width: 100%; height: 100%; }</style></head>
<body>
<script>
(function () {
  "use strict";
  var HOST_ORIGIN = __HOST_ORIGIN__, inner = null;
  var FEATURES = {camera: "camera", microphone: "microphone", geolocation: "geolocation",
                  clipboardWrite: "clipboard-write"};
  function sandboxMessage(msg) {
    return typeof msg.method === "string" && msg.method.indexOf("ui/notifications/sandbox-") === 0;
  }
  window.addEventListener("message", function (event) {
    var msg = event.data;
    if (!msg || msg.jsonrpc !== "2.0") { return; }
    if (event.source === window.parent && event.origin === HOST_ORIGIN) {
      if (msg.method === "ui/notifications/sandbox-resource-ready") {
        if (inner) { return; }  // one app per proxy
        var params = msg.params || {};
        inner = document.createElement("iframe");
        inner.id = "app";
        inner.setAttribute("sandbox", params.sandbox || "allow-scripts");
        inner.setAttribute("allow", Object.keys(params.permissions || {}).filter(function (k) {
          return FEATURES.hasOwnProperty(k); }).map(function (k) { return FEATURES[k]; }).join("; "));
        inner.srcdoc = params.html;
        document.body.appendChild(inner);
      } else if (inner && !sandboxMessage(msg)) {
        inner.contentWindow.postMessage(msg, "*");  // the app's origin is opaque ("null")
      }
    } else if (inner && event.source === inner.contentWindow && !sandboxMessage(msg)) {
      window.parent.postMessage(msg, HOST_ORIGIN);
    }
  });
  window.parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {}},
                            HOST_ORIGIN);
})();
</script>
</body></html>
"""

SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
#: The largest app message the back end reads (the bridge's ``max_message_bytes`` and Flask's
#: ``MAX_CONTENT_LENGTH``: a bigger body is refused with 413 before it is read into memory).
MAX_MESSAGE_BYTES = 1 << 20


def make_client() -> Client:
    """The MCP client of the example: the bundled test server with its MCP Apps surface."""
    return Client(server_command("--apps"), timeout=10, extensions={APPS: {}})


def host_app(bridge: AppBridge, proxy_origin: str, host_origin: str) -> Flask:
    """The host page, ``/app/view`` (the app to show) and ``/app/rpc`` (the app's messages)."""
    app = Flask("mcp_app_host")
    app.config["MAX_CONTENT_LENGTH"] = MAX_MESSAGE_BYTES

    @app.errorhandler(413)
    def too_large(error: Exception) -> Response:
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "message too large"}}
        return Response(json.dumps(body), status=413, mimetype="application/json", headers=SECURITY_HEADERS)

    @app.get("/")
    def page() -> Response:
        return Response(HOST_PAGE.replace("__PROXY_ORIGIN__", json.dumps(proxy_origin)), headers=SECURITY_HEADERS)

    @app.get("/app/view")
    def view() -> Response:
        shown = bridge.open()  # the counter tool's result comes with it (tool-input, tool-result)
        body = {"sandbox_resource_ready": shown.sandbox_resource_ready(), "initial_messages": shown.initial_messages}
        return Response(json.dumps(body), mimetype="application/json", headers=SECURITY_HEADERS)

    @app.post("/app/rpc")
    def rpc() -> Response:
        if request.headers.get("Origin", host_origin) != host_origin:
            abort(403)  # only the host page may speak for the app
        return Response(bridge.handle_json(request.get_data()), mimetype="application/json", headers=SECURITY_HEADERS)

    return app


def proxy_app(host_origin: str, proxy_origin: str) -> Flask:
    """The sandbox proxy page: framed only by the host page, it frames the app."""
    app = Flask("mcp_app_proxy")

    @app.get("/sandbox")
    def sandbox() -> Response:
        headers = {**SECURITY_HEADERS, "Content-Security-Policy": f"frame-ancestors {host_origin} {proxy_origin}"}
        return Response(PROXY_PAGE.replace("__HOST_ORIGIN__", json.dumps(host_origin)), headers=headers)

    return app


class Servers:
    """The host page and the sandbox proxy, each on its own port of 127.0.0.1 (0: a free one)."""

    def __init__(self, client: Client, host_port: int = 8000, proxy_port: int = 8001) -> None:
        self.client = client
        self.bridge = AppBridge(client, tool="counter", max_message_bytes=MAX_MESSAGE_BYTES)
        self._ports = (host_port, proxy_port)
        self._servers: List[Any] = []
        self._threads: List[threading.Thread] = []
        self.host_url: Optional[str] = None
        self.proxy_url: Optional[str] = None

    def start(self) -> "Servers":
        """Bind both ports, then serve each on a thread of its own."""
        host = make_server("127.0.0.1", self._ports[0], Flask("placeholder"), threaded=True)
        proxy = make_server("127.0.0.1", self._ports[1], Flask("placeholder"), threaded=True)
        self.host_url, self.proxy_url = f"http://127.0.0.1:{host.server_port}", f"http://127.0.0.1:{proxy.server_port}"
        host.app = host_app(self.bridge, self.proxy_url, self.host_url)
        proxy.app = proxy_app(self.host_url, self.proxy_url)
        self._servers = [host, proxy]
        self._threads = [threading.Thread(target=s.serve_forever, name=f"mcp-app-{n}", daemon=True)
                         for n, s in zip(("host", "proxy"), self._servers)]
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        """Stop both servers and wait for their threads."""
        for server in self._servers:
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(10)


if __name__ == "__main__":
    with make_client() as mcp:
        servers = Servers(mcp).start()
        print(f"open {servers.host_url}/  (sandbox proxy on {servers.proxy_url})")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            servers.stop()
