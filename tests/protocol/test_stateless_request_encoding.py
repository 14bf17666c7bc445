"""The 2026-07-28 (stateless) era's request rules as pure functions: header value encoding,
``x-mcp-header`` validation, ``Mcp-Param-*`` headers, ``_meta`` merging and ``resultType``.
"""
from __future__ import annotations

import base64


import pytest

from mcpclient.errors import ProtocolError
from mcpclient.protocol.stateless import (
    encode_header_value, header_params, param_headers, request_meta, result_type, with_meta,
)


@pytest.mark.parametrize("value, wire", [
    ("us-west1", "us-west1"), ("us west 1", "us west 1"), ("", ""), (42, "42"), (-7, "-7"),
    (True, "true"), (False, "false"), ("test-method", "test-method"),
])
def test_plain_values_are_sent_as_they_are(value, wire):
    assert encode_header_value(value) == wire


@pytest.mark.parametrize("value", ["Hello, 世界", " padded ", " lead", "trail ", "line1\nline2", "a\r\nb",
                                   "\tindented", "=?base64?abc?="])
def test_unsafe_values_are_base64_wrapped(value):
    wire = encode_header_value(value)
    assert wire.startswith("=?base64?") and wire.endswith("?=")
    assert base64.b64decode(wire[len("=?base64?"):-2]).decode("utf-8") == value


def prop(kind, header):
    return {"type": kind, "x-mcp-header": header}


def test_header_params_accepts_string_integer_boolean_reachable_through_properties():
    schema = {"type": "object", "properties": {
        "region": prop("string", "Region"), "n": prop("integer", "N"), "flag": prop("boolean", "Flag"),
        "nested": {"type": "object", "properties": {"deep": prop("string", "Deep")}}, "plain": {"type": "string"}}}
    assert sorted(header_params(schema)) == [(("flag",), "Flag"), (("n",), "N"), (("nested", "deep"), "Deep"),
                                              (("region",), "Region")]
    assert header_params({"type": "object"}) == []


@pytest.mark.parametrize("schema, reason", [
    ({"properties": {"a": prop("string", "")}}, "empty"),
    ({"properties": {"a": prop("object", "A")}}, "object"),
    ({"properties": {"a": prop("array", "A")}}, "array"),
    ({"properties": {"a": prop("null", "A")}}, "null"),
    ({"properties": {"a": prop("number", "A")}}, "number"),
    ({"properties": {"a": prop("string", "Region"), "b": prop("string", "Region")}}, "twice"),
    ({"properties": {"a": prop("string", "MyField"), "b": prop("string", "myfield")}}, "twice"),
    ({"properties": {"a": prop("string", "My Region")}}, "token"),
    ({"properties": {"a": prop("string", "Region:Primary")}}, "token"),
    ({"properties": {"a": prop("string", "Région")}}, "token"),
    ({"properties": {"a": prop("string", "Region\t1")}}, "token"),
    ({"properties": {"a": {"type": "array", "items": prop("string", "Item")}}}, "reachable"),
    ({"properties": {"a": {"anyOf": [prop("string", "Any")]}}}, "reachable"),
])
def test_invalid_annotations_are_refused_with_the_reason(schema, reason):
    with pytest.raises(ValueError, match=reason):
        header_params(dict(schema, type="object"))


def test_param_headers_skip_null_absent_and_huge_values():
    spec = [(("region",), "Region"), (("verbose",), "Verbose"), (("n",), "N"), (("big",), "Big"), (("gone",), "Gone")]
    args = {"region": " x", "verbose": None, "n": 3, "big": 2 ** 60}
    assert param_headers(args, spec) == {"Mcp-Param-Region": encode_header_value(" x"), "Mcp-Param-N": "3"}


def test_meta_is_merged_into_params_without_losing_the_callers_keys():
    meta = request_meta("2026-07-28", {}, {"name": "c", "version": "1"}, "warning")
    assert meta["io.modelcontextprotocol/logLevel"] == "warning"
    assert with_meta(None, meta) == {"_meta": meta}
    merged = with_meta({"name": "t", "_meta": {"progressToken": 5}}, meta)
    assert merged["_meta"]["progressToken"] == 5 and merged["_meta"]["io.modelcontextprotocol/protocolVersion"]
    assert merged["name"] == "t"


def test_result_type_defaults_to_complete_and_rejects_junk():
    assert result_type({}) == "complete" and result_type({"resultType": "input_required"}) == "input_required"
    with pytest.raises(ProtocolError):
        result_type({"resultType": 5})
    with pytest.raises(ProtocolError):
        result_type([])
