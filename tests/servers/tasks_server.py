"""2025-11-25 EXPERIMENTAL TASKS served by the OFFICIAL Python MCP SDK (see tests/servers/TASKS.md).

Needs ``mcp==1.30.0`` (the last SDK line with tasks; mcp 2.x dropped them), so it runs under its
own venv: ``tests/servers/setup-tasks-venv.sh`` creates ``.venv-tasks`` from
``tests/servers/tasks-requirements.txt``; ``tests/tasks_servers.py`` finds and starts it.

- ``.venv-tasks/bin/python tests/servers/tasks_server.py``: stdio (newline-delimited JSON-RPC).
- ``... --http``: Streamable HTTP (stateful, SSE responses) at ``/mcp`` on 127.0.0.1, OS-chosen
  port; prints exactly one line ``READY <url>`` on stdout once serving and runs until
  SIGTERM/SIGINT or until stdin reaches EOF (so a dying parent never leaves one behind).
- ``--poll-interval MS`` (default 100): the ``pollInterval`` put on every task (the SDK's own
  default is 500 ms, which only slows tests down).

Built on the SDK's low-level ``Server`` (FastMCP 1.x has no task-aware tools):
``server.experimental.enable_tasks()`` registers the SDK's default ``tasks/get``,
``tasks/result``, ``tasks/list`` and ``tasks/cancel`` handlers (in-memory store, per-session task
scoping) and advertises ``tasks: {list, cancel, requests: {tools: {call}}}``; task-augmented
``tools/call`` requests go through ``ctx.experimental.run_task(work)``; inside a task the tools use
``ServerTaskContext.update_status`` / ``elicit`` / ``create_message`` / ``elicit_as_task`` /
``create_message_as_task``. Local adjustments, all small:

- ``tools/call`` is registered directly in ``Server.request_handlers`` (not with the
  ``@server.call_tool()`` decorator, which turns every exception into an ``isError`` result), so
  the SDK's task-mode check (``validate_for_tool``) surfaces as the JSON-RPC error ``-32601`` the
  spec asks for, and an unknown tool is ``-32602``.
- ``TaskSupport`` keeps ONE task group for the whole server, replaced by every session's
  ``Server.run``, reset to None when any session ends, and never cancelled: over HTTP, once one
  session closed the others could no longer create tasks (JSON-RPC error code 0 "TaskSupport not
  running"), and a running task (``forever``) kept the stdio server alive after stdin EOF (both
  verified). ``_SessionTaskSupport`` (swapped in with ``__class__``) keeps the group in a
  ContextVar per session and cancels it when the session ends.
- The SDK's ``run_task`` completes a task with whatever result the work returns (an ``isError``
  result would end ``completed``) and fails it WITHOUT a stored result when the work raises
  (``tasks/result`` then answers a bare ``{"_meta": ...}``). Here both end ``failed`` with an
  ``isError`` CallToolResult (the error text) that ``tasks/result`` returns.
- The SDK's ``tasks/cancel`` only marks the task ``cancelled`` in the store; the work notices it
  by polling the store (every 50 ms) and stops, after refreshing the context's cached copy of the
  task (``update_status``), otherwise ``run_task`` would try to complete a cancelled task.
- The SDK's store expires a task ``ttl`` ms after creation even while it runs, after which the
  work's next status update raises inside ``run_task``'s error handler and takes the whole stdio
  server down (verified: exit 1, "ValueError: Task with ID ... not found"); here a task only
  expires once terminal (the SDK restarts the ttl at that point).
"""

from __future__ import annotations

import argparse
import contextvars
import json
import logging
import os
import signal
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import jsonschema
from anyio.abc import TaskGroup

# The SDK marks the whole experimental tasks API deprecated (removed in mcp 2.0): that is the point.
warnings.filterwarnings("ignore", category=DeprecationWarning)

import mcp.types as types  # noqa: E402
from mcp.server.experimental.task_context import ServerTaskContext  # noqa: E402
from mcp.server.experimental.task_support import TaskSupport  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.shared.exceptions import McpError  # noqa: E402
from mcp.shared.experimental.tasks.helpers import is_terminal  # noqa: E402
from mcp.shared.experimental.tasks.in_memory_task_store import InMemoryTaskStore, StoredTask  # noqa: E402

