"""MCP tools for OpenAI's Chat Completions and Responses APIs, and their calls run back.

Plain dicts both ways: this module never imports ``openai``; its SDK objects are read by
attribute, so ``message.tool_calls`` or ``response.output`` go in as they come::

    tools = to_openai_tools(group.list_tools(), strict=True)
    reply = openai_client.chat.completions.create(
        model=..., messages=messages, tools=tools)
    messages.append(reply.choices[0].message)
    messages += run_openai_tool_calls(group, reply.choices[0].message.tool_calls)
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from ..types import EmbeddedResource, ImageContent, Tool, ToolResult
from ._calls import (
    Call, Outcome, as_text, data_url, describe, error_text,
    field, offered, on_a_worker_thread, parse_arguments, run_calls, structured_text, warn_once,
)
from ._schema import StrictSchemaError, normalize, to_strict_schema

__all__ = ["arun_openai_tool_calls", "run_openai_tool_calls", "to_openai_tools"]

#: OpenAI's rule for function names.
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_APIS = ("chat", "responses")
#: Image types the Responses API takes in a function call's output.
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _check_api(api: str) -> None:
    if api not in _APIS:
        raise ValueError(f"api must be 'chat' or 'responses', not {api!r}")


def to_openai_tools(tools: Union[Iterable[Tool], Any], *, strict: bool = False, api: str = "chat",
                    include_app_only: bool = False) -> List[Dict[str, Any]]:
    """OpenAI function tools for ``tools`` (``Tool``s, or a group or client: its ``list_tools()``): Chat Completions' ``{"type": "function", "function":
    {...}}`` (``api="chat"``) or the Responses API's flat ``{"type": "function", "name": ...}``.

    ``strict=True`` converts each schema to strict mode's subset (see ``to_strict_schema``); a
    schema it cannot express is sent non-strict instead (``"strict": false``) with a warning
    naming the tool and the reason. A tool whose name OpenAI does not accept is left out, with a
    warning (a ``ServerGroup`` gives every tool a valid name). Each warning is logged once per
    process, not on every turn. MCP Apps' app-only tools
    (``ui.visibility`` without ``"model"``) are left out unless ``include_app_only=True``."""
    _check_api(api)
    converted = []
    for tool in offered(tools, include_app_only):
        if not NAME.match(tool.name):
            warn_once("tool %r left out: OpenAI function names must match %s", tool.name, NAME.pattern)
            continue
        parameters: Dict[str, Any]
        is_strict = False
        if strict:
            try:
                parameters, is_strict = to_strict_schema(tool.input_schema), True
            except StrictSchemaError as exc:
                warn_once("tool %r sent without strict mode: %s", tool.name, exc)
                parameters = normalize(tool.input_schema)
        else:
            parameters = normalize(tool.input_schema)
        function: Dict[str, Any] = {"name": tool.name}
        description = tool.description or tool.title
        if description:
            function["description"] = description
        function["parameters"] = parameters
        if strict or api == "responses":  # the Responses API makes tools strict when not told
            function["strict"] = is_strict
        converted.append({"type": "function", **function} if api == "responses"
                         else {"type": "function", "function": function})
    return converted


def _calls(tool_calls: Any, api: str) -> List[Call]:
    if tool_calls is None:
        return []
    items = field(tool_calls, "tool_calls") if api == "chat" and not isinstance(tool_calls, (list, tuple)) else None
    if items is None and api == "responses" and not isinstance(tool_calls, (list, tuple)):
        items = field(tool_calls, "output")
    found = []
    for item in (items if items is not None else tool_calls) or []:
        if api == "chat":
            function = field(item, "function")
            if field(item, "type", "function") == "custom":  # a custom tool: none of ours, but it needs an answer
                found.append(Call(str(field(item, "id")), str(field(field(item, "custom"), "name")),
                                  "custom tool calls are not supported (MCP tools are functions)"))
                continue
            if function is None:
                continue
            found.append(Call(str(field(item, "id")), str(field(function, "name")),
                              parse_arguments(field(function, "arguments"))))
        elif field(item, "type") == "function_call":
            found.append(Call(str(field(item, "call_id")), str(field(item, "name")),
                              parse_arguments(field(item, "arguments"))))
    return found


def _responses_output(outcome: Outcome) -> Any:
    """A function call's ``output``: a string, or input_text/input_image/input_file parts."""
    if not isinstance(outcome, ToolResult):
        return error_text(outcome)
    parts: List[Dict[str, Any]] = []
    for block in outcome.content:
        if isinstance(block, ImageContent) and block.mime_type in IMAGE_TYPES:
            parts.append({"type": "input_image", "image_url": data_url(block.mime_type, block.data)})
        elif isinstance(block, EmbeddedResource) and block.resource.blob is not None \
                and block.resource.mime_type in IMAGE_TYPES + ("application/pdf",):
            res = block.resource
            if res.mime_type == "application/pdf":
                parts.append({"type": "input_file", "filename": res.uri.rsplit("/", 1)[-1] or "resource.pdf",
                              "file_data": data_url(res.mime_type, res.blob or b"")})
            else:
                parts.append({"type": "input_image", "image_url": data_url(res.mime_type or "", res.blob or b"")})
        else:
            text = describe(block)
            if text:
                parts.append({"type": "input_text", "text": text})
    extra = structured_text(outcome)
    if extra is not None:
        parts.append({"type": "input_text", "text": extra})
    if outcome.is_error:
        if parts and parts[0]["type"] == "input_text":
            parts[0] = {"type": "input_text", "text": f"Error: {parts[0]['text']}"}
        else:
            parts.insert(0, {"type": "input_text", "text": "Error:"})
    if all(p["type"] == "input_text" for p in parts):
        return "\n".join(p["text"] for p in parts) or "(no content)"
    return parts


