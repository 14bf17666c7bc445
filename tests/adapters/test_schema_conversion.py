"""The LLM adapters without an LLM: the schema corpus, strict mode's equivalence, and the run-back.

The corpus holds real tool schemas (the test server's catalogue, server-everything's zod shapes
written out; the official SDK server's tools, as ``list_tools()`` returns them, are in
test_provider_sdks_end_to_end.py beside that server) and made-up nested,
optional, ``$ref``, recursive, ``oneOf`` and ``enum`` cases. Every conversion must pass the
provider shape checks of tests/llm_endpoints.py; every strict conversion must accept exactly the
examples the original accepts (an omitted optional field sent as ``null``, as a strict model
does) and map them back (``prune_nulls``) to values the original accepts.
"""
from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from typing import Any, Dict, List, Optional

import jsonschema
import pytest

from mcpclient import Client, ToolResult
from mcpclient.adapters import StrictSchemaError, normalize, to_strict_schema
from mcpclient.adapters._schema import prune_nulls
from mcpclient.adapters.anthropic import run_anthropic_tool_uses, to_anthropic_tools
from mcpclient.adapters.openai import run_openai_tool_calls, to_openai_tools
from mcpclient.errors import UnknownToolError
from mcpclient.testing.server.catalog import PNG_1X1, TOOLS
from mcpclient.types import Tool

from conftest import TESTING_SERVER
from llm_endpoints import check_anthropic_tool, check_openai_tool, check_parameters, check_strict

# --- the corpus ------------------------------------------------------------------------------------

