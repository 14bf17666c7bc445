"""Wire dicts to result types: unknown content types kept, base64 decoded (MIME line breaks
included), a tool result's text joined in order, the display-name precedence, completions that
need values, and ``isError`` given as the string "false".
"""
from __future__ import annotations

import base64
import sys

import pytest

from conftest import LONG
from helpers import ScriptedServer
from mcpclient import Client, ImageContent, ProtocolError, TextContent, ToolResult, UnknownContent
from mcpclient.errors import MCPError, ToolError
from mcpclient.types import Completion, Tool, parse_content


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


def test_tool_result_text_is_its_text_parts_in_order_one_per_line():
    result = ToolResult.from_wire({"content": [{"type": "text", "text": "a"}, {"type": "hologram"},
                                               {"type": "text", "text": "b"}], "isError": False})
    assert result.text == "a\nb" and isinstance(result.content[0], TextContent)
    assert result.raise_for_error() is result


def test_a_tool_error_message_keeps_the_servers_text_parts_apart():
    """A server that reports each problem in a block of its own: the message reads
    "... is required" and "Invalid argument ..." on lines of their own, not run together."""
    result = ToolResult.from_wire({"content": [{"type": "text", "text": "'a' is required"},
                                               {"type": "text", "text": "Invalid argument 'b'"}], "isError": True})
    with pytest.raises(ToolError) as info:
        result.raise_for_error()
    assert "'a' is required\nInvalid argument 'b'" in str(info.value)


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


# ---------------------------------------------------------------- base64 with line breaks


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(20)
def test_base64_image_data_with_line_breaks_decodes():
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 2
    wrapped = base64.encodebytes(png).decode()
    assert "\n" in wrapped.rstrip("\n")  # a MIME-style base64 encoder's line breaks
    server = ScriptedServer(lambda method, params: {
        "content": [{"type": "image", "data": wrapped, "mimeType": "image/png"}]})
    try:
        with Client(server.transport, timeout=LONG) as client:
            try:
                result = client.call_tool("picture")
            except MCPError as exc:
                pytest.fail(f"base64 with line breaks was refused: {exc!r}")
        assert len(result.content) == 1
        image = result.content[0]
        assert isinstance(image, ImageContent)
        assert image.data == png
        assert image.mime_type == "image/png"
    finally:
        server.stop()


# ---------------------------------------------------------------- isError given as a string


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(30)
def test_is_error_given_as_the_string_false_is_not_an_error():
    assert ToolResult.from_wire({"content": [], "isError": "false"}).is_error is False
    assert ToolResult.from_wire({"content": [], "isError": False}).is_error is False
    assert ToolResult.from_wire({"content": [], "isError": True}).is_error is True
