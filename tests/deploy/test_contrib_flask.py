"""``mcpclient.contrib.flask`` in the Flask example (examples/flask_app.py), run as users run it.

gunicorn ``--preload -w 2`` with gthread workers: 40 requests, 8 at a time, each a distinct
``add(a, b)`` through ``mcp.call_tool``; every answer right, each worker process has exactly one
server of its own and the arbiter none, the health blueprint answers 200; after SIGTERM no server
is left. ``flask mcp tools`` prints the bundled server's tools.
"""
from __future__ import annotations

import json
import subprocess

import pytest

from ._procs import EXAMPLES, PY, SERVER_EXIT_WAIT, all_dead, descendants, env_with, server_children, still_alive, wait_until

pytest.importorskip("flask")


@pytest.mark.timeout(90)
def test_under_gunicorn_preload_each_worker_has_one_server_of_its_own(tmp_path):
    pytest.importorskip("gunicorn")
    from ._gunicorn import drive, gunicorn

    options = ["--preload", "--worker-class", "gthread", "--threads", "4"]
    with gunicorn(tmp_path, "flask_app:app", *options, pythonpath=EXAMPLES, env=env_with()) as server:
        workers = {}
        for (a, b), status, body in drive(server, 40, concurrency=8):
            assert status == 200, f"add({a}, {b}) -> {status} {body}\n{server.why()}"
            answer = json.loads(body)
            assert answer["sum"] == a + b, (a, b, answer)
            assert workers.setdefault(answer["pid"], answer["server_pid"]) == answer["server_pid"], answer
        assert len(set(workers.values())) == len(workers), workers
        assert server_children(server.pid) == [], "the arbiter started a server"
        for worker, server_pid in workers.items():
            assert server_children(worker) == [server_pid], (worker, server_pid)
        status, body = server.get("/mcp/health")
        assert status == 200 and json.loads(body)["ok"] is True, body
        below = descendants(server.pid)
    tracked = sorted(set(workers.values()) | set(below))
    assert wait_until(all_dead(tracked), SERVER_EXIT_WAIT), f"left running: {still_alive(tracked)}"


@pytest.mark.timeout(60)
def test_flask_mcp_tools_prints_the_servers_tools():
    run = subprocess.run([PY, "-m", "flask", "--app", str(EXAMPLES / "flask_app.py"), "mcp", "tools"],
                         env=env_with(), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "tools_add(a: number, b: number)" in run.stdout.splitlines(), run.stdout
