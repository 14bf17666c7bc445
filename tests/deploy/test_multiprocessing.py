"""``multiprocessing`` pools (the ``fork`` and ``spawn`` start methods) calling tools.

Each pool process makes its own client (the pool's initializer), or, with ``fork``, uses one the
parent made before the pool forked, with ``reconnect=Reconnect()``: each process then opens its
own connection on first use and the parent's is left alone. 40 tasks per pool, each a distinct
``add(a, b)``; processes are replaced every 10 tasks. Every answer must be right, each process
must have one server of its own, and once the pool is closed and joined none may be left.
"""
from __future__ import annotations

import multiprocessing
from typing import Any, Dict, List, Set

import pytest

from mcpclient import Client
from mcpclient.testing import server_command

from . import mp_work
from ._procs import SERVER_EXIT_WAIT, all_dead, pid_alive, still_alive, wait_until

TASKS = 40
MAX_TASKS_PER_CHILD = 10


@pytest.fixture(scope="module", autouse=True)
def resource_tracker() -> None:
    """The first ``spawn`` pool starts multiprocessing's resource tracker, a process that lives as
    long as this one: start it before the tests' leak guard takes its list of children."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()


def _run_pool(method: str, task: Any, **pool_options: Any) -> List[Dict[str, Any]]:
    ctx = multiprocessing.get_context(method)
    pool = ctx.Pool(2, maxtasksperchild=MAX_TASKS_PER_CHILD, **pool_options)
    args = [(i, 500 + 3 * i) for i in range(TASKS)]
    try:
        answers = pool.starmap_async(task, args, chunksize=1).get(timeout=40)
    except BaseException:
        pool.terminate()
        pool.join()
        raise
    pool.close()  # the workers exit normally (their finalizers close their clients)
    pool.join()
    for (a, b), answer in zip(args, answers):
        assert answer["sum"] == a + b, (a, b, answer)
    return answers


def _one_server_each(answers: List[Dict[str, Any]]) -> Set[int]:
    servers: Dict[int, int] = {}
    for answer in answers:
        assert servers.setdefault(answer["pid"], answer["server_pid"]) == answer["server_pid"], answer
    assert len(set(servers.values())) == len(servers), servers  # none shared between processes
    assert len(servers) >= 3, servers  # processes were replaced
    return set(servers.values()) | set(servers)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_pool_processes_with_their_own_clients(method):
    answers = _run_pool(method, mp_work.add_own, initializer=mp_work.open_client)
    tracked = sorted(_one_server_each(answers))
    assert wait_until(all_dead(tracked), SERVER_EXIT_WAIT), f"left running: {still_alive(tracked)}"


@pytest.mark.timeout(60)
def test_fork_pool_inherits_a_client_with_reconnect():
    from mcpclient import Reconnect

    parent = Client(server_command(), timeout=10, reconnect=Reconnect()).connect()
    mp_work.inherited = parent
    try:
        own_server = parent.transport.pid
        answers = _run_pool("fork", mp_work.add_inherited)
        tracked = _one_server_each(answers)
        assert own_server not in tracked
        # The children came and went; the parent's connection is as it was.
        assert pid_alive(own_server) and parent.transport.pid == own_server
        assert parent.call_tool("add", {"a": 20, "b": 22}).structured_content == {"sum": 42}
    finally:
        mp_work.inherited = None
        parent.close()
    assert wait_until(all_dead(sorted(tracked)), SERVER_EXIT_WAIT), f"left running: {still_alive(sorted(tracked))}"


@pytest.mark.timeout(60)
def test_a_servers_error_in_a_pool_process_reaches_the_parent_as_itself():
    """The pool pickles a worker's exception to send it back: an ``RPCError`` (whose constructor
    takes other arguments than its message) unpickles as itself: the parent gets the server's
    error, not a ``MaybeEncodingError``/``TypeError``."""
    from mcpclient.errors import RPCError

    ctx = multiprocessing.get_context("fork")
    pool = ctx.Pool(1, initializer=mp_work.open_client)
    try:
        with pytest.raises(RPCError) as caught:
            pool.apply_async(mp_work.call_unknown_tool, ("no_such_tool",)).get(timeout=40)
    finally:
        pool.close()
        pool.join()
    error = caught.value
    assert error.method == "tools/call" and isinstance(error.code, int) and "no_such_tool" in str(error)
