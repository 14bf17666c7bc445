"""The stdio fuzz server: an MCP server (handshake era) that sends scripted raw bytes.

Usage: ``python stdio_server.py CONTROL_PORT``. It connects to the harness on 127.0.0.1:PORT,
says ``{"pid": ...}``, then takes scripts (``wire.py``) from that connection, answering ``ok`` to
each once it is queued. A client request whose method has a queued script gets the script's bytes
instead of its answer; every other request gets a valid answer. Responses the client sends (to
server requests in scripts) are counted. Stdlib only; exits on stdin EOF or a ``close`` piece.
"""
from __future__ import annotations

import collections
import json
import os
import sys
import threading
import time
from typing import Any, Deque, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire import CAPABILITIES, Control, answer, expand, take_script  # noqa: E402

scripts: Dict[str, Deque[Dict[str, Any]]] = collections.defaultdict(collections.deque)
lock = threading.Lock()
stats = {"requests": 0, "responses": 0, "scripts": 0}


def control_loop(control: Control) -> None:
    while True:
        msg = control.recv()
        if msg is None:
            os._exit(0)  # the harness went away
        if msg.get("op") == "script":
            with lock:
                scripts[msg["script"]["method"]].append(msg["script"])
            control.send({"ok": True})
        elif msg.get("op") == "stats":
            with lock:
                control.send(dict(stats))
        elif msg.get("op") == "flush":
            with lock:
                scripts.clear()
            control.send({"ok": True})


def main() -> None:
    control = Control(int(sys.argv[1]))
    control.send({"pid": os.getpid()})
    threading.Thread(target=control_loop, args=(control,), daemon=True).start()
    out = sys.stdout.buffer
    history: List[Any] = []
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        method = msg.get("method")
        if method is None:
            with lock:
                stats["responses"] += 1
            continue
        if "id" not in msg:
            continue  # a notification
        rid = msg["id"]
        with lock:
            stats["requests"] += 1
            script = take_script(scripts, method)
        if method == "initialize":
            result = {"protocolVersion": msg.get("params", {}).get("protocolVersion", "2025-11-25"),
                      "capabilities": CAPABILITIES, "serverInfo": {"name": "fuzz", "version": "1"}}
            out.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode() + b"\n")
        elif script is None:
            out.write(answer(method, rid) + b"\n")
        else:
            with lock:
                stats["scripts"] += 1
            for chunk in expand(script["frames"], method, rid, history):
                if chunk is None:
                    out.flush()
                    os._exit(0)
                if isinstance(chunk, float):
                    out.flush()
                    time.sleep(chunk)
                else:
                    out.write(chunk)
        out.flush()
        history.append(rid)
        del history[:-50]


if __name__ == "__main__":
    main()
