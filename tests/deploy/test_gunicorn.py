"""gunicorn serving a Flask app with module-level clients (apps/flask_module_clients.py), driven by
real HTTP requests.

The app's module-level clients call the bundled server over stdio and, where the ``mcp`` package
is installed, the official SDK's server over Streamable HTTP. Each configuration (sync and gthread
workers, with and without ``--preload``) runs two workers that recycle every 8 requests
(``--max-requests 8``) under 40 requests, 4 at a time, each asking for a distinct ``add(a, b)``, so
a misrouted answer cannot pass. Then gunicorn is stopped (SIGTERM to the arbiter) and no server
process may be left. With ``--preload`` the clients are made in the arbiter and inherited by the
forked workers: ``reconnect=Reconnect()`` gives each worker its own connection, and the arbiter's
server stays alive while workers come and go; without it a worker answers 500 naming
``ForkedClientError``, never a wrong sum and never a hang.

gunicorn gets its listening socket from the test (``_gunicorn.py``).
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from ._procs import (
    APPS, SERVER_EXIT_WAIT, all_dead, descendants, env_with, pid_alive, server_children,
    still_alive, wait_until,
)

pytest.importorskip("gunicorn")
pytest.importorskip("flask")
from ._gunicorn import Gunicorn, drive  # noqa: E402
from ._gunicorn import gunicorn as run_gunicorn  # noqa: E402

REQUESTS = 40
CONCURRENCY = 4
MAX_REQUESTS = 8


@contextmanager
def gunicorn(tmp_path: Path, *options: str, env: Optional[Dict[str, str]] = None) -> Iterator[Gunicorn]:
    """Run ``gunicorn [options] flask_module_clients:app``; stop and reap it."""
    with run_gunicorn(tmp_path, "flask_module_clients:app", *options, pythonpath=APPS, env=env) as server:
        yield server


def _drive(server: Gunicorn, count: int = REQUESTS) -> List[Tuple[Tuple[int, int], int, str]]:
    return drive(server, count, CONCURRENCY)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("preload", [False, True], ids=["no-preload", "preload"])
@pytest.mark.parametrize("worker", ["sync", "gthread"])
def test_flask_under_gunicorn_answers_every_request_and_leaves_no_server(tmp_path, mcp_http_url, worker, preload):
    options = ["--worker-class", worker, "--max-requests", str(MAX_REQUESTS), "--max-requests-jitter", "0"]
    if worker == "gthread":
        options += ["--threads", "4"]
    if preload:
        options.append("--preload")
    env = env_with(MCP_HTTP_URL=mcp_http_url, MCP_RECONNECT=None)
    server_pids = set()
    arbiter_servers: List[int] = []
    with gunicorn(tmp_path, *options, env=env) as server:
        answers = _drive(server)
        # The arbiter's own servers: with --preload, the module-level stdio client's (made at import).
        arbiter_servers = server_children(server.pid)
        workers: Dict[int, int] = {}  # worker pid -> the stdio server pid it reported
        for (a, b), status, body in answers:
            assert status == 200, f"add({a}, {b}) -> {status} {body}\n{server.why()}"
            answer: Dict[str, Any] = json.loads(body)
            assert answer["sum"] == a + b, (a, b, answer)
            if mcp_http_url is not None:
                assert answer["remote_sum"] == a + b, (a, b, answer)
            # One server per worker, and never the arbiter's.
            assert workers.setdefault(answer["pid"], answer["server_pid"]) == answer["server_pid"], answer
            assert answer["server_pid"] not in arbiter_servers, answer
            server_pids.add(answer["server_pid"])
        # Workers were recycled during the run (2 workers, a new one every MAX_REQUESTS requests).
        assert len(workers) >= REQUESTS // MAX_REQUESTS - 2, sorted(workers)  # gthread may take a few more
        assert len(server_pids) == len(workers), workers
        if preload:
            assert len(arbiter_servers) == 1, (arbiter_servers, server.why())
            # Workers came and went (exits included): the arbiter's server is untouched.
            assert pid_alive(arbiter_servers[0])
        else:
            assert arbiter_servers == [], "without --preload the arbiter never imports the app"
        below = descendants(server.pid)  # workers and servers that served nothing yet included
    tracked = sorted(server_pids | set(arbiter_servers) | set(workers) | set(below))
    assert wait_until(all_dead(tracked), SERVER_EXIT_WAIT), f"left running: {still_alive(tracked)}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("worker", ["sync", "gthread"])
def test_an_inherited_client_without_reconnect_fails_clearly_in_the_worker(tmp_path, worker):
    """--preload without ``reconnect=``: every request fails with ForkedClientError (500), at once."""
    options = ["--worker-class", worker, "--preload"] + (["--threads", "4"] if worker == "gthread" else [])
    env = env_with(MCP_HTTP_URL=None, MCP_RECONNECT="0")
    with gunicorn(tmp_path, *options, env=env) as server:
        answers = _drive(server, 8)
        arbiter_servers = server_children(server.pid)
        for (a, b), status, body in answers:
            assert status == 500 and body.startswith("ForkedClientError"), \
                f"add({a}, {b}) -> {status} {body}\n{server.why()}"
        assert len(arbiter_servers) == 1 and pid_alive(arbiter_servers[0]), server.why()
        below = descendants(server.pid)
    assert wait_until(all_dead(below), SERVER_EXIT_WAIT), f"left running: {still_alive(below)}"
