"""``import mcpclient`` stays cheap: it loads neither ``requests`` nor ``jsonschema``, nor the
engine's session and the connection (they load with the first ``connect()``, after it started the
transport), nor the rare content types and feature modules, which load on first use.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mcpclient

from mcpclient import ToolResult


def test_import_does_not_load_requests_or_jsonschema():
    code = "import sys, mcpclient; print(sorted(m for m in ('requests', 'jsonschema', 'pydantic') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "[]", out.stderr


#: The engine's session and what connects: loaded by the first ``connect()``, after the transport started.
ENGINE = ("mcpclient._engine.session", "mcpclient._engine.reader", "mcpclient._client.connection",
          "mcpclient.protocol.negotiation", "mcpclient.protocol.eras")


def test_import_loads_neither_the_engine_nor_a_transport():
    """The engine's session, negotiation and the transports load with the first ``connect()``:
    a program that imports mcpclient without connecting a client does not pay for them."""
    code = ("import sys, mcpclient; print(sorted(m for m in sys.modules if m in %r or "
            "m.startswith(('mcpclient.transports.stdio', 'mcpclient.transports.http')))); "
            "print(sorted(m for m in sys.modules if m.startswith('mcpclient')))" % (ENGINE,))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    loaded, everything = out.stdout.splitlines()
    assert loaded == "[]", out.stderr
    assert "mcpclient.errors" in everything, out.stderr
    assert "mcpclient.client" not in everything, everything  # (``Client`` loads with its first use)


def test_names_of_the_engine_and_the_types_load_on_first_use():
    code = ("import sys, mcpclient; from mcpclient import CallFuture, Tool, ToolResult, Transport;"
            "import concurrent.futures; assert issubclass(CallFuture, concurrent.futures.Future);"
            "assert Tool.__module__ == 'mcpclient.types' and Transport.__module__ == 'mcpclient.transports.base';"
            "c = mcpclient.Client('python -m mcpclient.testing'); print(c.server, c.state)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "None new", out.stderr


#: Modules only some feature needs: ``import mcpclient`` (and a text result) must leave them unloaded.
DEFERRED = ("mcpclient.types._content", "mcpclient.types._catalog", "mcpclient._client.keepalive", "mcpclient.protocol.rounds")


def test_import_does_not_load_rare_content_types_or_feature_modules():
    """The content blocks rarer than text, keepalive and input rounds load on first use (import time,
    tests/packaging/check_dist.py): other content, names and isinstance work all the same."""
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


def test_a_stdio_server_starts_before_the_engine_and_the_types_load():
    """``Client(...)`` checks its arguments and loads neither the engine's session nor what
    connects, nor the result types and the subscription router (``dataclasses`` with them);
    ``connect()`` starts the server first and loads them while it boots. ``Timeout``/``Limits``
    left out and the events of ``listen()`` never load (benchmarks/cold.py, one-shot)."""
    code = """
import subprocess, sys
LATER = ("mcpclient._engine.session", "mcpclient._engine.reader", "mcpclient._client.connection",
         "mcpclient.protocol.negotiation", "mcpclient.protocol.eras", "dataclasses", "mcpclient.types._implementation",
         "mcpclient.policies.timeout", "mcpclient._client.subscriptions", "mcpclient._client.events",
         "mcpclient.types._server", "mcpclient.types._page")
seen = []
popen_init = subprocess.Popen.__init__
def spy(self, *args, **kwargs):
    seen.append(sorted(m for m in LATER if m in sys.modules))
    popen_init(self, *args, **kwargs)
subprocess.Popen.__init__ = spy
import mcpclient
client = mcpclient.Client([sys.executable, "-m", "mcpclient.testing"], protocol="legacy")
seen.append(sorted(m for m in LATER if m in sys.modules))
with client:
    assert client.call_tool("echo", {"text": "hi"}).text == "hi"
seen.append(sorted(m for m in LATER if m in sys.modules))
print(seen)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == repr([[], [], ["dataclasses", "mcpclient._client.connection",
                                            "mcpclient._client.subscriptions", "mcpclient._engine.reader",
                                            "mcpclient._engine.session", "mcpclient.protocol.eras", "mcpclient.protocol.negotiation",
                                            "mcpclient.types._implementation"]]), out.stderr


def test_a_handshake_era_connection_loads_nothing_of_the_2026_era_strategy():
    """The era a connection does not negotiate costs nothing: ``protocol.stateless_era`` loads
    only when a server speaks 2026-07-28 (and then the calls go through it)."""
    code = """
import sys, mcpclient
for protocol in ("legacy", "2026-07-28"):
    with mcpclient.Client([sys.executable, sys.argv[1]], protocol=protocol) as client:
        assert client.call_tool("fail").is_error
        print(protocol, type(client._channel.conn.era).__name__, "mcpclient.protocol.stateless_era" in sys.modules)
"""
    dual_era = Path(__file__).parents[1] / "servers" / "trace_echo.py"
    out = subprocess.run([sys.executable, "-c", code, str(dual_era)], capture_output=True, text=True, timeout=60)
    assert out.stdout.split("\n")[:2] == ["legacy Handshake False", "2026-07-28 Stateless True"], out.stderr


def test_the_elicitation_modes_a_client_checks_are_those_the_types_parse():
    from mcpclient.protocol.spec import ELICITATION_MODES
    from mcpclient.types import elicitation

    assert ELICITATION_MODES == elicitation.ELICITATION_MODES


def test_a_stdio_one_shot_call_loads_no_http_stack_schema_validator_or_opentelemetry():
    """A stdio-only program that connects, calls a tool without an output schema and exits loads
    none of what it did not ask for: ``requests``/``urllib3`` (HTTP), ``jsonschema`` (before a
    first validation), OpenTelemetry; nor ``base64`` (binary content) or ``contextvars``."""
    code = ("import sys\nfrom mcpclient import Client\n"  # (the demo server, as server_command() starts it)
            "with Client([sys.executable, '-m', 'mcpclient.testing']) as client:\n"
            "    assert client.call_tool('echo', {'text': 'hi'}).text == 'hi'\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('requests', 'urllib3', 'jsonschema', 'opentelemetry', 'base64', 'contextvars')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
