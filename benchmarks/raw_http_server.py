#!/usr/bin/env python3
"""A minimal, fast MCP Streamable HTTP server, standard library only.

Used by ``bench.py`` for the HTTP section, as ``raw_server.py`` is for stdio: it answers at once
so the numbers reflect the clients. One thread per connection (``socketserver``), HTTP/1.1
keep-alive, a hand-rolled request parser and one ``sendall`` per response, ``TCP_NODELAY``.

* POST ``initialize``    -> 200 JSON, with an ``Mcp-Session-Id`` header
* POST a notification or a response -> 202, no body
* POST ``ping`` / ``tools/list`` / ``tools/call`` (``echo``) -> 200 ``application/json``
* GET -> 405 (no server-initiated stream);  DELETE -> 200

``--modern``: a 2026-07-28-only server, with ``raw_server.py --modern``'s answers (``server/discover``,
``resultType``; ``initialize`` -> -32601 in a 200 JSON body); no ``Mcp-Session-Id`` is minted
(the modern era is sessionless); GET is still 405.

It listens on 127.0.0.1, port 0 (``--port N`` to choose), prints ``READY <url>`` on stdout, and
exits on stdin EOF. ``--cpu N`` pins it to CPU N (Linux).
"""
import json
import os
import socketserver
import sys
import threading
import uuid

from raw_server import _answer  # same MCP answers as the stdio server

SESSION = uuid.uuid4().hex
MODERN = "--modern" in sys.argv[1:]


def _response(status, body=b"", extra=b""):
    return (b"HTTP/1.1 " + status + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n"
            + (b"Content-Type: application/json\r\n" if body else b"") + extra + b"\r\n" + body)


_202 = _response(b"202 Accepted")
_405 = _response(b"405 Method Not Allowed", extra=b"Allow: POST, DELETE\r\n")
_200_EMPTY = _response(b"200 OK")
_400 = _response(b"400 Bad Request", extra=b"Connection: close\r\n")


class Handler(socketserver.StreamRequestHandler):
    rbufsize = 1 << 16
    disable_nagle_algorithm = True

    def handle(self):
        readline, read, send = self.rfile.readline, self.rfile.read, self.connection.sendall
        loads = json.loads
        modern = MODERN
        while True:
            line = readline(65537)
            if not line:
                return
            if line in (b"\r\n", b"\n"):
                continue
            method = line.split(b" ", 1)[0]
            length = 0
            close = False
            while True:  # headers
                h = readline(65537)
                if h in (b"\r\n", b"\n", b""):
                    break
                name, _, value = h.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"connection" and value.strip().lower() == b"close":
                    close = True
            body = read(length) if length else b""
            if method == b"POST":
                try:
                    msg = loads(body)
                except ValueError:
                    send(_400)
                    return
                if not modern and type(msg) is dict and msg.get("method") == "initialize":
                    out = _answer(msg)
                    send(_response(b"200 OK", out, b"Mcp-Session-Id: " + SESSION.encode() + b"\r\n"))
                else:  # a response from the client (no "method") gets 202 too
                    out = _answer(msg, modern) if type(msg) is dict and "method" in msg else None
                    send(_202 if out is None else _response(b"200 OK", out))
            elif method == b"DELETE":
                send(_200_EMPTY)
            else:
                send(_405)
            if close:
                return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    if "--cpu" in sys.argv[1:] and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(sys.argv[sys.argv.index("--cpu") + 1])})
    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv[1:] else 0
    server = Server(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.5}, daemon=True).start()
    print(f"READY http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    try:
        while sys.stdin.buffer.read(1 << 16):
            pass
    except KeyboardInterrupt:
        pass
    # No server.shutdown(): it waits up to poll_interval (0.5 s) for serve_forever to notice,
    # which is most of a short benchmark run. Every thread is a daemon: exiting stops them.


if __name__ == "__main__":
    main()
    sys.exit(0)
