"""Answers initialize, then never reads stdin again (a busy server): the client's writes fill the pipe.

It stays alive (dying on SIGTERM/SIGKILL as usual) until its parent goes away, or for 60 s at most.
Usage: ``python tests/servers/stops_reading.py`` (stdlib only; for the tests of stalled servers and of close()).
"""
import json
import os
import sys
import time


def main():
    line = sys.stdin.buffer.readline()
    if not line:
        return
    req = json.loads(line)
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {
        "protocolVersion": req["params"]["protocolVersion"], "capabilities": {"tools": {}},
        "serverInfo": {"name": "stops-reading", "version": "1"}}}) + "\n")
    sys.stdout.flush()
    parent, deadline = os.getppid(), time.monotonic() + 60
    while os.getppid() == parent and time.monotonic() < deadline:
        time.sleep(0.1)


if __name__ == "__main__":
    main()
