"""A scripted MCP-over-HTTP server on 127.0.0.1 for faults a real server will not produce.

``ScriptedHTTPServer(handle)`` answers ``initialize`` (with a session id) and
``notifications/*`` itself, and every other POSTed request with ``handle(request, message)``,
which returns a ``Reply`` (status, headers, body) or a result dict (sent as JSON). GETs go to
``on_get(request)`` (default: 405). ``sse(*events)`` builds an event-stream body. Every request
the server saw is recorded in ``seen`` (method, path, headers, parsed body, and ``peer``: the
connection's client address), so a test can count exactly what reached the wire, and on which
connection; ``before(request)`` runs on every POST before it is answered (a test may hold it
there on an event). ``require_session``: requests other than ``initialize`` and
``server/discover`` without ``Mcp-Session-Id`` get 400, as servers that require one answer.
``keep_alive=False`` closes every connection after its answer; ``stop_accepting()`` then makes
any new connection hang in ``connect`` (a server that stopped accepting, its backlog full).
``authorization``: every request without exactly this ``Authorization`` header gets 401 with a
``WWW-Authenticate: Bearer`` challenge (a bearer-protected server).
"""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

SESSION_ID = "scripted-session-1"


class Reply:
    """What the server answers; ``Reply.DROP`` hangs up instead (see ``_send``). ``hold``: the
    headers go out at once, the body only once this event is set (or after 5 s). ``pace``: an
    event stream's events go out one at a time, this many seconds apart (a server that trickles).
    ``until_closed``: the headers go out, the body never does; the event is set when the client
    closes the connection (what a 2026 server sees of a cancel), never on the server's own timeout.
    ``stream``: the body is these chunks, each written (chunked encoding) as the iterator yields
    it, until it ends or the client hangs up (a server that pushes events as they happen)."""

    def __init__(self, status: int = 200, body: Any = b"", headers: Optional[Dict[str, str]] = None,
                 hold: Optional[threading.Event] = None, pace: Optional[float] = None,
                 until_closed: Optional[threading.Event] = None, stream: Optional[Iterable[bytes]] = None) -> None:
        self.status = status
        self.body = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.headers = headers or {}
        self.hold = hold
        self.pace = pace
        self.until_closed = until_closed
        self.stream = stream


DROP = Reply(0)


def sse(*events: Dict[str, Any]) -> "Reply":
    """A text/event-stream reply: each event a dict of SSE fields (``data`` dicts are JSON-encoded)."""
    lines = []
    for event in events:
        for key, value in event.items():
            lines.append(f"{key}: {json.dumps(value) if isinstance(value, dict) else value}")
        lines.append("")
    return Reply(200, ("\n".join(lines) + "\n").encode(), {"Content-Type": "text/event-stream"})


class Seen:
    def __init__(self, method: str, path: str, headers: Dict[str, str], body: Any, peer: Any = None) -> None:
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.peer = peer  # the client's (address, port): which connection the request came on
        self.session: Optional[str] = None  # initialize: the session id handed out in its answer
        self.at = time.monotonic()  # when it came

    @property
    def rpc_method(self) -> Optional[str]:
        return self.body.get("method") if isinstance(self.body, dict) else None


Handler = Callable[["Seen", Dict[str, Any]], Any]


