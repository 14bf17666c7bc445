"""Scripted LLM endpoints on 127.0.0.1 for the adapters' end-to-end tests, and the shape checks.

``scripted_llm(calls)`` serves OpenAI's Chat Completions (``POST /v1/chat/completions``) and
Responses (``POST /v1/responses``) APIs and Anthropic's Messages API (``POST /v1/messages``),
non-streaming. Every request body is checked against the provider's documented shapes for tools
and messages (``check_*`` below; strict-mode rules included). The scripted model answers a
conversation without tool results with parallel calls to ``calls`` (``[(tool, arguments), ...]``;
each tool must be among those sent, its arguments valid for the tool's schema; for a strict tool
the omitted optional arguments are sent as ``null``, as a strict model does), and one with tool
results with a final text that quotes them. A request that breaks a rule is answered 400 and
its problems are kept in ``endpoint.problems``.

    with scripted_llm([("a_echo", {"text": "hi"})]) as endpoint:
        client = openai.OpenAI(base_url=endpoint.url + "/v1", api_key="test")
"""
from __future__ import annotations

import json
import re
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import jsonschema

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# --- schema shape checks -------------------------------------------------------------------------

#: Keywords OpenAI's strict mode accepts (Structured Outputs' supported subset).
STRICT_KEYWORDS = {"type", "description", "title", "properties", "required", "additionalProperties", "items",
                   "enum", "const", "anyOf", "$ref", "$defs", "pattern", "format", "multipleOf", "maximum",
                   "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems"}
STRICT_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}


def check_parameters(schema: Any, where: str) -> List[str]:
    """What every provider needs of a tool's parameters: an object schema at the top, with
    ``properties``, no top-level combinators, no ``$schema``, a valid JSON Schema."""
    problems = []
    if not isinstance(schema, dict):
        return [f"{where}: parameters must be an object, got {type(schema).__name__}"]
    if schema.get("type") != "object":
        problems.append(f"{where}: top-level type must be 'object', got {schema.get('type')!r}")
    if not isinstance(schema.get("properties"), dict):
        problems.append(f"{where}: object schema missing properties")
    for key in ("oneOf", "anyOf", "allOf", "$schema"):
        if key in schema:
            problems.append(f"{where}: top-level {key!r} is not allowed")
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        problems.append(f"{where}: not a valid JSON Schema: {exc.message}")
    return problems


def check_strict(schema: Any, where: str) -> List[str]:
    """OpenAI's strict-mode rules: every object closed (``additionalProperties: false``) with all
    its properties required; only supported keywords; ``anyOf`` not at the top; ``$ref`` alone,
    pointing at ``#`` or into ``$defs``; every node typed."""
    problems = check_parameters(schema, where)
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}

    def walk(node: Any, path: str, top: bool) -> None:
        if not isinstance(node, dict):
            problems.append(f"{where}{path}: a schema must be an object")
            return
        unknown = set(node) - STRICT_KEYWORDS
        if unknown:
            problems.append(f"{where}{path}: keywords not allowed in strict mode: {sorted(unknown)}")
        if "$defs" in node and not top:
            problems.append(f"{where}{path}: $defs only at the top")
        if "$ref" in node:
            ref = node["$ref"]
            if len(node) > 1:
                problems.append(f"{where}{path}: $ref with sibling keywords")
            if ref != "#" and not (ref.startswith("#/$defs/") and ref[len("#/$defs/"):] in defs):
                problems.append(f"{where}{path}: $ref {ref!r} does not point into $defs")
            return
        if "anyOf" in node:
            if top:
                problems.append(f"{where}: anyOf at the top")
            for i, branch in enumerate(node["anyOf"]):
                walk(branch, f"{path}.anyOf[{i}]", False)
            return
        types = node.get("type")
        types = [types] if isinstance(types, str) else types
        if not types or not set(types) <= STRICT_TYPES:
            problems.append(f"{where}{path}: type missing or unsupported: {node.get('type')!r}")
            return
        if "enum" in node:
            for value in node["enum"]:
                if not jsonschema.Draft202012Validator({"type": types}).is_valid(value):
                    problems.append(f"{where}{path}: enum value {value!r} does not match type {types}")
        if "object" in types:
            props = node.get("properties")
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}{path}: additionalProperties must be false")
            if not isinstance(props, dict):
                problems.append(f"{where}{path}: object without properties")
                props = {}
            if sorted(node.get("required", [])) != sorted(props):
                problems.append(f"{where}{path}: every property must be required")
            for name, sub in props.items():
                walk(sub, f"{path}.{name}", False)
        if "array" in types:
            if not isinstance(node.get("items"), dict):
                problems.append(f"{where}{path}: array without one items schema")
            else:
                walk(node["items"], f"{path}[]", False)

    if isinstance(schema, dict):
        walk({k: v for k, v in schema.items() if k != "$defs"}, "", True)
        for name, sub in defs.items():
            walk(sub, f".$defs.{name}", False)
    return problems


