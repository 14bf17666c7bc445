"""The Streamable HTTP fuzz server: a handshake-era MCP endpoint on 127.0.0.1 sending scripted bytes.

Usage: ``python http_server.py CONTROL_PORT``. It connects to the harness on 127.0.0.1:PORT and
says ``{"pid": ..., "port": ...}``, then takes scripts (``wire.py``) as ``stdio_server.py`` does.
POST ``initialize`` opens a session; a request whose method has a queued script gets the script's
status, headers and body (sent with the script's length mode, trickled by its sleeps, held open
by its ``hold``), and the script's ``get`` frames are written to the open GET stream first; other
requests get a valid JSON answer. Stdlib only; runs until the control connection closes.
"""
from __future__ import annotations

import collections
import json
import os
import queue
import select
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Deque, Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire import CAPABILITIES, Control, answer, expand, take_script  # noqa: E402

SESSION = "fz-session-1"
HOLD_MAX = 3.0  # no response is held open longer than this, whatever the script says

scripts: Dict[str, Deque[Dict[str, Any]]] = collections.defaultdict(collections.deque)
lock = threading.Lock()
stats = {"requests": 0, "responses": 0, "scripts": 0, "gets": 0}
history: List[Any] = []
get_stream: Dict[str, Any] = {"q": None}
get_ready = threading.Condition(lock)


def control_loop(control: Control) -> None:
    while True:
        msg = control.recv()
        if msg is None:
            os._exit(0)
        op = msg.get("op")
        if op == "script":
            with lock:
                scripts[msg["script"]["method"]].append(msg["script"])
            control.send({"ok": True})
        elif op == "stats":
            with lock:
                control.send(dict(stats, get_open=get_stream["q"] is not None))
        elif op == "flush":
            with lock:
                scripts.clear()
            control.send({"ok": True})
        elif op == "wait_get":
            with get_ready:
                get_ready.wait_for(lambda: get_stream["q"] is not None, timeout=float(msg.get("timeout", 5)))
                control.send({"ok": get_stream["q"] is not None})


def _peer_closed(sock: socket.socket) -> bool:
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms Nagle stalls

    def _json(self, status: int, body: bytes, extra: Optional[Dict[str, str]] = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self) -> None:
        self._json(200, b"")

    def do_GET(self) -> None:
        q: "queue.Queue[Any]" = queue.Queue()
        with lock:
            old = get_stream["q"]
            if old is not None:
                old.put(None)
            get_stream["q"] = q
            stats["gets"] += 1
            get_ready.notify_all()
        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Mcp-Session-Id", SESSION)
            self.end_headers()
            self.wfile.flush()
            while True:
                try:
                    item = q.get(timeout=0.5)
                except queue.Empty:
                    if _peer_closed(self.connection):
                        return
                    continue
                if item is None:
                    return
                if isinstance(item, float):
                    time.sleep(item)
                    continue
                self.wfile.write(item)
                self.wfile.flush()
        except OSError:
            return
        finally:
            with lock:
                if get_stream["q"] is q:
                    get_stream["q"] = None

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            msg = json.loads(raw)
        except ValueError:
            self._json(400, b'{"error": "bad json"}')
            return
        if not isinstance(msg, dict):
            self._json(202, b"")
            return
        method = msg.get("method")
        if method is None or "id" not in msg:
            if method is None:
                with lock:
                    stats["responses"] += 1
            self._json(202, b"")
            return
        rid = msg["id"]
        with lock:
            stats["requests"] += 1
            script = take_script(scripts, method)
        if method == "initialize":
            result = {"protocolVersion": (msg.get("params") or {}).get("protocolVersion", "2025-11-25"),
                      "capabilities": CAPABILITIES, "serverInfo": {"name": "fuzz", "version": "1"}}
            self._json(200, json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode(),
                       {"Mcp-Session-Id": SESSION})
        elif script is None:
            self._json(200, answer(method, rid))
        else:
            with lock:
                stats["scripts"] += 1
            try:
                self._scripted(script, method, rid)
            except OSError:
                self.close_connection = True
        with lock:
            history.append(rid)
            del history[:-50]

    def _scripted(self, script: Dict[str, Any], method: str, rid: Any) -> None:
        with lock:
            past = list(history)
        if script.get("get"):
            with get_ready:
                get_ready.wait_for(lambda: get_stream["q"] is not None, timeout=1.0)
                q = get_stream["q"]
            if q is not None:
                for chunk in expand(script["get"], method, rid, past):
                    q.put(chunk)
        opts = script.get("http") or {}
        chunks = list(expand(script["frames"], method, rid, past))
        data = [c for c in chunks if isinstance(c, bytes)]
        total = sum(len(c) for c in data)
        mode = opts.get("length", "exact")
        self.send_response(int(opts.get("status", 200)))
        headers = opts.get("headers") or {"Content-Type": "text/event-stream"}
        for k, v in headers.items():
            self.send_header(k, v)
        if mode == "exact":
            self.send_header("Content-Length", str(total))
        elif mode == "short":
            self.send_header("Content-Length", str(total + 100))
        elif mode == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        if mode in ("none", "short"):
            self.close_connection = True
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        for c in chunks:
            if c is None:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if isinstance(c, float):
                time.sleep(min(c, HOLD_MAX))
                continue
            if mode == "chunked":
                if c:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c))
            else:
                self.wfile.write(c)
            self.wfile.flush()
        hold = min(float(opts.get("hold", 0)), HOLD_MAX)
        if hold > 0 and mode in ("none", "chunked"):
            end = time.monotonic() + hold
            while time.monotonic() < end and not _peer_closed(self.connection):
                time.sleep(0.02)
            self.close_connection = True
            return
        if mode == "chunked":
            self.wfile.write(b"0\r\n\r\n")
        if mode in ("short",):
            self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-request is routine here


def main() -> None:
    control = Control(int(sys.argv[1]))
    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    control.send({"pid": os.getpid(), "port": server.server_address[1]})
    threading.Thread(target=control_loop, args=(control,), daemon=True).start()
    server.serve_forever(poll_interval=0.2)


if __name__ == "__main__":
    main()
