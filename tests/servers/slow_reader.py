"""A stdio peer that reads its stdin slowly, for tests of how the client writes (stdlib only).

Usage: ``python tests/servers/slow_reader.py OUT PAUSE CHUNK EVERY [ANSWER [STALL]]``: sleeps
``PAUSE`` seconds before reading anything (the pipe fills), then reads ``CHUNK`` bytes every
``EVERY`` seconds, except that after the first read it stops for ``STALL`` seconds. Every line read
is appended to the file ``OUT``; with ``ANSWER`` = 1 every request gets the result
``{"m": <its method>}``. Exits on stdin EOF.
"""
import json
import os
import sys
import time

out, pause, chunk, every = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
answer = len(sys.argv) > 5 and sys.argv[5] == "1"
stall = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
time.sleep(pause)
buf = b""
first = True
with open(out, "ab", buffering=0) as log:
    while True:
        data = os.read(0, chunk)
        if not data:
            break
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            log.write(line + b"\n")
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if answer and isinstance(msg, dict) and "id" in msg and "method" in msg:
                os.write(1, (json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"m": msg["method"]}}) + "\n").encode())
        time.sleep(stall if first else every)
        first = False
