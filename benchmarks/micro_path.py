#!/usr/bin/env python3
"""CPU cost of each step of one blocking ``Client.call_tool`` over stdio, in isolation (one
thread, no pipe wake-ups): ``python benchmarks/micro_path.py``. Each line is the best of
several ``timeit`` runs (the one least disturbed by other load), in µs per call; compare with
the same step in the threaded raw floor. Used for benchmarks/PROFILE-threaded-stdio.md; reads
mcpclient's private names, so it may need updating when the engine changes."""
from __future__ import annotations

import json
import os
import sys
import timeit
from concurrent.futures import Future

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

from mcpclient import Client  # noqa: E402
from mcpclient.transports.base import decode_frame, encode_frame  # noqa: E402
from mcpclient.types import ToolResult  # noqa: E402


def us(stmt, number=20000, repeat=7, setup=None):
    times = timeit.repeat(stmt, setup=setup or (lambda: None), number=number, repeat=repeat)
    return min(times) / number * 1e6


def main() -> None:
    where = bench.Placement("free", None, None)
    client = Client(where.server_argv(False), protocol="legacy")
    client.__enter__()
    try:
        client.list_tools()
        session = client._session
        transport = session.transport
        from mcpclient.protocol import params as _params
        from mcpclient._engine.futures import CallFuture

        raw_result = {"content": [{"type": "text", "text": "x"}], "isError": False}
        reply_line = json.dumps({"jsonrpc": "2.0", "id": 12345, "result": raw_result},
                                separators=(",", ":")).encode() + b"\n"
        message = {"jsonrpc": "2.0", "id": 12345, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}
        params, transform = _params.tool_call("echo", bench.ARGS, False, None, None)
        rows = []

        def add(name, value, floor=None):
            rows.append((name, value, floor))

        # --- caller side, before the write
        add("_params.tool_call (params + transform closure)",
            us(lambda: _params.tool_call("echo", bench.ARGS, False, None, None)))
        from mcpclient._engine.deadline import NEVER, Deadline

        era = client._channel.conn.ready("tools/call", NEVER)
        add("Channel.call's checks (a deadline, connection ready, era.check)",
            us(lambda: client._channel.conn.ready("tools/call", Deadline(60.0)).check("tools/call")))
        add("CallFuture(session, method, transform)",
            us(lambda: CallFuture(session, "tools/call", transform)), us(lambda: Future()))
        add("encode_frame(message) + b'\\n'", us(lambda: encode_frame(message) + b"\n"),
            us(lambda: json.dumps(message).encode() + b"\n"))
        # transport.send to /dev/null (the write lock, deadline, memoryview, closing check, os.write)
        devnull = os.open(os.devnull, os.O_WRONLY)
        writer = transport._writer  # (the stdin writer: _stdin.StdinWriter)
        real_fd = writer._fd
        writer._fd = devnull
        try:
            add("StdioTransport.send (encode + lock + os.write to /dev/null)",
                us(lambda: transport.send(message, deadline=None)), None)
            pending = session._pending

            def send_one():
                pending.pop(session.call("tools/call", params).request_id, None)
            add("Session.call (send to /dev/null; its pending entry popped)", us(send_one))

            def send_with_progress():
                pending.pop(session.call("tools/call", params, on_progress=print).request_id, None)
            add("Session.call with on_progress (+ a progress token)", us(send_with_progress))
        finally:
            writer._fd = real_fd
        add("os.write(devnull, 100 bytes) alone", us(lambda: os.write(devnull, b"x" * 100)))
        os.close(devnull)

        # --- reader side
        add("decode_frame(line)", us(lambda: decode_frame(reply_line)), us(lambda: json.loads(reply_line)))
        msg = json.loads(reply_line)

        def complete_one():
            call = CallFuture(session, "tools/call", transform)
            session._pending[12345] = call
            session.reader._dispatch(msg)
        add("Reader._dispatch -> Session.complete -> deliver (+ a CallFuture)", us(complete_one))

        def floor_complete():
            f = Future()
            pending = {12345: f}
            with session._lock:
                g = pending.pop(msg["id"])
            g.set_result(msg)
        add("floor: pop under lock + Future.set_result (+ a Future)", us(floor_complete))

        # --- caller side, after the wake-up
        add("ToolResult.from_wire + transform (parse)", us(lambda: transform(raw_result)))
        add("ToolResult.from_wire alone", us(lambda: ToolResult.from_wire(raw_result, "echo")))

        # whole path, sequential, including the pipe and the reader thread hand-off
        add("Client.call_tool, whole (sequential, real pipe; free placement)",
            us(lambda: client.call_tool("echo", bench.ARGS), number=3000))
        add("Session.call(...).result(), whole (sequential, real pipe)",
            us(lambda: session.call("tools/call", params, deadline=Deadline(60.0)).result(), number=3000))
        del era
        print(f"{'step':66}{'µs/call':>9}{'floor µs':>10}")
        for name, value, floor in rows:
            print(f"{name:66}{value:9.2f}{'' if floor is None else format(floor, '10.2f')}")
    finally:
        client.__exit__(None, None, None)


if __name__ == "__main__":
    main()
