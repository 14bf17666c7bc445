"""Static catalogue of the test server: tool, resource, template and prompt definitions.

Everything here is plain data (JSON-ready dicts) describing the surface fixed by
``tests/servers/CONTRACT.md``, plus two extra tools (``bad_output``, ``mixed``) that
exercise client-side output validation and content parsing. Behaviour lives in
``stdio.py``; keeping the data apart makes both files easy to read.
"""

from __future__ import annotations

import base64
from typing import Any, Dict, List

#: A valid 1x1 RGBA PNG.
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
#: A valid WAV file: mono, 8-bit, 8 kHz, two samples of silence.
WAV_TINY = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQIAAACAgA=="

TEXT_URI = "test://text"
BLOB_URI = "test://blob"
GREETING_TEMPLATE = "test://greeting/{name}"
TEXT_CONTENT = "hello, world"
BLOB_CONTENT = base64.b64encode(bytes([0x00, 0x01, 0x02, 0xFF])).decode("ascii")

#: RFC 5424 severities, lowest first (the order ``logging/setLevel`` compares with).
LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

STYLE_VALUES = ["formal", "friendly", "funny"]
NAME_VALUES = ["alice", "bob", "carol"]

SUM_SCHEMA = {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}
ASK_SCHEMA = {
    "type": "object",
    "properties": {"answered": {"type": "integer"}, "results": {"type": "array"},
                   "errors": {"type": "array", "items": {"type": "integer"}}},
    "required": ["answered", "results", "errors"],
}
SIZE_SCHEMA = {
    "type": "object",
    "properties": {"width": {"type": "integer"}, "height": {"type": "integer"}},
    "required": ["width", "height"],
}
NO_ARGS: Dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def _tool(name: str, title: str, description: str, schema: Dict[str, Any], read_only: bool = True,
          output: Dict[str, Any] | None = None) -> Dict[str, Any]:
    """Build one ``Tool`` definition; none of our tools touch the outside world."""
    tool: Dict[str, Any] = {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": schema,
        "annotations": {"title": title, "readOnlyHint": read_only, "destructiveHint": False,
                        "idempotentHint": read_only, "openWorldHint": False},
    }
    if output is not None:
        tool["outputSchema"] = output
    return tool


def _obj(properties: Dict[str, Any], required: List[str]) -> Dict[str, Any]:
    """An object input schema with the given properties and required names."""
    return {"type": "object", "properties": properties, "required": required}


TOOLS: List[Dict[str, Any]] = [
    _tool("echo", "Echo", "Return the given text unchanged.",
          _obj({"text": {"type": "string", "description": "Text to echo back"}}, ["text"])),
    _tool("add", "Add", "Add two numbers; returns structured content {sum}.",
          _obj({"a": {"type": "number"}, "b": {"type": "number"}}, ["a", "b"]), output=SUM_SCHEMA),
    _tool("slow", "Slow", "Take `steps` steps of `delay` seconds, reporting progress on each.",
          _obj({"steps": {"type": "integer", "default": 3, "minimum": 0},
                "delay": {"type": "number", "default": 0.01, "minimum": 0}}, [])),
    _tool("picture", "Picture", "Return a 1x1 PNG image and its size.", NO_ARGS, output=SIZE_SCHEMA),
    _tool("fail", "Fail", "Always fail with a tool execution error (isError: true).",
          _obj({"message": {"type": "string"}}, ["message"])),
    _tool("log", "Log", "Send a notifications/message log entry at the given level.",
          _obj({"level": {"type": "string", "enum": LOG_LEVELS}, "message": {"type": "string"}},
               ["level", "message"]), read_only=False),
    _tool("bad_output", "Bad output",
          "Declares an outputSchema with a numeric sum but returns a string (tests client validation).",
          NO_ARGS, output=SUM_SCHEMA),
    _tool("mixed", "Mixed content",
          "Return one block of every content type, plus one of an unknown type.", NO_ARGS),
    _tool("ask_client", "Ask the client",
          "Send `count` copies of a request (sampling/createMessage, elicitation/create, roots/list, "
          "ping) to the client at once, wait for every answer, and report them.",
          _obj({"method": {"type": "string"}, "params": {"type": "object", "default": {}},
                "count": {"type": "integer", "default": 1, "minimum": 1},
                "timeout": {"type": "number", "default": 30, "minimum": 0}}, ["method"]),
          output=ASK_SCHEMA),
]

RESOURCES: List[Dict[str, Any]] = [
    {"uri": TEXT_URI, "name": "text", "title": "Text", "description": "A short text document",
     "mimeType": "text/plain", "size": len(TEXT_CONTENT)},
    {"uri": BLOB_URI, "name": "blob", "title": "Blob", "description": "Four binary bytes",
     "mimeType": "application/octet-stream", "size": 4},
]

RESOURCE_TEMPLATES: List[Dict[str, Any]] = [
    {"uriTemplate": GREETING_TEMPLATE, "name": "greeting", "title": "Greeting",
     "description": "A greeting for `name`", "mimeType": "text/plain"},
]

PROMPTS: List[Dict[str, Any]] = [
    {"name": "greet", "title": "Greet", "description": "Greet someone",
     "arguments": [
         {"name": "name", "description": "Who to greet", "required": True},
         {"name": "style", "description": "How to greet (default: friendly)", "required": False},
     ]},
]

#: The content returned by the ``mixed`` tool: one block of each type the spec defines, and one it does not.
MIXED_CONTENT: List[Dict[str, Any]] = [
    {"type": "text", "text": "some text"},
    {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
    {"type": "audio", "data": WAV_TINY, "mimeType": "audio/wav"},
    {"type": "resource_link", "uri": TEXT_URI, "name": "text", "mimeType": "text/plain"},
    {"type": "resource", "resource": {"uri": TEXT_URI, "mimeType": "text/plain", "text": TEXT_CONTENT}},
    {"type": "hologram", "data": "x"},
]

INSTRUCTIONS = (
    "mcpclient-testing: a small test server. Tools: echo, add, slow (progress), picture, fail, "
    "log, bad_output, mixed, ask_client. Resources: test://text, test://blob, test://greeting/{name}. "
    "Prompt: greet."
)