def _only(obj: Dict[str, Any], allowed: set, where: str) -> List[str]:
    extra = set(obj) - allowed
    return [f"{where}: unexpected fields {sorted(extra)}"] if extra else []


def check_openai_tool(tool: Any, api: str, where: str = "tool") -> List[str]:
    """A Chat Completions ``{"type": "function", "function": {...}}`` or Responses ``{"type":
    "function", "name", ...}`` function tool (``strict`` required there)."""
    if not isinstance(tool, dict) or tool.get("type") != "function":
        return [f"{where}: not a function tool"]
    if api == "chat":
        problems = _only(tool, {"type", "function"}, where)
        function = tool.get("function")
        if not isinstance(function, dict):
            return problems + [f"{where}: missing function"]
    else:
        problems, function = [], tool
        if not isinstance(tool.get("strict"), bool):
            problems.append(f"{where}: the Responses API needs 'strict' (true or false)")
    problems += _only(function, {"name", "description", "parameters", "strict"} | ({"type"} if api != "chat" else set()), where)
    if not isinstance(function.get("name"), str) or not NAME.match(function["name"]):
        problems.append(f"{where}: bad name {function.get('name')!r}")
    if "description" in function and not isinstance(function["description"], str):
        problems.append(f"{where}: description must be a string")
    parameters = function.get("parameters")
    for key in ("enum", "const", "not"):  # beside the combinators check_parameters refuses
        if isinstance(parameters, dict) and key in parameters:
            problems.append(f"{where}({function.get('name')}): top-level {key!r} is not allowed")
    if function.get("strict"):
        problems += check_strict(function.get("parameters"), f"{where}({function.get('name')})")
    else:
        problems += check_parameters(function.get("parameters"), f"{where}({function.get('name')})")
    return problems


def check_anthropic_tool(tool: Any, where: str = "tool") -> List[str]:
    """A Messages API client tool: ``name``, ``description``, ``input_schema`` (an object schema)."""
    if not isinstance(tool, dict):
        return [f"{where}: not an object"]
    problems = _only(tool, {"name", "description", "input_schema"}, where)
    if not isinstance(tool.get("name"), str) or not NAME.match(tool["name"]):
        problems.append(f"{where}: bad name {tool.get('name')!r}")
    if "description" in tool and not isinstance(tool["description"], str):
        problems.append(f"{where}: description must be a string")
    return problems + check_parameters(tool.get("input_schema"), f"{where}({tool.get('name')})")


# --- message shape checks --------------------------------------------------------------------------

