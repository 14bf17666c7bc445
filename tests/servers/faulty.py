"""A scripted, stdlib-only MCP stdio server for fault-injection tests.

Usage: ``python tests/servers/faulty.py MODE``

Baseline behaviour (every mode, unless the mode says otherwise):
  - ``initialize``: echoes the requested protocolVersion if it is one of VERSIONS (else answers
    the newest), capabilities ``{"tools": {}}``, serverInfo ``{"name": "faulty", "version": "1"}``.
  - ``notifications/initialized`` is accepted; ``ping`` answers ``{}``.
  - ``tools/list`` lists the one tool, ``echo``; ``tools/call`` ``echo`` answers a text content
    with ``arguments.text``. An unknown tool is -32602; an unknown method is -32601.
  - ``notifications/cancelled`` is recorded on stderr as ``cancelled=<requestId>``.
  - Exits 0 on stdin EOF.

Every stdout line is written whole and flushed under one lock (threads write in late-reply).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

MODES = {
    "normal": "behaves correctly (baseline)",
    "garbage": "before each tools/call response: a non-JSON line, a truncated JSON line, the line 42",
    "unknown-id": "before each tools/call response: a response with id 999999",
    "crash-mid-call": "on tools/call: half a response line (no newline), 'dying now' on stderr, exit 3",
    "exit-on-call": "on tools/call: 'bye' on stderr, exit 7, nothing on stdout",
    "loud-exit-on-call": "on tools/call: a 50 MB line and then 'bye' on stderr, exit 7",
    "ignore-sigterm": "ignores SIGTERM and stdin EOF; spawns a SIGTERM-ignoring grandchild (grandchild=<pid>)",
    "huge-result": "tools/call answers a 10 MiB text content, one line",
    "stdout-before-init": "writes banner lines to stdout before reading anything",
    "no-reply": "never answers tools/call",
    "late-reply": "tools/call answers after arguments.delay seconds, on its own thread",
    "bad-version": "initialize answers protocolVersion 1999-01-01",
    "slow-exit": "on stdin EOF waits 0.3 s, then exits 0",
    "server-requests": "after notifications/initialized sends ping id 's1'; logs pong=<response json>",
    "flood": "on tools/call: 2000 notifications/message, then the response",
    "progress-flood": "on tools/call: 2000 notifications/progress for the call's progressToken, then the response",
    "stubborn-discover": "logs started=<pid>; ignores SIGTERM (logs sigterm) and stdin EOF; on server/discover "
                         "closes its stdout and lives on until SIGKILL",
}

ECHO_TOOL = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
HUGE_SIZE = 10 * 1024 * 1024

_stdout_lock = threading.Lock()


# ---------------------------------------------------------------- output


def write_raw(text: str) -> None:
    """Write text to stdout as is (whole, flushed, serialized)."""
    with _stdout_lock:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.buffer.flush()


def send(message: dict[str, Any]) -> None:
    write_raw(json.dumps(message, separators=(",", ":")) + "\n")


def result(request_id: Any, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def text_result(request_id: Any, text: str) -> dict[str, Any]:
    return result(request_id, {"content": [{"type": "text", "text": text}], "isError": False})


def log(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def die(status: int) -> None:
    """Exit at once: no cleanup, no buffered output left to flush."""
    sys.stderr.flush()
    os._exit(status)


# ---------------------------------------------------------------- tools/call, per mode


def echo_response(msg: dict[str, Any]) -> dict[str, Any]:
    params = msg.get("params") or {}
    if params.get("name") != "echo":
        return error(msg["id"], -32602, f"Unknown tool: {params.get('name')}")
    return text_result(msg["id"], str((params.get("arguments") or {}).get("text", "")))


def call_normal(msg: dict[str, Any]) -> None:
    send(echo_response(msg))


def call_garbage(msg: dict[str, Any]) -> None:
    write_raw("this is not json\n")
    write_raw('[1,2\n')
    write_raw("42\n")
    send(echo_response(msg))


def call_unknown_id(msg: dict[str, Any]) -> None:
    send(text_result(999999, "nobody asked for this"))
    send(echo_response(msg))


def call_crash_mid_call(msg: dict[str, Any]) -> None:
    line = json.dumps(echo_response(msg))
    write_raw(line[: len(line) // 2])
    log("dying now")
    die(3)


def call_exit_on_call(msg: dict[str, Any]) -> None:
    log("bye")
    die(7)


def call_loud_exit_on_call(msg: dict[str, Any]) -> None:
    log("x" * (50 << 20))
    log("bye")
    die(7)


def call_huge_result(msg: dict[str, Any]) -> None:
    send(text_result(msg["id"], "x" * HUGE_SIZE))


def call_no_reply(msg: dict[str, Any]) -> None:
    pass  # never answered


def call_late_reply(msg: dict[str, Any]) -> None:
    """Answers after arguments.delay seconds (even if cancelled meanwhile) on its own thread."""
    arguments = (msg.get("params") or {}).get("arguments") or {}
    delay = float(arguments.get("delay", 0))

    def later() -> None:
        time.sleep(delay)
        send(text_result(msg["id"], str(arguments.get("text", f"after {delay}s"))))

    threading.Thread(target=later, daemon=True).start()


def call_flood(msg: dict[str, Any]) -> None:
    note = json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "n"}},
        separators=(",", ":"),
    )
    for _ in range(2000):
        write_raw(note + "\n")
    send(echo_response(msg))


def call_progress_flood(msg: dict[str, Any]) -> None:
    token = ((msg.get("params") or {}).get("_meta") or {}).get("progressToken")
    for step in range(2000):
        write_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                              "params": {"progressToken": token, "progress": step}}, separators=(",", ":")) + "\n")
    send(echo_response(msg))


CALL_HANDLERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "garbage": call_garbage,
    "progress-flood": call_progress_flood,
    "unknown-id": call_unknown_id,
    "crash-mid-call": call_crash_mid_call,
    "exit-on-call": call_exit_on_call,
    "loud-exit-on-call": call_loud_exit_on_call,
    "huge-result": call_huge_result,
    "no-reply": call_no_reply,
    "late-reply": call_late_reply,
    "flood": call_flood,
}


# ---------------------------------------------------------------- the server


class Server:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.on_call = CALL_HANDLERS.get(mode, call_normal)

    def handle(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            send(error(None, -32600, "Invalid Request"))
        elif "method" in msg and "id" in msg:
            self.on_request(msg)
        elif "method" in msg:
            self.on_notification(msg)
        elif "id" in msg:
            self.on_response(msg)
        else:
            send(error(None, -32600, "Invalid Request"))

    def on_request(self, msg: dict[str, Any]) -> None:
        method, request_id = msg["method"], msg["id"]
        if method == "initialize":
            send(result(request_id, self.initialize_result(msg.get("params") or {})))
        elif method == "ping":
            send(result(request_id, {}))
        elif method == "tools/list":
            send(result(request_id, {"tools": [ECHO_TOOL]}))
        elif method == "tools/call":
            self.on_call(msg)
        elif method == "server/discover" and self.mode == "stubborn-discover":
            with _stdout_lock:
                os.close(1)  # the client sees EOF on our stdout; this process lives on
            while True:
                signal.pause()
        else:
            send(error(request_id, -32601, f"Method not found: {method}"))

    def initialize_result(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        version = requested if requested in VERSIONS else VERSIONS[0]
        if self.mode == "bad-version":
            version = "1999-01-01"
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "faulty", "version": "1"},
        }

    def on_notification(self, msg: dict[str, Any]) -> None:
        method = msg["method"]
        if method == "notifications/cancelled":
            log(f"cancelled={(msg.get('params') or {}).get('requestId')}")
        elif method == "notifications/initialized" and self.mode == "server-requests":
            send({"jsonrpc": "2.0", "id": "s1", "method": "ping"})

    def on_response(self, msg: dict[str, Any]) -> None:
        if msg.get("id") == "s1":
            log("pong=" + json.dumps(msg, separators=(",", ":")))

    def run(self) -> None:
        while True:
            line = sys.stdin.buffer.readline()
            if not line:
                return self.on_eof()
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                send(error(None, -32700, "Parse error"))
                continue
            self.handle(msg)

    def on_eof(self) -> None:
        if self.mode in ("ignore-sigterm", "stubborn-discover"):
            while True:  # only SIGKILL ends this
                signal.pause()
        if self.mode == "slow-exit":
            time.sleep(0.3)
        sys.exit(0)


def start_stubborn_grandchild() -> None:
    """A grandchild in our process group that also ignores SIGTERM (it inherits our stdio)."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)",
        ]
    )
    log(f"grandchild={child.pid}")


def main(argv: list[str]) -> None:
    if len(argv) != 2 or argv[1] not in MODES:
        modes = "\n".join(f"  {name:20} {what}" for name, what in MODES.items())
        sys.exit(f"usage: {argv[0]} MODE\nmodes:\n{modes}")
    mode = argv[1]
    if mode == "ignore-sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        start_stubborn_grandchild()
    if mode == "stubborn-discover":
        signal.signal(signal.SIGTERM, lambda *_: log("sigterm"))
        log(f"started={os.getpid()}")
    if mode == "stdout-before-init":
        write_raw("Starting server...\nListening on stdio\n")
    Server(mode).run()


if __name__ == "__main__":
    main(sys.argv)
