"""``Recorder``: a tiny HTTP server on 127.0.0.1 that answers as a test says and records every
request, and the ``servers`` fixture that makes them (stopped after the test): what the
authorization and redirect tests talk to."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest

from conftest import LONG


class Recorder:
    """A tiny HTTP server on 127.0.0.1: ``answer(method, path, body)`` gives (status, headers, body);
    every request is recorded (method, path, headers, body)."""

    def __init__(self, answer: Callable[[str, str, bytes], Tuple[int, Dict[str, str], bytes]]) -> None:
        self.requests: List[Tuple[str, str, Dict[str, str], bytes]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def handle_any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                recorder.requests.append((self.command, self.path, dict(self.headers), body))
                status, headers, data = answer(self.command, self.path, body)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = handle_any  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="test-recorder", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(LONG)


@pytest.fixture
def servers() -> Iterator[Callable[..., Recorder]]:
    made: List[Recorder] = []

    def make(answer: Callable[[str, str, bytes], Tuple[int, Dict[str, str], bytes]]) -> Recorder:
        made.append(Recorder(answer))
        return made[-1]

    try:
        yield make
    finally:
        for r in made:
            r.stop()
