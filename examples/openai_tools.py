"""An OpenAI model using the tools of MCP servers: Chat Completions, strict mode, parallel calls.

    pip install 'mcpclient[openai]'
    OPENAI_API_KEY=sk-... python examples/openai_tools.py       # OPENAI_BASE_URL: another endpoint

The tools of every server in the group go to the model (named ``server_tool``); each turn's tool
calls run in parallel across the servers, and their results go back, until the model answers.
"""
import os
from typing import List, cast

from openai import OpenAI
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolUnionParam

from mcpclient import ServerGroup
from mcpclient.adapters.openai import run_openai_tool_calls, to_openai_tools

llm = OpenAI()  # OPENAI_API_KEY, OPENAI_BASE_URL from the environment
model = os.environ.get("OPENAI_MODEL", "gpt-5.5")

with ServerGroup({"testing": "python -m mcpclient.testing"}) as group:
    # The adapters give plain dicts of the SDK's shapes; the casts tell a type checker which.
    tools = cast(List[ChatCompletionToolUnionParam], to_openai_tools(group.list_tools(), strict=True))
    messages: List[ChatCompletionMessageParam] = [{"role": "user", "content": "Echo 'hello', and add 2 and 3."}]
    answer = ""
    for _ in range(10):  # a bounded agent loop
        message = llm.chat.completions.create(model=model, messages=messages, tools=tools).choices[0].message
        answer = message.content or ""
        if not message.tool_calls:
            break
        messages.append(cast(ChatCompletionMessageParam, message.to_dict()))
        messages += cast(List[ChatCompletionMessageParam], run_openai_tool_calls(group, message.tool_calls))
    print(answer)
