"""The examples (``examples/``) pass ``mypy --strict`` and ``pyright`` in strict mode against this
checkout's sources: what the README shows type-checks as written. The configurations beside this
file say what they relax, and why (Celery and Django ship no type hints).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]
TYPECHECK = Path(__file__).resolve().parent

#: What the examples import besides mcpclient: without one of them the check cannot run (the
#: test extra installs them where they support the interpreter).
THIRD_PARTY = ("openai", "anthropic", "langchain_core", "flask", "django", "celery")


def _needs_the_examples_imports():
    for module in THIRD_PARTY:
        pytest.importorskip(module, reason=f"the examples import {module} (the test extra, where it supports this Python)")


def _errors(output: str) -> list:
    return [line for line in output.splitlines() if "error" in line and "examples" in line]


@pytest.mark.timeout(180)
def test_the_examples_pass_mypy_strict(tmp_path):
    pytest.importorskip("mypy", reason="mypy comes with the test extra")
    _needs_the_examples_imports()
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(TYPECHECK / "mypy-examples.ini"),
         "--cache-dir", str(tmp_path / "mypy-cache"), "--no-error-summary", "examples"],
        capture_output=True, text=True, cwd=str(ROOT), env=dict(os.environ, MYPYPATH=str(ROOT)), timeout=170)
    assert run.returncode == 0 and _errors(run.stdout) == [], run.stdout + run.stderr


@pytest.mark.timeout(300)
def test_the_examples_pass_pyright_strict():
    pytest.importorskip("pyright", reason="pyright comes with the test extra")
    _needs_the_examples_imports()
    run = subprocess.run(
        [sys.executable, "-m", "pyright", "-p", str(TYPECHECK / "pyrightconfig.json"), "--pythonpath", sys.executable],
        capture_output=True, text=True, cwd=str(ROOT), timeout=290)
    assert run.returncode == 0 and "0 errors" in run.stdout, run.stdout + run.stderr
    assert _errors(run.stdout) == [], run.stdout