from _serve import serve_http  # noqa: E402  (tests/servers/_serve.py: uvicorn, READY, stdin EOF)

# The SDK's BaseSession warns on root for every response to a string request id (the ids of the
# queued "task-..." requests), although it routes them fine: noise.
logging.getLogger().addFilter(lambda record: "cannot be normalized to match pending requests" not in record.getMessage())

SERVER_NAME = "tasks-official"
CANCEL_POLL = 0.05  # seconds between cancellation checks of a running task
ASK_MESSAGE = "What is your name?"
ASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Your name"}},
    "required": ["name"],
}
SAMPLE_PROMPT = "Say hello"
SAMPLE_MAX_TOKENS = 50
CLIENT_TASK_TTL = 60000  # ms: the ttl of the client-side task in ask_as_task / sample_as_task

poll_interval_ms = 100  # set from --poll-interval


# ---------------------------------------------------------------- task infrastructure


class _TestTaskStore(InMemoryTaskStore):
    """The SDK's in-memory store with our ``pollInterval`` (the SDK hardcodes 500 ms) and no expiry
    of a task that is still running (see the module docstring)."""

    async def create_task(self, metadata: types.TaskMetadata, task_id: str | None = None) -> types.Task:
        task = await super().create_task(metadata, task_id)
        self._tasks[task.taskId].task.pollInterval = poll_interval_ms
        return types.Task(**self._tasks[task.taskId].task.model_dump())

    def _is_expired(self, stored: StoredTask) -> bool:
        return is_terminal(stored.task.status) and super()._is_expired(stored)


_session_task_group: contextvars.ContextVar[TaskGroup | None] = contextvars.ContextVar(
    "tasks_server_task_group", default=None
)


class _SessionTaskSupport(TaskSupport):
    """TaskSupport with one task group per session (see the module docstring), cancelled at session end."""

    @property
    def task_group(self) -> TaskGroup:
        group = _session_task_group.get()
        if group is None:
            raise RuntimeError("TaskSupport not running. Ensure Server.run() is active.")
        return group

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        # Entered by Server.run for each session, before it starts the request handlers: they
        # inherit this context, so run_task spawns the work in the group of its own session.
        async with anyio.create_task_group() as group:
            token = _session_task_group.set(group)
            try:
                yield
            finally:
                group.cancel_scope.cancel()  # the session is over: stop its tasks
                _session_task_group.reset(token)


server: Server[Any, Any] = Server(
    SERVER_NAME,
    version="1.0.0",
    instructions="Experimental 2025-11-25 tasks (official MCP Python SDK 1.30). See tests/servers/TASKS.md.",
)
support = server.experimental.enable_tasks(store=_TestTaskStore())
support.__class__ = _SessionTaskSupport


async def _cancelled(task: ServerTaskContext) -> bool:
    """True once ``tasks/cancel`` marked the task cancelled; then also refresh the context's copy."""
    current = await support.store.get_task(task.task_id)
    if current is None or current.status != types.TASK_STATUS_CANCELLED:
        return False
    # update_status re-reads the task into the context (status cancelled), so run_task does not try
    # to complete it; it also sends one notifications/tasks/status with status "cancelled".
    await task.update_status(current.statusMessage or "cancelled")
    return True


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=error)


async def _fail_with(task: ServerTaskContext, message: str) -> types.CallToolResult:
    """End the task ``failed`` with the result ``isError: true`` + ``message`` (what tasks/result returns)."""
    result = _text(message, error=True)
    current = await support.store.get_task(task.task_id)
    if current is not None and is_terminal(current.status):  # cancelled meanwhile: keep that, sync the context
        await task.update_status(current.statusMessage or current.status, notify=False)
        return result
    await support.store.store_result(task.task_id, result)
    await task.fail(message)  # status "failed", statusMessage = message, notifications/tasks/status
    return result


def _guarded(work: Callable[[ServerTaskContext], Awaitable[types.CallToolResult]]) -> Any:
    """``work`` for run_task, turning an exception into a failed task with an isError result.

    (The SDK's run_task alone would mark the task failed but store no result, so tasks/result
    would answer a bare ``{"_meta": ...}``.)
    """

    async def run(task: ServerTaskContext) -> types.CallToolResult:
        try:
            return await work(task)
        except Exception as e:  # noqa: BLE001 - reported to the client as the task's result
            return await _fail_with(task, str(e) or type(e).__name__)

    return run