ADDRESS = {"type": "object", "properties": {"street": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
           "required": ["street"]}

#: name -> (schema, valid examples, invalid examples, strict possible)
CASES: Dict[str, Any] = {
    "nested optional": ({
        "type": "object",
        "properties": {
            "user": {"type": "object", "description": "Who", "properties": {
                "name": {"type": "string"}, "age": {"type": "integer", "minimum": 0},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "prefs": {"type": "object", "properties": {"theme": {"type": "string", "enum": ["dark", "light"]}}}},
                "required": ["name"]},
            "limit": {"type": "integer", "default": 10},
        },
        "required": ["user"]},
        [{"user": {"name": "a"}}, {"user": {"name": "a", "age": 3, "tags": ["x"], "prefs": {"theme": "dark"}}, "limit": 5},
         {"user": {"name": "a", "prefs": {}}}],
        [{}, {"user": {}}, {"user": {"name": "a", "age": -1}}, {"user": {"name": "a", "prefs": {"theme": "blue"}}},
         {"user": {"name": "a", "tags": ["1", "2", "3", "4"]}}, {"user": {"name": 1}}, {"user": {"name": "a"}, "limit": "5"}],
        True),
    "pydantic $defs and nullable": ({
        "$defs": {"Address": {**ADDRESS, "title": "Address"}},
        "type": "object", "title": "shipArguments",
        "properties": {"home": {"$ref": "#/$defs/Address"},
                       "work": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}], "default": None},
                       "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Note"}},
        "required": ["home"]},
        [{"home": {"street": "x"}}, {"home": {"street": "x", "zip": "12345"}, "work": None, "note": "n"},
         {"home": {"street": "x"}, "work": {"street": "y"}}],
        [{"home": {}}, {"home": {"street": "x", "zip": "1"}}, {"home": {"street": "x"}, "work": {"zip": "12345"}},
         {"home": {"street": "x"}, "note": 3}],
        True),
    "draft-07 definitions": ({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                                  "required": ["x", "y"], "additionalProperties": False}},
        "type": "object",
        "properties": {"path": {"type": "array", "items": {"$ref": "#/definitions/point"}, "minItems": 2}},
        "required": ["path"], "additionalProperties": False},
        [{"path": [{"x": 0, "y": 0}, {"x": 1, "y": 2.5}]}],
        [{"path": [{"x": 0, "y": 0}]}, {"path": [{"x": 0}, {"x": 1, "y": 1}]}, {"path": [], "extra": 1}],
        True),
    "recursive tree": ({
        "type": "object",
        "$defs": {"node": {"type": "object", "properties": {
            "value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["value"]}},
        "properties": {"root": {"$ref": "#/$defs/node"}}, "required": ["root"]},
        [{"root": {"value": 1}}, {"root": {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}}],
        [{"root": {}}, {"root": {"value": 1, "children": [{"value": "2"}]}}, {"root": {"value": 1, "children": [{}]}}],
        True),
    "discriminated oneOf": ({
        "type": "object",
        "properties": {"shape": {"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}}, "required": ["kind", "r"]},
            {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}, "label": {"type": "string"}},
             "required": ["kind", "side"]}]}},
        "required": ["shape"]},
        [{"shape": {"kind": "circle", "r": 1}}, {"shape": {"kind": "square", "side": 2}},
         {"shape": {"kind": "square", "side": 2, "label": "s"}}],
        [{"shape": {"kind": "circle"}}, {"shape": {"kind": "triangle", "r": 1}}, {"shape": {"kind": "square", "r": 1}}],
        True),
    "enums, const and type unions": ({
        "type": "object",
        "properties": {"mode": {"enum": ["a", "b"]}, "version": {"const": 2}, "level": {"enum": [1, 2, 3]},
                       "value": {"type": ["string", "number"]}, "maybe": {"type": ["string", "null"]},
                       "flag": {"type": "boolean"}},
        "required": ["mode", "version"]},
        [{"mode": "a", "version": 2}, {"mode": "b", "version": 2, "level": 3, "value": 1.5, "maybe": None, "flag": True},
         {"mode": "a", "version": 2, "value": "x", "maybe": "y"}],
        [{"mode": "c", "version": 2}, {"mode": "a", "version": 3}, {"mode": "a", "version": 2, "level": 4},
         {"mode": "a", "version": 2, "value": True}, {"mode": "a", "version": 2, "flag": "yes"}],
        True),
    "keywords beside anyOf": ({
        "type": "object", "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "string"}], "minimum": 3,
                                              "description": "a count or a word"}}, "required": ["n"]},
        [{"n": 3}, {"n": "two"}], [{"n": 2}, {"n": None}, {}], True),
    "overlapping oneOf": ({
        "type": "object", "properties": {"id": {"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 3}]}}},
        [{"id": "long id"}], [], False),
    "open map": ({
        "type": "object", "properties": {"env": {"type": "object", "additionalProperties": {"type": "string"}}}},
        [{"env": {"A": "1"}}], [{"env": {"A": 1}}], False),
    "patternProperties": ({
        "type": "object", "properties": {"h": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}}}},
        [{"h": {"x-a": "1"}}], [], False),
    "minLength": ({
        "type": "object", "properties": {"q": {"type": "string", "minLength": 1}}, "required": ["q"]},
        [{"q": "x"}], [{"q": ""}], False),
    "untyped value": ({
        "type": "object", "properties": {"anything": {"description": "any JSON"}}},
        [{"anything": [1, {"a": None}]}], [], False),
    "top-level anyOf": ({
        "anyOf": [{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
                  {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}]},
        [{"id": "1"}, {"name": "n"}], [], False),
    "no schema at all": ({}, [{}], [], True),
}

#: server-everything's tools as its zod schemas come out (draft-07, closed objects, defaults).
_ZOD = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": False}
EVERYTHING = {
    "echo": ({**_ZOD, "properties": {"message": {"type": "string", "description": "Message to echo"}}, "required": ["message"]},
             [{"message": "hi"}], [{}, {"message": 1}, {"message": "hi", "x": 1}], True),
    "longRunningOperation": ({**_ZOD, "properties": {
        "duration": {"type": "number", "default": 10, "description": "Duration of the operation in seconds"},
        "steps": {"type": "number", "default": 5, "description": "Number of steps in the operation"}}},
        [{}, {"duration": 1}, {"duration": 1, "steps": 2}], [{"steps": "2"}], True),
    "annotatedMessage": ({**_ZOD, "properties": {
        "messageType": {"type": "string", "enum": ["error", "success", "debug"]},
        "includeImage": {"type": "boolean", "default": False}}, "required": ["messageType"]},
        [{"messageType": "error"}, {"messageType": "debug", "includeImage": True}], [{"messageType": "info"}], True),
    "getResourceReference": ({**_ZOD, "properties": {"resourceId": {"type": "number", "minimum": 1, "maximum": 100}},
                              "required": ["resourceId"]},
                             [{"resourceId": 1}, {"resourceId": 100}], [{"resourceId": 0}, {"resourceId": 101}], True),
    "printEnv": ({**_ZOD, "properties": {}}, [{}], [{"a": 1}], True),
    "structuredContent": ({**_ZOD, "properties": {"location": {"type": "string", "minLength": 1}}, "required": ["location"]},
                          [{"location": "Paris"}], [{"location": ""}], False),
}


def _catalog_cases() -> Dict[str, Any]:
    """The test server's tools; examples from their own shapes."""
    examples = {"echo": [{"text": "x"}], "add": [{"a": 1, "b": 2.5}], "slow": [{}, {"steps": 2}, {"steps": 1, "delay": 0}],
                "picture": [{}], "fail": [{"message": "m"}], "log": [{"level": "info", "message": "m"}],
                "bad_output": [{}], "mixed": [{}], "ask_client": [{"method": "ping"}]}
    invalid = {"echo": [{}], "add": [{"a": "1", "b": 2}], "slow": [{"steps": -1}], "log": [{"level": "loud", "message": "m"}]}
    return {f"catalog {t['name']}": (t["inputSchema"], examples[t["name"]], invalid.get(t["name"], []),
                                     t["name"] != "ask_client") for t in TOOLS}


ALL = {**CASES, **{f"everything {k}": v for k, v in EVERYTHING.items()}, **_catalog_cases()}


# --- an independent reference: how a strict model fills omitted fields -----------------------------------

def _deref(schema: Any, root: Dict[str, Any]) -> Any:
    while isinstance(schema, dict) and "$ref" in schema:
        ref, rest = schema["$ref"], {k: v for k, v in schema.items() if k != "$ref"}
        target: Any = root
        for part in ref.lstrip("#/").split("/") if ref != "#" else []:
            target = target[part]
        schema = {**target, **rest}
    return schema


def _with_defs(schema: Dict[str, Any], root: Dict[str, Any]) -> Dict[str, Any]:
    return {**schema, **{k: root[k] for k in ("$defs", "definitions") if k in root}}


def fill_nulls(schema: Any, value: Any, root: Dict[str, Any]) -> Any:
    """``value`` as a strict model would send it: every omitted property present, as ``null``."""
    schema = _deref(schema, root)
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        for key in ("anyOf", "oneOf"):
            for branch in schema.get(key, []):
                branch = _deref(branch, root)
                if jsonschema.Draft202012Validator(_with_defs(branch, root)).is_valid(value) and "properties" in branch:
                    return fill_nulls(branch, value, root)
        properties = schema.get("properties", {})
        out = {k: fill_nulls(properties[k], v, root) if k in properties else v for k, v in value.items()}
        out.update({k: None for k in properties if k not in out})
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [fill_nulls(schema["items"], v, root) for v in value]
    return value


@pytest.mark.parametrize("name", sorted(ALL))
def test_corpus_conversions(name: str, caplog: pytest.LogCaptureFixture) -> None:
    schema, valid, invalid, strict_possible = ALL[name]
    original = jsonschema.Draft7Validator if "draft-07" in schema.get("$schema", "") else jsonschema.Draft202012Validator
    for example in valid:
        assert original(schema).is_valid(example), example
    for example in invalid:
        assert not original(schema).is_valid(example), example
    tool = Tool.from_wire({"name": re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64], "description": name, "inputSchema": schema})

    # every provider's shape, non-strict: the normalized schema keeps every valid example valid
    (anthropic,) = to_anthropic_tools([tool])
    assert check_anthropic_tool(anthropic) == []
    for api in ("chat", "responses"):
        (loose,) = to_openai_tools([tool], api=api)
        assert check_openai_tool(loose, api) == []
    normalized = normalize(schema)
    assert check_parameters(normalized, name) == []
    for example in valid:
        assert jsonschema.Draft202012Validator(normalized).is_valid(example), example
    if not any(k in schema for k in ("anyOf", "oneOf", "allOf")):  # otherwise normalizing loosens the top
        for example in invalid:
            assert not jsonschema.Draft202012Validator(normalized).is_valid(example), example

    # strict: the same examples, omitted fields as null; back through prune_nulls
    caplog.set_level(logging.WARNING, "mcpclient.adapters")
    for api in ("chat", "responses"):
        (converted,) = to_openai_tools([tool], strict=True, api=api)
        function = converted["function"] if api == "chat" else converted
        assert check_openai_tool(converted, api) == []
        assert function["strict"] is strict_possible
        assert function["description"] == name
    if not strict_possible:
        assert "sent without strict mode" in caplog.text
        with pytest.raises(StrictSchemaError):
            to_strict_schema(schema)
        return
    strict = to_strict_schema(schema)
    assert check_strict(strict, name) == []
    checker = jsonschema.Draft202012Validator(strict)
    for example in valid:
        sent = fill_nulls(schema, example, schema)
        assert checker.is_valid(sent), (sent, sorted(e.message for e in checker.iter_errors(sent)))
        back = prune_nulls(schema, sent)
        assert original(schema).is_valid(back), back
    for example in invalid:
        sent = fill_nulls(schema, example, schema)
        assert not checker.is_valid(sent), sent


