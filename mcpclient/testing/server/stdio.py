"""The demo server over stdio: JSON-RPC framing, the method table and the tool bodies.

One reader thread (the caller of :func:`serve`) parses stdin line by line and answers every
request inline, except ``tools/call``, which runs on its own daemon thread so that ``slow``
never blocks the server and ``notifications/cancelled`` can stop it. All writes to stdout go
through one lock, so messages from different threads never interleave within a line.
"""

from __future__ import annotations

import base64
import functools
import itertools
import json
import re
import sys
import threading
import time
from typing import IO, Any, Callable, Dict, List, Optional
from urllib.parse import unquote

from ..._version import __version__

from . import apps_html, catalog, taskext
from ._rpc import RpcError

SERVER_NAME = "mcpclient-testing"
SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_VERSION = SUPPORTED_VERSIONS[0]
#: On stdin EOF, how long running tool calls may still finish and answer before being abandoned.
EOF_GRACE_SECONDS = 1.0

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603)
RESOURCE_NOT_FOUND = -32002

Json = Dict[str, Any]


class _Cancelled(Exception):
    """Raised inside a tool body when the client cancelled the call: no response is sent."""


class _Call:
    """One in-flight request: its id, its progress token (if any) and its cancellation flag."""

    def __init__(self, request_id: Any, params: Json) -> None:
        meta = params.get("_meta")
        self.id = request_id
        self.progress_token = meta.get("progressToken") if isinstance(meta, dict) else None
        self.cancelled = threading.Event()
        self.thread: Optional[threading.Thread] = None
        self.after: Optional[Callable[[], None]] = None  # runs once the answer is written
        self.logged: Optional[List[Any]] = None  # its entry in the Tasks extension's ext_log


class _Ask:
    """One request this server sent to the client, waiting for its response."""

    def __init__(self, ask_id: str) -> None:
        self.id = ask_id
        self.done = threading.Event()
        self.reply: Optional[Json] = None

    def answer(self, reply: Json) -> None:
        self.reply = reply
        self.done.set()


def package_version() -> str:
    """The mcpclient version for ``serverInfo``."""
    return __version__


