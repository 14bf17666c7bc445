"""MCP tools for Anthropic's Messages API, and the model's ``tool_use`` blocks run back.

Plain dicts both ways: this module never imports ``anthropic``; its SDK objects are read by
attribute, so ``message.content`` goes in as it comes::

    tools = to_anthropic_tools(group.list_tools())
    reply = anthropic_client.messages.create(
        model=..., max_tokens=..., messages=messages, tools=tools)
    messages.append({"role": "assistant", "content": reply.content})
    messages.append(run_anthropic_tool_uses(group, reply.content))
"""
from __future__ import annotations

import base64
import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from ..types import EmbeddedResource, ImageContent, Tool, ToolResult
from ._calls import (
    Call, Outcome, describe, error_text, field, offered, on_a_worker_thread, parse_arguments, run_calls,
    structured_text, warn_once,
)
from ._schema import normalize

__all__ = ["arun_anthropic_tool_uses", "run_anthropic_tool_uses", "to_anthropic_tools"]

#: Anthropic's rule for tool names.
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: Image types a ``tool_result`` may carry.
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def to_anthropic_tools(tools: Union[Iterable[Tool], Any], *, include_app_only: bool = False) -> List[Dict[str, Any]]:
    """Messages API tools (``name``, ``description``, ``input_schema``) for ``tools`` (``Tool``s, or
    a group or client: its ``list_tools()``).

    The schema is normalized as Anthropic requires: ``type: object`` at the top, no top-level
    ``oneOf``/``anyOf``/``allOf`` (their object branches are folded in), no ``$schema``, local
    ``$ref``s inlined (recursive ones kept under ``$defs``). A tool whose name Anthropic does
    not accept is left out, with a warning (a ``ServerGroup`` gives every tool a valid name).
    MCP Apps' app-only tools (``ui.visibility`` without ``"model"``) are left out unless
    ``include_app_only=True``."""
    converted = []
    for tool in offered(tools, include_app_only):
        if not NAME.match(tool.name):
            warn_once("tool %r left out: Anthropic tool names must match %s", tool.name, NAME.pattern)
            continue
        entry: Dict[str, Any] = {"name": tool.name}
        description = tool.description or tool.title
        if description:
            entry["description"] = description
        entry["input_schema"] = normalize(tool.input_schema)
        converted.append(entry)
    return converted


def _image(mime_type: str, data: bytes) -> Dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": mime_type,
                                        "data": base64.b64encode(data).decode("ascii")}}


def _content(outcome: Outcome) -> List[Dict[str, Any]]:
    """A ``tool_result``'s content: text and image blocks (PDFs as documents)."""
    if not isinstance(outcome, ToolResult):
        return [{"type": "text", "text": error_text(outcome)}]
    blocks: List[Dict[str, Any]] = []
    for block in outcome.content:
        res = block.resource if isinstance(block, EmbeddedResource) else None
        if isinstance(block, ImageContent) and block.mime_type in IMAGE_TYPES:
            blocks.append(_image(block.mime_type, block.data))
        elif res is not None and res.blob is not None and res.mime_type in IMAGE_TYPES:
            blocks.append(_image(res.mime_type or "", res.blob))
        elif res is not None and res.blob is not None and res.mime_type == "application/pdf":
            blocks.append({"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                          "data": base64.b64encode(res.blob).decode("ascii")}})
        else:
            text = describe(block)
            if text:  # Anthropic refuses empty text blocks
                blocks.append({"type": "text", "text": text})
    extra = structured_text(outcome)
    if extra is not None:
        blocks.append({"type": "text", "text": extra})
    if not blocks:
        blocks.append({"type": "text", "text": "(no content)"})
    return blocks


def run_anthropic_tool_uses(group: Any, content_blocks: Any, *, tools: Optional[Sequence[Tool]] = None,
                            timeout: Optional[float] = None) -> Dict[str, Any]:
    """Run the assistant's ``tool_use`` blocks in parallel; return the user message answering
    them all: ``{"role": "user", "content": [{"type": "tool_result", "tool_use_id", "content",
    "is_error"}, ...]}`` in order.

    ``group`` is a ``ServerGroup`` (or a ``Client``); ``content_blocks`` is ``message.content``
    (or the message), SDK objects or dicts; other blocks are skipped. A tool's ``is_error``, an
    unknown tool, a failed request or a call to an MCP Apps app-only tool (refused, nothing sent)
    is answered with ``is_error: true`` and a text saying why."""
    blocks = field(content_blocks, "content") if not isinstance(content_blocks, (list, tuple)) else content_blocks
    calls = [Call(str(field(b, "id")), str(field(b, "name")), parse_arguments(field(b, "input")))
             for b in blocks or [] if field(b, "type") == "tool_use"]
    outcomes = run_calls(group, calls, tools=tools, timeout=timeout)
    results = []
    for call, outcome in zip(calls, outcomes):
        failed = not isinstance(outcome, ToolResult) or outcome.is_error
        results.append({"type": "tool_result", "tool_use_id": call.id, "content": _content(outcome),
                        "is_error": failed})
    return {"role": "user", "content": results}


async def arun_anthropic_tool_uses(group: Any, content_blocks: Any, *, tools: Optional[Sequence[Tool]] = None,
                                   timeout: Optional[float] = None) -> Dict[str, Any]:
    """``run_anthropic_tool_uses``, awaitable, for async back ends (``AsyncAnthropic``, FastAPI):
    the calls run on a worker thread, never on the event loop (the docs' "Async back ends")."""
    return await on_a_worker_thread(run_anthropic_tool_uses, group, content_blocks, tools=tools, timeout=timeout)