class ScriptedHTTPServer:
    def __init__(self, handle: Handler, capabilities: Optional[Dict[str, Any]] = None,
                 on_get: Optional[Callable[["Seen"], "Reply"]] = None, discover: Optional[Dict[str, Any]] = None,
                 before: Optional[Callable[["Seen"], None]] = None, require_session: bool = False,
                 keep_alive: bool = True, tls: Optional[Tuple[str, str]] = None,
                 authorization: Optional[str] = None) -> None:
        """``discover``: answer ``server/discover`` with this result (a 2026 server); by default
        it is refused as a handshake-era server refuses it. ``tls``: (certificate file, key
        file): serve HTTPS with them."""
        self.discover = discover
        self.before = before
        self._fillers: List[socket.socket] = []  # connections that fill the backlog (stop_accepting)
        self.handle = handle
        self.on_get = on_get
        self.capabilities = capabilities if capabilities is not None else {"tools": {}}
        self.seen: List[Seen] = []
        self.sessions: List[str] = []  # ids handed out, in order
        self.expired: set = set()  # ids answered with 404 from now on (see expire_sessions)
        self.lock = threading.Lock()
        outer = self

        class RequestHandler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _record(self) -> Seen:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                            self.client_address)
                with outer.lock:
                    outer.seen.append(seen)
                return seen

            def _send(self, reply: Reply) -> None:
                if reply.status == 0:  # DROP: hang up without answering (a crash mid-request)
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(reply.status)
                headers = {"Content-Type": "application/json", **reply.headers}
                if not keep_alive:
                    headers["Connection"] = "close"
                for key, value in headers.items():
                    self.send_header(key, value)
                if reply.stream is not None:
                    self._stream(reply.stream)
                    return
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                if reply.until_closed is not None:
                    self.close_connection = True
                    self.connection.settimeout(30.0)  # (a test that fails must not hang here for ever)
                    try:
                        closed = self.connection.recv(1) == b""
                    except socket.timeout:
                        closed = False
                    except OSError:  # reset: closed too
                        closed = True
                    if closed:
                        reply.until_closed.set()
                    return
                if reply.hold is not None:
                    reply.hold.wait(5.0)
                if reply.pace is None:
                    self.wfile.write(reply.body)
                    return
                for event in reply.body.split(b"\n\n"):
                    if event.strip():
                        self.wfile.write(event + b"\n\n")
                        self.wfile.flush()
                        time.sleep(reply.pace)  # the scenario: a server that trickles its answer

            def _stream(self, chunks: Iterable[bytes]) -> None:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in chunks:
                        if chunk:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                            self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client hung up
                    self.close_connection = True
                finally:
                    close = getattr(chunks, "close", None)
                    if close is not None:
                        close()  # a generator's cleanup runs now, not whenever it is collected

            def _refused(self, seen: Seen) -> bool:
                if authorization is None or seen.headers.get("authorization") == authorization:
                    return False
                self._send(Reply(401, {"error": "invalid_token"},
                                 {"WWW-Authenticate": 'Bearer realm="scripted", error="invalid_token"'}))
                return True

            def do_POST(self) -> None:  # noqa: N802
                seen = self._record()
                if self._refused(seen):
                    return
                if outer.before is not None:
                    outer.before(seen)
                msg = seen.body if isinstance(seen.body, dict) else {}
                if msg.get("method") == "server/discover" and outer.discover is not None:
                    self._send(Reply(200, {"jsonrpc": "2.0", "id": msg["id"], "result": outer.discover}))
                    return
                if msg.get("method") == "server/discover":  # a handshake-era server (no session: 400)
                    self._send(Reply(400, {"jsonrpc": "2.0", "id": None,
                                           "error": {"code": -32000, "message": "Bad Request: No valid session ID"}}))
                    return
                if msg.get("method") == "initialize":
                    result = {"protocolVersion": msg["params"]["protocolVersion"],
                              "capabilities": outer.capabilities, "serverInfo": {"name": "scripted-http", "version": "1"}}
                    with outer.lock:
                        outer.sessions.append(SESSION_ID if not outer.sessions else f"scripted-session-{len(outer.sessions) + 1}")
                        session = outer.sessions[-1]
                    seen.session = session
                    self._send(Reply(200, {"jsonrpc": "2.0", "id": msg["id"], "result": result},
                                     {"Mcp-Session-Id": session}))
                    return
                if require_session and "mcp-session-id" not in seen.headers:
                    self._send(Reply(400, {"jsonrpc": "2.0", "id": None,
                                           "error": {"code": -32000, "message": "Bad Request: No valid session ID"}}))
                    return
                if seen.headers.get("mcp-session-id") in outer.expired:
                    self._send(Reply(404, {"jsonrpc": "2.0", "id": None,
                                           "error": {"code": -32600, "message": "Session not found"}}))
                    return
                if "id" not in msg:  # a notification or a response
                    self._send(Reply(202))
                    return
                reply = outer.handle(seen, msg)
                if not isinstance(reply, Reply):
                    reply = Reply(200, {"jsonrpc": "2.0", "id": msg["id"], "result": reply})
                self._send(reply)

            def do_GET(self) -> None:  # noqa: N802
                seen = self._record()
                if self._refused(seen):
                    return
                self._send(outer.on_get(seen) if outer.on_get else Reply(405))

            def do_DELETE(self) -> None:  # noqa: N802
                self._record()
                self._send(Reply(200))

        class QuietServer(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client hanging up mid-answer (the tests make them) is not news

        self.httpd = QuietServer(("127.0.0.1", 0), RequestHandler)
        self.httpd.daemon_threads = True
        if tls is not None:
            import ssl

            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.httpd.server_address[1]}/mcp"
        # (polled every 50 ms, not the default 0.5 s: stop() waits for the next poll)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), name="test-http-server",
                                       daemon=True)
        self.thread.start()

    def requests(self, rpc_method: Optional[str] = None, http_method: Optional[str] = None) -> List[Seen]:
        with self.lock:
            return [s for s in self.seen if (rpc_method is None or s.rpc_method == rpc_method)
                    and (http_method is None or s.method == http_method)]

    def expire_sessions(self) -> None:
        """Forget every session handed out so far: their requests get 404 from now on."""
        with self.lock:
            self.expired.update(self.sessions)

    def stop_accepting(self) -> None:
        """Stop accepting connections and fill the listen backlog: a new connection's SYN is
        then dropped by the kernel, so its ``connect`` hangs until the client's timeout."""
        self.httpd.shutdown()  # serve_forever returns; the listening socket stays open
        address = self.httpd.server_address
        for _ in range(self.httpd.request_queue_size + 8):  # a few more than the backlog holds
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(address)  # EINPROGRESS once the queue is full: it never completes
            self._fillers.append(filler)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        for filler in self._fillers:
            filler.close()
        self.thread.join(10)
