"""A real Celery prefork worker with module-level clients (apps/celery_module_clients.py) and a real
broker (redis-server).

20 tasks go through each pool process's own client (made in ``worker_process_init``) and 20
through the module-level client inherited from the worker's main process (``reconnect=``), each
a distinct ``add(a, b)``. Every result must be right, each pool process must use one server of
its own (never the main process's, which must stay up), and after the worker's warm shutdown
(SIGTERM) no server may be left. (Pool recycling, ``--max-tasks-per-child``, is left out: Celery
then holds a task meant for an exiting process for seconds, whatever the client does; the
gunicorn and multiprocessing tests recycle their workers.)
"""
from __future__ import annotations

import gc
import os
import time
from typing import Any, Dict, List, Tuple

import pytest

from ._procs import (
    APPS, PY, SERVER_EXIT_WAIT, Spawned, all_dead, descendants, env_with, pid_alive, server_children,
    still_alive, wait_until,
)

celery = pytest.importorskip("celery")
pytest.importorskip("redis")

TASKS = 20  # per kind
#: Seconds for all the tasks (the worker's start included).
RESULTS_TIMEOUT = 40.0


def _collect(results: List[Any], worker: Spawned) -> List[Dict[str, Any]]:
    """Every result in order; fails at once if the worker dies, and after ``RESULTS_TIMEOUT``."""
    deadline = time.monotonic() + RESULTS_TIMEOUT
    answers = []
    for result in results:
        while True:
            try:
                value = result.get(timeout=0.5, propagate=False)
            except celery.exceptions.TimeoutError:
                assert worker.proc.poll() is None, f"the celery worker exited:\n{worker.log_tail()}"
                assert time.monotonic() < deadline, f"no result in {RESULTS_TIMEOUT:g} s:\n{worker.log_tail()}"
                continue
            assert result.successful(), f"{result.name} failed: {result.traceback}\n{worker.log_tail()}"
            answers.append(value)
            break
    return answers


@pytest.mark.timeout(90)
def test_celery_prefork_tasks_use_per_process_and_inherited_clients(tmp_path, redis_url):
    from celery import Celery

    env = env_with(CELERY_BROKER_URL=redis_url, CELERY_RESULT_BACKEND=redis_url)
    env["PYTHONPATH"] = os.pathsep.join((str(APPS), env["PYTHONPATH"]))
    argv = [PY, "-m", "celery", "-A", "celery_module_clients", "worker", "--pool=prefork", "--concurrency=2",
            "--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=INFO",
            "--hostname=deploy-test@%h"]
    sender = Celery("deploy-test", broker=redis_url, backend=redis_url)
    worker = Spawned(argv, tmp_path / "celery.log", env=env, cwd=tmp_path)
    main_servers: List[int] = []
    pids: Dict[str, Dict[int, int]] = {"add": {}, "add_shared": {}}  # task -> pool pid -> its server pid
    jobs: List[Tuple[str, int, int, Any]] = []
    try:
        for i in range(TASKS):
            for name in ("add", "add_shared"):
                a, b = i, 100 * i + (1 if name == "add" else 2)
                jobs.append((name, a, b, sender.send_task(f"celery_module_clients.{name}", args=(a, b))))
        answers = _collect([job[3] for job in jobs], worker)
        main_servers = server_children(worker.pid)  # the main process's `shared` connection
        for (name, a, b, _), answer in zip(jobs, answers):
            assert answer["sum"] == a + b, (name, a, b, answer)
            assert answer["pid"] != worker.pid, answer
            assert pids[name].setdefault(answer["pid"], answer["server_pid"]) == answer["server_pid"], (name, answer)
            assert answer["server_pid"] not in main_servers, (name, answer)
        assert len(main_servers) == 1, (main_servers, worker.log_tail())
        assert pid_alive(main_servers[0])  # the children used their own connections
        below = descendants(worker.pid)  # pool processes and every server
    finally:
        status = worker.stop()  # SIGTERM: warm shutdown
        # The results' __del__ talks to the backend: let it run now, while redis is up (at
        # interpreter exit, after the fixture stopped redis, celery 5.6 retried for ever: Python 3.9)
        jobs.clear()
        gc.collect()
        sender.close()
    assert status == 0, f"the worker did not stop by itself ({status}):\n{worker.log_tail()}"
    servers = {server for per_task in pids.values() for server in per_task.values()}
    assert len(servers) == len(pids["add"]) + len(pids["add_shared"]), pids  # none shared between processes
    tracked = sorted(servers | set(main_servers) | set(below))
    assert wait_until(all_dead(tracked), SERVER_EXIT_WAIT), f"left running: {still_alive(tracked)}"
