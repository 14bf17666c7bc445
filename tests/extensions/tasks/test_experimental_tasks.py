"""Tasks (2025-11-25, experimental) against a server on the official SDK's task support
(mcp 1.30, in its own venv: tests/servers/TASKS.md), over stdio and Streamable HTTP: a tool call
run as a task to completion, one cancelled, one failing, the server asking for input while a task
runs, and the client running task-augmented elicitation / sampling for the server."""
from __future__ import annotations

import contextlib
import json
from typing import Iterator, Union

import pytest

from mcpclient import CapabilityError, Client, CreateMessageResult, ElicitationResult, HTTPTransport, Handlers, MethodNotFound, Task, Tasks, ToolTask

from conftest import LONG
from tasks_servers import require_tasks_python, tasks_http_server, tasks_server_command


@pytest.fixture(params=["stdio", "http"])
def target(request) -> Iterator[Union[list, str]]:
    require_tasks_python()
    if request.param == "stdio":
        yield tasks_server_command()
    else:
        with tasks_http_server() as url:
            yield url


def answer_name(request):
    return ElicitationResult.accept({"name": "Ada"})


def sample(request):
    return CreateMessageResult(f"hello, {request.messages[0].text}", "test-model")


@contextlib.contextmanager
def connect(target, **options) -> Iterator[Client]:
    transport = HTTPTransport(target) if isinstance(target, str) else target
    with Client(transport, timeout=LONG, **options) as client:
        yield client


def test_a_tool_call_run_as_a_task_to_completion(target):
    with connect(target) as client:
        job = client.extension(Tasks).call_tool("job", {"steps": 3, "delay": 0.05}, ttl=60000)
        assert isinstance(job, ToolTask) and job.task.status == "working" and job.task.ttl == 60000
        assert job.status().status in ("working", "completed")
        result = job.result(timeout=LONG)
        assert result.text == "job done after 3 steps" and not result.is_error
        final = job.wait(timeout=LONG)
        assert final.status == "completed" and final.is_terminal and final.status_message == "step 3/3"
        assert job.task_id in [t.task_id for t in client.extension(Tasks).list()]
        assert all(isinstance(t, Task) for t in client.extension(Tasks).list())


def test_a_task_cancelled(target):
    with connect(target) as client:
        forever = client.extension(Tasks).call_tool("forever")
        assert forever.status().status == "working"
        cancelled = forever.cancel()
        assert cancelled.status == "cancelled"
        assert forever.wait(timeout=LONG).status == "cancelled"
        with pytest.raises(Exception):  # cancelling a terminal task is -32602
            forever.cancel()


def test_a_failing_task_and_the_tools_task_support(target):
    with connect(target) as client:
        failed = client.extension(Tasks).call_tool("failing_job")
        result = failed.result(timeout=LONG)
        assert result.is_error and result.text == "it broke"
        assert failed.status().status == "failed"
        with pytest.raises(CapabilityError):  # echo does not support tasks: nothing is sent
            client.extension(Tasks).call_tool("echo", {"text": "x"})
        with pytest.raises(MethodNotFound):  # forever requires a task
            client.call_tool("forever")
        assert {t.name: t.task_support for t in client.list_tools()}["forever"] == "required"


def test_the_server_asks_for_input_while_a_task_runs(target):
    with connect(target, handlers=Handlers(elicitation=answer_name, sampling=sample)) as client:
        asked = client.extension(Tasks).call_tool("ask")
        assert asked.result(timeout=LONG).text == 'answer {"name": "Ada"}'
        sampled = client.extension(Tasks).call_tool("sample", {"prompt": "Bob"})
        assert sampled.result(timeout=LONG).text == "test-model: hello, Bob"


def test_the_client_runs_task_augmented_elicitation_and_sampling(target):
    with connect(target, handlers=Handlers(elicitation=answer_name, sampling=sample, task_requests=True)) as client:
        asked = client.extension(Tasks).call_tool("ask_as_task")
        assert asked.result(timeout=LONG).text == 'answer {"name": "Ada"}'
        sampled = client.extension(Tasks).call_tool("sample_as_task", {"prompt": "Eve"})
        assert sampled.result(timeout=LONG).text == "test-model: hello, Eve"
        # inline: the server sends the task-augmented request nested in the tools/call
        assert client.call_tool("ask_as_task").text == 'answer {"name": "Ada"}'


def test_without_task_requests_the_server_cannot_ask_for_a_task(target):
    with connect(target, handlers=Handlers(elicitation=answer_name)) as client:
        task = client.extension(Tasks).call_tool("ask_as_task")
        result = task.result(timeout=LONG)
        assert result.is_error and "task-augmented elicitation" in result.text
        assert json.dumps(client.server.capabilities["tasks"]["requests"]) == '{"tools": {"call": {}}}'
