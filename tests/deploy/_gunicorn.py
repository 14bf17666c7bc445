"""gunicorn for the deployment tests: ``gunicorn(tmp_path, app, *options)`` runs an app on a loopback
socket of the test's own (``--bind fd://N``: no port to race for, no readiness to poll, requests
queue until a worker is up, and once gunicorn is gone they are refused at once); ``drive()`` sends
requests, several at a time, each asking for a distinct ``add(a, b)`` so that a misrouted answer
cannot pass.
"""
from __future__ import annotations

import http.client
import socket
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from gunicorn import config as gunicorn_config

from ._procs import PY, Spawned

#: gunicorn 25+ opens a control socket at a fixed path (~/.gunicorn/gunicorn.ctl): not ours to share.
NO_CONTROL_SOCKET = [option for setting in gunicorn_config.KNOWN_SETTINGS for option in setting.cli or ()
                     if option == "--no-control-socket"]
#: How many times one request is sent when gunicorn resets its connection: the gthread worker
#: resets the connections it accepted but had not answered when ``--max-requests`` recycles it
#: (benoitc/gunicorn#3038, open), and a retry can land on the other worker as it recycles too.
#: A retry is safe: each request only asks for a sum.
RESET_ATTEMPTS = 5
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
def gunicorn(tmp_path: Path, app: str, *options: str, pythonpath: Path,
             env: Optional[Dict[str, str]] = None) -> Iterator[Gunicorn]:
    """Run ``gunicorn [options] APP`` (two workers) on a loopback socket of ours; stop and reap it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        port, fd = listener.getsockname()[1], listener.fileno()
        argv = [PY, "-m", "gunicorn", "--bind", f"fd://{fd}", "--pythonpath", str(pythonpath), "--workers", "2",
                "--timeout", "10", "--graceful-timeout", "5", "--log-level", "info", *NO_CONTROL_SOCKET, *options,
                app]
        spawned = Spawned(argv, tmp_path / "gunicorn.log", env=env, pass_fds=(fd,))
    # Only gunicorn holds the socket now: if it dies (an app that fails to load), requests are
    # refused at once instead of waiting in the backlog for their timeout.
    try:
        yield Gunicorn(spawned, port)
    finally:
        spawned.stop()


def drive(server: Gunicorn, count: int, concurrency: int = 4) -> List[Tuple[Tuple[int, int], int, str]]:
    """``count`` requests, ``concurrency`` at a time, each for a distinct sum: (args, status, body)."""
    def one(i: int) -> Tuple[Tuple[int, int], int, str]:
        a, b = i, 1000 + 7 * i
        for attempt in range(1, RESET_ATTEMPTS + 1):
            try:
                status, body = server.get(f"/add?a={a}&b={b}")
                break
            except ConnectionResetError as exc:  # a recycling worker's (RESET_ATTEMPTS)
                if attempt == RESET_ATTEMPTS:
                    raise AssertionError(f"add({a}, {b}): reset {attempt} times\n{server.why()}") from exc
            except OSError as exc:  # refused (gunicorn is gone), timed out
                raise AssertionError(f"add({a}, {b}): {exc!r}\n{server.why()}") from exc
        return (a, b), status, body

    with ThreadPoolExecutor(concurrency) as pool:
        return list(pool.map(one, range(count)))
