"""``mcpclient.contrib.django`` in the example project (examples/django_project), run as users run it.

- gunicorn ``-w 2``, with and without ``--preload`` (sync workers, so both take requests): 40 requests, 8 at a time, each
  a distinct ``add(a, b)`` through ``mcp.call_tool``; every answer right, each worker process has
  exactly one server of its own (counted among its children), the arbiter none (it imported the
  app, which calls nothing at import), the health view answers 200; after SIGTERM no server is left.
- ``manage.py runserver`` (with its autoreloader, as developers run it): requests from 8 threads
  share the serving process's one server; Ctrl-C (SIGINT to the process group) leaves none.
- ``manage.py check`` refuses malformed settings with the documented ids; ``manage.py mcp tools``,
  ``mcp call`` and ``mcp status`` work on the bundled server, and the group's warning about a
  server that cannot start goes where ``LOGGING`` sends it.
- A Celery prefork worker that uses the project's settings (``mysite/celery.py``) on a real Redis:
  each pool process calls through a server of its own, the worker's main process starts none.
"""
from __future__ import annotations

import http.client
import gc
import json
import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Tuple

import pytest

from ._procs import (
    APPS, EXAMPLES, PY, SERVER_EXIT_WAIT, Spawned, all_dead, descendants, env_with, free_port, server_children,
    still_alive, wait_until,
)

pytest.importorskip("django")
pytest.importorskip("celery")  # (the project's mysite/__init__.py loads its Celery app, as Django's docs do)

PROJECT = EXAMPLES / "django_project"
MANAGE_TIMEOUT = 60


def project_env(**extra: Any) -> Dict[str, str]:
    env = env_with(DJANGO_SETTINGS_MODULE=extra.pop("settings", "mysite.settings"), **extra)
    env["PYTHONPATH"] = os.pathsep.join((str(PROJECT), str(APPS), env["PYTHONPATH"]))
    return env


def manage(*args: str, settings: str = "mysite.settings") -> "subprocess.CompletedProcess[str]":
    return subprocess.run([PY, "manage.py", *args], cwd=PROJECT, env=project_env(settings=settings),
                          capture_output=True, text=True, timeout=MANAGE_TIMEOUT)


def _check_answers(answers: List[Tuple[Tuple[int, int], int, str]], why: str) -> Dict[int, int]:
    """Each answer right; returns {serving pid: its server pid} (one server per process, asserted)."""
    servers: Dict[int, int] = {}
    for (a, b), status, body in answers:
        assert status == 200, f"add({a}, {b}) -> {status} {body}\n{why}"
        answer = json.loads(body)
        assert answer["sum"] == a + b, (a, b, answer)
        assert servers.setdefault(answer["pid"], answer["server_pid"]) == answer["server_pid"], answer
    assert len(set(servers.values())) == len(servers), servers  # no server shared by two processes
    return servers


@pytest.mark.timeout(90)
@pytest.mark.parametrize("preload", [True, False], ids=["preload", "no-preload"])
def test_under_gunicorn_each_worker_has_one_server_of_its_own(tmp_path, preload):
    pytest.importorskip("gunicorn")
    from ._gunicorn import drive, gunicorn

    options = ["--worker-class", "sync"] + (["--preload"] if preload else [])
    with gunicorn(tmp_path, "mysite.wsgi", *options, pythonpath=PROJECT, env=project_env()) as server:
        answers = drive(server, 40, concurrency=8)
        workers = _check_answers(answers, server.why())
        deadline = time.monotonic() + 30
        while len(workers) < 2 and time.monotonic() < deadline:  # without --preload a worker still
            answers += drive(server, 40, concurrency=8)          # loading Django may take none of them
            workers = _check_answers(answers, server.why())
        assert len(workers) == 2, (workers, server.why())  # both workers served
        assert server_children(server.pid) == [], "the arbiter started a server"
        for worker, server_pid in workers.items():
            assert server_children(worker) == [server_pid], (worker, server_pid)
        status, body = server.get("/mcp/health")
        assert status == 200 and json.loads(body)["servers"]["tools"]["state"] == "ready", body
        below = descendants(server.pid)
    tracked = sorted(set(workers.values()) | set(below))
    assert wait_until(all_dead(tracked), SERVER_EXIT_WAIT), f"left running: {still_alive(tracked)}"


def _get(port: int, path: str) -> Tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        conn.close()


def _serving(port: int) -> bool:
    try:
        return _get(port, "/mcp/health")[0] in (200, 503)
    except OSError:
        return False


