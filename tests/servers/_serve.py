"""HTTP serving shared by the test servers (official_server.py on mcp 2.x, tasks_server.py on
mcp 1.30, each in its own venv): uvicorn on a free loopback port, one ``READY <url>`` line on
stdout once serving, shutdown on a signal or on stdin EOF. Needs only uvicorn."""
from __future__ import annotations

import logging
import os
import socket
import sys
import threading
from typing import Any


def serve_http(app: Any, path: str, port: int = 0) -> None:
    """Serve the ASGI ``app`` with uvicorn on 127.0.0.1:<port> (0: a free one); print
    ``READY <url><path>``; stop on SIGINT/SIGTERM or when stdin reaches EOF (a dying parent never
    leaves one behind). A given port lets a test restart a server where its clients expect it."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}{path}"

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and not self.should_exit:  # lifespan ran and the socket is being served
                print(f"READY {url}", flush=True)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Streams still open at shutdown are cut off; uvicorn and the SDK's SSE app then log
            # tracebacks ("ASGI callable returned without completing response", ...): only noise here.
            logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
            await super().shutdown(sockets)

    # timeout_graceful_shutdown: open SSE streams would otherwise hold a graceful shutdown forever.
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1)
    server = Server(config)

    def watch_stdin() -> None:
        try:
            while os.read(0, 65536):  # the raw fd: a thread blocked in sys.stdin would hang interpreter exit
                pass
        except OSError:
            pass
        server.should_exit = True  # EOF: the parent is gone (or closed our stdin); shut down
        threading.Event().wait(5)
        os._exit(0)  # still here 5 s later: do not linger

    threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()
    try:
        server.run(sockets=[sock])  # installs SIGINT/SIGTERM handlers that stop the server
    except KeyboardInterrupt:  # uvicorn re-raises the SIGINT it caught once it has shut down
        sys.exit(130)
