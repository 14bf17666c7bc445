"""A raw-socket HTTP server on 127.0.0.1 that misbehaves on the wire as scripted (``Hostile``).

Each POSTed message is handed to a script with the connection (``Conn``): it can trickle a body
byte by byte, keep a stream alive with comments for ever, send an answer and then nothing, or a
body far over any limit, which the scripted servers of http_scripted.py (``Content-Length`` on
every answer, written at once) cannot. ``hostile`` is the fixture; ``client_for`` a client on it.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any, Callable, Dict, List, Optional

import pytest

from conftest import LONG
from mcpclient import Client, HTTPTransport
from mcpclient.policies.retry import Retry


TIMEOUT = 2.0
SLACK = 1.5  # what a call may take past its timeout (generous: 2 cores shared by many tests)


#: Writes the answer to a request; returns True if it was a whole answer (the connection is reused).
Script = Callable[["Conn", Dict[str, Any]], Optional[bool]]


class Conn:
    """One accepted connection of ``Hostile``: what a script writes its answer with."""

    def __init__(self, sock: socket.socket, stop: threading.Event, hung_up: threading.Event) -> None:
        self.sock = sock
        self.stop = stop
        self.hung_up = hung_up

    def head(self, content_type: str = "application/json", length: Optional[int] = None,
             chunked: bool = False, extra: str = "", status: str = "200 OK") -> None:
        framing = f"Content-Length: {length}\r\n" if length is not None else \
            ("Transfer-Encoding: chunked\r\n" if chunked else "Connection: close\r\n")
        self.sock.sendall(f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{framing}{extra}\r\n".encode())

    def reply(self, data: bytes) -> bool:
        """A whole JSON answer (the connection may be reused)."""
        self.head(length=len(data))
        return self.send(data)

    def send(self, data: bytes) -> bool:
        """Write ``data``; False once the client hung up (or the server stops)."""
        if self.stop.is_set():
            return False
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.hung_up.set()
            return False

    def hold(self, seconds: float = 30.0) -> None:
        """Keep the connection open, silent, until the client hangs up or the server stops."""
        self.sock.settimeout(0.1)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.stop.is_set():
            try:
                if self.sock.recv(65536) == b"":
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    def every(self, seconds: float, data: bytes, limit: float = 30.0) -> None:
        """Write ``data`` every ``seconds`` until the client hangs up (the pace of a hostile server)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and self.send(data):
            if self.stop.wait(seconds):
                return


def answer(message: Dict[str, Any], result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()


def tool_result(text: str = "ok") -> Dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


class Hostile:
    """An MCP server over HTTP/1.1 on a raw socket: ``initialize``, notifications and GET/DELETE
    answered here, every other request by ``script(conn, message)``, which writes what it likes.
    ``cancelled`` collects the request ids of ``notifications/cancelled`` (``cancel_seen`` is set
    on each); ``calls`` counts the scripted requests."""

    def __init__(self, script: Script, on_get: Optional[Callable[["Conn"], None]] = None) -> None:
        self.script = script
        self.on_get = on_get
        self.cancelled: List[Any] = []
        self.cancel_seen = threading.Event()
        self.hung_up = threading.Event()  # the client closed a connection a script was writing to
        self.calls = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._socks: List[socket.socket] = []
        self._threads: List[threading.Thread] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/mcp"
        self._accepter = threading.Thread(target=self._accept, name="test-hostile-accept", daemon=True)
        self._accepter.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                sock, _ = self.server.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(sock,), name="test-hostile-conn", daemon=True)
            with self._lock:
                self._socks.append(sock)
                self._threads.append(thread)
            thread.start()

    def _serve(self, sock: socket.socket) -> None:
        reader = sock.makefile("rb")
        try:
            while not self._stop.is_set():
                line = reader.readline()
                if not line:
                    return
                verb = line.split(b" ", 1)[0]
                headers: Dict[str, str] = {}
                while True:
                    line = reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    key, _, value = line.decode("latin-1").partition(":")
                    headers[key.strip().lower()] = value.strip()
                body = reader.read(int(headers.get("content-length") or 0))
                if verb == b"GET" and self.on_get is not None:
                    self.on_get(Conn(sock, self._stop, self.hung_up))
                    return
                if verb != b"POST":
                    status = "405 Method Not Allowed" if verb == b"GET" else "200 OK"
                    sock.sendall(f"HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n".encode())
                    continue
                message = json.loads(body)
                method = message.get("method")
                if method == "initialize":
                    data = answer(message, {"protocolVersion": message["params"]["protocolVersion"],
                                            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
                                            "serverInfo": {"name": "hostile", "version": "1"}})
                    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\n"
                                 b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
                    continue
                if "id" not in message:
                    if method == "notifications/cancelled":
                        with self._lock:
                            self.cancelled.append(message["params"]["requestId"])
                        self.cancel_seen.set()
                    if not self.notified(Conn(sock, self._stop, self.hung_up), message):
                        return
                    continue
                with self._lock:
                    self.calls += 1
                if not self.script(Conn(sock, self._stop, self.hung_up), message):
                    return  # a scripted answer may leave the connection in any state: not reused
        except OSError:
            return
        finally:
            reader.close()
            sock.close()

    def notified(self, conn: "Conn", message: Dict[str, Any]) -> bool:
        """Answer a POSTed notification (202); False: the connection is not reused."""
        conn.sock.sendall(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
        return True

    def wait_cancel(self, timeout: float = LONG) -> List[Any]:
        self.cancel_seen.wait(timeout)
        with self._lock:
            return list(self.cancelled)

    def stop(self) -> None:
        self._stop.set()
        try:
            self.server.shutdown(socket.SHUT_RDWR)  # (close() alone leaves accept() blocked)
        except OSError:
            pass
        self.server.close()
        with self._lock:
            socks, threads = list(self._socks), list(self._threads)
        for sock in socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._accepter.join(LONG)
        for thread in threads:
            thread.join(LONG)


@pytest.fixture
def hostile(started):
    """``hostile(script, on_get=None)``: a started ``Hostile`` server, stopped after the test."""
    return lambda script, **kwargs: started(Hostile(script, **kwargs))


def client_for(url: str, max_pages: Optional[int] = None, **kwargs: Any) -> Client:
    """A client of ``url`` (the handshake era; no retries); ``kwargs`` go to the transport."""
    # validate_output="listed": these scripted servers answer tools/call only, and what is timed is
    # the call itself (a first call would otherwise list the tools first: see client/test_output_validation.py)
    options: Dict[str, Any] = {"validate_output": "listed"}
    if max_pages is not None:
        from mcpclient import Limits

        options["limits"] = Limits(pages=max_pages)
    return Client(HTTPTransport(url, retry=Retry(total=0), **kwargs), protocol="legacy", **options)