class Server:
    """Protocol state for one connection; feed it lines with ``handle_line``."""

    def __init__(self, stdout: IO[bytes], *, page_size: int = 0, name: str = SERVER_NAME, apps: bool = False,
                 tasks_ext: bool = False, poll_interval_ms: int = 30, notify_tasks: bool = False) -> None:
        """``apps``: add the MCP Apps counter (``tests/servers/APPS.md``). ``tasks_ext``: also serve
        the Tasks extension (``tests/servers/TASKS-EXT.md``) with that ``pollIntervalMs``, pushing
        ``notifications/tasks`` when ``notify_tasks``."""
        self._out = stdout
        self._apps = apps  # --apps: the MCP Apps counter (tests/servers/APPS.md)
        self._tool_list = catalog.TOOLS + (apps_html.APP_TOOLS if apps else [])
        self._resource_list = catalog.RESOURCES + ([apps_html.APP_RESOURCE] if apps else [])
        self._count = 0
        self._client_capabilities: Json = {}
        self._page_size = page_size
        self._name = name
        self._write_lock = threading.Lock()
        self._calls_lock = threading.Lock()
        self._calls: Dict[Any, _Call] = {}
        self.min_level = 0  # index into catalog.LOG_LEVELS; everything is sent until setLevel
        self.subscriptions: set = set()
        self._asks: Dict[str, "_Ask"] = {}  # our requests to the client, by id, until answered
        self._ask_ids = itertools.count(1)
        self._methods: Dict[str, Callable[[Json, _Call], Json]] = {
            "initialize": self._initialize,
            "ping": lambda params, call: {},
            "tools/list": lambda params, call: self._page(self._tool_list, params, "tools"),
            "tools/call": self._call_tool,
            "resources/list": lambda params, call: self._page(self._resource_list, params, "resources"),
            "resources/templates/list": lambda params, call: self._page(
                catalog.RESOURCE_TEMPLATES, params, "resourceTemplates"),
            "resources/read": self._read_resource,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "prompts/list": lambda params, call: self._page(catalog.PROMPTS, params, "prompts"),
            "prompts/get": self._get_prompt,
            "completion/complete": self._complete,
            "logging/setLevel": self._set_level,
        }
        self._tools: Dict[str, Callable[[Json, _Call], Json]] = {
            "echo": self._tool_echo, "add": self._tool_add, "slow": self._tool_slow,
            "picture": self._tool_picture, "fail": self._tool_fail, "log": self._tool_log,
            "bad_output": self._tool_bad_output, "mixed": self._tool_mixed, "ask_client": self._tool_ask_client,
        }
        if apps:
            self._tools.update(counter=self._tool_counter, increment=self._tool_increment,
                               lookup_secret=lambda args, call: _text(apps_html.SECRET),
                               apps_supported=lambda args, call: _text(
                                   json.dumps(apps_html.declared_apps(self._client_capabilities))))
        self._tasks: Optional[taskext.TaskEngine] = None
        self._tasks_declared = False  # the client declared the extension in initialize
        if tasks_ext:
            self._serve_tasks(poll_interval_ms, notify_tasks)

    # ----- framing -------------------------------------------------------------------------

    def send(self, message: Json) -> None:
        """Write one compact JSON message and a newline; a closed stdout is ignored."""
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"
        with self._write_lock:
            try:
                self._out.write(data)
                self._out.flush()
            except (OSError, ValueError):
                pass

    def notify(self, method: str, params: Json) -> None:
        """Send a notification (``method`` and ``params``) to the client."""
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def _reply(self, request_id: Any, result: Optional[Json] = None, error: Optional[RpcError] = None) -> None:
        msg: Json = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            msg["error"] = error.to_json()
        else:
            msg["result"] = result
        self.send(msg)

    def handle_line(self, line: bytes | str) -> None:
        """Parse one stdin line and dispatch it (a JSON array is treated as a batch)."""
        try:
            text = (line if isinstance(line, str) else line.decode("utf-8")).strip()
            if not text:
                return
            message = json.loads(text)
        except (UnicodeDecodeError, ValueError) as exc:
            self._reply(None, error=RpcError(PARSE_ERROR, f"Parse error: {exc}"))
            return
        if isinstance(message, list) and message:
            for item in message:
                self._dispatch(item)
        else:
            self._dispatch(message)

    def _dispatch(self, msg: Any) -> None:
        """Route a decoded message: requests get a response, notifications don't, responses are ignored."""
        rid = msg.get("id") if isinstance(msg, dict) else None
        if not isinstance(rid, (int, str)) or isinstance(rid, bool):
            rid = None  # JSON-RPC ids are strings or integers; anything else can't be echoed
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            self._reply(rid, error=RpcError(INVALID_REQUEST, "Invalid Request"))
            return
        method, params = msg.get("method"), msg.get("params", {})
        if "id" not in msg:  # notification
            if method == "notifications/cancelled" and isinstance(params, dict):
                if self._tasks is not None:
                    self._tasks.note_cancelled()
                self._cancel(params.get("requestId"))
            return  # notifications/initialized and anything unknown: nothing to do
        if method is None:  # a response: to one of ask_client's requests, or ignored
            with self._calls_lock:
                ask = self._asks.pop(rid, None) if rid is not None else None
            if ask is not None:
                ask.answer(msg)
            return
        if not isinstance(method, str) or rid is None:
            self._reply(rid, error=RpcError(INVALID_REQUEST, "Invalid Request"))
            return
        handler = self._methods.get(method)
        if handler is None:
            self._reply(rid, error=RpcError(METHOD_NOT_FOUND, f"Method not found: {method}"))
            return
        if params is None:
            params = {}
        if not isinstance(params, dict):
            self._reply(rid, error=RpcError(INVALID_PARAMS, "params must be an object"))
            return
        call = _Call(rid, params)
        if self._tasks is not None:
            call.logged = self._tasks.record(method, params)  # here: in arrival order
        if method == "tools/call":
            self._start(call, handler, params)
        else:
            self._run(call, handler, params)

    def _run(self, call: _Call, handler: Callable[[Json, _Call], Json], params: Json) -> None:
        """Run a handler and answer, unless the request was cancelled meanwhile."""
        error: Optional[RpcError] = None
        result: Optional[Json] = None
        try:
            result = handler(params, call)
        except _Cancelled:
            pass
        except RpcError as exc:
            error = exc
        except Exception as exc:  # a bug in this server: report it rather than dying
            error = RpcError(INTERNAL_ERROR, f"Internal error: {exc!r}")
        with self._calls_lock:
            if self._calls.get(call.id) is call:
                del self._calls[call.id]
            if not call.cancelled.is_set():
                self._reply(call.id, result, error)
        if call.after is not None and error is None:
            call.after()

    def _start(self, call: _Call, handler: Callable[[Json, _Call], Json], params: Json) -> None:
        """Run a (possibly slow) handler on a daemon thread so the reader keeps reading."""
        call.thread = threading.Thread(target=self._run, args=(call, handler, params),
                                       name=f"mcp-call-{call.id}", daemon=True)
        with self._calls_lock:
            self._calls[call.id] = call
        call.thread.start()

    def _cancel(self, request_id: Any) -> None:
        """Handle ``notifications/cancelled``: unknown or finished ids are ignored, as the spec allows."""
        with self._calls_lock:
            call = self._calls.pop(request_id, None) if isinstance(request_id, (int, str)) else None
        if call is not None:
            call.cancelled.set()

    def shutdown(self, grace: float = EOF_GRACE_SECONDS) -> None:
        """On stdin EOF: let running calls finish for up to ``grace`` seconds, then abandon them."""
        deadline = time.monotonic() + grace
        with self._calls_lock:
            calls = list(self._calls.values())
            asks, self._asks = list(self._asks.values()), {}
        for ask in asks:  # the client is gone: nobody will answer these
            ask.done.set()
        for call in calls:
            if call.thread is not None:
                call.thread.join(max(0.0, deadline - time.monotonic()))
        for call in calls:
            call.cancelled.set()
        if self._tasks is not None:
            self._tasks.stop()

    # ----- lifecycle, lists, resources, prompts, completion, logging ------------------------

    def _initialize(self, params: Json, call: _Call) -> Json:
        requested = params.get("protocolVersion")
        self._tasks_declared = taskext.declares(params.get("capabilities"))
        capabilities = params.get("capabilities")
        self._client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        extensions = self._extensions()
        return {
            "protocolVersion": requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION,
            "capabilities": {
                "tools": {"listChanged": True},
                "resources": {"subscribe": True, "listChanged": True},
                "prompts": {"listChanged": True},
                "completions": {},
                "logging": {},
                **({"extensions": extensions} if extensions else {}),
            },
            "serverInfo": {"name": self._name, "version": package_version()},
            "instructions": catalog.INSTRUCTIONS,
        }

    def _extensions(self) -> Json:
        """The server's ``capabilities.extensions``: what the flags added (empty: none)."""
        extensions: Json = {}
        if self._apps:
            extensions[apps_html.APPS] = {}
        if self._tasks is not None:
            extensions[taskext.TASKS] = {}
        return extensions

    def _page(self, items: List[Json], params: Json, key: str) -> Json:
        """Slice a list by the opaque cursor; ``nextCursor`` only when more items remain."""
        start = 0
        cursor = params.get("cursor")
        if cursor is not None:
            try:
                start = int(base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii").split(":")[1])
            except Exception:
                raise RpcError(INVALID_PARAMS, "Invalid cursor", {"cursor": cursor}) from None
            if not 0 <= start <= len(items):
                raise RpcError(INVALID_PARAMS, "Invalid cursor", {"cursor": cursor})
        end = len(items) if self._page_size <= 0 else start + self._page_size
        result: Json = {key: items[start:end]}
        if end < len(items):
            result["nextCursor"] = base64.urlsafe_b64encode(f"offset:{end}".encode("ascii")).decode("ascii")
        return result

    def _read_resource(self, params: Json, call: _Call) -> Json:
        uri = _require_str(params, "uri")
        if uri == catalog.TEXT_URI:
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": catalog.TEXT_CONTENT}]}
        if uri == apps_html.APP_URI and self._apps:
            return {"contents": [{"uri": uri, "mimeType": apps_html.APP_MIME_TYPE, "text": apps_html.APP_HTML,
                                  "_meta": {"ui": apps_html.APP_UI_META}}]}
        if uri == catalog.BLOB_URI:
            return {"contents": [{"uri": uri, "mimeType": "application/octet-stream",
                                  "blob": catalog.BLOB_CONTENT}]}
        match = re.fullmatch(r"test://greeting/([^/?#]+)", uri)
        if match:
            text = f"Hello, {unquote(match.group(1))}!"
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}
        raise RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})

    def _subscribe(self, params: Json, call: _Call) -> Json:
        self.subscriptions.add(_require_str(params, "uri"))
        return {}

    def _unsubscribe(self, params: Json, call: _Call) -> Json:
        self.subscriptions.discard(_require_str(params, "uri"))
        return {}

    def _get_prompt(self, params: Json, call: _Call) -> Json:
        name = _require_str(params, "name")
        if name != "greet":
            raise RpcError(INVALID_PARAMS, f"Unknown prompt: {name}")
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            raise RpcError(INVALID_PARAMS, "arguments must be an object")
        who = _require_str(args, "name", "Missing required argument: name")
        style = args.get("style") or "friendly"
        text = f"Please greet {who} in a {style} way."
        return {"description": "Greet someone",
                "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}

    def _complete(self, params: Json, call: _Call) -> Json:
        ref, argument = params.get("ref"), params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise RpcError(INVALID_PARAMS, "ref and argument must be objects")
        arg_name, value = argument.get("name"), argument.get("value") or ""
        if ref.get("type") == "ref/prompt" and ref.get("name") == "greet":
            choices = catalog.STYLE_VALUES if arg_name == "style" else []
        elif ref.get("type") == "ref/resource" and ref.get("uri") == catalog.GREETING_TEMPLATE:
            choices = catalog.NAME_VALUES if arg_name == "name" else []
        elif ref.get("type") == "ref/resource" and ref.get("uri") in (catalog.TEXT_URI, catalog.BLOB_URI):
            choices = []
        else:
            raise RpcError(INVALID_PARAMS, f"Unknown completion reference: {ref}")
        values = [c for c in choices if isinstance(value, str) and c.startswith(value)]
        return {"completion": {"values": values, "total": len(values), "hasMore": False}}

    def _set_level(self, params: Json, call: _Call) -> Json:
        level = params.get("level")
        if level not in catalog.LOG_LEVELS:
            raise RpcError(INVALID_PARAMS, f"Invalid log level: {level!r}")
        self.min_level = catalog.LOG_LEVELS.index(level)
        return {}

    # ----- tools ----------------------------------------------------------------------------

    def _call_tool(self, params: Json, call: _Call) -> Json:
        """Look the tool up, check its arguments against its inputSchema, and run it."""
        name = _require_str(params, "name")
        if self._tasks is not None and name in taskext.TOOL_NAMES:
            return self._call_ext_tool(params, call)
        tool = self._tools.get(name)
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            raise RpcError(INVALID_PARAMS, "arguments must be an object")
        schema = next(t["inputSchema"] for t in self._tool_list if t["name"] == name)
        _check_arguments(schema, args)
        return tool(args, call)

    def _tool_counter(self, args: Json, call: _Call) -> Json:
        with self._calls_lock:
            return apps_html.count_result(self._count)

    def _tool_increment(self, args: Json, call: _Call) -> Json:
        with self._calls_lock:
            self._count += args.get("by", 1)
            return apps_html.count_result(self._count)

    def _tool_echo(self, args: Json, call: _Call) -> Json:
        return _text(args["text"])

    def _tool_add(self, args: Json, call: _Call) -> Json:
        return _structured({"sum": args["a"] + args["b"]})

    def _tool_slow(self, args: Json, call: _Call) -> Json:
        """Sleep ``steps`` times, reporting progress; a cancellation interrupts the sleep at once."""
        steps, delay = args.get("steps", 3), args.get("delay", 0.01)
        for i in range(1, steps + 1):
            if call.cancelled.wait(delay):
                raise _Cancelled()
            if call.progress_token is not None:
                self.notify("notifications/progress", {"progressToken": call.progress_token,
                                                       "progress": i, "total": steps, "message": f"step {i}"})
        return _text(f"done after {steps} steps")

    def _tool_picture(self, args: Json, call: _Call) -> Json:
        result = _structured({"width": 1, "height": 1})
        result["content"] = [{"type": "image", "data": catalog.PNG_1X1, "mimeType": "image/png"},
                             {"type": "text", "text": "a 1x1 pixel"}]
        return result

    def _tool_fail(self, args: Json, call: _Call) -> Json:
        return {"content": [{"type": "text", "text": args["message"]}], "isError": True}

    def _tool_log(self, args: Json, call: _Call) -> Json:
        if catalog.LOG_LEVELS.index(args["level"]) >= self.min_level:
            self.notify("notifications/message",
                        {"level": args["level"], "logger": "contract", "data": args["message"]})
        return _text("logged")

    def _tool_bad_output(self, args: Json, call: _Call) -> Json:
        return _structured({"sum": "not a number"})

    def _tool_mixed(self, args: Json, call: _Call) -> Json:
        return {"content": [dict(block) for block in catalog.MIXED_CONTENT]}

    def _tool_ask_client(self, args: Json, call: _Call) -> Json:
        """Send ``count`` requests to the client at once; report results and error codes in order."""
        count, deadline = args.get("count", 1), time.monotonic() + args.get("timeout", 30)
        asks = [self._send_ask(args["method"], args.get("params")) for _ in range(count)]
        results, errors = [], []
        for ask in asks:
            if not ask.done.wait(max(0.0, deadline - time.monotonic())) or call.cancelled.is_set():
                break
            reply = ask.reply or {}
            if "result" in reply:
                results.append(reply["result"])
            else:
                errors.append((reply.get("error") or {}).get("code", 0))
        with self._calls_lock:
            for ask in asks:
                self._asks.pop(ask.id, None)
        return _structured({"answered": len(results) + len(errors), "results": results, "errors": errors})


    def _send_ask(self, method: str, params: Optional[Json]) -> _Ask:
        """Send one request to the client; its answer arrives on the returned ``_Ask``."""
        ask = _Ask(f"ask-{next(self._ask_ids)}")
        with self._calls_lock:
            self._asks[ask.id] = ask
        message: Json = {"jsonrpc": "2.0", "id": ask.id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return ask

    # ----- the Tasks extension (--tasks-ext, tests/servers/TASKS-EXT.md) --------------------

    def _serve_tasks(self, poll_interval_ms: int, notify: bool) -> None:
        """Add the ``ext_*`` tools and ``tasks/*`` methods; push every change when ``notify``."""
        engine = self._tasks = taskext.TaskEngine(poll_interval_ms=poll_interval_ms)
        self._tool_list = self._tool_list + taskext.TOOLS  # (after any other flag's tools)
        for method in taskext.TASK_METHODS:
            self._methods[method] = functools.partial(self._task_method, method)
        if notify:
            engine.subscribe(self._push_task)

    def _push_task(self, task: Json) -> None:
        """``--notify-tasks``: every change of a task, to a client that declared the extension."""
        if self._tasks_declared:
            self.notify("notifications/tasks", task)

    def _task_method(self, method: str, params: Json, call: _Call) -> Json:
        assert self._tasks is not None
        return self._tasks.handle(method, params, declared=self._tasks_declared)

    def _call_ext_tool(self, params: Json, call: _Call) -> Json:
        """An ``ext_*`` tool: a task for a declaring client (started once answered), else inline."""
        assert self._tasks is not None
        try:
            result, call.after = self._tasks.call_tool(
                params, declared=self._tasks_declared, entry=call.logged, cancelled=call.cancelled,
                ask=lambda method, ask_params: self._ask_inline(method, ask_params, call))
        except taskext.Abandoned:
            raise _Cancelled() from None
        return result

    def _ask_inline(self, method: str, params: Json, call: _Call) -> Any:
        """``ext_ask`` without the extension: a real request to the client; its result."""
        ask = self._send_ask(method, params)
        while not ask.done.wait(0.05):
            if call.cancelled.is_set():
                break
        with self._calls_lock:
            self._asks.pop(ask.id, None)
        if call.cancelled.is_set() or ask.reply is None:
            raise taskext.Abandoned()
        if "result" not in ask.reply:
            error = ask.reply.get("error") or {}
            raise RpcError(error.get("code", INTERNAL_ERROR), error.get("message", "client error"))
        return ask.reply["result"]


# ----- helpers ------------------------------------------------------------------------------

_TYPE_CHECKS: Dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
}


def _check_arguments(schema: Json, args: Json) -> None:
    """Just enough JSON Schema for our own tools: required names, scalar types, enums, minimums."""
    for key in schema.get("required", []):
        if key not in args:
            raise RpcError(INVALID_PARAMS, f"Missing required argument: {key}")
    for key, prop in schema.get("properties", {}).items():
        if key not in args:
            continue
        value = args[key]
        if not _TYPE_CHECKS[prop["type"]](value):
            raise RpcError(INVALID_PARAMS, f"Argument {key} must be of type {prop['type']}")
        if "enum" in prop and value not in prop["enum"]:
            raise RpcError(INVALID_PARAMS, f"Argument {key} must be one of {prop['enum']}")
        if "minimum" in prop and value < prop["minimum"]:
            raise RpcError(INVALID_PARAMS, f"Argument {key} must be >= {prop['minimum']}")


def _require_str(params: Json, key: str, message: Optional[str] = None) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise RpcError(INVALID_PARAMS, message or f"Missing or invalid parameter: {key}")
    return value


def _text(text: str) -> Json:
    return {"content": [{"type": "text", "text": text}]}


def _structured(data: Json) -> Json:
    """A result with structuredContent and, as the spec recommends, its JSON as a text block."""
    return {"content": [{"type": "text", "text": json.dumps(data)}], "structuredContent": data}


def serve(stdin: Optional[IO[bytes]] = None, stdout: Optional[IO[bytes]] = None, *,
          page_size: int = 0, name: str = SERVER_NAME, apps: bool = False, tasks_ext: bool = False,
          poll_interval_ms: int = 30, notify_tasks: bool = False) -> None:
    """Serve one connection on binary streams until stdin reaches EOF (the flags' options as in
    ``Server``)."""
    stdin = stdin if stdin is not None else sys.stdin.buffer
    server = Server(stdout if stdout is not None else sys.stdout.buffer, page_size=page_size, name=name, apps=apps,
                    tasks_ext=tasks_ext, poll_interval_ms=poll_interval_ms, notify_tasks=notify_tasks)
    while True:
        line = stdin.readline()
        if not line:  # EOF (works for binary and text streams alike)
            break
        server.handle_line(line)
    server.shutdown()
