"""Pure parts with no I/O: types, protocol tables, validation, errors, the public surface."""
from __future__ import annotations

import base64
import subprocess
import sys

import pytest

import mcpclient
from mcpclient import (
    ImageContent, InvalidParams, MethodNotFound, ProtocolError, ResourceNotFound, RPCError, SchemaValidationError,
    TextContent, ToolResult, UnknownContent,
)
from mcpclient.protocol.validation import validate_structured
from mcpclient._util.wire import format_message, redact
from mcpclient.protocol.spec import check_server_version, choose_offer, required_capability, server_has
from mcpclient.types import Completion, Tool, parse_content


def test_public_names_are_sorted_and_importable():
    names = [n for n in mcpclient.__all__ if n not in ("DEFAULT", "__version__")]
    assert names == sorted(names)
    for name in mcpclient.__all__:
        assert hasattr(mcpclient, name)


def test_import_does_not_load_requests_or_jsonschema():
    code = "import sys, mcpclient; print(sorted(m for m in ('requests', 'jsonschema', 'pydantic') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "[]", out.stderr


#: Modules only some feature needs: ``import mcpclient`` (and a text result) must leave them unloaded.
DEFERRED = ("mcpclient.types._content", "mcpclient.types._catalog", "mcpclient._client.keepalive", "mcpclient.protocol.rounds")


