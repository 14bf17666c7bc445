"""Seeded mutation generators for fuzz cases (``random.Random``: fast, reproducible by seed).

A *case* is a JSON-able dict: ``call`` (the client method the harness calls), ``method`` (its
wire method), ``frames``/``get``/``http`` (the script, see ``wire.py``), ``timeout`` (the call's
timeout), ``family`` (which generator made it) and ``ends`` (the case ends the stdio stream on
purpose). ``make_case(rng, transport, max_size)`` draws one.
"""
from __future__ import annotations

import json
import random
from typing import Any, Dict, List

from .wire import RESULTS

# the client call for each wire method: (call name, wire method)
CALLS = [("call_tool", "tools/call"), ("list_tools", "tools/list"), ("list_prompts", "prompts/list"),
         ("get_prompt", "prompts/get"), ("list_resources", "resources/list"),
         ("read_resource", "resources/read"), ("ping", "ping"), ("complete", "completion/complete")]
CALL_WEIGHTS = [6, 3, 1, 1, 1, 1, 1, 1]
PAGED = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources"}

TIMEOUT = 3.0  # the call timeout of cases that expect an answer
SHORT_TIMEOUT = 0.3  # the call timeout of cases that never answer (timeouts cost wall time)

STRINGS = ["", "x", "\u0000", "\ud800", "\udfff\ud800", "\U0001f600", "\u202e", "a" * 300, "\r\n",
           "tools/call", "notifications/progress", "é", "\x7f", "null", "{}", "__proto__"]
SERVER_METHODS = ["sampling/createMessage", "elicitation/create", "roots/list", "ping", "tasks/get",
                  "bogus/method", ""]
NOTIFY_METHODS = ["notifications/progress", "notifications/message", "notifications/tools/list_changed",
                  "notifications/prompts/list_changed", "notifications/resources/list_changed",
                  "notifications/resources/updated", "notifications/cancelled", "notifications/tasks/status",
                  "notifications/elicitation/complete", "notifications/unknown"]


def garbage(rng: random.Random, depth: int = 0) -> Any:
    """A JSON value of any shape, with the awkward ones over-represented."""
    k = rng.randrange(14 if depth < 3 else 9)
    if k == 0:
        return None
    if k == 1:
        return rng.choice([True, False])
    if k == 2:
        return rng.choice([0, -1, 1, 2 ** 31, 2 ** 63, -(2 ** 64), 10 ** 30, 7])
    if k == 3:
        return rng.choice([0.5, -0.0, 1e308, -1e-308, 3.0])
    if k in (4, 5):
        return rng.choice(STRINGS)
    if k == 6:
        return "".join(chr(rng.randrange(0x110000)) for _ in range(rng.randrange(1, 8)))
    if k == 7:
        return []
    if k == 8:
        return {}
    if k in (9, 10):
        return [garbage(rng, depth + 1) for _ in range(rng.randrange(1, 4))]
    return {rng.choice(["type", "name", "id", "text", "uri", "content", "x", "_meta", "$schema"]):
            garbage(rng, depth + 1) for _ in range(rng.randrange(1, 4))}


