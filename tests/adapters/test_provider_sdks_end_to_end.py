"""The LLM adapters end to end: each provider's real SDK, a scripted endpoint, one group of two servers.

The group holds the stdio test server (``python -m mcpclient.testing``) and the official SDK's
server over Streamable HTTP. Per provider: the SDK sends the adapted tools; the scripted model
(tests/llm_endpoints.py, which checks every request body against the provider's shapes, strict
rules included) answers with parallel calls to tools on both servers; the adapter runs them and
the SDK sends the results back; the second turn's final text quotes them. The README's examples
(examples/*_tools.py) run against the same endpoint.
"""
from __future__ import annotations

import asyncio
import json
import runpy
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import jsonschema
import pytest

from mcpclient import Client, ServerGroup
from mcpclient.adapters import to_strict_schema
from mcpclient.adapters._schema import prune_nulls
from mcpclient.adapters.anthropic import run_anthropic_tool_uses, to_anthropic_tools
from mcpclient.adapters.openai import run_openai_tool_calls, to_openai_tools

from conftest import TESTING_SERVER, require_official_sdk
from http_servers import official_http_server
from llm_endpoints import check_anthropic_tool, check_openai_tool, scripted_llm

ROOT = Path(__file__).resolve().parents[2]

#: Parallel calls to both servers: text, structured content, an optional argument left out (a
#: strict model sends null: the adapter drops it), an image, and a tool error.
CALLS: List[Tuple[str, Dict[str, Any]]] = [
    ("testing_echo", {"text": "hi there"}),
    ("official_add", {"a": 2, "b": 3}),
    ("testing_slow", {"steps": 1}),
    ("official_picture", {}),
    ("testing_fail", {"message": "boom"}),
]


@pytest.fixture(scope="module")
def official_url() -> Iterator[str]:
    require_official_sdk()
    with official_http_server("--http") as url:
        yield url


@pytest.fixture
def group(official_url: str) -> Iterator[ServerGroup]:
    """Per test, so the leak guard sees its clients' threads end (the HTTP server is shared)."""
    with ServerGroup({"testing": TESTING_SERVER, "official": official_url}) as servers:
        yield servers


def test_official_server_tools_convert(official_url: str) -> None:
    """The schema corpus's real part: the official SDK server's tools, as ``list_tools()`` gives
    them (pydantic-made schemas), pass every provider's shape checks, all strict."""
    with Client(official_url) as client:
        tools = client.list_tools()
    assert len(tools) > 10
    for api in ("chat", "responses"):
        converted = to_openai_tools(tools, strict=True, api=api)
        assert len(converted) == len(tools)
        for tool in converted:
            assert check_openai_tool(tool, api) == []
        assert all((t["function"] if api == "chat" else t)["strict"] for t in converted)
    for tool in to_anthropic_tools(tools):
        assert check_anthropic_tool(tool) == []
    for tool in tools:  # examples made from each schema: strict accepts them (omitted as null) and maps them back
        strict = jsonschema.Draft202012Validator(to_strict_schema(tool.input_schema))
        original = jsonschema.Draft202012Validator(tool.input_schema)
        for example in (_example(tool.input_schema, everything=False), _example(tool.input_schema, everything=True)):
            assert original.is_valid(example), (tool.name, example)
            sent = {**{name: None for name in tool.input_schema.get("properties", {})}, **example}
            assert strict.is_valid(sent), (tool.name, sent)
            assert original.is_valid(prune_nulls(tool.input_schema, sent))
    slow = to_strict_schema(next(t for t in tools if t.name == "slow").input_schema)
    assert slow["properties"]["steps"]["type"] == ["integer", "null"] and "Default: 3." in slow["properties"]["steps"]["description"]


def _example(schema: Dict[str, Any], everything: bool) -> Any:
    """A value ``schema`` accepts: the required properties only, or every property."""
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return _example(next(b for b in schema["anyOf"] if b.get("type") != "null"), everything)
    kind = schema.get("type", "object")
    kind = next(k for k in kind if k != "null") if isinstance(kind, list) else kind
    if kind == "object":
        names = list(schema.get("properties", {})) if everything else schema.get("required", [])
        return {name: _example(schema["properties"][name], everything) for name in names}
    if kind == "array":
        return [_example(schema.get("items", {"type": "string"}), everything)]
    return {"string": "x", "integer": 1, "number": 1.5, "boolean": True}[kind]