def _check_chat(body: Dict[str, Any]) -> List[str]:
    problems: List[str] = []
    pending: List[str] = []
    for i, message in enumerate(body.get("messages") or []):
        where = f"messages[{i}]"
        role = message.get("role")
        if pending and role != "tool":
            problems.append(f"{where}: tool calls {pending} were not answered before a {role} message")
            pending = []
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                problems += _only(call, {"id", "type", "function"}, f"{where}.tool_calls")
                if call.get("type") != "function" or not isinstance(call.get("function", {}).get("arguments"), str):
                    problems.append(f"{where}: a tool call needs type 'function' and string arguments")
                pending.append(call.get("id"))
        elif role == "tool":
            problems += _only(message, {"role", "tool_call_id", "content"}, where)
            if message.get("tool_call_id") not in pending:
                problems.append(f"{where}: tool_call_id {message.get('tool_call_id')!r} answers no pending call")
            else:
                pending.remove(message["tool_call_id"])
            content = message.get("content")
            if not (isinstance(content, str) or (isinstance(content, list) and all(
                    isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content))):
                problems.append(f"{where}: tool content must be a string or text parts")
        elif role not in ("system", "developer", "user"):
            problems.append(f"{where}: unknown role {role!r}")
    if pending:
        problems.append(f"tool calls {pending} were not answered")
    return problems


_RESPONSES_PART = {"input_text": {"type", "text"}, "input_image": {"type", "image_url", "detail", "file_id"},
                   "input_file": {"type", "filename", "file_data", "file_id", "file_url"}}


def _check_responses(body: Dict[str, Any]) -> List[str]:
    problems: List[str] = []
    items = body.get("input")
    if isinstance(items, str):
        return problems
    calls = set()
    for i, item in enumerate(items or []):
        where = f"input[{i}]"
        kind = item.get("type")
        if kind == "function_call":
            if not all(isinstance(item.get(k), str) for k in ("call_id", "name", "arguments")):
                problems.append(f"{where}: a function_call needs call_id, name, arguments strings")
            calls.add(item.get("call_id"))
        elif kind == "function_call_output":
            problems += _only(item, {"type", "call_id", "output"}, where)
            if item.get("call_id") not in calls:
                problems.append(f"{where}: call_id {item.get('call_id')!r} answers no function_call")
            output = item.get("output")
            if isinstance(output, list):
                for part in output:
                    allowed = _RESPONSES_PART.get(part.get("type"))
                    if allowed is None:
                        problems.append(f"{where}: output part type {part.get('type')!r}")
                    else:
                        problems += _only(part, allowed, where)
                    if part.get("type") == "input_image" and not str(part.get("image_url", "")).startswith("data:image/"):
                        problems.append(f"{where}: input_image needs a data URL")
            elif not isinstance(output, str):
                problems.append(f"{where}: output must be a string or a list of parts")
        elif kind in (None, "message"):
            if item.get("role") not in ("user", "assistant", "system", "developer"):
                problems.append(f"{where}: bad message role")
        elif kind not in ("reasoning",):
            problems.append(f"{where}: unexpected item type {kind!r}")
    return problems


_ANTHROPIC_RESULT_BLOCKS = {"text", "image", "document", "search_result"}


def _check_messages(body: Dict[str, Any]) -> List[str]:
    problems: List[str] = []
    if not isinstance(body.get("max_tokens"), int):
        problems.append("max_tokens is required")
    messages = body.get("messages") or []
    pending: List[str] = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        role = message.get("role")
        if role != ("user" if i % 2 == 0 else "assistant"):
            problems.append(f"{where}: roles must alternate user/assistant, got {role!r}")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if role == "user" and pending:
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if blocks[:len(results)] != results:
                problems.append(f"{where}: tool_result blocks must come first")
            answered = [b.get("tool_use_id") for b in results]
            if sorted(answered) != sorted(pending):
                problems.append(f"{where}: tool_use ids {pending} answered by {answered}")
            for block in results:
                problems += _only(block, {"type", "tool_use_id", "content", "is_error", "cache_control"}, where)
                if "is_error" in block and not isinstance(block["is_error"], bool):
                    problems.append(f"{where}: is_error must be a boolean")
                inner = block.get("content")
                inner = [{"type": "text", "text": inner}] if isinstance(inner, str) else inner or []
                for part in inner:
                    if part.get("type") not in _ANTHROPIC_RESULT_BLOCKS:
                        problems.append(f"{where}: tool_result content block {part.get('type')!r}")
                    if part.get("type") == "text" and not part.get("text"):
                        problems.append(f"{where}: empty text block")
                    if part.get("type") == "image":
                        source = part.get("source") or {}
                        if source.get("type") != "base64" or source.get("media_type") not in (
                                "image/jpeg", "image/png", "image/gif", "image/webp") or not source.get("data"):
                            problems.append(f"{where}: bad image source {source.get('media_type')!r}")
            pending = []
        elif pending:
            problems.append(f"{where}: tool_use {pending} not answered")
        if role == "assistant":
            pending = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
    return problems


