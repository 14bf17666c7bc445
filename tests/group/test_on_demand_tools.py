"""Tools on demand: a conversation starts with ``search_tools``, a search loads what it finds, the
next listing offers it, calls go to the servers; the search answers what a model needs to call
each tool. Against two real servers in a group."""
from __future__ import annotations

import json
import threading

import pytest

from conftest import TESTING_SERVER
from mcpclient import Client, OnDemandTools, ServerGroup, ToolResult


@pytest.fixture
def group():
    with ServerGroup({"a": TESTING_SERVER, "b": TESTING_SERVER}, client_options={"protocol": "legacy"}) as servers:
        yield servers


def names(tools: OnDemandTools):
    return [t.name for t in tools.list_tools()]


def test_a_conversation_starts_with_search_tools_and_the_tools_named_always(group) -> None:
    tools = group.on_demand(always=["b_echo", "nope"])
    assert names(tools) == ["search_tools", "b_echo"]  # a name the group lacks is left out
    assert tools.known_tool("search_tools").input_schema["required"] == ["query"]
    assert tools.known_tool("a_add").name == "a_add"


def test_a_search_loads_what_it_finds_for_the_next_listing(group) -> None:
    tools = group.on_demand(k=2)
    [found] = tools.call_tools([("search_tools", {"query": "add two numbers"})])
    assert isinstance(found, ToolResult) and not found.is_error
    listed = found.structured_content["tools"]
    assert [t["name"] for t in listed] == tools.loaded and len(listed) == 2
    assert {"a_add", "b_add"} == set(tools.loaded)
    add = next(t for t in listed if t["name"] == "a_add")
    assert add["inputSchema"]["properties"].keys() == {"a", "b"}  # what the model needs to call it
    assert json.loads(found.text) == found.structured_content  # once, as JSON (the adapters send it once)
    assert names(tools) == ["search_tools", *tools.loaded]
    results = tools.call_tools([("a_add", {"a": 2, "b": 3}), ("search_tools", {"query": "echo text", "k": 1}),
                                ("b_echo", {"text": "x"})])
    assert [r.structured_content for r in results[:1]] == [{"sum": 5}]
    assert results[2].text == "x"
    assert tools.loaded[-1] in ("a_echo", "b_echo")
    assert tools.call_tool("search_tools", {"query": 3}).is_error  # bad arguments: a tool error


def test_conversations_are_separate_and_the_oldest_found_tools_drop_out(group) -> None:
    first, second = group.on_demand(max_loaded=2), group.on_demand()
    first.load(["a_echo", "a_add", "b_echo"])
    assert first.loaded == ["a_add", "b_echo"] and second.loaded == []
    first.unload()
    assert names(first) == ["search_tools"]


def test_searches_from_many_threads_all_land(group) -> None:
    tools = group.on_demand(k=1, max_loaded=64)
    queries = ["echo", "add", "slow steps", "picture image", "fail", "log level"] * 4
    threads = [threading.Thread(target=tools.call_tool, args=("search_tools", {"query": q})) for q in queries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(tools.loaded) == len(set(tools.loaded)) >= 6


def test_a_single_client_can_be_the_host() -> None:
    with Client(TESTING_SERVER) as client:
        tools = OnDemandTools(client)
        tools.call_tool("search_tools", {"query": "add two numbers", "k": 1})
        assert tools.loaded == ["add"]
        assert tools.call_tool("add", {"a": 1, "b": 1}).structured_content == {"sum": 2}


def test_bad_settings_are_refused() -> None:
    with pytest.raises(TypeError):
        OnDemandTools(object(), always="files_read")
    with pytest.raises(ValueError):
        OnDemandTools(object(), k=0)
    with pytest.raises(ValueError):
        OnDemandTools(object(), max_loaded=0)