def _check_answers(texts: List[str], error: str = "Error") -> None:
    """The five answers, in the order of ``CALLS`` (the error one starting with ``error``)."""
    assert texts[0] == "hi there"
    assert '"sum": 5' in texts[1] or "5" in texts[1]
    assert not texts[2].startswith("Error")
    assert texts[4].startswith(error) and "boom" in texts[4]


def test_openai_chat_completions(group: ServerGroup) -> None:
    openai = pytest.importorskip("openai")
    with scripted_llm(CALLS) as endpoint:
        client = openai.OpenAI(base_url=endpoint.url + "/v1", api_key="test", max_retries=0)
        tools = to_openai_tools(group.list_tools(), strict=True)
        messages: List[Any] = [{"role": "user", "content": "Use the tools."}]
        reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
        message = reply.choices[0].message
        assert [c.function.name for c in message.tool_calls] == [name for name, _ in CALLS]
        assert json.loads(message.tool_calls[2].function.arguments) == {"steps": 1, "delay": None}  # strict: null
        answers = run_openai_tool_calls(group, message.tool_calls)
        assert [a["tool_call_id"] for a in answers] == [c.id for c in message.tool_calls]
        _check_answers([a["content"] for a in answers])
        assert answers[3]["content"].startswith("[image: image/png")  # Chat takes no image in a tool message
        messages += [message, *answers]
        final = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
        assert final.choices[0].message.content.startswith("final: hi there | ")
        assert endpoint.problems == []
        assert sum(1 for t in endpoint.requests[0][1]["tools"] if t["function"]["strict"]) > 10


def test_openai_responses(group: ServerGroup) -> None:
    openai = pytest.importorskip("openai")
    with scripted_llm(CALLS) as endpoint:
        client = openai.OpenAI(base_url=endpoint.url + "/v1", api_key="test", max_retries=0)
        tools = to_openai_tools(group.list_tools(), strict=True, api="responses")
        items: List[Any] = [{"role": "user", "content": "Use the tools."}]
        response = client.responses.create(model="gpt-test", input=items, tools=tools)
        assert [i.type for i in response.output] == ["function_call"] * len(CALLS)
        answers = run_openai_tool_calls(group, response.output, api="responses")
        assert [a["call_id"] for a in answers] == [i.call_id for i in response.output]
        texts = [a["output"] if isinstance(a["output"], str) else "" for a in answers]
        _check_answers(texts[:3] + [""] + texts[4:])
        picture = answers[3]["output"]
        assert [p["type"] for p in picture][:1] == ["input_image"]
        assert picture[0]["image_url"].startswith("data:image/png;base64,")
        items += [*response.output, *answers]
        final = client.responses.create(model="gpt-test", input=items, tools=tools)
        assert final.output_text.startswith("final: hi there | ")
        assert endpoint.problems == []


def test_anthropic_messages(group: ServerGroup) -> None:
    anthropic = pytest.importorskip("anthropic")
    with scripted_llm(CALLS) as endpoint:
        client = anthropic.Anthropic(base_url=endpoint.url, api_key="test", max_retries=0)
        tools = to_anthropic_tools(group.list_tools())
        messages: List[Any] = [{"role": "user", "content": "Use the tools."}]
        reply = client.messages.create(model="claude-test", max_tokens=100, messages=messages, tools=tools)
        assert reply.stop_reason == "tool_use"
        answer = run_anthropic_tool_uses(group, reply.content)
        results = answer["content"]
        assert [r["tool_use_id"] for r in results] == [b.id for b in reply.content]
        assert [r["is_error"] for r in results] == [False, False, False, False, True]
        _check_answers([" ".join(p.get("text", "") for p in r["content"]) for r in results], error="")  # is_error says it
        assert results[3]["content"][0]["type"] == "image"
        assert results[3]["content"][0]["source"]["media_type"] == "image/png"
        messages += [{"role": "assistant", "content": reply.content}, answer]
        final = client.messages.create(model="claude-test", max_tokens=100, messages=messages, tools=tools)
        assert final.content[0].text.startswith("final: hi there | ")
        assert endpoint.problems == []


