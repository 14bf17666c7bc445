"""``PerProcessGroup``: one ``ServerGroup`` per process, made on first use, shared by the process's
threads, remade in a forked child (the parent's left alone), closed by ``close()`` and at exit;
a group none of whose servers could connect is not kept. Real servers over real pipes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import Any, List

import pytest

from conftest import LONG, TESTING_SERVER, pid_alive, wait_until
from mcpclient import ConnectError
from mcpclient.contrib import PerProcessGroup

SERVERS = {"tools": {"command": TESTING_SERVER[0], "args": list(TESTING_SERVER[1:])}}
OPTIONS = {"client_options": {"timeout": LONG}}


def per_process(servers: Any = None, options: Any = None) -> PerProcessGroup:
    return PerProcessGroup(lambda: (SERVERS if servers is None else servers, OPTIONS if options is None else options),
                           name="test")


def test_the_threads_of_a_process_share_one_group_made_on_first_use():
    mcp = per_process()
    assert not mcp.made
    pids: List[int] = []
    start = threading.Barrier(16)

    def call(i: int) -> None:
        start.wait()
        assert mcp.call_tool("tools_add", {"a": i, "b": 1}).structured_content == {"sum": i + 1}
        pids.append(mcp["tools"].transport.pid)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(LONG)
    try:
        assert len(pids) == 16 and len(set(pids)) == 1 and mcp.made
        assert [t.name for t in mcp.list_tools()][:2] == ["tools_echo", "tools_add"]
        assert mcp.status["tools"].state == "ready" and mcp.status["tools"].protocol
    finally:
        mcp.close()
    assert wait_until(lambda: not pid_alive(pids[0])) and not mcp.made


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_makes_its_own_group_and_leaves_the_parents_alone():
    mcp = per_process()
    parent_server = mcp["tools"].transport.pid
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its own group, then close it and leave at once
        code = 1
        try:
            answer = mcp.call_tool("tools_add", {"a": 2, "b": 3}).structured_content["sum"]
            own = mcp["tools"].transport.pid
            mcp.close()
            os.write(write, json.dumps([answer, own]).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as reply:
        answer, child_server = json.loads(reply.read() or "[null, null]")
    _, status = os.waitpid(child, 0)
    try:
        assert os.waitstatus_to_exitcode(status) == 0 and answer == 5
        assert child_server != parent_server
        assert wait_until(lambda: not pid_alive(child_server))  # the child closed its own
        assert pid_alive(parent_server) and mcp["tools"].transport.pid == parent_server
        assert mcp.call_tool("tools_echo", {"text": "still mine"}).text == "still mine"
    finally:
        mcp.close()


def test_a_group_that_could_not_connect_is_not_kept_and_the_next_use_tries_again(tmp_path):
    flag = tmp_path / "up"
    servers = {"tools": {"command": sys.executable, "args": ["-c", f"import os, runpy, sys; "
                                                             f"os.path.exists({str(flag)!r}) or sys.exit(3); "
                                                             "runpy.run_module('mcpclient.testing', run_name='__main__')"]}}
    mcp = per_process(servers)
    with pytest.raises(ConnectError):
        mcp.list_tools()
    assert not mcp.made
    health = mcp.health()  # never raises: a health endpoint reports it
    assert health["ok"] is False and health["error"].startswith("ConnectError:") and health["servers"] == {}
    flag.write_text("")
    try:
        assert mcp.call_tool("tools_echo", {"text": "up"}).text == "up" and mcp.made
        assert mcp.health()["ok"] is True
    finally:
        mcp.close()


def test_the_group_is_closed_at_exit_without_errors():
    code = ("import json, sys; from mcpclient.contrib import PerProcessGroup; "
            f"mcp = PerProcessGroup(lambda: ({SERVERS!r}, {{}}), name='exit'); "
            "print(json.dumps(mcp['tools'].transport.pid), flush=True)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=LONG)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    server = json.loads(run.stdout)
    assert wait_until(lambda: not pid_alive(server))


def test_the_llm_adapters_take_it_as_they_take_a_group():
    from mcpclient.adapters.openai import run_openai_tool_calls, to_openai_tools

    mcp = per_process()
    try:
        tools = to_openai_tools(mcp)
        assert "tools_add" in [t["function"]["name"] for t in tools]
        calls = [{"id": "c1", "type": "function", "function": {"name": "tools_add", "arguments": '{"a": 1, "b": 2}'}}]
        [message] = run_openai_tool_calls(mcp, calls)
        assert message["tool_call_id"] == "c1" and '"sum": 3' in message["content"]
    finally:
        mcp.close()