def test_strict_details() -> None:
    strict = to_strict_schema(CASES["pydantic $defs and nullable"][0])
    assert "$defs" not in strict  # non-recursive refs are inlined
    assert strict["properties"]["work"]["anyOf"][1] == {"type": "null"}
    recursive = to_strict_schema(CASES["recursive tree"][0])
    assert recursive["properties"]["root"] == {"$ref": "#/$defs/node"} or "$defs" in recursive
    assert set(recursive["$defs"]) == {"node"}
    assert recursive["$defs"]["node"]["additionalProperties"] is False
    shape = to_strict_schema(CASES["discriminated oneOf"][0])["properties"]["shape"]
    assert "anyOf" in shape and "oneOf" not in shape
    with pytest.raises(StrictSchemaError, match="open additionalProperties"):
        to_strict_schema(CASES["open map"][0])
    with pytest.raises(StrictSchemaError, match="minLength"):
        to_strict_schema(CASES["minLength"][0])
    assert normalize({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}})["properties"]["a"] == \
        {"$ref": "https://example.com/s.json"}  # a remote $ref is left alone (never fetched)
    merged = normalize(CASES["top-level anyOf"][0])
    assert set(merged["properties"]) == {"id", "name"} and "required" not in merged


def test_names_the_provider_refuses_are_left_out(caplog: pytest.LogCaptureFixture) -> None:
    tools = [Tool.from_wire({"name": "files/read", "inputSchema": {"type": "object"}}),
             Tool.from_wire({"name": "ok", "title": "Ok", "inputSchema": {"type": "object"}})]
    with caplog.at_level(logging.WARNING, "mcpclient.adapters"):
        assert [t["function"]["name"] for t in to_openai_tools(tools)] == ["ok"]
        assert [t["name"] for t in to_anthropic_tools(tools)] == ["ok"]
    assert "files/read" in caplog.text
    assert to_anthropic_tools(tools)[0]["description"] == "Ok"  # no description: the title
    assert "strict" not in to_openai_tools(tools)[0]["function"]
    assert to_openai_tools(tools, api="responses")[0]["strict"] is False  # the Responses API defaults to strict
    with pytest.raises(ValueError):
        to_openai_tools(tools, api="completions")