def test_import_does_not_load_rare_content_types_or_feature_modules():
    """The content blocks rarer than text, keepalive and input rounds load on first use (import time,
    tests/packaging/check_dist.py): other content, names and isinstance work as before."""
    code = ("import sys, mcpclient; from mcpclient.types import ToolResult;"
            "r = ToolResult.from_wire({'content': [{'type': 'text', 'text': 'a'}]});"
            f"print(sorted(m for m in sys.modules if m in {DEFERRED!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "[]", out.stderr
    from mcpclient import types

    image = ToolResult.from_wire({"content": [{"type": "image", "data": "", "mimeType": "image/png"}]}).content[0]
    assert isinstance(image, mcpclient.ImageContent) and isinstance(image, types.ImageContent)
    assert mcpclient.ResourceLink is types.ResourceLink and types.ResourceLink.__module__ == "mcpclient.types"
    assert "AudioContent" in dir(types)
    import typing

    from mcpclient.types.handlers import SamplingMessage

    for cls in (ToolResult, types.PromptMessage, SamplingMessage):  # Content's members resolve once looked up
        assert typing.get_args(typing.get_type_hints(cls)["content"])


def test_rpc_error_subclass_by_code_and_tolerates_garbage():
    assert type(RPCError.from_wire({"code": -32601, "message": "x"})) is MethodNotFound
    assert type(RPCError.from_wire({"code": -32602, "message": "x"})) is InvalidParams
    assert type(RPCError.from_wire({"code": -32002, "message": "x"})) is ResourceNotFound
    odd = RPCError.from_wire({"code": 12345, "message": "custom"})
    assert type(odd) is RPCError and odd.code == 12345
    assert RPCError.from_wire("not a dict").code == -32603
    assert RPCError.from_wire({"code": "x", "message": 5}).code == -32603


def test_content_parsing_keeps_unknown_types_and_decodes_base64():
    png = b"\x89PNG"
    image = parse_content({"type": "image", "data": base64.b64encode(png).decode(), "mimeType": "image/png"})
    assert isinstance(image, ImageContent) and image.data == png and image.type == "image"
    unknown = parse_content({"type": "hologram", "x": 1})
    assert isinstance(unknown, UnknownContent) and unknown.type == "hologram" and unknown.raw["x"] == 1
    with pytest.raises(ProtocolError):
        parse_content({"type": "image", "data": "not base64!!", "mimeType": "image/png"})
    with pytest.raises(ProtocolError):
        parse_content("text")


def test_tool_result_text_joins_text_parts_in_order():
    result = ToolResult.from_wire({"content": [{"type": "text", "text": "a"}, {"type": "hologram"},
                                               {"type": "text", "text": "b"}], "isError": False})
    assert result.text == "ab" and isinstance(result.content[0], TextContent)
    assert result.raise_for_error() is result


def test_tool_display_name_precedence():
    assert Tool.from_wire({"name": "n", "title": "T", "annotations": {"title": "A"}}).display_name == "T"
    assert Tool.from_wire({"name": "n", "annotations": {"title": "A"}}).display_name == "A"
    assert Tool.from_wire({"name": "n"}).display_name == "n"
    with pytest.raises(ProtocolError):
        Tool.from_wire({"title": "no name"})


def test_completion_requires_values():
    assert Completion.from_wire({"completion": {"values": ["a"], "hasMore": True}}).has_more
    with pytest.raises(ProtocolError):
        Completion.from_wire({"completion": {}})


@pytest.mark.parametrize("offered,answered,protocol,ok", [
    ("2025-11-25", "2025-11-25", "auto", True),
    ("2025-11-25", "2024-11-05", "auto", True),
    ("2025-11-25", "1999-01-01", "auto", False),
    ("2025-11-25", None, "auto", False),
    ("2025-06-18", "2025-06-18", "2025-06-18", True),
    ("2025-06-18", "2025-11-25", "2025-06-18", False),
])
def test_version_check(offered, answered, protocol, ok):
    if ok:
        assert check_server_version(offered, answered, protocol) == answered
    else:
        with pytest.raises(ProtocolError, match=offered):
            check_server_version(offered, answered, protocol)


def test_choose_offer_rejects_unknown_settings():
    assert choose_offer("auto") == "2025-11-25"
    assert choose_offer("2024-11-05") == "2024-11-05"
    with pytest.raises(ValueError):
        choose_offer("2099-01-01")


def test_capability_table():
    caps = {"tools": {}, "resources": {"subscribe": False}, "logging": {}}
    assert server_has(caps, "tools") and server_has(caps, "logging")
    assert not server_has(caps, "resources.subscribe") and not server_has(caps, "prompts")
    assert required_capability("completion/complete", "2025-06-18") == "completions"
    assert required_capability("completion/complete", "2024-11-05") is None
    assert required_capability("ping", "2025-11-25") is None


def test_validation_accepts_rejects_and_never_fetches_remote_refs():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    validate_structured({"n": 1}, schema, "t")
    with pytest.raises(SchemaValidationError, match="/n"):
        validate_structured({"n": "x"}, schema, "t")
    remote = {"$ref": "http://127.0.0.1:9/never-fetched.json"}
    with pytest.raises(SchemaValidationError):
        validate_structured({"n": 1}, remote, "t")
    with pytest.raises(SchemaValidationError, match="unusable"):
        validate_structured({}, {"type": 12}, "t")


def test_wire_log_redacts_secrets():
    message = {"params": {"arguments": {"api_key": "sk-123", "Authorization": "Bearer x", "text": "ok"},
                          "_meta": {"progressToken": 3}}}
    assert redact(message)["params"]["arguments"] == {"api_key": "***", "Authorization": "***", "text": "ok"}
    text = format_message(message)
    assert "sk-123" not in text and "Bearer" not in text and '"progressToken": 3' in text


def test_every_error_class_pickles_with_its_class_message_and_attributes():
    """Pools and Celery's pickle serializer send exceptions between processes: each class in
    ``mcpclient.errors`` comes back as itself, with its message and attributes."""
    import inspect
    import pickle

    from mcpclient import errors

    made = [errors.RPCError.from_wire({"code": -32602, "message": "bad", "data": {"k": 1}}, "tools/call"),
            errors.RPCError.from_wire({"code": -32021, "message": "needs tasks", "data": {
                "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}}, "tools/call")]
    for cls in vars(errors).values():
        if inspect.isclass(cls) and issubclass(cls, errors.MCPError):
            error = cls.__new__(cls, f"{cls.__name__} happened")
            error.args = (f"{cls.__name__} happened",)
            error.__dict__.update(code=7, method="tools/call", data={"nested": [1, 2]})
            made.append(error)
    assert len(made) > 30
    for error in made:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error) and copy.__dict__ == error.__dict__
    assert isinstance(made[1], errors.MissingClientCapability)
    assert pickle.loads(pickle.dumps(made[1])).missing_extensions == ["io.modelcontextprotocol/tasks"]
