"""A scripted HTTP+SSE (2024-11-05) server on 127.0.0.1, for what a real server won't do: a
foreign endpoint, a dropped stream, error statuses (``Status``), a stream closed instead of an
answer (``DROP``), an acknowledgement trickled byte by byte (``Trickle``).
"""
from __future__ import annotations

import json
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional

from conftest import LONG

# ---------------------------------------------------------------- a scripted HTTP+SSE server


DROP = object()  # a handler's answer: close the event stream instead of answering


class Status:
    """A handler's answer: refuse the POST with this status."""

    def __init__(self, status: int, body: bytes = b"") -> None:
        self.status = status
        self.body = body


class Trickle:
    """A handler's answer: acknowledge the POST with a status line and headers that come one
    byte every ``pace`` seconds (never their end), until the client hangs up (``hung_up``)."""

    HEAD = b"HTTP/1.1 202 Accepted\r\nContent-Type: text/plain\r\nContent-Length: 8\r\n" \
           b"X-Padding: " + b"x" * 200 + b"\r\n\r\n"

    def __init__(self, pace: float) -> None:
        self.pace = pace


class ScriptedSSEServer:
    """GET /sse streams an ``endpoint`` event (``endpoint``: its data), then whatever is queued;
    POST /messages answers 202 and queues the reply ``handle(message)`` returns (a result dict),
    or closes the stream (``DROP``), or refuses the POST (``Status``). ``initialize`` and
    notifications are handled here. POST /sse (a Streamable HTTP client) gets ``mcp_status`` and
    ``mcp_body``; with ``silence`` the stream says nothing for that long after ``initialize``;
    ``capabilities``: what ``initialize`` declares (the tools only by default)."""

    def __init__(self, handle: Optional[Callable[[Dict[str, Any]], Any]] = None,
                 endpoint: str = "/messages?session_id=s1", mcp_status: int = 405, mcp_body: bytes = b"",
                 sse_status: int = 200, silence: float = 0.0, capabilities: Optional[Dict[str, Any]] = None) -> None:
        self.handle = handle or (lambda msg: {})
        declared = capabilities if capabilities is not None else {"tools": {}}
        self.endpoint = endpoint
        self.seen: List[Any] = []  # (HTTP method, path, lower-case headers, JSON body)
        self.events: "queue.Queue[Any]" = queue.Queue()
        self.stopped = threading.Event()
        self.hung_up = threading.Event()  # the client hung up on a trickled acknowledgement
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the event stream ends when the handler returns

            def log_message(self, *args: Any) -> None:
                pass

            def _record(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                outer.seen.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                return body

            def _status(self, status: int, body: bytes = b"") -> None:
                self.send_response(status)
                if body.startswith(b"{"):
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _trickle(self, pace: float) -> None:
                self.close_connection = True
                try:
                    for i in range(len(Trickle.HEAD)):
                        self.wfile.write(Trickle.HEAD[i:i + 1])
                        if outer.stopped.wait(pace):
                            return
                except OSError:  # (the client shut the connection: a write meets it)
                    outer.hung_up.set()

            def do_GET(self) -> None:  # noqa: N802
                self._record()
                if sse_status != 200:
                    self._status(sse_status, b"no stream here")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(f"event: endpoint\r\ndata: {outer.endpoint}\r\n\r\n".encode())
                self.wfile.flush()
                while not outer.stopped.is_set():
                    try:
                        item = outer.events.get(timeout=0.05)
                    except queue.Empty:
                        continue
                    if item is DROP:
                        return
                    self.wfile.write(b"event: message\r\ndata: " + json.dumps(item).encode() + b"\r\n\r\n")
                    self.wfile.flush()

            def do_POST(self) -> None:  # noqa: N802
                msg = self._record()
                if not self.path.startswith("/messages"):
                    self._status(mcp_status, mcp_body)
                    return
                if "id" not in msg or "method" not in msg:
                    self._status(202)
                    return
                if msg["method"] == "initialize":
                    result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": declared,
                              "serverInfo": {"name": "scripted-sse", "version": "1"}}
                    answer: Any = result
                else:
                    answer = outer.handle(msg)
                if isinstance(answer, Status):
                    self._status(answer.status, answer.body)
                    return
                if isinstance(answer, Trickle):
                    self._trickle(answer.pace)
                    return
                self._status(202)
                if msg["method"] == "initialize" and silence:
                    time.sleep(silence)
                outer.events.put(DROP if answer is DROP else {"jsonrpc": "2.0", "id": msg["id"], "result": answer})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.url = self.origin + "/sse"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="test-sse-server", daemon=True)
        self.thread.start()

    def requests(self, http_method: str) -> List[Any]:
        return [s for s in self.seen if s[0] == http_method]

    def stop(self) -> None:
        self.stopped.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(LONG)
