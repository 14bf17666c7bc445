"""The script format shared by the harness and both fuzz servers (stdlib only).

A *script* tells a fuzz server what to send back for the next client request of one method::

    {"method": "tools/call", "frames": [[piece, ...], ...], "http": {...}, "get": [[piece, ...]]}

Each frame is a list of *pieces*, expanded on the server side (so a 32 MiB message costs the
harness a few bytes): ``{"b": text}`` (latin-1: one char per byte), ``{"r": text, "n": count}``
(``text`` repeated), ``{"id": k}`` (the JSON id of this request for ``k == 0``, of the ``-k``-th
earlier request for ``k < 0``, or a fresh unknown one for ``k > 0``), ``{"uniq": 1}`` (a JSON string never sent before: endless cursors), ``{"ans": 1}`` (a valid
result message for this request, no newline; with ``"every": s`` its first ``"max"`` bytes go one at
a time, ``s`` seconds apart), ``{"sleep": s}`` (flush, then pause: trickling),
``{"close": 1}`` (end the stream: stdio exits, HTTP hangs up). ``http`` (HTTP only) holds the
status, headers, ``length`` mode (``exact``/``none``/``short``/``chunked``) and ``hold`` seconds to
keep the response open after the body; ``get`` frames go to the open GET stream first.
``times`` (default 1): the script answers that many requests of its method (endless paging).
"""
from __future__ import annotations

import json
import socket
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

FUZZ_TOOL = {"name": "fuzz", "description": "fuzz target",
             "inputSchema": {"type": "object"}}

RESULTS: Dict[str, Dict[str, Any]] = {
    "ping": {},
    "tools/list": {"tools": [FUZZ_TOOL]},
    "tools/call": {"content": [{"type": "text", "text": "ok"}]},
    "prompts/list": {"prompts": [{"name": "p"}]},
    "prompts/get": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]},
    "resources/list": {"resources": [{"uri": "test://r", "name": "r"}]},
    "resources/templates/list": {"resourceTemplates": []},
    "resources/read": {"contents": [{"uri": "test://r", "text": "x"}]},
    "completion/complete": {"completion": {"values": ["a"]}},
    "logging/setLevel": {},
    "resources/subscribe": {},
}

CAPABILITIES = {"tools": {"listChanged": True}, "prompts": {"listChanged": True},
                "resources": {"subscribe": True, "listChanged": True}, "logging": {}, "completions": {}}


def answer(method: str, rid: Any) -> bytes:
    """The valid result message for a request of ``method`` with id ``rid`` (no newline)."""
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": RESULTS.get(method, {})}).encode()


Piece = Dict[str, Any]
_UNIQ = [0]
Chunk = Union[bytes, float, None]  # bytes to write, seconds to sleep, None: end the stream


def expand(frames: List[List[Piece]], method: str, rid: Any, history: List[Any]) -> Iterator[Chunk]:
    """Yield what to write for ``frames``: byte strings, sleep durations, and None for 'close'."""
    for frame in frames:
        buf: List[bytes] = []
        for p in frame:
            if "b" in p:
                buf.append(p["b"].encode("latin-1"))
            elif "r" in p:
                buf.append(p["r"].encode("latin-1") * int(p["n"]))
            elif "id" in p:
                k = int(p["id"])
                if k == 0:
                    value = rid
                elif k < 0:
                    value = history[k] if len(history) >= -k else 987654321
                else:
                    value = 10 ** 9 + k
                buf.append(json.dumps(value).encode())
            elif "uniq" in p:
                _UNIQ[0] += 1
                buf.append(json.dumps(f"c{_UNIQ[0]}").encode())
            elif "ans" in p and "every" in p:  # the answer trickled: its first ``max`` bytes one by one
                data = answer(method, rid)
                data_left = 0
                for i in range(min(int(p.get("max", len(data))), len(data))):
                    buf.append(data[i:i + 1])
                    yield b"".join(buf)
                    buf = []
                    yield float(p["every"])
                    data_left = i + 1
                buf.append(data[data_left:])
            elif "ans" in p:
                buf.append(answer(method, rid))
            elif "sleep" in p:
                if buf:
                    yield b"".join(buf)
                    buf = []
                yield float(p["sleep"])
            elif "close" in p:
                if buf:
                    yield b"".join(buf)
                    buf = []
                yield None
                return
        if buf:
            yield b"".join(buf)


class Control:
    """The server side of the control connection: a line of JSON each way."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.file = self.sock.makefile("rwb")

    def send(self, obj: Any) -> None:
        self.file.write(json.dumps(obj).encode() + b"\n")
        self.file.flush()

    def recv(self) -> Optional[Dict[str, Any]]:
        line = self.file.readline()
        return json.loads(line) if line else None


def split_method(script: Dict[str, Any]) -> Tuple[str, Dict[str, Any]]:
    return script["method"], script


def take_script(scripts: Dict[str, Any], method: str) -> Optional[Dict[str, Any]]:
    """The script for the next ``method`` request (or None), used up after its ``times`` uses.
    The caller holds the lock that guards ``scripts`` (a method -> deque of scripts map)."""
    pending = scripts.get(method)
    script = pending[0] if pending else None
    if script is not None:
        script["times"] = script.get("times", 1) - 1
        if script["times"] <= 0:
            pending.popleft()
    return script
