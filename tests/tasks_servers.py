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
from pathlib import Path
from typing import ContextManager, List, Optional

from http_servers import http_server  # the same start/READY/stop/reap as the official server

REPO = Path(__file__).resolve().parent.parent
TASKS_SERVER = REPO / "tests" / "servers" / "tasks_server.py"
SETUP_SCRIPT = REPO / "tests" / "servers" / "setup-tasks-venv.sh"
#: Environment variable naming the tasks venv's interpreter (overrides ``.venv-tasks``).
ENV_VAR = "MCPCLIENT_TASKS_PYTHON"

#: Seconds to wait for the ``READY <url>`` line (the mcp 1.x server starts slowly).
READY_TIMEOUT = 15.0


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


def tasks_http_server(*flags: str, ready_timeout: float = READY_TIMEOUT) -> "ContextManager[str]":
    """Start ``tasks_server.py --http [flags]``; yield its MCP endpoint url; stop and reap it.

    Skips/fails like :func:`require_tasks_python` when there is no tasks venv.
    """
    return http_server(tasks_server_command("--http", *flags), ready_timeout)
