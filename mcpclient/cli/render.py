"""MCP results as text: content blocks, tool results, resource contents, one-line summaries of
tools, prompts and capabilities, and the server-info and prompt-message listings."""
from __future__ import annotations

import json
from typing import Any, Dict, List

from ..client import Client
from ..types import (
    AudioContent, EmbeddedResource, ImageContent, ResourceContents, ResourceLink, TextContent, Tool, ToolResult,
    UnknownContent,
)

from .terminal import Output, json_text, one_line


def compact(value: Any) -> str:
    """``value`` as JSON on one line."""
    return json.dumps(value, ensure_ascii=False, default=repr)


def render_block(block: Any) -> str:
    """One content block as text: text as-is, media and links as short bracketed summaries."""
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, (ImageContent, AudioContent)):
        return f"[{block.type} {block.mime_type or 'unknown type'}, {len(block.data)} bytes]"
    if isinstance(block, ResourceLink):
        return f"[link {block.uri}]"
    if isinstance(block, EmbeddedResource):
        contents = block.resource
        if contents.text is not None:
            return contents.text
        return f"[blob {len(contents.blob or b'')} bytes]"
    return f"[unknown type {block.type if isinstance(block, UnknownContent) else type(block).__name__}]"


def duplicates_structured(block: Any, structured: Any) -> bool:
    """True for the text block that merely repeats ``structuredContent`` as JSON (as the spec advises)."""
    if structured is None or not isinstance(block, TextContent):
        return False
    try:
        return json.loads(block.text) == structured
    except ValueError:
        return False


def render_tool_result(result: ToolResult) -> str:
    """Content blocks one per line, then structured content as indented JSON (not repeated twice)."""
    structured = result.structured_content
    lines = [render_block(b) for b in result.content if not duplicates_structured(b, structured)]
    if structured is not None:
        lines.append(json_text(structured))
    return "\n".join(lines)


def hex_bytes(data: bytes, limit: int = 256) -> str:
    """``00 01 02 ff``, 16 bytes a line, cut after ``limit`` bytes."""
    shown = data[:limit]
    lines = [" ".join(f"{b:02x}" for b in shown[i:i + 16]) for i in range(0, len(shown), 16)]
    if len(data) > limit:
        lines.append(f"... ({len(data) - limit} more bytes)")
    return "\n".join(lines) if lines else "(empty)"


def render_contents(contents: ResourceContents) -> str:
    if contents.text is not None:
        return contents.text
    if contents.blob is not None:
        return hex_bytes(contents.blob)
    return "(no content)"


def arguments_summary(schema: Any) -> str:
    """``a, b, [delay]``: required arguments plain, optional ones in brackets."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return ""
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    return ", ".join(name if name in required else f"[{name}]" for name in schema["properties"])


def schema_type(schema: Any, depth: int = 0) -> str:
    """A JSON Schema as a short type: ``string``, ``'a'|'b'`` (enum), ``string[]``,
    ``number|null``, ``Name`` (a ``$ref``), ``any`` (no type given)."""
    if not isinstance(schema, dict) or depth > 4:
        return "any"
    if "const" in schema:
        return _literal(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return "|".join(_literal(v) for v in schema["enum"])
    if isinstance(schema.get("$ref"), str):
        return schema["$ref"].rstrip("/").rpartition("/")[2] or "any"
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return "|".join(dict.fromkeys(schema_type(s, depth + 1) for s in schema[key]))
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(dict.fromkeys(schema_type({**schema, "type": k}, depth + 1) for k in kind)) or "any"
    if kind == "array":
        items = schema_type(schema.get("items"), depth + 1) if "items" in schema else "any"
        return (f"({items})" if "|" in items else items) + "[]"
    return kind if isinstance(kind, str) else "any"


def _literal(value: Any) -> str:
    return "'" + value.replace("'", "\\'") + "'" if isinstance(value, str) else compact(value)


def signature(name: str, schema: Any, *, default_limit: int = 30) -> str:
    """``add(a: number, b: number)``: required parameters first as the schema lists them, then
    optional ones, marked ``?`` or given their ``= default``."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return f"{name}()"
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    params = []
    for key, prop in sorted(props.items(), key=lambda item: item[0] not in required):
        kind = schema_type(prop)
        if key in required:
            params.append(f"{key}: {kind}")
        elif isinstance(prop, dict) and "default" in prop:
            default = compact(prop["default"])
            if len(default) > default_limit:
                default = default[:default_limit - 3] + "..."
            params.append(f"{key}: {kind} = {default}")
        else:
            params.append(f"{key}?: {kind}")
    return f"{name}({', '.join(params)})"


def prompt_arguments(prompt: Any) -> str:
    return ", ".join(a.name if a.required else f"[{a.name}]" for a in prompt.arguments)


def _capabilities_summary(caps: Dict[str, Any]) -> str:
    parts = []
    for name, value in caps.items():
        flags = [k for k, v in value.items() if v is True] if isinstance(value, dict) else []
        parts.append(f"{name} ({', '.join(flags)})" if flags else name)
    return ", ".join(parts) or "(none)"


def print_server(out: Output, client: Client, indent: str) -> None:
    """Name, version, protocol, capabilities and instructions as an aligned, wrapped list."""
    server = client.server
    assert server is not None  # (connected)
    info = server.implementation
    rows = [("name", info.name or "(unnamed)"), ("version", info.version or "?")]
    if info.title:
        rows.append(("title", info.title))
    rows += [("protocol", server.protocol_version or "?"),
             ("capabilities", _capabilities_summary(server.capabilities))]
    if server.instructions:
        rows.append(("instructions", server.instructions))
    column = max(len(key) for key, _ in rows) + 2
    for key, value in rows:
        out.wrapped(value, " " * (len(indent) + column), indent + key)


def print_message(out: Output, role: str, text: str, indent: str) -> None:
    """``role: text``, continuation lines aligned under the text."""
    label = f"{indent}{role}: "
    body = text.splitlines() or [""]
    out.line(label + body[0])
    for rest in body[1:]:
        out.line(" " * len(label) + rest)


def show_tools(out: Output, tools: List[Tool]) -> None:
    """Each tool as a typed signature, its description indented under it."""
    if not tools:
        out.line("(no tools)")
    for tool in tools:
        out.line(signature(tool.name, tool.input_schema))
        description = one_line(tool.description or tool.display_name)
        if description and description != tool.name:
            out.wrapped(description, "    ", "    ")
