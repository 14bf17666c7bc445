"""Find and start the 2025-11-25 experimental-tasks server (tests/servers/tasks_server.py).

That server needs ``mcp==1.30.0`` (mcp 2.x dropped tasks), so it runs under its own venv, not the
test venv: ``tests/servers/setup-tasks-venv.sh`` creates ``<repo>/.venv-tasks``. This module does
not import ``mcp``.

    def test_something():
        require_tasks_python()                  # skip (or fail when $CI is set) without the venv
        cmd = tasks_server_command()            # stdio argv
        with tasks_http_server() as url:       # Streamable HTTP, url = http://127.0.0.1:PORT/mcp
            ...

The HTTP server prints ``READY <url>`` once serving and exits when its stdin closes, so it dies
with the test process even if nothing gets to terminate it; the context manager closes stdin,
sends SIGTERM to its process group, waits, SIGKILLs if needed and reaps it, so the leak guard
(tests/conftest.py) sees no child left.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, List, Optional

REPO = Path(__file__).resolve().parent.parent
TASKS_SERVER = REPO / "tests" / "servers" / "tasks_server.py"
SETUP_SCRIPT = REPO / "tests" / "servers" / "setup-tasks-venv.sh"
#: Environment variable naming the tasks venv's interpreter (overrides ``.venv-tasks``).
ENV_VAR = "MCPCLIENT_TASKS_PYTHON"

#: Seconds to wait for the ``READY <url>`` line.
READY_TIMEOUT = 15.0
#: Seconds to wait for the server to exit after SIGTERM before SIGKILL.
STOP_TIMEOUT = 5.0
#: Bytes of stderr kept for error messages.
STDERR_TAIL = 4000


class TasksServerStartError(RuntimeError):
    """The tasks server died or did not print ``READY <url>`` in time."""


def tasks_python() -> Optional[str]:
    """The tasks venv's interpreter: ``$MCPCLIENT_TASKS_PYTHON``, else ``<repo>/.venv-tasks/bin/python``
    if it exists, else None."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        return configured
    default = REPO / ".venv-tasks" / "bin" / "python"
    return str(default) if default.exists() else None


def require_tasks_python() -> str:
    """The tasks interpreter; without one, skip the test, or fail it when ``$CI`` is set."""
    import pytest

    python = tasks_python()
    if python is None:
        why = f"no tasks venv: run tests/servers/setup-tasks-venv.sh or set ${ENV_VAR}"
        if os.environ.get("CI"):
            pytest.fail(why + " (required when $CI is set)", pytrace=False)
        pytest.skip(why)
    return python


def tasks_server_command(*flags: str) -> List[str]:
    """argv of the tasks server (stdio unless ``flags`` say otherwise); skips/fails like
    :func:`require_tasks_python` when there is no tasks venv."""
    return [require_tasks_python(), str(TASKS_SERVER), *flags]


def _drain(stream: IO[bytes], sink: List[bytes]) -> None:
    """Read ``stream`` to EOF, keeping only the last ``STDERR_TAIL`` bytes (so a chatty server never blocks)."""
    try:
        for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]
            sink.append(chunk)
            while len(sink) > 1 and sum(map(len, sink)) - len(sink[0]) >= STDERR_TAIL:
                del sink[0]
    except (OSError, ValueError):
        pass


def _read_line(proc: subprocess.Popen, timeout: float) -> Optional[str]:
    """The first stdout line of ``proc`` (decoded, stripped), or None on EOF / timeout."""
    box: List[bytes] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()),  # type: ignore[union-attr]
                              name="tasks-http-ready", daemon=True)
    reader.start()
    reader.join(timeout)
    if reader.is_alive() or not box or not box[0]:
        return None
    return box[0].decode("utf-8", "replace").strip()


def _stop(proc: subprocess.Popen) -> None:
    """Close stdin, SIGTERM the group, wait, SIGKILL the group, reap."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)  # start_new_session=True: the group id is the pid
        except ProcessLookupError:
            break
        try:
            proc.wait(STOP_TIMEOUT)
            break
        except subprocess.TimeoutExpired:
            continue
    proc.wait()  # reap (after SIGKILL this returns promptly)


@contextmanager
def tasks_http_server(*flags: str, ready_timeout: float = READY_TIMEOUT) -> Iterator[str]:
    """Start ``tasks_server.py --http [flags]``; yield its MCP endpoint url; stop and reap it.

    Skips/fails like :func:`require_tasks_python` when there is no tasks venv.
    """
    argv = tasks_server_command("--http", *flags)
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    stderr_tail: List[bytes] = []
    drainer = threading.Thread(target=_drain, args=(proc.stderr, stderr_tail),
                               name="tasks-http-stderr", daemon=True)
    drainer.start()
    try:
        started = time.monotonic()
        line = _read_line(proc, ready_timeout)
        if line is None or not line.startswith("READY "):
            if line is None and proc.poll() is None:
                what = f"did not print READY within {ready_timeout:g} s"
            elif line is None:
                proc.wait()
                what = f"exited with status {proc.returncode} before READY"
            else:
                what = f"printed {line!r} instead of READY <url>"
            _stop(proc)
            drainer.join(1.0)
            tail = b"".join(stderr_tail).decode("utf-8", "replace").strip()
            raise TasksServerStartError(
                f"{' '.join(argv)} {what} (after {time.monotonic() - started:.1f} s); "
                f"stderr tail:\n{tail or '(empty)'}"
            )
        yield line[len("READY "):].strip()
    finally:
        _stop(proc)
        for stream in (proc.stdout, proc.stderr):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass
        drainer.join(1.0)
