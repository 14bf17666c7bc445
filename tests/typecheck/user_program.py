"""A user's program, written as the README shows: ``tests/typecheck/test_mypy_strict.py`` runs ``mypy --strict`` on
it, so the result types stay constructible by keyword and readable with their real types.

Not collected by pytest (no ``test_`` names) and never run: it only has to type-check.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Mapping, Optional

from mcpclient import (
    CreateMessageRequest, CreateMessageResult, ElicitationRequest, ElicitationResult, MCPError, Retry, Root,
    ServerConfig, ServerGroup, ServerStatus, TextContent, Tool, ToolChange, ToolIndex, ToolPins, ToolResult,
    load_config, search_tool_definition, tool_fingerprint,
)
from mcpclient.types import JSONObject, JSONValue

policy = Retry(total=3, retry_tool_calls=True)
repeats: int = policy.total
calmer: Retry = dataclasses.replace(policy, backoff_factor=1.0)

text = TextContent(text="hello", meta={"k": "v"})
body: str = text.text
kind: str = text.type
meta: Optional[JSONObject] = text.meta

answer = CreateMessageResult(content=text, model="my-model")
also = CreateMessageResult(content="plain text", model="m", stop_reason=None)
model: str = answer.model
role: str = also.role
stop: Optional[str] = also.stop_reason

accepted = ElicitationResult(action="accept", content={"name": "Ada"})
declined: ElicitationResult = ElicitationResult.decline()
action: str = accepted.action
fields: Optional[Mapping[str, object]] = accepted.content

tool = Tool(name="echo", description="Echo the text back", input_schema={"type": "object"})
name: str = tool.name
description: Optional[str] = tool.description
schema: JSONObject = tool.input_schema
shown: str = tool.display_name
support: str = tool.task_support

root = Root(uri="file:///home/me/project", name="project")
uri: str = root.uri
root_name: Optional[str] = root.name
roots: List[Root] = [root, Root(uri="file:///tmp")]

renamed: Tool = dataclasses.replace(tool, name="echo2")
as_dict: Dict[str, object] = dataclasses.asdict(tool)
by_hash = {text: 1, root: 2}


def sample(request: CreateMessageRequest) -> CreateMessageResult:
    prompt: str = request.messages[-1].text
    hints: List[str] = request.model_hints
    return CreateMessageResult(content=f"{prompt} ({len(hints)} hints)", model="my-model")


def ask_user(request: ElicitationRequest) -> ElicitationResult:
    if request.mode == "url":
        return ElicitationResult.decline()
    return ElicitationResult.accept(request.defaults())


def joined(result: ToolResult) -> str:
    return result.text if not result.is_error else ""


def total(result: ToolResult) -> float:
    structured: JSONValue = result.structured_content
    value = structured.get("sum") if isinstance(structured, dict) else None
    return float(value) if isinstance(value, (int, float)) else 0.0


def many_servers(path: str) -> List[str]:
    configs: Dict[str, ServerConfig] = load_config(path)
    timeout: Optional[float] = configs["files"].timeout
    with ServerGroup(configs, client_options={"timeout": timeout}, pins=ToolPins("pins.json")) as group:
        states: Dict[str, ServerStatus] = group.status
        failed: Optional[BaseException] = states["files"].error
        tools: List[Tool] = group.list_tools() + [search_tool_definition()]
        found: List[Tool] = ToolIndex(tools).search("read a file", k=3) + group.search_tools("fetch")
        arguments: Dict[str, int] = {"line": 1}
        result: ToolResult = group.call_tool("files_read", {"path": "a.txt"})
        numbered: ToolResult = group.call_tool("files_read", arguments)
        results: List[ToolResult | MCPError] = group.call_tools([("files_read", {"path": "b.txt"})], timeout=5)
        changes: List[ToolChange] = group.pin_changes
        pair: tuple[str, str] = group.resolve("files.read")
        return [tool_fingerprint(t) for t in found] + [result.text, numbered.text, str(failed), str(len(results)), str(changes), *pair]


def llm_tools(group: ServerGroup, tool_calls: List[Dict[str, Any]], blocks: List[Dict[str, Any]]) -> int:
    from mcpclient.adapters.anthropic import run_anthropic_tool_uses, to_anthropic_tools
    from mcpclient.adapters.openai import run_openai_tool_calls, to_openai_tools

    openai_tools: List[Dict[str, Any]] = to_openai_tools(group.list_tools(), strict=True, api="responses")
    answers: List[Dict[str, Any]] = run_openai_tool_calls(group, tool_calls, api="chat", timeout=30)
    claude_tools: List[Dict[str, Any]] = to_anthropic_tools(group)
    message: Dict[str, Any] = run_anthropic_tool_uses(group, blocks)
    return len(openai_tools) + len(answers) + len(claude_tools) + len(message["content"])


def remote_auth(platform_jwt: str) -> List[str]:
    from mcpclient.auth import (
        AuthorizationCode, ClientCredentials, FileTokenStore, Grant, JWTBearer, OAuth, loopback_authorize,
    )

    service = OAuth(ClientCredentials("svc", client_secret="..."), scopes=["files:read"], dpop=False)
    login = OAuth(AuthorizationCode(loopback_authorize(), redirect_uri="http://127.0.0.1:33418/callback"),
                  store=FileTokenStore("~/.config/myapp/tokens.json"))
    workload = OAuth(JWTBearer(lambda: platform_jwt), dpop="auto", refresh_margin=60)
    grant: Grant = login.grant
    redirect: str = dataclasses.replace(AuthorizationCode(loopback_authorize()), client_id="app").redirect_uri
    client_id: Optional[str] = grant.client_id
    return [repr(service), repr(workload), redirect, str(client_id)]
