"""Tools loaded on demand: the model starts with one tool, ``search_tools``, and gets what it finds.

    pip install 'mcpclient[openai]'
    OPENAI_API_KEY=sk-... python examples/tools_on_demand.py      # OPENAI_BASE_URL: another endpoint

With hundreds of tools (many servers in a group), sending them all costs tokens on every turn,
and providers cap a request's tools. ``group.on_demand()`` offers ``search_tools`` first; when
the model calls it, the tools it found are offered from the next turn on, so the model can call
them then. The rest of the loop is the usual one: pass the on-demand tools where the group went.
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
    tools = group.on_demand(k=3)  # one conversation's tools: search_tools, then what it finds
    messages: List[ChatCompletionMessageParam] = [{"role": "user", "content": "Add 2 and 3 with a tool."}]
    answer = ""
    for _ in range(10):  # a bounded agent loop
        # search_tools + the tools found so far (plain dicts of the SDK's shape: the casts say which)
        offered = cast(List[ChatCompletionToolUnionParam], to_openai_tools(tools, strict=True))
        message = llm.chat.completions.create(model=model, messages=messages, tools=offered).choices[0].message
        answer = message.content or ""
        if not message.tool_calls:
            break
        messages.append(cast(ChatCompletionMessageParam, message.to_dict()))
        # a search loads what it finds
        messages += cast(List[ChatCompletionMessageParam], run_openai_tool_calls(tools, message.tool_calls))
    print(answer)
