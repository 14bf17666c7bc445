"""The notebook example (examples/notebook.py) run the way a kernel runs it: cell by cell in one
namespace, the cell that makes the session's client run twice (a re-run must close the first
client: the leak guard sees any server or thread left), then as a plain script. The script
examples that need only the bundled server (quickstart, many_threads, progress_and_timeouts,
many_servers) run as a user runs them, and say what they should.

The framework examples run under their real servers: test_contrib_django.py (django_project:
gunicorn, runserver, manage.py, a Celery worker), test_contrib_flask.py (flask_app.py under
gunicorn, flask mcp), test_contrib_celery.py (celery_tasks.py: prefork and threads workers).
"""
from __future__ import annotations

import re
import subprocess
from typing import Any, Dict, List

import pytest

from mcpclient import Client

from ._procs import EXAMPLES, PY, env_with, pid_alive

NOTEBOOK = EXAMPLES / "notebook.py"


def _cells() -> List[str]:
    source = NOTEBOOK.read_text()
    cells = source.split("\n# %%")[1:]  # the docstring before the first cell is not a cell
    return ["# %%" + cell for cell in cells]


@pytest.mark.timeout(60)
def test_notebook_cells_with_a_rerun_leave_nothing_running(capsys):
    cells = _cells()
    assert len(cells) == 5, [cell.splitlines()[0] for cell in cells]
    namespace: Dict[str, Any] = {"__name__": "__notebook__"}
    order = [0, 1, 2, 1, 2, 3, 4]  # the session cell (1) run again, as people do
    clients = []
    for index in order:
        exec(compile(cells[index], f"{NOTEBOOK}[cell {index}]", "exec"), namespace)
        if index == 1:
            clients.append(namespace["mcp_client"])
    first, second = clients
    assert isinstance(first, Client) and first is not second
    assert first.state == "closed" and not pid_alive(first.transport.pid or 0), "the re-run left the first client open"
    assert second.state == "closed"
    out = capsys.readouterr().out
    assert "tools: echo, add, slow" in out
    assert out.count("2 + 3 = 5") == 2
    assert "doubles: [0, 2, 4, 6, 8]" in out


@pytest.mark.timeout(60)
def test_notebook_example_runs_as_a_script():
    run = subprocess.run([PY, str(NOTEBOOK)], env=env_with(), capture_output=True, text=True, timeout=40)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[1:] == ["connected to mcpclient-testing", "2 + 3 = 5", "doubles: [0, 2, 4, 6, 8]"]


#: Lines each script example prints (regular expressions, each matching a whole line).
SCRIPTS = {
    "quickstart.py": [r"connected to mcpclient-testing \S+ \(protocol [\d-]+\)", r"\{'sum': 5\}"],
    "many_threads.py": [r"200 calls from 16 threads over one connection: all answered correctly",
                        r"\[0, 2, 4, 6, 8\]"],
    "progress_and_timeouts.py": [r"  step 5: 5/5", r"done after 5 steps", r"timed out as expected: .*",
                                 r"cancelled: True"],
    "many_servers.py": [r"broken +failed .*", r'\{"sum": 3\}', r"hi", r"\['alpha_add', 'beta_add'\]"],
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("example", sorted(SCRIPTS))
def test_a_script_example_runs_against_the_bundled_server(example):
    run = subprocess.run([PY, str(EXAMPLES / example)], env=env_with(), capture_output=True, text=True, timeout=40)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    missing = [want for want in SCRIPTS[example] if not any(re.fullmatch(want, line) for line in lines)]
    assert missing == [], run.stdout
