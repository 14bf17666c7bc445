"""gunicorn serving the Flask example (examples/flask_app.py), driven by real HTTP requests.

The app's module-level clients call the bundled server over stdio and, where the ``mcp`` package
is installed, the official SDK's server over Streamable HTTP. Each configuration (sync and gthread
workers, with and without ``--preload``) runs two workers that recycle every 8 requests
(``--max-requests 8``) under 40 requests, 4 at a time, each asking for a distinct ``add(a, b)``, so
a misrouted answer cannot pass. Then gunicorn is stopped (SIGTERM to the arbiter) and no server
process may be left. With ``--preload`` the clients are made in the arbiter and inherited by the
forked workers: ``reconnect=Reconnect()`` gives each worker its own connection, and the arbiter's
server stays alive while workers come and go; without it a worker answers 500 naming
``ForkedClientError``, never a wrong sum and never a hang.

gunicorn gets its listening socket from the test (``--bind fd://N``, bound to 127.0.0.1:0 here),
so there is no port to race for, no readiness to poll (requests queue until a worker is up), and
once gunicorn is gone requests are refused at once.
"""
from __future__ import annotations

import http.client
import json
import socket
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from ._procs import (
    EXAMPLES, PY, SERVER_EXIT_WAIT, Spawned, all_dead, descendants, env_with, pid_alive, server_children,
    still_alive, wait_until,
)

pytest.importorskip("gunicorn")
pytest.importorskip("flask")
from gunicorn import config as gunicorn_config  # noqa: E402

#: gunicorn 25+ opens a control socket at a fixed path (~/.gunicorn/gunicorn.ctl): not ours to share.
NO_CONTROL_SOCKET = [option for setting in gunicorn_config.KNOWN_SETTINGS for option in setting.cli or ()
                     if option == "--no-control-socket"]

REQUESTS = 40
CONCURRENCY = 4
MAX_REQUESTS = 8
#: Seconds one HTTP request may take (a worker boot included); gunicorn's own worker timeout is 10.
REQUEST_TIMEOUT = 20.0


class Gunicorn:
    def __init__(self, spawned: Spawned, port: int) -> None:
        self.spawned = spawned
        self.port = port

    @property
    def pid(self) -> int:
        return self.spawned.pid

    def get(self, path: str) -> Tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def why(self) -> str:
        return f"gunicorn log tail:\n{self.spawned.log_tail()}"


@contextmanager
def gunicorn(tmp_path: Path, *options: str, env: Optional[Dict[str, str]] = None) -> Iterator[Gunicorn]:
    """Run ``gunicorn [options] flask_app:app`` on a loopback socket of ours; stop and reap it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        port, fd = listener.getsockname()[1], listener.fileno()
        argv = [PY, "-m", "gunicorn", "--bind", f"fd://{fd}", "--pythonpath", str(EXAMPLES), "--workers", "2",
                "--timeout", "10", "--graceful-timeout", "5", "--log-level", "info", *NO_CONTROL_SOCKET, *options,
                "flask_app:app"]
        spawned = Spawned(argv, tmp_path / "gunicorn.log", env=env, pass_fds=(fd,))
    # Only gunicorn holds the socket now: if it dies (an app that fails to load), requests are
    # refused at once instead of waiting in the backlog for their timeout.
    try:
        yield Gunicorn(spawned, port)
    finally:
        spawned.stop()


def _drive(server: Gunicorn, count: int = REQUESTS) -> List[Tuple[Tuple[int, int], int, str]]:
    """``count`` requests, ``CONCURRENCY`` at a time, each for a distinct sum: (args, status, body)."""
    def one(i: int) -> Tuple[Tuple[int, int], int, str]:
        a, b = i, 1000 + 7 * i
        for attempt in (1, 2):
            try:
                status, body = server.get(f"/add?a={a}&b={b}")
                break
            except ConnectionResetError:  # gunicorn < 24's gthread worker resets the connections it
                if attempt == 2:          # holds when --max-requests recycles it (not ours: retry once)
                    raise
            except OSError as exc:  # refused (gunicorn is gone), a second reset, timed out
                raise AssertionError(f"add({a}, {b}): {exc!r}\n{server.why()}") from exc
        return (a, b), status, body

    with ThreadPoolExecutor(CONCURRENCY) as pool:
        return list(pool.map(one, range(count)))


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
