"""``mcpclient.contrib.celery`` in the Celery example (examples/celery_tasks.py) on a real Redis.

A prefork worker (two pool processes): 20 tasks, each a distinct ``add(a, b)``; each pool process
calls through one server of its own (made when it started), the worker's main process starts none.
A threads worker: the tasks run in the main process, which makes one server, shared by its threads.
After the warm shutdown (SIGTERM) no server is left.
"""
from __future__ import annotations

import gc
import os
import time
from typing import Any, Dict, List

import pytest

from ._procs import EXAMPLES, PY, SERVER_EXIT_WAIT, Spawned, all_dead, descendants, env_with, server_children, still_alive, wait_until

pytest.importorskip("celery")
pytest.importorskip("redis")


@pytest.mark.timeout(90)
@pytest.mark.parametrize("pool", ["prefork", "threads"])
def test_each_worker_process_calls_through_a_server_of_its_own(tmp_path, redis_url, pool):
    from celery import Celery

    env = env_with(CELERY_BROKER_URL=redis_url, CELERY_RESULT_BACKEND=redis_url)
    env["PYTHONPATH"] = os.pathsep.join((str(EXAMPLES), env["PYTHONPATH"]))
    argv = [PY, "-m", "celery", "-A", "celery_tasks", "worker", f"--pool={pool}", "--concurrency=2",
            "--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=INFO",
            f"--hostname=contrib-{pool}@%h"]
    worker = Spawned(argv, tmp_path / "celery.log", env=env, cwd=tmp_path)
    sender = Celery("contrib-celery-test", broker=redis_url, backend=redis_url)
    results: List[Any] = []
    processes: Dict[int, int] = {}  # the process that ran a task -> its server
    below: List[int] = []
    try:
        results = [((i, 3 * i + 2), sender.send_task("celery_tasks.add", args=(i, 3 * i + 2))) for i in range(20)]
        deadline = time.monotonic() + 60
        for (a, b), result in results:
            answer = result.get(timeout=max(1.0, deadline - time.monotonic()))
            assert answer["sum"] == a + b, (a, b, answer)
            assert processes.setdefault(answer["pid"], answer["server_pid"]) == answer["server_pid"], answer
        if pool == "prefork":
            assert worker.pid not in processes and server_children(worker.pid) == [], worker.log_tail()
        else:
            assert list(processes) == [worker.pid], processes
        for process, server_pid in processes.items():
            assert server_children(process) == [server_pid], (process, server_pid)
        below = descendants(worker.pid)
    finally:
        status = worker.stop()  # SIGTERM: warm shutdown
        # The results' __del__ talks to the backend: let it run now, while redis is up (after the
        # fixture stopped redis, celery 5.6 retried for minutes in whichever test collected them).
        results.clear()
        result = None  # (the loop left the last one here)
        gc.collect()
        sender.close()
    assert status == 0, f"the worker did not stop by itself ({status}):\n{worker.log_tail()}"
    assert len(set(processes.values())) == len(processes), processes
    assert wait_until(all_dead(below), SERVER_EXIT_WAIT), f"left running: {still_alive(below)}"