@pytest.mark.timeout(90)
def test_under_runserver_the_request_threads_share_one_server(tmp_path):
    for attempt in range(3):  # a port free a moment ago may be taken before runserver binds it
        port = free_port()
        proc = Spawned([PY, "manage.py", "runserver", f"127.0.0.1:{port}"], tmp_path / f"runserver-{attempt}.log",
                       env=project_env(), cwd=PROJECT)
        if wait_until(lambda: proc.proc.poll() is not None or _serving(port)) and proc.proc.poll() is None:
            break
        proc.stop()
    else:
        pytest.fail(f"runserver did not serve:\n{proc.log_tail()}")
    below: List[int] = []
    try:
        def one(i: int) -> Tuple[Tuple[int, int], int, str]:
            a, b = i, 500 + 3 * i
            status, body = _get(port, f"/add?a={a}&b={b}")
            return (a, b), status, body

        with ThreadPoolExecutor(8) as pool:
            servers = _check_answers(list(pool.map(one, range(24))), proc.log_tail())
        assert len(servers) == 1, servers  # the reloader's child serves, from many threads
        below = descendants(proc.pid)
        assert [pid for pid in below if pid in servers.values()] == list(servers.values())
    finally:
        if proc.proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C at the terminal: the reloader and its child
        status = proc.stop(wait=SERVER_EXIT_WAIT)
    assert status is not None, f"runserver did not stop on Ctrl-C:\n{proc.log_tail()}"
    assert wait_until(all_dead(below), SERVER_EXIT_WAIT), f"left running: {still_alive(below)}"


@pytest.mark.timeout(60)
def test_manage_py_check_refuses_malformed_settings_with_the_documented_ids():
    run = manage("check", settings="broken_settings")
    assert run.returncode == 1, run.stdout + run.stderr
    report = run.stderr
    assert "(mcpclient.E001) settings.MCP_SERVERS has an entry that cannot be used: server 'tools': needs a " \
           "'command'" in report, report
    assert "(mcpclient.E002) settings.MCP_OPTIONS 'client_options' has 'timout', which Client does not take" \
           in report, report
    assert "(mcpclient.W001)" in report and "MCPCLIENT_TEST_UNSET_VARIABLE" in report, report
    assert manage("check").returncode == 0


@pytest.mark.timeout(60)
def test_manage_py_mcp_lists_calls_and_reports_through_logging():
    tools = manage("mcp", "tools")
    assert tools.returncode == 0, tools.stderr
    assert "tools_add(a: number, b: number)" in tools.stdout.splitlines(), tools.stdout
    call = manage("mcp", "call", "tools_add", "a=2", "b=3", "--json")
    assert call.returncode == 0 and json.loads(call.stdout)["structuredContent"] == {"sum": 5}, call.stderr
    status = manage("mcp", "status", settings="one_server_down_settings")
    assert status.returncode == 1, status.stdout + status.stderr
    rows = {line.split()[0]: line.split()[1] for line in status.stdout.splitlines()[1:] if line.strip()}
    assert rows == {"tools": "ready", "broken": "failed"}, status.stdout
    # the group's warning, formatted by the project's LOGGING (mysite/settings.py)
    assert "[mcpclient.group] WARNING server 'broken' failed" in status.stderr, status.stderr


@pytest.mark.timeout(90)
def test_a_celery_worker_on_the_django_settings_gives_each_pool_process_its_own_server(tmp_path, redis_url):
    from celery import Celery

    env = project_env(CELERY_BROKER_URL=redis_url, CELERY_RESULT_BACKEND=redis_url)
    argv = [PY, "-m", "celery", "-A", "mysite", "worker", "--pool=prefork", "--concurrency=2", "--without-heartbeat",
            "--without-gossip", "--without-mingle", "--loglevel=INFO", "--hostname=contrib-django@%h"]
    worker = Spawned(argv, tmp_path / "celery.log", env=env, cwd=PROJECT)
    sender = Celery("contrib-django-test", broker=redis_url, backend=redis_url)
    results: List[Any] = []
    pools: Dict[int, int] = {}
    try:
        results = [((i, 2 * i + 1), sender.send_task("mysite.celery.add", args=(i, 2 * i + 1))) for i in range(20)]
        deadline = time.monotonic() + 60
        for (a, b), result in results:
            answer = result.get(timeout=max(1.0, deadline - time.monotonic()))
            assert answer["sum"] == a + b, (a, b, answer)
            assert pools.setdefault(answer["pid"], answer["server_pid"]) == answer["server_pid"], answer
        assert worker.pid not in pools and server_children(worker.pid) == [], worker.log_tail()
        for pool, server_pid in pools.items():
            assert server_children(pool) == [server_pid], (pool, server_pid)
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
    assert len(set(pools.values())) == len(pools), pools
    assert wait_until(all_dead(below), SERVER_EXIT_WAIT), f"left running: {still_alive(below)}"
