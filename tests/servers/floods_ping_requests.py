"""After notifications/initialized, sends N ``ping`` requests without reading stdin, writes
``flood done`` on stderr, then serves normally (answers ping, reads the client's responses).
Exits on stdin EOF.

Usage: ``python tests/servers/floods_ping_requests.py N`` (stdlib only; for tests/transports/stdio/test_stalled_servers.py).
"""
import json
import sys


def send(msg):
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    count = int(sys.argv[1])
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        method = msg.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "floods-ping-requests", "version": "1"}}})
        elif method == "notifications/initialized":
            for i in range(count):
                send({"jsonrpc": "2.0", "id": "s%d" % i, "method": "ping"})
            sys.stderr.write("flood done\n")
            sys.stderr.flush()
        elif method == "ping" and "id" in msg:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})


if __name__ == "__main__":
    main()
