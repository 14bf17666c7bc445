"""Ignores SIGTERM and stdin EOF (only SIGKILL stops it early); on ``tools/call`` sends one
``notifications/message`` (level info, data "hello"), then answers with the ``text`` argument.

After stdin EOF it exits by itself once its parent goes away, or after 60 s at most.
Usage: ``python tests/servers/ignores_sigterm.py`` (stdlib only; for the tests of stalled servers and of close()).
"""
import json
import os
import signal
import sys
import time


def send(msg):
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    parent = os.getppid()
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        method = msg.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "ignores-sigterm", "version": "1"}}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        elif method == "tools/call":
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "hello"}})
            text = str(((msg.get("params") or {}).get("arguments") or {}).get("text", ""))
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": text}]}})
    deadline = time.monotonic() + 60
    while os.getppid() == parent and time.monotonic() < deadline:  # stdin EOF: linger, like a stuck server
        time.sleep(0.1)


if __name__ == "__main__":
    main()