def test_langchain_agent_loop(group: ServerGroup) -> None:
    """LangChain's own OpenAI conversion of the tools goes to the Chat Completions endpoint; the
    model's calls run as LangChain ``ToolCall``s (sync and async), answering ``ToolMessage``s."""
    pytest.importorskip("langchain_core")
    openai = pytest.importorskip("openai")
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from mcpclient.adapters.langchain import to_langchain_tools

    tools = to_langchain_tools(group)
    by_name = {t.name: t for t in tools}
    with scripted_llm(CALLS) as endpoint:
        client = openai.OpenAI(base_url=endpoint.url + "/v1", api_key="test", max_retries=0)
        schemas = [convert_to_openai_tool(t) for t in tools]
        reply = client.chat.completions.create(model="gpt-test", tools=schemas,
                                               messages=[{"role": "user", "content": "Use the tools."}])
        ai = AIMessage(content="", tool_calls=[
            {"name": c.function.name, "args": json.loads(c.function.arguments), "id": c.id, "type": "tool_call"}
            for c in reply.choices[0].message.tool_calls])
        messages = [by_name[call["name"]].invoke(call) for call in ai.tool_calls[:3]]
        messages += asyncio.run(_ainvoke([(by_name[call["name"]], call) for call in ai.tool_calls[3:]]))
        assert all(isinstance(m, ToolMessage) for m in messages)
        assert [m.tool_call_id for m in messages] == [c["id"] for c in ai.tool_calls]
        _check_answers([m.content if isinstance(m.content, str) else "" for m in messages])
        assert messages[1].artifact.structured_content == {"sum": 5}
        assert messages[4].status == "error"
        history = [HumanMessage("Use the tools."), ai, *messages]
        wire = [{"role": "user", "content": history[0].content},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                    for c in ai.tool_calls]}]
        wire += [{"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content} for m in messages]
        final = client.chat.completions.create(model="gpt-test", tools=schemas, messages=wire)
        assert final.choices[0].message.content.startswith("final: hi there | ")
        assert endpoint.problems == []


async def _ainvoke(pairs: List[Tuple[Any, Any]]) -> List[Any]:
    return list(await asyncio.gather(*(tool.ainvoke(call) for tool, call in pairs)))


@pytest.mark.parametrize("example,package", [("openai_tools.py", "openai"), ("anthropic_tools.py", "anthropic"),
                                             ("langchain_tools.py", "langchain_core")])
def test_readme_examples_run(example: str, package: str, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    """examples/*_tools.py as written (in this process: the SDKs are imported once), against the
    scripted endpoint named by the environment variables the SDKs read."""
    pytest.importorskip(package)
    calls = [("testing_echo", {"text": "hello"}), ("testing_add", {"a": 2, "b": 3})]
    with scripted_llm(calls) as endpoint:
        for name, value in (("OPENAI_BASE_URL", endpoint.url + "/v1"), ("OPENAI_API_KEY", "test"),
                            ("ANTHROPIC_BASE_URL", endpoint.url), ("ANTHROPIC_API_KEY", "test")):
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(ROOT)  # "python -m mcpclient.testing" finds this checkout
        runpy.run_path(str(ROOT / "examples" / example), run_name="__main__")
        assert capsys.readouterr().out.startswith("final: hello | ")
        assert endpoint.problems == []


def _readme_blocks() -> List[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Tools for your LLM", 1)[1].split("\n## ", 1)[0]
    return [block.split("```", 1)[0] for block in section.split("```python\n")[1:]]


@pytest.mark.parametrize("index,package", [(0, "openai"), (1, "anthropic")])
def test_readme_section_code_runs(index: int, package: str, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The README's own snippets, exactly as printed, against the scripted endpoint."""
    pytest.importorskip(package)
    code = _readme_blocks()[index]
    assert f"from {package} import" in code
    with scripted_llm([("testing_echo", {"text": "hello"}), ("testing_add", {"a": 2, "b": 3})]) as endpoint:
        for name, value in (("OPENAI_BASE_URL", endpoint.url + "/v1"), ("OPENAI_API_KEY", "test"),
                            ("ANTHROPIC_BASE_URL", endpoint.url), ("ANTHROPIC_API_KEY", "test")):
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(ROOT)
        exec(compile(code, f"README.md[{package}]", "exec"), {"__name__": "__main__"})
        assert capsys.readouterr().out.startswith("final: hello | ")
        assert endpoint.problems == []


async def _ticks_while(work: Any) -> Tuple[Any, int]:
    """``await work`` and count how often the loop ran another task meanwhile (every 10 ms)."""
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    counting = asyncio.ensure_future(ticker())
    try:
        return await work, ticks
    finally:
        done.set()
        await counting


SLOW_CALLS: List[Tuple[str, Dict[str, Any]]] = [("testing_slow", {"steps": 3, "delay": 0.1}),
                                                ("testing_echo", {"text": "hi there"})]


def test_async_openai_with_the_awaitable_twin(group: ServerGroup) -> None:
    """``AsyncOpenAI`` end to end; the tool calls (0.3 s of them) run off the event loop, which
    keeps running other tasks meanwhile."""
    openai = pytest.importorskip("openai")
    from mcpclient.adapters.openai import arun_openai_tool_calls

    async def conversation(url: str) -> Tuple[List[Dict[str, Any]], int, str]:
        client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
        tools = to_openai_tools(group, strict=True)
        messages: List[Any] = [{"role": "user", "content": "Use the tools."}]
        message = (await client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)).choices[0].message
        answers, ticks = await _ticks_while(arun_openai_tool_calls(group, message.tool_calls))
        final = await client.chat.completions.create(model="gpt-test", messages=messages + [message, *answers], tools=tools)
        await client.close()
        return answers, ticks, final.choices[0].message.content

    with scripted_llm(SLOW_CALLS) as endpoint:
        answers, ticks, final = asyncio.run(conversation(endpoint.url))
    assert [a["tool_call_id"] for a in answers] == ["call_0", "call_1"]
    assert answers[1]["content"] == "hi there"
    assert ticks >= 10  # the loop was free while the calls ran
    assert final.startswith("final: ") and endpoint.problems == []


def test_async_anthropic_with_the_awaitable_twin(group: ServerGroup) -> None:
    anthropic = pytest.importorskip("anthropic")
    from mcpclient.adapters.anthropic import arun_anthropic_tool_uses

    async def conversation(url: str) -> Tuple[Dict[str, Any], int, str]:
        client = anthropic.AsyncAnthropic(base_url=url, api_key="test", max_retries=0)
        tools = to_anthropic_tools(group)
        messages: List[Any] = [{"role": "user", "content": "Use the tools."}]
        reply = await client.messages.create(model="claude-test", max_tokens=100, messages=messages, tools=tools)
        answer, ticks = await _ticks_while(arun_anthropic_tool_uses(group, reply.content))
        final = await client.messages.create(model="claude-test", max_tokens=100, tools=tools,
                                             messages=messages + [{"role": "assistant", "content": reply.content}, answer])
        await client.close()
        return answer, ticks, final.content[0].text

    with scripted_llm(SLOW_CALLS) as endpoint:
        answer, ticks, final = asyncio.run(conversation(endpoint.url))
    assert [r["is_error"] for r in answer["content"]] == [False, False]
    assert answer["content"][1]["content"] == [{"type": "text", "text": "hi there"}]
    assert ticks >= 10
    assert final.startswith("final: ") and endpoint.problems == []


def test_the_on_demand_tools_example_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """examples/tools_on_demand.py: the model first sees only ``search_tools``; the tool it finds
    is offered on the next turn (the endpoint refuses a call to a tool it was not offered)."""
    pytest.importorskip("openai")
    with scripted_llm([("search_tools", {"query": "add two numbers", "k": 2})],
                      then=[[("testing_add", {"a": 2, "b": 3})]]) as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.chdir(ROOT)
        runpy.run_path(str(ROOT / "examples" / "tools_on_demand.py"), run_name="__main__")
    assert endpoint.problems == []
    offered = [[t["function"]["name"] for t in body["tools"]] for _, body in endpoint.requests]
    assert offered[0] == ["search_tools"]
    assert offered[1][0] == "search_tools" and "testing_add" in offered[1] and len(offered[1]) <= 3  # (k=2)
    out = capsys.readouterr().out
    assert out.startswith("final: ") and out.rstrip().endswith('| {"sum": 5}')


def test_the_async_backend_example_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("openai")
    with scripted_llm([("testing_echo", {"text": "hello"}), ("testing_add", {"a": 2, "b": 3})]) as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.chdir(ROOT)
        runpy.run_path(str(ROOT / "examples" / "async_backend.py"), run_name="__main__")
    assert endpoint.problems == []
    assert capsys.readouterr().out.splitlines() == ['final: hello | {"sum": 5}'] * 2
