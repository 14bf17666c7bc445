"""The LLM adapters running tool calls against real servers: strict mode's ``null`` for an
omitted nested optional argument is dropped before the call, a bare client's timeout holds, a
failing LangChain tool answers an error message, OpenAI tools carry no top-level ``not``/``enum``/
``const``, and the official SDK's wrapped primitive result is sent once.

Real servers over real pipes (``tests/servers/nested_arguments.py`` is the official SDK's
``MCPServer``, which validates arguments with pydantic).
"""
from __future__ import annotations

import importlib.util
import json
import sys
import time

import pytest

from conftest import HAVE_OFFICIAL_SDK, LONG, SERVERS, TESTING_SERVER
from mcpclient import ServerGroup


HAVE_OFFICIAL = HAVE_OFFICIAL_SDK


needs_official = pytest.mark.skipif(not HAVE_OFFICIAL, reason="the official `mcp` SDK needs Python 3.10+")


NESTED = [sys.executable, str(SERVERS / "nested_arguments.py")]


def _chat_call(name: str, arguments: dict) -> dict:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


@needs_official
def test_strict_mode_null_for_a_nested_optional_argument_is_dropped_before_the_call():
    """Strict mode makes ``filter.limit`` (optional, not nullable) required-and-nullable, so the
    model sends ``null`` for "omitted". The adapter must drop it at any depth, not only when a
    top-level argument is null; the server (pydantic) refuses ``limit: null``."""
    from mcpclient.adapters.openai import run_openai_tool_calls, to_openai_tools

    with ServerGroup({"s": NESTED}) as group:
        [tool] = to_openai_tools(group, strict=True)
        assert tool["function"]["strict"] is True
        assert tool["function"]["parameters"]["properties"]["filter"]["properties"]["limit"]["type"] == ["integer", "null"]
        [answer] = run_openai_tool_calls(group, [_chat_call("s_find", {"query": "q", "filter": {"kind": "k", "limit": None}})])
    assert answer["content"].startswith("q k 10"), answer["content"]


def test_running_tool_calls_through_a_bare_client_keeps_the_clients_timeout():
    """``run_openai_tool_calls(client, ...)`` with no ``timeout`` must use the client's default
    per-request timeout, as a group does, not wait forever for a tool that hangs."""
    from mcpclient import Client, Timeout
    from mcpclient.adapters.openai import run_openai_tool_calls

    # (a slow machine's start takes its time: the connect timeout is long, each call's short)
    with Client(TESTING_SERVER, timeout=Timeout(0.5, connect=LONG)) as client:
        started = time.monotonic()
        [answer] = run_openai_tool_calls(client, [_chat_call("slow", {"steps": 1, "delay": 30})])
        took = time.monotonic() - started
    assert answer["content"].startswith("Error: RequestTimeout"), answer["content"]
    assert took < LONG, took


needs_langchain = pytest.mark.skipif(sys.version_info < (3, 11) or importlib.util.find_spec("langchain_core") is None,
                                     reason="langchain-core is pinned for Python 3.11+ (the test extra)")


@needs_langchain
def test_a_langchain_tool_whose_call_fails_answers_an_error_tool_message_not_an_exception():
    """As the OpenAI and Anthropic adapters do, a call that fails (here: the client's timeout)
    is an error for the model (``ToolMessage(status="error")``), not an exception that ends the
    agent loop."""
    from mcpclient.adapters.langchain import to_langchain_tools

    with ServerGroup({"t": TESTING_SERVER}, client_options={"timeout": 0.5}, connect_timeout=LONG) as group:
        tools = {tool.name: tool for tool in to_langchain_tools(group)}
        message = tools["t_slow"].invoke({"type": "tool_call", "id": "c1", "name": "t_slow",
                                          "args": {"steps": 1, "delay": 5}})
    assert message.status == "error"
    assert "RequestTimeout" in message.content


MUTABLE = [sys.executable, str(SERVERS / "mutable_tools.py")]


def _mutable_server(schema: dict) -> dict:
    return {"command": MUTABLE[0], "args": MUTABLE[1:], "env": {"TOOL_SCHEMA": json.dumps(schema)}, "protocol": "legacy"}


def test_openai_tools_have_no_top_level_not_enum_or_const():
    """OpenAI refuses a function whose parameters have ``oneOf``/``anyOf``/``allOf``/``enum``/
    ``const``/``not`` at the top level ("schema must have type 'object' and not have ... at the
    top level") — and refuses the whole request with it. "a or b, not both" is a common
    ``not``; strict mode cannot say it either, so both the strict and the non-strict tool must
    leave it out (the server still validates)."""
    from mcpclient import load_config
    from mcpclient.adapters.openai import to_openai_tools

    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
              "not": {"required": ["a", "b"]}}
    with ServerGroup(load_config({"mcpServers": {"kv": _mutable_server(schema)}})) as group:
        for strict in (False, True):
            for api in ("chat", "responses"):
                [tool] = to_openai_tools(group, strict=strict, api=api)
                parameters = (tool["function"] if api == "chat" else tool)["parameters"]
                assert not {"oneOf", "anyOf", "allOf", "enum", "const", "not"} & set(parameters), parameters
                assert set(parameters["properties"]) == {"a", "b"}


@needs_official
def test_the_sdks_wrapped_primitive_result_is_not_sent_twice():
    """The official SDK's server answers a tool returning ``str`` with the text and
    ``structuredContent: {"result": <the same text>}``; the provider message must carry it once."""
    from mcpclient.adapters.anthropic import run_anthropic_tool_uses
    from mcpclient.adapters.openai import run_openai_tool_calls

    arguments = {"query": "q", "filter": {"kind": "k"}}
    with ServerGroup({"s": NESTED}) as group:
        assert group.call_tool("s_find", arguments).structured_content == {"result": "q k 10"}
        [chat] = run_openai_tool_calls(group, [_chat_call("s_find", arguments)])
        [responses] = run_openai_tool_calls(group, [{"type": "function_call", "call_id": "c1", "name": "s_find",
                                                     "arguments": json.dumps(arguments)}], api="responses")
        message = run_anthropic_tool_uses(group, [{"type": "tool_use", "id": "t1", "name": "s_find", "input": arguments}])
    assert chat["content"] == "q k 10"
    assert responses["output"] == "q k 10"
    assert message["content"][0]["content"] == [{"type": "text", "text": "q k 10"}]
