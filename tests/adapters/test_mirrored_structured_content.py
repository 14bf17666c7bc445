"""A tool result whose structured content only repeats its text reaches the model once.

The server answers as the reference filesystem server answers ``read_text_file`` (the text, and
``structuredContent: {"content": <the same text>}``); each provider's real SDK sends the adapted
answer to a scripted endpoint, whose request body must carry the 38 KB file once, not twice.
Structured content that says something the text does not (``{"size": 38000}`` beside "38000")
is still sent.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from conftest import SERVERS, require_official_sdk
from llm_endpoints import scripted_llm
from mcpclient import ServerGroup
from mcpclient.adapters.anthropic import run_anthropic_tool_uses, to_anthropic_tools
from mcpclient.adapters.openai import run_openai_tool_calls, to_openai_tools
from mcpclient.types import TextContent, ToolResult

require_official_sdk()

FILE_READER = [sys.executable, str(SERVERS / "official_file_reader.py")]
MARKER = "line-of-a-big-file"


@pytest.fixture
def big_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("".join(f"{MARKER} {i:05d}\n" for i in range(1600)), encoding="utf-8")  # ~38 KB
    return path


@pytest.fixture
def group() -> Iterator[ServerGroup]:
    with ServerGroup({"fs": FILE_READER}) as servers:
        yield servers


def script(path: Path) -> List[Tuple[str, Dict[str, Any]]]:
    return [("fs_read_text_file", {"path": str(path)}), ("fs_stat", {"path": str(path)})]


def second_body(endpoint: Any) -> str:
    import json

    assert endpoint.problems == []
    return json.dumps(endpoint.requests[1][1])


def test_the_server_does_send_the_text_twice(group: ServerGroup, big_file: Path) -> None:
    result = group.call_tool("fs_read_text_file", {"path": str(big_file)})
    assert result.structured_content == {"content": result.text}
    assert len(result.text) > 38_000


def test_openai_chat_gets_the_file_once(group: ServerGroup, big_file: Path) -> None:
    openai = pytest.importorskip("openai")
    with scripted_llm(script(big_file)) as endpoint:
        client = openai.OpenAI(base_url=endpoint.url + "/v1", api_key="test", max_retries=0)
        tools = to_openai_tools(group, strict=True)
        messages: List[Any] = [{"role": "user", "content": "Read it."}]
        reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
        answers = run_openai_tool_calls(group, reply.choices[0].message.tool_calls)
        client.chat.completions.create(model="gpt-test", messages=messages + [reply.choices[0].message, *answers],
                                       tools=tools)
    body = second_body(endpoint)
    assert body.count(f"{MARKER} 00042") == 1
    size = big_file.stat().st_size
    assert answers[1]["content"] == f'{size}\n{{"size": {size}}}'


def test_openai_responses_gets_the_file_once(group: ServerGroup, big_file: Path) -> None:
    openai = pytest.importorskip("openai")
    with scripted_llm(script(big_file)) as endpoint:
        client = openai.OpenAI(base_url=endpoint.url + "/v1", api_key="test", max_retries=0)
        tools = to_openai_tools(group, strict=True, api="responses")
        items: List[Any] = [{"role": "user", "content": "Read it."}]
        response = client.responses.create(model="gpt-test", input=items, tools=tools)
        answers = run_openai_tool_calls(group, response.output, api="responses")
        client.responses.create(model="gpt-test", input=items + [*response.output, *answers], tools=tools)
    assert second_body(endpoint).count(f"{MARKER} 00042") == 1
    assert answers[0]["output"] == big_file.read_text(encoding="utf-8")


def test_anthropic_gets_the_file_once_in_one_block(group: ServerGroup, big_file: Path) -> None:
    anthropic = pytest.importorskip("anthropic")
    with scripted_llm(script(big_file)) as endpoint:
        client = anthropic.Anthropic(base_url=endpoint.url, api_key="test", max_retries=0)
        tools = to_anthropic_tools(group)
        messages: List[Any] = [{"role": "user", "content": "Read it."}]
        reply = client.messages.create(model="claude-test", max_tokens=100, messages=messages, tools=tools)
        answer = run_anthropic_tool_uses(group, reply.content)
        client.messages.create(model="claude-test", max_tokens=100, tools=tools,
                               messages=messages + [{"role": "assistant", "content": reply.content}, answer])
    assert second_body(endpoint).count(f"{MARKER} 00042") == 1
    read, stat = answer["content"]
    assert [block["type"] for block in read["content"]] == ["text"]
    assert [block["type"] for block in stat["content"]] == ["text", "text"]


@pytest.mark.parametrize("structured,texts,mirrors", [
    ({"content": "abc"}, ["abc"], True),
    ({"result": "abc"}, ["abc"], True),
    ({"result": [1, 2]}, ["1", "2"], True),
    ({"text": "ab\ncd"}, ["ab", "cd"], True),  # one text over several blocks
    ({"a": 1, "b": 2}, ['{"a": 1, "b": 2}'], True),  # the text is the JSON of it
    ({"size": 3}, ["3"], False),  # the key says what the text does not
    ({"content": "abc"}, ["abd"], False),
    ({"a": "x", "b": "y"}, ["x"], False),
])
def test_which_structured_content_counts_as_a_mirror_of_the_text(structured, texts, mirrors) -> None:
    from mcpclient.adapters._calls import structured_text

    result = ToolResult(content=[TextContent(text=t) for t in texts], structured_content=structured)
    assert (structured_text(result) is None) is mirrors