# --- the scripted endpoint -------------------------------------------------------------------------

class ScriptedLLM:
    """The endpoint's state: the script, every request body, and every problem found."""

    def __init__(self, calls: Sequence[Tuple[str, Dict[str, Any]]],
                 then: Sequence[Sequence[Tuple[str, Dict[str, Any]]]] = ()) -> None:
        """``calls``: the model's first turn; ``then``: the calls of each later turn (Chat
        Completions and Messages), before the final answer."""
        self.calls = list(calls)
        self.steps = [list(calls)] + [list(step) for step in then]
        self.requests: List[Tuple[str, Dict[str, Any]]] = []
        self.problems: List[str] = []
        self.url = ""

    # -- the model -------------------------------------------------------------------------------
    def _arguments(self, tools: Dict[str, Dict[str, Any]], name: str, arguments: Dict[str, Any]) -> List[str]:
        tool = tools.get(name)
        if tool is None:
            return [f"the script calls {name!r}, which was not offered (offered: {sorted(tools)})"]
        if tool.get("strict"):  # a strict model sends every property, null for the ones it omits
            for prop in tool["parameters"].get("properties", {}):
                arguments.setdefault(prop, None)
        errors = sorted(jsonschema.Draft202012Validator(tool["parameters"]).iter_errors(arguments), key=str)
        return [f"arguments for {name}: {e.message}" for e in errors]

    def _planned(self, tools: Dict[str, Dict[str, Any]], step: int = 0) -> List[Tuple[str, Dict[str, Any]]]:
        planned = [(name, json.loads(json.dumps(args))) for name, args in self.steps[step]]
        for name, args in planned:
            self.problems += self._arguments(tools, name, args)
        return planned

    def chat(self, body: Dict[str, Any]) -> Dict[str, Any]:
        tools = body.get("tools") or []
        for i, tool in enumerate(tools):
            self.problems += check_openai_tool(tool, "chat", f"tools[{i}]")
        self.problems += _check_chat(body)
        offered = {t["function"]["name"]: t["function"] for t in tools if isinstance(t.get("function"), dict)}
        results = [m["content"] for m in body["messages"] if m.get("role") == "tool"]
        turns = sum(1 for m in body["messages"] if m.get("role") == "assistant" and m.get("tool_calls"))
        if results and turns >= len(self.steps):
            message: Dict[str, Any] = {"role": "assistant", "content": "final: " + " | ".join(map(str, results))}
            finish = "stop"
        else:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}" if not turns else f"call_{turns}_{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(self._planned(offered, turns))]}
            finish = "tool_calls"
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    def responses(self, body: Dict[str, Any]) -> Dict[str, Any]:
        tools = body.get("tools") or []
        for i, tool in enumerate(tools):
            self.problems += check_openai_tool(tool, "responses", f"tools[{i}]")
        self.problems += _check_responses(body)
        offered = {t["name"]: t for t in tools if isinstance(t.get("name"), str)}
        items = body.get("input") if isinstance(body.get("input"), list) else []
        results = [i["output"] for i in items if i.get("type") == "function_call_output"]
        if results:
            text = "final: " + " | ".join(r if isinstance(r, str) else json.dumps(r) for r in results)
            output: List[Dict[str, Any]] = [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                                             "content": [{"type": "output_text", "text": text, "annotations": []}]}]
        else:
            output = [{"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": name,
                       "arguments": json.dumps(args), "status": "completed"}
                      for i, (name, args) in enumerate(self._planned(offered))]
        return {"id": "resp_1", "object": "response", "created_at": 0, "model": body.get("model"),
                "status": "completed", "output": output, "parallel_tool_calls": True, "tools": tools,
                "tool_choice": "auto", "error": None, "incomplete_details": None, "instructions": None,
                "metadata": {}, "temperature": 1.0, "top_p": 1.0,
                "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                          "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}}

    def messages(self, body: Dict[str, Any]) -> Dict[str, Any]:
        tools = body.get("tools") or []
        for i, tool in enumerate(tools):
            self.problems += check_anthropic_tool(tool, f"tools[{i}]")
        self.problems += _check_messages(body)
        offered = {t["name"]: {"parameters": t["input_schema"]} for t in tools if isinstance(t.get("name"), str)}
        last = body["messages"][-1]
        results = [b for b in last.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
        turns = sum(1 for m in body["messages"] if m.get("role") == "assistant" and any(
            isinstance(b, dict) and b.get("type") == "tool_use" for b in m.get("content") or []))
        if results and turns >= len(self.steps):
            quoted = [" ".join(p.get("text", f"<{p.get('type')}>") for p in r["content"]) +
                      (" (error)" if r.get("is_error") else "") for r in results]
            content: List[Dict[str, Any]] = [{"type": "text", "text": "final: " + " | ".join(quoted)}]
            stop = "end_turn"
        else:
            content = [{"type": "tool_use", "id": f"toolu_{i}" if not turns else f"toolu_{turns}_{i}", "name": name,
                        "input": args}
                       for i, (name, args) in enumerate(self._planned(offered, turns))]
            stop = "tool_use"
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model"),
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1}}

    def handle(self, path: str, body: Dict[str, Any]) -> Tuple[int, Dict[str, Any]]:
        self.requests.append((path, body))
        before = len(self.problems)
        route = {"/v1/chat/completions": self.chat, "/v1/responses": self.responses, "/v1/messages": self.messages}
        if path not in route:
            return 404, {"error": {"message": f"no route {path}", "type": "not_found"}}
        answer = route[path](body)
        if len(self.problems) > before:
            return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                    "message": "; ".join(self.problems[before:])}}
        return 200, answer


