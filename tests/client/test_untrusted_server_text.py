"""A server's instructions and tool descriptions are untrusted text: the client keeps at most
``Limits(server_text=)`` characters of each (the cut says so, and is logged once per client), and no
adapter or group ever puts the instructions into what goes to a model."""
from __future__ import annotations

import importlib.util
import json
import logging
import sys

import pytest

from conftest import LONG, SERVERS, require_official_sdk
from mcpclient import Client, Limits, ServerGroup

require_official_sdk()

VERBOSE = [sys.executable, str(SERVERS / "official_verbose.py")]


def cuts(caplog) -> list:
    return [r for r in caplog.records if "Limits(server_text=)" in r.getMessage()]


def test_long_instructions_and_descriptions_are_cut_and_logged_once(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="mcpclient")
    with Client(VERBOSE, timeout=LONG) as client:
        instructions = client.server.instructions
        assert instructions.startswith("INSTRUCTIONS-MARKER") and len(instructions) < 8192 + 80
        assert instructions.endswith(f"[... {40_000 - 8192} more characters cut by the client]")
        for _ in range(2):
            [tool] = client.list_tools()
            assert len(tool.description) < 8192 + 80 and "more characters cut" in tool.description
        assert client.server.instructions == instructions
        assert len(tool.raw["description"]) == 30_000  # the wire form is kept whole
    assert sorted(r.getMessage().split(": a ")[1].split(" of ")[0] for r in cuts(caplog)) == \
        ["instructions", "tool description"]


def test_the_bound_is_configurable_and_can_be_lifted() -> None:
    with Client(VERBOSE, timeout=LONG, limits=Limits(server_text=100)) as client:
        kept, _, marker = client.server.instructions.partition(" [... ")
        assert len(kept) == 100 and kept.startswith("INSTRUCTIONS-MARKER") and marker.startswith("39900 more")
        assert client.list_tools()[0].description.startswith("Look a word up. Always")
    with Client(VERBOSE, timeout=LONG, limits=Limits(server_text=None)) as client:
        assert len(client.server.instructions) == 40_000 and len(client.list_tools()[0].description) == 30_000
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(ValueError):
            Client(VERBOSE, limits=Limits(server_text=bad))


def test_no_adapter_puts_the_instructions_into_what_goes_to_a_model() -> None:
    from mcpclient.adapters.anthropic import run_anthropic_tool_uses, to_anthropic_tools
    from mcpclient.adapters.openai import run_openai_tool_calls, to_openai_tools

    with ServerGroup({"v": VERBOSE}, client_options={"timeout": LONG}) as group:
        assert "INSTRUCTIONS-MARKER" in group.client("v").server.instructions
        sent = [to_openai_tools(group), to_openai_tools(group, strict=True, api="responses"), to_anthropic_tools(group),
                run_openai_tool_calls(group, [{"id": "c", "type": "function",
                                               "function": {"name": "v_lookup", "arguments": '{"word": "a"}'}}]),
                run_anthropic_tool_uses(group, [{"type": "tool_use", "id": "t", "name": "v_lookup", "input": {"word": "a"}}]),
                [t.description for t in group.search_tools("look a word up")],
                group.call_tool("search_tools", {"query": "look a word up"}).raw]
        if importlib.util.find_spec("langchain_core") is not None:  # (the test extra pins it for 3.11+)
            from mcpclient.adapters.langchain import to_langchain_tools

            sent.append([t.description for t in to_langchain_tools(group)])
    assert "INSTRUCTIONS-MARKER" not in json.dumps(sent, default=str)
