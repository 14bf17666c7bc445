"""A user program written as the README shows (``user_program.py`` beside this file) passes
``mypy --strict`` against this checkout's sources, and a wrong one fails it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]
TYPECHECK = Path(__file__).resolve().parent


#: Each line must fail mypy --strict: proof the check sees the real types (nothing became Any).
WRONG = textwrap.dedent("""\
    from mcpclient import ElicitationResult, TextContent, Tool
    TextContent(text=1)
    Tool(nme="echo")
    TextContent(text="x").text = "y"
    TextContent(text="x", type="image")
    ElicitationResult(action="accept").content["x"]
    from mcpclient.auth import ClientCredentials, JWTBearer, OAuth
    OAuth("client_credentials")
    ClientCredentials(client_id=1, client_secret="s")
    OAuth(JWTBearer("jwt"), dpop="yes")
""")


@pytest.mark.timeout(120)
def test_user_program_passes_mypy_strict(tmp_path):
    """mypy reads this checkout's package (MYPYPATH) and follows its imports silently (errors inside
    the package are not this test's business); site-packages are not searched: the user program
    needs nothing from them, and skipping them halves the time (about 1 s, on a cold cache)."""
    pytest.importorskip("mypy", reason="mypy comes with the test extra")
    wrong = tmp_path / "wrong_program.py"
    wrong.write_text(WRONG)
    env = dict(os.environ, MYPYPATH=str(ROOT))
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-site-packages",
         "--cache-dir", str(tmp_path / "mypy-cache"), "--no-error-summary", "--hide-error-context",
         str(TYPECHECK / "user_program.py"), str(wrong)],
        capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=110)
    elapsed = time.monotonic() - start
    lines = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert not [line for line in lines if "user_program.py" in line], run.stdout + run.stderr
    wrong_lines = sorted({int(line.split(":")[1]) for line in lines if "wrong_program.py" in line})
    assert wrong_lines == [2, 3, 4, 5, 6, 8, 9, 10], run.stdout + run.stderr
    assert run.returncode == 1 and not run.stderr.strip(), run.stderr
    print(f"mypy --strict took {elapsed:.1f} s")