@contextmanager
def scripted_llm(calls: Sequence[Tuple[str, Dict[str, Any]]],
                 then: Sequence[Sequence[Tuple[str, Dict[str, Any]]]] = ()) -> Iterator[ScriptedLLM]:
    """Serve the scripted model on 127.0.0.1 (``endpoint.url``, no path) for the ``with`` block."""
    state = ScriptedLLM(calls, then)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
                status, answer = state.handle(self.path.split("?")[0], body)
            except Exception as exc:  # a bug in the check itself: fail the request loudly
                state.problems.append(f"endpoint error: {exc!r}")
                status, answer = 500, {"error": {"message": repr(exc)}}
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="test-llm-endpoint", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def main(argv: Optional[List[str]] = None) -> None:
    """``python tests/llm_endpoints.py TOOL=ARGS_JSON ...``: serve until stdin closes, printing ``READY <url>``."""
    import sys

    calls = [(item.split("=", 1)[0], json.loads(item.split("=", 1)[1])) for item in (argv or sys.argv[1:])]
    with scripted_llm(calls) as endpoint:
        print(f"READY {endpoint.url}", flush=True)
        sys.stdin.read()
        if endpoint.problems:
            print("\n".join(endpoint.problems), file=sys.stderr)


if __name__ == "__main__":
    main()
