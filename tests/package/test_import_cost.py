"""``import mcpclient`` stays cheap: it loads neither ``requests`` nor ``jsonschema``, nor the
rare content types and feature modules, which load on first use.
"""
from __future__ import annotations

import subprocess
import sys

import mcpclient

from mcpclient import ToolResult


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
