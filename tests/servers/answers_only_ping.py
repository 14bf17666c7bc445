"""Answers initialize and ping; reads every other message and never answers it. Exits on stdin EOF.

Usage: ``python tests/servers/answers_only_ping.py`` (stdlib only; for the tests of stalled servers and of close()).
"""
import json
import sys


def reply(request_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


def main():
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        if msg.get("method") == "initialize":
            reply(msg["id"], {"protocolVersion": msg["params"]["protocolVersion"],
                              "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                              "serverInfo": {"name": "answers-only-ping", "version": "1"}})
        elif msg.get("method") == "ping":
            reply(msg["id"], {})


if __name__ == "__main__":
    main()
