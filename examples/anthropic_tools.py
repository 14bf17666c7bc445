"""A Claude model using the tools of MCP servers: the Messages API, parallel tool use.

    pip install 'mcpclient[anthropic]'
    ANTHROPIC_API_KEY=sk-ant-... python examples/anthropic_tools.py   # ANTHROPIC_BASE_URL: another endpoint
"""
import os
from typing import List, cast

from anthropic import Anthropic
from anthropic.types import MessageParam, ToolUnionParam

from mcpclient import ServerGroup
from mcpclient.adapters.anthropic import run_anthropic_tool_uses, to_anthropic_tools

llm = Anthropic()  # ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL from the environment
model = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-5-5")

with ServerGroup({"testing": "python -m mcpclient.testing"}) as group:
    # The adapters give plain dicts of the SDK's shapes; the casts tell a type checker which.
    tools = cast(List[ToolUnionParam], to_anthropic_tools(group.list_tools()))
    messages: List[MessageParam] = [{"role": "user", "content": "Echo 'hello', and add 2 and 3."}]
    answer = ""
    for _ in range(10):  # a bounded agent loop
        reply = llm.messages.create(model=model, max_tokens=1024, messages=messages, tools=tools)
        answer = "".join(block.text for block in reply.content if block.type == "text")
        if reply.stop_reason != "tool_use":
            break
        messages.append({"role": "assistant", "content": reply.content})
        # one user message, every tool_result
        messages.append(cast(MessageParam, run_anthropic_tool_uses(group, reply.content)))
    print(answer)