# ---------------------------------------------------------------- tools


def _execution(mode: str | None) -> types.ToolExecution | None:
    return types.ToolExecution(taskSupport=mode) if mode else None  # type: ignore[arg-type]


NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    types.Tool(
        name="job",
        description="Run `steps` steps of `delay` seconds (statusMessage 'step i/N'); as a task or inline.",
        inputSchema={
            "type": "object",
            "properties": {
                "steps": {"type": "integer", "minimum": 0, "default": 3},
                "delay": {"type": "number", "minimum": 0, "default": 0.05},
            },
        },
        execution=_execution(types.TASK_OPTIONAL),
    ),
    types.Tool(
        name="forever",
        description="Run until cancelled with tasks/cancel (task-augmented calls only).",
        inputSchema=NO_ARGS,
        execution=_execution(types.TASK_REQUIRED),
    ),
    types.Tool(
        name="failing_job",
        description="Fail with an isError result 'it broke' (as a task: status failed).",
        inputSchema=NO_ARGS,
        execution=_execution(types.TASK_OPTIONAL),
    ),
    types.Tool(
        name="ask",
        description="Ask the client for a name with a plain elicitation/create (in a task: via tasks/result).",
        inputSchema=NO_ARGS,
        execution=_execution(types.TASK_OPTIONAL),
    ),
    types.Tool(
        name="ask_as_task",
        description="Ask the client for a name with a TASK-AUGMENTED elicitation/create, then poll the client.",
        inputSchema=NO_ARGS,
        execution=_execution(types.TASK_OPTIONAL),
    ),
    types.Tool(
        name="sample",
        description="Ask the client for a completion with a plain sampling/createMessage.",
        inputSchema={"type": "object", "properties": {"prompt": {"type": "string", "default": SAMPLE_PROMPT}}},
        execution=_execution(types.TASK_OPTIONAL),
    ),
    types.Tool(
        name="sample_as_task",
        description="Ask the client for a completion with a TASK-AUGMENTED sampling/createMessage, then poll.",
        inputSchema={"type": "object", "properties": {"prompt": {"type": "string", "default": SAMPLE_PROMPT}}},
        execution=_execution(types.TASK_OPTIONAL),
    ),
    types.Tool(
        name="echo",
        description="Echo the text back (no execution.taskSupport: task augmentation forbidden).",
        inputSchema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
]
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return TOOLS


def _answer_text(result: types.ElicitResult) -> str:
    if result.action != "accept":
        return result.action  # "decline" / "cancel"
    return "answer " + json.dumps(result.content, sort_keys=True)


def _sample_text(result: types.CreateMessageResult) -> str:
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else json.dumps(
        content.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=True
    )
    return f"{result.model}: {text}"


def _sample_messages(args: dict[str, Any]) -> list[types.SamplingMessage]:
    prompt = args.get("prompt", SAMPLE_PROMPT)
    return [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))]


async def _job_work(task: ServerTaskContext, steps: int, delay: float) -> types.CallToolResult:
    for i in range(1, steps + 1):
        await task.update_status(f"step {i}/{steps}")
        deadline = anyio.current_time() + delay
        while (remaining := deadline - anyio.current_time()) > 0:
            if await _cancelled(task):
                return _text("cancelled")  # the task is already terminal: run_task discards this
            await anyio.sleep(min(CANCEL_POLL, remaining))
    if await _cancelled(task):
        return _text("cancelled")
    return _text(f"job done after {steps} steps")


async def _forever_work(task: ServerTaskContext) -> types.CallToolResult:
    await task.update_status("running until cancelled")
    while not await _cancelled(task):
        await anyio.sleep(CANCEL_POLL)
    return _text("cancelled")  # discarded: the task is already cancelled


async def _failing_work(task: ServerTaskContext) -> types.CallToolResult:
    return await _fail_with(task, "it broke")


