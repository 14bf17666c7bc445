"""A dual-era stdio MCP server for the tracing tests (tests/tracing/test_spans_and_metrics.py): it tells the client
the trace context (``traceparent``/``tracestate`` in ``params._meta``) each request reached it with.

Handshake era after ``initialize``; the 2026-07-28 era after ``server/discover`` (a request whose
``_meta`` names that protocol version is answered the 2026 way). Tools:

- ``meta``: returns the trace context it received (``structuredContent``; the text is the
  ``traceparent``).
- ``fail``: an ``isError`` result. ``boom``: a JSON-RPC error (-32050, "boom"). ``hang``: never answered.
- ``sample``: asks the client for a sampling/createMessage whose ``_meta`` carries the
  ``traceparent`` of the calling request: a server->client request in the handshake era, an
  ``input_required`` round in the 2026 era (the retry's ``traceparent`` is compared with the
  first round's, which rides in ``requestState``). Returns the sampled text and both contexts.
  ``{"propagate": false}``: the sampling request carries no ``_meta``.

``answer`` is also used in-process by the test's scripted HTTP server. Nothing imported but the
standard library; exits at stdin EOF.
"""
import json
import sys

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
TOOLS = [{"name": name, "inputSchema": {"type": "object"}} for name in ("meta", "fail", "boom", "hang", "sample")]


class Failure(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, code, message):
        super().__init__(message)
        self.error = {"code": code, "message": message}


def received(params):
    """The trace context in a request's ``_meta``."""
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    return {k: meta[k] for k in ("traceparent", "tracestate") if k in meta}


def answer(method, params, ask=None):
    """The result of one request (None: no answer); raises ``Failure`` for an error answer.
    ``ask(method, params)``: send a server->client request and return its result (handshake era)."""
    modern = (params.get("_meta") or {}).get(VERSION_KEY) == MODERN if isinstance(params.get("_meta"), dict) else False
    if method == "server/discover":
        return {"resultType": "complete", "supportedVersions": [MODERN], "capabilities": {"tools": {}},
                "serverInfo": {"name": "trace-echo", "version": "1"}}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-11-25"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "trace-echo", "version": "1"}}
    if method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = _call(params.get("name"), params, modern, ask)
        if result is None:
            return None
    else:
        raise Failure(-32601, "Method not found")
    if modern:
        result["resultType"] = "complete" if "resultType" not in result else result["resultType"]
    return result


def _call(name, params, modern, ask):
    seen = received(params)
    if name == "meta":
        return {"content": [{"type": "text", "text": seen.get("traceparent", "")}], "structuredContent": seen}
    if name == "fail":
        return {"content": [{"type": "text", "text": "it failed"}], "isError": True}
    if name == "boom":
        raise Failure(-32050, "boom")
    if name == "hang":
        return None
    if name == "sample":
        request = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}
        if (params.get("arguments") or {}).get("propagate", True):
            request["_meta"] = seen
        if not modern:
            text = ask("sampling/createMessage", request)["content"]["text"]
            return {"content": [{"type": "text", "text": text}], "structuredContent": {"rounds": [seen]}}
        responses = params.get("inputResponses")
        if not responses:
            return {"resultType": "input_required", "requestState": json.dumps(seen),
                    "inputRequests": {"s": {"method": "sampling/createMessage", "params": request}}}
        text = responses["s"]["content"]["text"]
        return {"content": [{"type": "text", "text": text}],
                "structuredContent": {"rounds": [json.loads(params["requestState"]), seen]}}
    raise Failure(-32602, f"unknown tool {name!r}")


def _serve():
    out = sys.stdout
    counter = [0]

    def write(message):
        out.write(json.dumps(message) + "\n")
        out.flush()

    def ask(method, params):
        counter[0] += 1
        rid = f"s-{counter[0]}"
        write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        for line in sys.stdin:
            reply = json.loads(line)
            if reply.get("id") == rid and "method" not in reply:
                return reply.get("result") or {}
        raise SystemExit(0)

    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue
        try:
            result = answer(msg["method"], msg.get("params") or {}, ask)
        except Failure as exc:
            write({"jsonrpc": "2.0", "id": msg["id"], "error": exc.error})
            continue
        if result is not None:
            write({"jsonrpc": "2.0", "id": msg["id"], "result": result})


if __name__ == "__main__":
    _serve()