def _chat_content(outcome: Outcome) -> str:
    if not isinstance(outcome, ToolResult):
        return error_text(outcome)
    return as_text(outcome) or "(no content)"


def run_openai_tool_calls(group: Any, tool_calls: Any, *, api: str = "chat", tools: Optional[Sequence[Tool]] = None,
                          timeout: Optional[float] = None) -> List[Dict[str, Any]]:
    """Run the model's tool calls in parallel and return the messages that answer them, in order.

    ``group`` is a ``ServerGroup`` (or a ``Client``); ``tool_calls`` is Chat Completions'
    ``message.tool_calls`` (or the message), or the Responses API's ``response.output`` (or the
    response; only its ``function_call`` items are run), as SDK objects or dicts. Chat answers
    are ``{"role": "tool", "tool_call_id", "content"}`` (text: images become placeholders);
    Responses answers are ``{"type": "function_call_output", "call_id", "output"}`` (images and
    PDFs as input parts). Errors (``is_error``, bad JSON arguments, unknown tools, failed
    requests, a call to an MCP Apps app-only tool: refused, nothing sent) are answered with text
    starting ``Error:``. ``tools``: the tools given to the
    model, whose schemas say which ``null`` arguments mean "omitted" (strict mode) and which are
    app-only; by default the latest listing (no request) or ``group.list_tools()``."""
    _check_api(api)
    calls = _calls(tool_calls, api)
    outcomes = run_calls(group, calls, tools=tools, timeout=timeout)
    if api == "chat":
        return [{"role": "tool", "tool_call_id": c.id, "content": _chat_content(o)} for c, o in zip(calls, outcomes)]
    return [{"type": "function_call_output", "call_id": c.id, "output": _responses_output(o)}
            for c, o in zip(calls, outcomes)]


async def arun_openai_tool_calls(group: Any, tool_calls: Any, *, api: str = "chat",
                                 tools: Optional[Sequence[Tool]] = None,
                                 timeout: Optional[float] = None) -> List[Dict[str, Any]]:
    """``run_openai_tool_calls``, awaitable, for async back ends (``AsyncOpenAI``, FastAPI): the
    calls run on a worker thread, never on the event loop (the docs' "Async back ends")."""
    return await on_a_worker_thread(run_openai_tool_calls, group, tool_calls, api=api, tools=tools, timeout=timeout)
