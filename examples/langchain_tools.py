"""MCP tools as LangChain tools: ``StructuredTool``s that any tool-calling chat model can bind.

    pip install 'mcpclient[langchain,openai]'
    OPENAI_API_KEY=sk-... python examples/langchain_tools.py     # OPENAI_BASE_URL: another endpoint

With ``langchain-openai`` (or any LangChain chat model) ``ChatOpenAI(model=...).bind_tools(tools)``
takes the tools as they are; here the model is called with the ``openai`` SDK directly, so the
example needs nothing else: LangChain converts the tools and runs the model's tool calls.
"""
import json
import os
from typing import List, cast

from langchain_core.messages import AIMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from openai import OpenAI
from openai.types.chat import (
    ChatCompletionMessageFunctionToolCall, ChatCompletionMessageParam, ChatCompletionToolUnionParam,
)

from mcpclient import ServerGroup
from mcpclient.adapters.langchain import to_langchain_tools

llm = OpenAI()  # OPENAI_API_KEY, OPENAI_BASE_URL from the environment
model = os.environ.get("OPENAI_MODEL", "gpt-5.5")

with ServerGroup({"testing": "python -m mcpclient.testing"}) as group:
    tools = {tool.name: tool for tool in to_langchain_tools(group)}
    # LangChain's OpenAI schemas are plain dicts of the SDK's shape: the cast says which
    schemas = cast(List[ChatCompletionToolUnionParam], [convert_to_openai_tool(tool) for tool in tools.values()])
    messages: List[ChatCompletionMessageParam] = [{"role": "user", "content": "Echo 'hello', and add 2 and 3."}]
    final = ""
    for _ in range(10):  # a bounded agent loop
        message = llm.chat.completions.create(model=model, messages=messages, tools=schemas).choices[0].message
        final = message.content or ""
        if not message.tool_calls:
            break
        messages.append(cast(ChatCompletionMessageParam, message.to_dict()))
        calls = [c for c in message.tool_calls if isinstance(c, ChatCompletionMessageFunctionToolCall)]
        ai = AIMessage(content="", tool_calls=[{"name": c.function.name, "args": json.loads(c.function.arguments),
                                                "id": c.id} for c in calls])
        for call in ai.tool_calls:
            answer = tools[call["name"]].invoke({**call, "type": "tool_call"})   # a ToolMessage; .artifact: the ToolResult
            messages.append({"role": "tool", "tool_call_id": answer.tool_call_id, "content": answer.content})
    print(final)
