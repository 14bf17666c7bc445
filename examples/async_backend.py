"""An async back end (FastAPI, aiohttp, any asyncio code) using MCP tools with ``AsyncOpenAI``.

    pip install 'mcpclient[openai]'
    OPENAI_API_KEY=sk-... python examples/async_backend.py        # OPENAI_BASE_URL: another endpoint

mcpclient is blocking and thread-safe; ``arun_openai_tool_calls`` (and Anthropic's
``arun_anthropic_tool_uses``) run the tool calls on a worker thread, so the event loop never
waits. Make the group once per process (FastAPI: in the app's lifespan), share it between
requests, and close it at shutdown. Here two "requests" are served at once, as a server would.
"""
import asyncio
import os
from typing import List, cast

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolUnionParam

from mcpclient import ServerGroup
from mcpclient.adapters.openai import arun_openai_tool_calls, to_openai_tools

llm = AsyncOpenAI()  # OPENAI_API_KEY, OPENAI_BASE_URL from the environment
model = os.environ.get("OPENAI_MODEL", "gpt-5.5")


async def answer(group: ServerGroup, question: str) -> str:
    """What one request handler does: the agent loop, awaiting the model and the tools."""
    # the group's listing from connect(): no request (plain dicts of the SDK's shape: the casts say which)
    tools = cast(List[ChatCompletionToolUnionParam], to_openai_tools(group, strict=True))
    messages: List[ChatCompletionMessageParam] = [{"role": "user", "content": question}]
    answer = ""
    for _ in range(10):  # a bounded agent loop
        message = (await llm.chat.completions.create(model=model, messages=messages, tools=tools)).choices[0].message
        answer = message.content or ""
        if not message.tool_calls:
            break
        messages.append(cast(ChatCompletionMessageParam, message.to_dict()))
        messages += cast(List[ChatCompletionMessageParam], await arun_openai_tool_calls(group, message.tool_calls))
    return answer


async def main() -> None:
    group = await asyncio.to_thread(ServerGroup({"testing": "python -m mcpclient.testing"}).connect)
    try:
        answers = await asyncio.gather(answer(group, "Echo 'hello', and add 2 and 3."),
                                       answer(group, "Echo 'hello' again."))
    finally:
        await asyncio.to_thread(group.close)
    print("\n".join(answers))


if __name__ == "__main__":
    asyncio.run(main())