def mutate_value(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """``value`` with one node somewhere below it replaced, removed or retyped."""
    if depth > 6 or rng.random() < 0.3:
        return garbage(rng)
    if isinstance(value, dict) and value:
        value = dict(value)
        key = rng.choice(list(value))
        r = rng.random()
        if r < 0.15:
            del value[key]
        elif r < 0.25:
            value[rng.choice(STRINGS)] = garbage(rng)
        else:
            value[key] = mutate_value(rng, value[key], depth + 1)
        return value
    if isinstance(value, list) and value:
        value = list(value)
        i = rng.randrange(len(value))
        r = rng.random()
        if r < 0.2:
            value.append(value[i])
        elif r < 0.3:
            del value[i]
        else:
            value[i] = mutate_value(rng, value[i], depth + 1)
        return value
    return garbage(rng)


RICH_RESULTS: Dict[str, List[Dict[str, Any]]] = {
    "tools/list": [{"tools": [{"name": "fuzz", "inputSchema": {"type": "object"},
                               "outputSchema": {"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema",
                                                "properties": {"a": {"type": "integer"}}}},
                              {"name": "t2", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}],
                    "nextCursor": "n1"}],
    "tools/call": [{"content": [{"type": "text", "text": "ok"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                                {"type": "resource", "resource": {"uri": "x://y", "text": "t"}}],
                    "structuredContent": {"a": 1}, "isError": False}],
    "prompts/list": [{"prompts": [{"name": "p", "arguments": [{"name": "a", "required": True}]}]}],
    "prompts/get": [{"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "description": "d"}],
    "resources/read": [{"contents": [{"uri": "test://r", "blob": "AAAA", "mimeType": "x/y"}]}],
    "completion/complete": [{"completion": {"values": ["a", "b"], "total": 2, "hasMore": False}}],
}


def base_result(rng: random.Random, method: str) -> Any:
    pool = RICH_RESULTS.get(method)
    return rng.choice(pool) if pool and rng.random() < 0.6 else RESULTS.get(method, {})


ID_CURRENT, ID_PREVIOUS, ID_UNKNOWN = {"id": 0}, {"id": -1}, {"id": 1}


def enc(obj: Any, rng: random.Random) -> str:
    """JSON text for ``obj`` (latin-1 safe: the piece format is one char per byte)."""
    text = json.dumps(obj, ensure_ascii=rng.random() < 0.7, allow_nan=True)
    return text.encode("utf-8", "surrogatepass").decode("latin-1")


def with_id(rng: random.Random, message: Dict[str, Any], id_piece: Dict[str, int]) -> List[Dict[str, Any]]:
    """Pieces for ``message`` with its ``id`` replaced by the server-side id piece."""
    message = dict(message, id="\u0001ID\u0001")
    text = enc(message, rng)
    head, _, tail = text.partition('"\\u0001ID\\u0001"' if '"\\u0001ID\\u0001"' in text else '"\x01ID\x01"')
    return [{"b": head}, id_piece, {"b": tail}]


def response_msg(rng: random.Random, method: str) -> Dict[str, Any]:
    if rng.random() < 0.25:
        error: Any = {"code": rng.choice([-32603, -32602, -32601, -32700, -32002, 0, 42]), "message": "boom"}
        if rng.random() < 0.5:
            error = mutate_value(rng, error)
        msg = {"jsonrpc": "2.0", "error": error}
    else:
        result = base_result(rng, method)
        if rng.random() < 0.8:
            result = mutate_value(rng, result)
        msg = {"jsonrpc": "2.0", "result": result}
    if rng.random() < 0.1:
        msg = mutate_value(rng, msg)
        if not isinstance(msg, dict):
            msg = {"jsonrpc": "2.0", "result": msg}
    return msg


def server_request(rng: random.Random) -> List[Dict[str, Any]]:
    method = rng.choice(SERVER_METHODS)
    params: Any = {"sampling/createMessage": {"messages": [{"role": "user", "content": {"type": "text", "text": "q"}}],
                                              "maxTokens": 10},
                   "elicitation/create": {"message": "m", "requestedSchema": {"type": "object", "properties": {
                       "n": {"type": "string"}}}}}.get(method, {})
    if rng.random() < 0.8:
        params = mutate_value(rng, params)
    rid = rng.choice([f"fz-{rng.randrange(10 ** 6)}", rng.randrange(10 ** 6), None, [1], {"a": 1}, 1.5, True])
    msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    if rng.random() < 0.2:
        del msg["params"]
    return [{"b": enc(msg, rng)}]


def notification(rng: random.Random) -> List[Dict[str, Any]]:
    method = rng.choice(NOTIFY_METHODS)
    params: Any = {"notifications/progress": {"progressToken": rng.choice(["t", 1, None, 10 ** 20]), "progress": 1},
                   "notifications/message": {"level": "info", "data": "hello", "logger": "l"},
                   "notifications/resources/updated": {"uri": "test://r"}}.get(method, {})
    if rng.random() < 0.7:
        params = mutate_value(rng, params)
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if method == "notifications/message" and rng.random() < 0.3:  # huge log data
        pieces = [{"b": '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"'},
                  {"r": "L", "n": rng.choice([10_000, 200_000])}, {"b": '"}}'}]
        return pieces
    return [{"b": enc(msg, rng)}]


def deep(rng: random.Random) -> List[Dict[str, Any]]:
    n = rng.choice([600, 1000, 5000, 100_000])
    if rng.random() < 0.5:
        return [{"r": "[", "n": n}, {"r": "]", "n": n}]
    head = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":'
    if rng.random() < 0.5:
        return [{"b": '{"jsonrpc":"2.0","id":'}, ID_CURRENT, {"b": ',"result":'}, {"r": '{"a":', "n": n},
                {"b": "1"}, {"r": "}", "n": n}, {"b": "}"}]
    return [{"b": head}, {"r": '{"a":', "n": n}, {"b": "1"}, {"r": "}", "n": n}, {"b": "}}"}]


def scalar_line(rng: random.Random) -> List[Dict[str, Any]]:
    return [{"b": rng.choice(["null", "42", '"x"', "true", "[]", "{}", "[null]", "1e999", "-", "NaN",
                              '{"jsonrpc":"2.0"}', '{"id":null}', '{"jsonrpc":"2.0","id":null,"result":{}}'])}]


def batch(rng: random.Random, method: str) -> List[Dict[str, Any]]:
    items: List[List[Dict[str, Any]]] = []
    for _ in range(rng.randrange(0, 4)):
        r = rng.random()
        if r < 0.4:
            items.append(notification(rng))
        elif r < 0.7:
            items.append(server_request(rng))
        else:
            items.append(with_id(rng, response_msg(rng, method), rng.choice([ID_UNKNOWN, ID_PREVIOUS, ID_CURRENT])))
    out: List[Dict[str, Any]] = [{"b": "["}]
    for i, it in enumerate(items):
        if i:
            out.append({"b": ","})
        out.extend(it)
    out.append({"b": "]"})
    return out


def flatten(pieces: List[Dict[str, Any]]) -> str:
    """The pieces of a frame that has no server-side parts, as one text (for byte mutations)."""
    return "".join(p["b"] if "b" in p else p["r"] * p["n"] for p in pieces)


def raw_mutate(rng: random.Random, pieces: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Byte-level damage: truncation, bit flips, invalid UTF-8, CR/LF/NUL inserted."""
    if any("id" in p or ("r" in p and p["n"] > 1000) for p in pieces):
        i = rng.randrange(len(pieces))
        if "b" in pieces[i] and pieces[i]["b"]:
            pieces = list(pieces)
            pieces[i] = {"b": raw_mutate(rng, [pieces[i]])[0]["b"]}
        return pieces
    text = flatten(pieces)
    data = bytearray(text.encode("latin-1"))
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(6)
        pos = rng.randrange(len(data) + 1)
        if op == 0:
            del data[pos:]
        elif op == 1 and data:
            i = min(pos, len(data) - 1)
            data[i] ^= 1 << rng.randrange(8)
        elif op == 2:
            data[pos:pos] = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"])
        elif op == 3:
            data[pos:pos] = rng.choice([b"\r", b"\n", b"\x00", b"\r\n", b"\x0b", b"\x1e"])
        elif op == 4 and data:
            del data[pos:pos + rng.randrange(1, 8)]
        else:
            data[pos:pos] = data[pos:pos + rng.randrange(1, 20)]
    return [{"b": bytes(data).decode("latin-1")}]


def noise_frame(rng: random.Random, method: str, max_size: int) -> List[Dict[str, Any]]:
    r = rng.random()
    if r < 0.22:
        frame = notification(rng)
    elif r < 0.40:
        frame = server_request(rng)
    elif r < 0.55:
        frame = with_id(rng, response_msg(rng, method), rng.choice([ID_UNKNOWN, ID_PREVIOUS]))
    elif r < 0.63:
        frame = scalar_line(rng)
    elif r < 0.70:
        frame = deep(rng)
    elif r < 0.77:
        frame = batch(rng, method)
    elif r < 0.80:
        frame = oversize(rng, max_size)
    else:
        frame = raw_mutate(rng, rng.choice([notification, server_request])(rng))
    return frame


def oversize(rng: random.Random, max_size: int) -> List[Dict[str, Any]]:
    """A message above the client's bound (up to 32 times it), in one of three shapes."""
    n = int(max_size * rng.choice([1.01, 2, 8, 32]))
    k = rng.randrange(3)
    if k == 0:
        return [{"b": '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'},
                {"r": "x", "n": n}, {"b": '"}}'}]
    if k == 1:
        return [{"b": '{"jsonrpc":"2.0","id":'}, ID_CURRENT, {"b": ',"result":{"content":[{"type":"text","text":"'},
                {"r": "y", "n": n}, {"b": '"}]}}'}]
    return [{"r": " ", "n": n}, {"b": "{}"}]


# ------------------------------------------------------------------- framing per transport

def stdio_frames(frames: List[List[Dict[str, Any]]], rng: random.Random) -> List[List[Dict[str, Any]]]:
    out = []
    for f in frames:
        end = "\n" if rng.random() < 0.93 else rng.choice(["\r\n", "\n\n", "\r", ""])
        out.append(f + [{"b": end}])
    return out


def sse_event(rng: random.Random, pieces: List[Dict[str, Any]], mangle: bool,
              clean: bool = False) -> List[Dict[str, Any]]:
    """One SSE event carrying ``pieces``, its framing damaged when ``mangle``; ``clean``: a plain
    ``message`` event (the answer: an answer a client rightly ignores only costs time)."""
    nl = "\n" if not mangle or rng.random() < 0.6 else rng.choice(["\r\n", "\r"])
    head: List[Dict[str, Any]] = []
    if clean:
        return [{"b": "data: "}] + pieces + [{"b": nl + nl}]
    if rng.random() < 0.3:
        head.append({"b": f"id: {rng.choice(['1', 'e-2', 'a' + chr(0) + 'b', '', 'x' * 50])}{nl}"})
    if rng.random() < 0.2:
        head.append({"b": f"event: {rng.choice(['message', 'message', 'ping', '', 'endpoint'])}{nl}"})
    if mangle:
        for _ in range(rng.randrange(1, 3)):
            head.append({"b": rng.choice([f": keep-alive{nl}", f"retry: {rng.choice(['x', '-1', '99999999999999999999', ''])}{nl}",
                                          f"data{nl}", f"event: message{nl}{nl}", f"unknown: field{nl}",
                                          f"data:{nl}", f"{nl}", f":{'c' * 100}{nl}"])})
    body: List[Dict[str, Any]]
    if mangle and rng.random() < 0.3 and all("b" in p for p in pieces):  # data split over lines
        text = flatten(pieces)
        cut = rng.randrange(len(text) + 1)
        body = [{"b": "data: " + text[:cut] + nl + "data:" + text[cut:]}]
    else:
        body = [{"b": "data: " if rng.random() < 0.9 else "data:"}] + pieces
    tail = nl + (nl if not mangle or rng.random() < 0.8 else "")
    return head + body + [{"b": tail}]


def http_wrap(case: Dict[str, Any], frames: List[List[Dict[str, Any]]], answer: bool, rng: random.Random,
              mangle: bool) -> None:
    """Fill ``case`` with an HTTP script carrying ``frames`` (then the answer when ``answer``)."""
    opts: Dict[str, Any] = {}
    if rng.random() < 0.25 and len(frames) <= 1:  # a plain JSON body
        body = frames[0] if frames else [{"ans": 1}]
        if not frames and not answer:
            body = [{"b": ""}]
        case["frames"] = [body]
        opts["headers"] = {"Content-Type": rng.choice(["application/json", "application/json; charset=utf-8",
                                                       "text/plain", "application/json; charset=latin-1", ""])}
        if frames and answer:  # the body was noise: the answer cannot follow it
            case["timeout"] = SHORT_TIMEOUT
    else:
        events = [sse_event(rng, f, mangle) for f in frames]
        if answer:
            events.append(sse_event(rng, [{"ans": 1}], False, clean=True))
        case["frames"] = events
        opts["headers"] = {"Content-Type": "text/event-stream"}
    if mangle and rng.random() < 0.3:
        opts["status"] = rng.choice([200, 200, 202, 204, 400, 404, 401, 403, 409, 429, 500, 502, 503, 301, 299, 600])
    if mangle and rng.random() < 0.2:
        opts["headers"]["Content-Type"] = rng.choice(["text/event-stream; charset=utf-8", "TEXT/EVENT-STREAM",
                                                       "application/octet-stream", "text/event-stream\x7f"])
    if rng.random() < 0.2:
        opts["headers"]["Mcp-Session-Id"] = rng.choice(["fz-session-1", "other", "", "x" * 200])
    opts["length"] = rng.choice(["exact", "exact", "none", "chunked"] + (["short"] if mangle else []))
    case["http"] = opts


# ------------------------------------------------------------------- cases

def make_case(rng: random.Random, transport: str, max_size: int) -> Dict[str, Any]:
    """One fuzz case for ``transport`` (``stdio`` or ``http``)."""
    call, method = rng.choices(CALLS, CALL_WEIGHTS)[0]
    case: Dict[str, Any] = {"call": call, "method": method, "timeout": TIMEOUT, "ends": False}
    r = rng.random()
    frames: List[List[Dict[str, Any]]] = []
    answer = True
    mangle = False
    if r < 0.38:
        family = "noise"
        frames = [noise_frame(rng, method, max_size) for _ in range(rng.randrange(1, 4))]
    elif r < 0.68:
        family = "reply"
        frames = [with_id(rng, response_msg(rng, method), ID_CURRENT)]  # the answer follows: a duplicate
        if rng.random() < 0.3:
            frames.insert(0, noise_frame(rng, method, max_size))
    elif r < 0.82:
        family = "bytes"
        frames = [raw_mutate(rng, with_id(rng, response_msg(rng, method), ID_CURRENT))]
    elif r < 0.91 and transport == "http":
        family = "sse"
        frames = [noise_frame(rng, method, max_size) for _ in range(rng.randrange(0, 3))]
        mangle = True
    elif r < 0.925:
        family = "oversize"
        frames = [oversize(rng, max_size)]
    elif r < 0.955:
        family = "silent"
        frames = [noise_frame(rng, method, max_size) for _ in range(rng.randrange(0, 2))]
        answer = False
        case["timeout"] = SHORT_TIMEOUT
    elif r < 0.97:
        family = "trickle"
        frames = [noise_frame(rng, method, max_size) for _ in range(rng.randrange(0, 2))]
        slow = rng.random() < 0.5  # past the timeout: the call must still end on time
        case["timeout"] = 0.5 if slow else TIMEOUT
        case["trickle"] = 0.25 if slow else 0.02
    elif r < 0.975:
        family = "dribble"  # the answer itself a byte at a time, past the timeout
        case["timeout"] = 0.5
        answer = False
        dribble = {"ans": 1, "every": 0.1, "max": 10} if transport == "stdio" else {"ans": 1, "every": 0.2}
        frames = [[dribble]]
    elif r < 0.9775:
        family = "keepalive"  # keep-alives (SSE comments, blank lines) past the timeout, then the answer
        beat = {"b": ": keep-alive\n\n"} if transport == "http" else {"b": "\n"}
        frames = [[beat, {"sleep": 0.1}] for _ in range(15)]
        case["timeout"] = 0.5
    elif r < 0.9825 and transport == "stdio":
        family = "end"
        frames = [noise_frame(rng, method, max_size) for _ in range(rng.randrange(0, 2))] + [[{"close": 1}]]
        answer = False
        case["ends"] = True
        case["timeout"] = SHORT_TIMEOUT * 3
    elif r < 0.985 and method in PAGED:
        family = "pages"
        key = PAGED[method]
        frames = [[{"b": '{"jsonrpc":"2.0","id":'}, ID_CURRENT,
                   {"b": f',"result":{{"{key}":[],"nextCursor":'}, {"uniq": 1}, {"b": "}}"}]]
        case["times"] = 100_000
        case["timeout"] = 0.5
        answer = False
    else:
        family = "get" if transport == "http" else "noise"
        frames = [noise_frame(rng, method, max_size) for _ in range(rng.randrange(1, 3))]
        if transport == "http":
            case["get"] = [sse_event(rng, f, rng.random() < 0.3) for f in frames]
            frames = []
    case["family"] = family
    if transport == "http" and family == "dribble":
        case["frames"] = [[{"b": "data: "}, frames[0][0], {"b": "\n\n"}]] if rng.random() < 0.35 else frames
        case["http"] = {"headers": {"Content-Type": "text/event-stream" if len(case["frames"][0]) > 1 else
                                    "application/json"}, "length": rng.choice(["exact", "chunked"])}
        return case_done(case)
    if transport == "stdio" and family == "keepalive":
        case["frames"] = frames + [[{"ans": 1}, {"b": "\n"}]]
    elif transport == "stdio":
        case["frames"] = stdio_frames(frames, rng)
        if answer:
            case["frames"].append([{"b": "\n"}, {"ans": 1}, {"b": "\n"}])  # after a blank line: a frame may lack its end
        elif not case["ends"]:
            case["frames"].append([{"b": "\n"}])  # end a frame left open: the follow-up ping's answer must not join it
    else:
        http_wrap(case, frames, answer, rng, mangle or family == "bytes")
        if family == "keepalive":
            case["frames"] = frames + [sse_event(rng, [{"ans": 1}], False, clean=True)]
            case["http"] = {"headers": {"Content-Type": "text/event-stream"}, "length": "none"}
        if family == "trickle":
            case["http"]["length"] = rng.choice(["none", "chunked"])
        if family == "get":
            case["frames"].append(sse_event(rng, [{"ans": 1}], False, clean=True))
        if family in ("silent",) or (family == "sse" and rng.random() < 0.3):
            case["http"]["length"] = "none"
            case["http"]["hold"] = 3.0  # answer (or nothing), then silence on an open stream
            if family == "sse":
                case["timeout"] = 0.5
    return case_done(case)


def case_done(case: Dict[str, Any]) -> Dict[str, Any]:
    if case.get("trickle"):
        step = {"sleep": case["trickle"]}
        case["frames"] = [f + [step] for f in case["frames"]]
    return case
