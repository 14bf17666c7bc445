"""A scripted, stdlib-only stdio MCP server that writes the bad lines a test asks for.

Usage: ``python tests/servers/hostile_stdio.py``

It answers ``initialize`` (echoing the requested version), ``ping`` and these tools properly:
  - ``echo``: a text content with ``arguments.text``.
  - ``emit``: writes each string of ``arguments.lines`` to stdout verbatim (one line each, with
    ``arguments.deep`` = ``[n, "list"|"dict"]`` a line nested ``n`` deep first), then answers
    ``"emitted"``: the bad lines reach the client before a good answer on the same connection.
  - ``raw_reply``: answers with ``arguments.template`` written verbatim, ``ID`` replaced by the
    request's id (a reply of a malformed shape to a pending call).
  - ``override``: from now on, requests for ``arguments.method`` are answered with the raw
    ``arguments.result`` (``null`` removes the override): a malformed ``tools/list`` and so on;
    ``arguments.json`` instead gives the result as JSON text (what the client cannot send itself,
    e.g. a lone surrogate ``"\\ud800"``).
Other methods: -32601. Exits 0 on stdin EOF. Every line is written whole and flushed.
"""
from __future__ import annotations

import json
import sys
from typing import Any, Dict

TOOLS = [{"name": name, "inputSchema": {"type": "object"}} for name in ("echo", "emit", "raw_reply", "override")]


def deep_line(depth: int, kind: str) -> str:
    """A JSON value nested ``depth`` deep (arrays, or objects under key "a")."""
    if kind == "dict":
        return '{"a":' * depth + "1" + "}" * depth
    return "[" * depth + "]" * depth


def write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def answer(rid: Any, result: Any) -> None:
    write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}))


def main() -> None:
    overrides: Dict[str, Any] = {}
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue
        rid, method, params = msg["id"], msg["method"], msg.get("params") or {}
        if method in overrides and params.get("name") != "override":  # (overrides never hide themselves)
            answer(rid, overrides[method])
        elif method == "initialize":
            answer(rid, {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                         "capabilities": {"tools": {}, "prompts": {}, "resources": {}, "completions": {}},
                         "serverInfo": {"name": "hostile", "version": "1"}})
        elif method == "ping":
            answer(rid, {})
        elif method == "tools/list":
            answer(rid, {"tools": TOOLS})
        elif method == "tools/call":
            name, args = params.get("name"), params.get("arguments") or {}
            if name == "echo":
                answer(rid, {"content": [{"type": "text", "text": args.get("text", "")}]})
            elif name == "emit":
                if args.get("deep"):
                    write(deep_line(*args["deep"]))
                for bad in args.get("lines", []):
                    write(bad)
                answer(rid, {"content": [{"type": "text", "text": "emitted"}]})
            elif name == "raw_reply":
                write(args["template"].replace("ID", json.dumps(rid)))
            elif name == "override":
                if "json" in args:
                    overrides[args["method"]] = json.loads(args["json"])
                elif args.get("result") is None:
                    overrides.pop(args["method"], None)
                else:
                    overrides[args["method"]] = args["result"]
                answer(rid, {"content": [{"type": "text", "text": "ok"}]})
            else:
                write(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "no such tool"}}))
        else:
            write(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}))


if __name__ == "__main__":
    main()