async def call_tool(req: types.CallToolRequest) -> types.ServerResult:
    ctx = server.request_context
    name = req.params.name
    args = dict(req.params.arguments or {})
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise McpError(types.ErrorData(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}"))
    ctx.experimental.validate_for_tool(tool)  # -32601 for a required/forbidden task-mode mismatch
    try:
        jsonschema.validate(instance=args, schema=tool.inputSchema)
    except jsonschema.ValidationError as e:
        return types.ServerResult(_text(f"Input validation error: {e.message}", error=True))
    as_task = ctx.experimental.is_task
    session = ctx.session

    def run(work: Any) -> Any:
        return ctx.experimental.run_task(_guarded(work))

    result: types.CallToolResult | types.CreateTaskResult
    if name == "echo":
        result = _text(args["text"])
    elif name == "job":
        steps, delay = int(args.get("steps", 3)), float(args.get("delay", 0.05))
        if as_task:
            result = await run(lambda task: _job_work(task, steps, delay))
        else:
            for _ in range(steps):
                await anyio.sleep(delay)
            result = _text(f"job done after {steps} steps")
    elif name == "forever":
        result = await run(_forever_work)  # validate_for_tool guarantees a task here
    elif name == "failing_job":
        result = await run(_failing_work) if as_task else _text("it broke", error=True)
    elif name == "ask":
        if as_task:

            async def ask_work(task: ServerTaskContext) -> types.CallToolResult:
                return _text(_answer_text(await task.elicit(ASK_MESSAGE, ASK_SCHEMA)))

            result = await run(ask_work)
        else:
            answer = await session.elicit_form(ASK_MESSAGE, ASK_SCHEMA, related_request_id=ctx.request_id)
            result = _text(_answer_text(answer))
    elif name == "ask_as_task":
        if as_task:

            async def ask_as_task_work(task: ServerTaskContext) -> types.CallToolResult:
                answer = await task.elicit_as_task(ASK_MESSAGE, ASK_SCHEMA, ttl=CLIENT_TASK_TTL)
                return _text(_answer_text(answer))

            result = await run(ask_as_task_work)
        else:
            answer = await session.experimental.elicit_as_task(ASK_MESSAGE, ASK_SCHEMA, ttl=CLIENT_TASK_TTL)
            result = _text(_answer_text(answer))
    elif name == "sample":
        if as_task:

            async def sample_work(task: ServerTaskContext) -> types.CallToolResult:
                reply = await task.create_message(_sample_messages(args), max_tokens=SAMPLE_MAX_TOKENS)
                return _text(_sample_text(reply))

            result = await run(sample_work)
        else:
            reply = await session.create_message(
                _sample_messages(args), max_tokens=SAMPLE_MAX_TOKENS, related_request_id=ctx.request_id
            )
            result = _text(_sample_text(reply))  # type: ignore[arg-type]
    elif name == "sample_as_task":
        if as_task:

            async def sample_as_task_work(task: ServerTaskContext) -> types.CallToolResult:
                reply = await task.create_message_as_task(
                    _sample_messages(args), max_tokens=SAMPLE_MAX_TOKENS, ttl=CLIENT_TASK_TTL
                )
                return _text(_sample_text(reply))

            result = await run(sample_as_task_work)
        else:
            reply = await session.experimental.create_message_as_task(
                _sample_messages(args), max_tokens=SAMPLE_MAX_TOKENS, ttl=CLIENT_TASK_TTL
            )
            result = _text(_sample_text(reply))
    else:  # pragma: no cover - every listed tool is handled above
        raise McpError(types.ErrorData(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}"))
    return types.ServerResult(result)


server.request_handlers[types.CallToolRequest] = call_tool


# ---------------------------------------------------------------- serving


async def _serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _http_app() -> Any:
    from mcp.server.fastmcp.server import StreamableHTTPASGIApp
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    manager = StreamableHTTPSessionManager(app=server, json_response=False, stateless=False)
    return Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))],
                     lifespan=lambda app: manager.run())


def main(argv: list[str] | None = None) -> None:
    global poll_interval_ms
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--http", action="store_true", help="Streamable HTTP (stateful) at /mcp")
    parser.add_argument("--poll-interval", type=int, default=poll_interval_ms, metavar="MS",
                        help="pollInterval of every task, in ms (default %(default)s)")
    args = parser.parse_args(argv)
    poll_interval_ms = args.poll_interval

    if args.http:
        serve_http(_http_app(), "/mcp")
    else:
        # SIGTERM keeps its default action (exit). SIGINT must not merely cancel the event loop:
        # the SDK reads stdin in a worker thread, which would keep the process alive until EOF.
        signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))
        anyio.run(_serve_stdio)  # returns at stdin EOF


if __name__ == "__main__":
    main()