def test_a_tool_sent_without_strict_mode_is_warned_about_once_not_on_every_turn(caplog: pytest.LogCaptureFixture) -> None:
    tool = Tool.from_wire({"name": "open_map_every_turn", "inputSchema": CASES["open map"][0]})
    with caplog.at_level(logging.WARNING, "mcpclient.adapters"):
        for _ in range(3):
            (converted,) = to_openai_tools([tool], strict=True)
            assert converted["function"]["strict"] is False
    assert caplog.text.count("'open_map_every_turn' sent without strict mode") == 1


def test_provider_modules_import_no_sdk() -> None:
    code = ("import sys, mcpclient.adapters, mcpclient.adapters.openai, mcpclient.adapters.anthropic, "
            "mcpclient.adapters.langchain; print([m for m in ('openai', 'anthropic', 'langchain_core') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "[]", done.stderr


# --- the run-back ----------------------------------------------------------------------------------

def _result(content: List[Dict[str, Any]], structured: Any = None, error: bool = False) -> ToolResult:
    raw: Dict[str, Any] = {"content": content, "isError": error}
    if structured is not None:
        raw["structuredContent"] = structured
    return ToolResult.from_wire(raw)


class FakeGroup:
    """A ``ToolHost`` whose ``call_tools`` answers from a table (an exception value for a name it
    does not know)."""

    def __init__(self, results: Dict[str, ToolResult], tools: Optional[List[Tool]] = None) -> None:
        self.results = results
        self.tools = tools or []
        self.calls: List[Any] = []
        self.listed = 0

    def list_tools(self) -> List[Tool]:
        self.listed += 1
        return self.tools

    def known_tool(self, name: str) -> Optional[Tool]:
        return None  # (no listing kept: the adapters then list, as they do for a group)

    def call_tools(self, calls: Any, timeout: Optional[float] = None) -> List[Any]:
        self.calls.append(list(calls))
        return [self.results.get(name) or UnknownToolError(name, [], "") for name, _ in calls]


MIXED = [{"type": "text", "text": "some text"},
         {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
         {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
         {"type": "resource_link", "uri": "test://text", "name": "text", "mimeType": "text/plain"},
         {"type": "resource", "resource": {"uri": "test://text", "mimeType": "text/plain", "text": "hello"}},
         {"type": "resource", "resource": {"uri": "test://doc.pdf", "mimeType": "application/pdf", "blob": "JVBERg=="}},
         {"type": "hologram"}]


def test_run_back_errors_are_answers() -> None:
    group = FakeGroup({"echo": _result([{"type": "text", "text": "hi"}])})
    calls = [{"id": "1", "type": "function", "function": {"name": "echo", "arguments": '{"text": "hi"}'}},
             {"id": "2", "type": "function", "function": {"name": "echo", "arguments": "{not json"}},
             {"id": "3", "type": "function", "function": {"name": "echo", "arguments": "[1]"}},
             {"id": "4", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
             {"id": "5", "type": "function", "function": {"name": "echo", "arguments": ""}}]
    answers = run_openai_tool_calls(group, calls)
    assert [a["tool_call_id"] for a in answers] == ["1", "2", "3", "4", "5"]
    assert answers[0] == {"role": "tool", "tool_call_id": "1", "content": "hi"}
    assert answers[1]["content"].startswith("Error: arguments are not valid JSON")
    assert answers[2]["content"] == "Error: arguments must be a JSON object, got list"
    assert answers[3]["content"].startswith("Error: UnknownToolError")
    assert group.calls == [[("echo", {"text": "hi"}), ("nope", {}), ("echo", {})]]  # the bad ones never sent
    custom = run_openai_tool_calls(group, [{"id": "6", "type": "custom", "custom": {"name": "grammar", "input": "x"}}])
    assert custom == [{"role": "tool", "tool_call_id": "6",
                       "content": "Error: custom tool calls are not supported (MCP tools are functions)"}]
    assert group.listed == 2  # once per run (which tools are app-only; a group's list is its own table)
    blocks = [{"type": "text", "text": "thinking"}, {"type": "tool_use", "id": "t1", "name": "nope", "input": {}}]
    message = run_anthropic_tool_uses(group, blocks)
    assert message["role"] == "user"
    assert message["content"][0]["is_error"] is True and message["content"][0]["tool_use_id"] == "t1"


def test_run_back_drops_strict_nulls() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": ["string", "null"]},
                                               "c": {"type": "object", "properties": {"d": {"type": "integer"}}}}}
    tool = Tool.from_wire({"name": "t", "inputSchema": schema})
    group = FakeGroup({"t": _result([])}, [tool])
    call = {"type": "function_call", "call_id": "c1", "name": "t", "arguments": '{"a": null, "b": null, "c": {"d": null}}'}
    (answer,) = run_openai_tool_calls(group, [{"type": "reasoning"}, call], api="responses")
    assert answer == {"type": "function_call_output", "call_id": "c1", "output": "(no content)"}
    assert group.calls == [[("t", {"b": None, "c": {}})]] and group.listed == 1
    run_openai_tool_calls(group, [call], api="responses", tools=[tool])
    assert group.listed == 1  # tools= given: not asked


def test_content_mapping_per_provider() -> None:
    group = FakeGroup({"m": _result(MIXED, structured={"n": 1}),
                       "e": _result([{"type": "text", "text": "bad"}], error=True),
                       "s": _result([{"type": "text", "text": '{"n": 1}'}], structured={"n": 1})})
    chat = run_openai_tool_calls(group, [{"id": x, "function": {"name": x, "arguments": "{}"}} for x in "mes"])
    text = chat[0]["content"]
    assert text.splitlines()[:4] == ["some text", "[image: image/png, 70 bytes]", "[audio: audio/wav, 4 bytes]",
                                     "[resource link: text <test://text> (text/plain)]"]
    assert "[resource <test://text>]\nhello" in text and "[resource <test://doc.pdf>: application/pdf, 4 bytes]" in text
    assert "[unsupported content: hologram]" in text and text.endswith('{"n": 1}')
    assert chat[1]["content"] == "Error: bad"
    assert chat[2]["content"] == '{"n": 1}'  # structured content already in the text: not repeated

    responses = run_openai_tool_calls(group, [{"type": "function_call", "call_id": x, "name": x, "arguments": "{}"}
                                              for x in "me"], api="responses")
    parts = responses[0]["output"]
    assert [p["type"] for p in parts] == ["input_text", "input_image", "input_text", "input_text", "input_text",
                                          "input_file", "input_text", "input_text"]
    assert parts[1]["image_url"] == f"data:image/png;base64,{PNG_1X1}"
    assert parts[5]["file_data"].startswith("data:application/pdf;base64,") and parts[5]["filename"] == "doc.pdf"
    assert responses[1]["output"] == "Error: bad"

    message = run_anthropic_tool_uses(group, [{"type": "tool_use", "id": x, "name": x, "input": {}} for x in "me"])
    blocks = message["content"][0]["content"]
    assert [b["type"] for b in blocks] == ["text", "image", "text", "text", "text", "document", "text", "text"]
    assert blocks[1]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG_1X1}
    assert message["content"][0]["is_error"] is False
    assert message["content"][1] == {"type": "tool_result", "tool_use_id": "e", "is_error": True,
                                     "content": [{"type": "text", "text": "bad"}]}


def test_a_client_runs_calls_too() -> None:
    """A ``Client`` (no ``call_tools``): its calls go out at once as futures."""
    with Client(TESTING_SERVER) as client:
        tools = to_openai_tools(client, strict=True)  # a client or group: its list_tools()
        assert {t["function"]["name"] for t in tools} >= {"echo", "mixed"}
        calls = [{"id": "a", "function": {"name": "mixed", "arguments": "{}"}},
                 {"id": "b", "function": {"name": "slow", "arguments": json.dumps({"steps": 1, "delay": None})}},
                 {"id": "c", "function": {"name": "missing", "arguments": "{}"}}]
        answers = run_openai_tool_calls(client, calls)
        assert answers[0]["content"].startswith("some text\n[image: image/png")
        assert not answers[1]["content"].startswith("Error")  # null delay dropped: the default applies
        assert answers[2]["content"].startswith("Error")


def test_langchain_tools() -> None:
    pytest.importorskip("langchain_core")
    from mcpclient.adapters.langchain import to_langchain_tools

    schema = {"type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "integer"}}, "required": ["text"]}
    seen = []

    class Target:
        def list_tools(self) -> List[Tool]:
            return [Tool.from_wire({"name": "echo", "description": "Echo", "inputSchema": schema})]

        def call_tool(self, name: str, arguments: Dict[str, Any]) -> ToolResult:
            seen.append((name, arguments))
            return _result([{"type": "text", "text": arguments["text"]}], error=arguments["text"] == "bad")

    (tool,) = to_langchain_tools(Target())
    assert tool.name == "echo" and tool.description == "Echo"
    assert tool.args_schema == {**schema, "required": ["text"]} and tool.response_format == "content_and_artifact"
    message = tool.invoke({"name": "echo", "args": {"text": "hi", "n": None}, "id": "1", "type": "tool_call"})
    assert message.content == "hi" and message.artifact.text == "hi" and seen[-1] == ("echo", {"text": "hi"})
    failed = tool.invoke({"name": "echo", "args": {"text": "bad"}, "id": "2", "type": "tool_call"})
    assert failed.status == "error" and "bad" in failed.content
    import asyncio

    message = asyncio.run(tool.ainvoke({"name": "echo", "args": {"text": "async"}, "id": "3", "type": "tool_call"}))
    assert message.content == "async"


# --- MCP Apps: app-only tools are not the model's ------------------------------

APP_ONLY = Tool.from_wire({"name": "increment", "inputSchema": {"type": "object"},
                           "_meta": {"ui": {"resourceUri": "ui://counter/app.html", "visibility": ["app"]}}})


@pytest.fixture
def apps_wire(tmp_path: Any) -> Any:
    """A client of ``python -m mcpclient.testing --apps`` and a reader of what it sent (a cassette)."""
    from mcpclient.testing import RecordingTransport, server_command
    from mcpclient.transports import StdioTransport

    cassette = tmp_path / "wire.jsonl"
    with Client(RecordingTransport(StdioTransport(server_command("--apps")), cassette), timeout=10) as client:
        def sent(method: str) -> List[Dict[str, Any]]:
            events = [json.loads(line) for line in cassette.read_text().splitlines() if line.strip()]
            return [e["msg"] for e in events if e.get("dir") == "send" and e["msg"].get("method") == method]
        yield client, sent


def test_app_only_tools_are_left_out(apps_wire: Any) -> None:
    from mcpclient.adapters import model_tools

    client, _ = apps_wire
    tools = client.list_tools()
    assert "increment" in {t.name for t in tools} and "increment" not in {t.name for t in model_tools(tools)}
    assert {"counter", "lookup_secret", "echo"} <= {t.name for t in model_tools(client)}
    for api in ("chat", "responses"):
        names = [t["name"] if api == "responses" else t["function"]["name"] for t in to_openai_tools(tools, api=api)]
        assert "increment" not in names and "lookup_secret" in names and "counter" in names
        every = to_openai_tools(tools, api=api, include_app_only=True)
        assert len(every) == len(tools)
    assert "increment" not in {t["name"] for t in to_anthropic_tools(client)}
    assert "increment" in {t["name"] for t in to_anthropic_tools(tools, include_app_only=True)}


def test_app_only_tools_left_out_of_langchain(apps_wire: Any) -> None:
    pytest.importorskip("langchain_core")
    from mcpclient.adapters.langchain import to_langchain_tools

    client, _ = apps_wire
    assert "increment" not in {t.name for t in to_langchain_tools(client)}
    assert "increment" in {t.name for t in to_langchain_tools(client, include_app_only=True)}


def test_a_model_call_to_an_app_only_tool_is_refused(apps_wire: Any) -> None:
    client, sent = apps_wire
    before = len(sent("tools/call"))
    (chat,) = run_openai_tool_calls(client, [{"id": "1", "function": {"name": "increment", "arguments": "{}"}}])
    assert chat["content"] == "Error: tool 'increment' is only available to its MCP App's UI, not to the model"
    (responses,) = run_openai_tool_calls(client, [{"type": "function_call", "call_id": "2", "name": "increment",
                                                   "arguments": "{}"}], api="responses", tools=client.list_tools())
    assert responses["output"].startswith("Error: tool 'increment' is only available")
    message = run_anthropic_tool_uses(client, [{"type": "tool_use", "id": "3", "name": "increment", "input": {}},
                                               {"type": "tool_use", "id": "4", "name": "counter", "input": {}}])
    refused, allowed = message["content"]
    assert refused["is_error"] is True and "only available to its MCP App" in refused["content"][0]["text"]
    assert allowed["is_error"] is False and '"count": 0' in allowed["content"][0]["text"]  # never incremented
    assert [m["params"]["name"] for m in sent("tools/call")[before:]] == ["counter"]  # nothing sent for increment


def test_a_group_refuses_app_only_calls_too() -> None:
    group = FakeGroup({"increment": _result([{"type": "text", "text": "1"}])}, [APP_ONLY])
    (answer,) = run_openai_tool_calls(group, [{"id": "1", "function": {"name": "increment", "arguments": "{}"}}])
    assert answer["content"].startswith("Error: tool 'increment' is only available") and group.calls == []


def test_an_app_only_call_is_refused_when_the_given_tools_leave_it_out(apps_wire: Any) -> None:
    """``tools=`` is what the model was given: app-only tools are (rightly) not in it. A model that
    names one anyway (a guess, an injected prompt) is still refused, and nothing is sent."""
    from mcpclient.adapters import model_tools

    client, sent = apps_wire
    given = model_tools(client)
    assert "increment" not in {t.name for t in given}
    before = len(sent("tools/call"))
    (chat,) = run_openai_tool_calls(client, [{"id": "1", "function": {"name": "increment", "arguments": "{}"}}],
                                    tools=given)
    assert chat["content"].startswith("Error: tool 'increment' is only available")
    message = run_anthropic_tool_uses(client, [{"type": "tool_use", "id": "2", "name": "increment", "input": {}}],
                                      tools=given)
    assert message["content"][0]["is_error"] is True
    assert sent("tools/call")[before:] == []
    group = FakeGroup({"increment": _result([{"type": "text", "text": "1"}])}, [APP_ONLY])
    (answer,) = run_openai_tool_calls(group, [{"id": "3", "function": {"name": "increment", "arguments": "{}"}}],
                                      tools=[])
    assert answer["content"].startswith("Error: tool 'increment' is only available") and group.calls == []


def test_tool_search_never_shows_the_model_an_app_only_tool() -> None:
    """A group's ``search_tools`` (the model-callable tool, and the method that picks the tools
    to give a model) ranks only model-visible tools: an app-only tool's name and description
    must not reach the model through a search either."""
    from mcpclient import ServerGroup
    from mcpclient.testing import server_command

    with ServerGroup({"a": server_command("--apps")}, client_options={"timeout": 10}) as group:
        assert "a_increment" in {t.name for t in group.list_tools()}
        assert "a_increment" not in {t.name for t in group.search_tools("add to the count increment", k=50)}
        result = group.call_tool("search_tools", {"query": "add to the count increment", "k": 50})
        assert not result.is_error and "increment" not in result.text
        assert "a_counter" in {t["name"] for t in result.structured_content["tools"]}
