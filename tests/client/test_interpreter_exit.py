"""Interpreter exit and Ctrl-C, each in a child interpreter (like CPython's ``assert_python_ok``).

A script that forgets ``close()`` must still exit promptly and leave no server behind (the stdio
transport's ``weakref.finalize`` SIGKILLs the server's process group at exit), and Ctrl-C during a
blocking call must reach the main thread as ``KeyboardInterrupt``.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import List, Sequence, Tuple

import pytest

from conftest import faulty, pid_alive, server_script, wait_until
from reaping import kill_hard, reaper  # noqa: F401  (fixtures: reaper)


pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc"),
]


#: How long a script may take, start to exit (the brief: within 10 s).
EXIT_LIMIT = 10.0


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_script(script: str, *args: str, sigint_ignored: bool = False) -> Tuple[subprocess.CompletedProcess, float]:
    """Run ``script`` in a child interpreter; ``sigint_ignored``: it starts with SIGINT ignored, as
    under a CI job run in the background."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True,
                          text=True, timeout=EXIT_LIMIT * 3, stdin=subprocess.DEVNULL,
                          preexec_fn=_ignore_sigint if sigint_ignored else None)
    return proc, time.monotonic() - started


def reported_pids(proc: subprocess.CompletedProcess, tag: str = "PIDS") -> List[int]:
    for line in proc.stdout.splitlines():
        if line.startswith(tag + " "):
            return [int(word) for word in line.split()[1:]]
    raise AssertionError(f"the script printed no {tag} line:\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")


def kill_leftovers(pids: Sequence[int]) -> None:
    """Clean up after a failed check, so one failure does not leave servers running."""
    for pid in pids:
        if pid_alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


FORGOTTEN_TESTING_CLIENT = """
    from mcpclient import Client
    from mcpclient.testing import server_command

    client = Client(server_command(), timeout=10).connect()
    assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    print("PIDS", client.transport.pid, flush=True)
    # no close(): the interpreter exits with the client (and its threads) still open
"""


def test_forgotten_client_does_not_block_exit_or_leave_the_server():
    proc, elapsed = run_script(FORGOTTEN_TESTING_CLIENT)
    pids = reported_pids(proc)
    try:
        assert proc.returncode == 0, proc.stderr
        assert elapsed < EXIT_LIMIT
        assert wait_until(lambda: not any(pid_alive(pid) for pid in pids)), f"still running: {pids}"
    finally:
        kill_leftovers(pids)


FORGOTTEN_STUBBORN_CLIENT = """
    import sys
    import threading

    from mcpclient import Client, StdioTransport

    seen = threading.Event()
    grandchild = []

    def on_stderr(line):
        if line.startswith("grandchild="):
            grandchild.append(int(line.split("=", 1)[1]))
            seen.set()

    client = Client(StdioTransport(sys.argv[1:], stderr=on_stderr), timeout=10).connect()
    assert seen.wait(10), "the server never reported its grandchild"
    assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    print("PIDS", client.transport.pid, grandchild[0], flush=True)
    # no close(): this server ignores stdin EOF and SIGTERM, so only the finalizer's SIGKILL helps
"""


def test_forgotten_client_of_a_sigterm_ignoring_server_kills_its_whole_group():
    proc, elapsed = run_script(FORGOTTEN_STUBBORN_CLIENT, *faulty("ignore-sigterm"))
    pids = reported_pids(proc)
    try:
        assert len(pids) == 2  # the server and its grandchild
        assert proc.returncode == 0, proc.stderr
        assert elapsed < EXIT_LIMIT
        assert wait_until(lambda: not any(pid_alive(pid) for pid in pids)), f"still running: {pids}"
    finally:
        kill_leftovers(pids)


#: First lines of every Ctrl-C script: a child started with SIGINT ignored (a CI job run in the
#: background: ``cmd &`` sets SIG_IGN, and exec keeps it) would never see the signal it sends itself.
RESTORE_SIGINT = """
    import signal
    signal.signal(signal.SIGINT, signal.default_int_handler)
"""


CTRL_C_DURING_CALL = RESTORE_SIGINT + """
    import os
    import sys
    import threading

    from mcpclient import Client

    timeout = None if sys.argv[1] == "none" else float(sys.argv[1])
    client = Client(sys.argv[2:], timeout=timeout).connect()
    print("PIDS", client.transport.pid, flush=True)
    try:
        # started inside the try: wherever the signal lands, it lands in here
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
        client.call_tool("echo", {"text": "never answered"})
        print("returned", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    client.close()
    print("closed", flush=True)
"""


@pytest.mark.parametrize("timeout", ["none", "30"])
def test_ctrl_c_during_a_blocking_call_raises_keyboard_interrupt(timeout):
    proc, elapsed = run_script(CTRL_C_DURING_CALL, timeout, *faulty("no-reply"))
    pids = reported_pids(proc)
    try:
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[1:] == ["interrupted", "closed"], proc.stdout
        assert elapsed < EXIT_LIMIT
        assert "Traceback" not in proc.stderr, proc.stderr
        assert wait_until(lambda: not any(pid_alive(pid) for pid in pids)), f"still running: {pids}"
    finally:
        kill_leftovers(pids)


def test_ctrl_c_scripts_work_when_started_with_sigint_ignored():
    """Run from a background job (SIGINT ignored, inherited), the Ctrl-C scripts never
    got their KeyboardInterrupt and failed; they restore the default handler first."""
    proc, elapsed = run_script(CTRL_C_DURING_CALL, "5", *faulty("no-reply"), sigint_ignored=True)
    pids = reported_pids(proc)
    try:
        assert proc.stdout.splitlines()[1:] == ["interrupted", "closed"], proc.stdout + proc.stderr
        assert proc.returncode == 0, proc.stderr
    finally:
        kill_leftovers(pids)


CTRL_C_THEN_CARRY_ON = RESTORE_SIGINT + """
    import os
    import sys
    import threading

    from mcpclient import Client, StdioTransport

    cancelled = threading.Event()

    def on_stderr(line):
        if line.startswith("cancelled="):
            cancelled.set()

    client = Client(StdioTransport(sys.argv[1:], stderr=on_stderr), timeout=None).connect()
    print("PIDS", client.transport.pid, flush=True)
    try:
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
        client.call_tool("echo", {"text": "never answered"})
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    # the user carries on with the same client: the abandoned call should be cancelled on the server
    print("cancelled" if cancelled.wait(3) else "still pending on the server", flush=True)
    client.close()
"""


def test_ctrl_c_during_a_blocking_call_cancels_the_request_on_the_server():
    """KeyboardInterrupt in a blocking call reaches the caller, and the abandoned request is
    cancelled on the server while the user carries on with the same client."""
    proc, elapsed = run_script(CTRL_C_THEN_CARRY_ON, *faulty("no-reply"))
    pids = reported_pids(proc)
    try:
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[1:] == ["interrupted", "cancelled"], proc.stdout
    finally:
        kill_leftovers(pids)


ROOT = Path(__file__).resolve().parents[2]


MUTE = server_script("answers_only_ping")  # answers initialize and ping only


# ---------------------------------------------------------------- a forgotten client with a pending future

FORGOTTEN_PENDING_FUTURE = """
    import sys
    from mcpclient import Client, StdioTransport

    client = Client(StdioTransport([sys.executable, sys.argv[1]])).connect()
    future = client.request_future("tools/list", timeout=None)  # the server never answers
    print("PID", client.transport.pid, flush=True)
    # no close(): the main thread returns with the call pending
"""


@pytest.mark.timeout(20)
def test_forgotten_client_with_a_pending_future_does_not_block_exit(reaper):
    started = time.monotonic()
    script = subprocess.Popen([sys.executable, "-c", textwrap.dedent(FORGOTTEN_PENDING_FUTURE), MUTE[1]],
                              cwd=str(ROOT), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = script.communicate(timeout=5.0)
        exited = True
    except subprocess.TimeoutExpired:
        kill_hard(script.pid)
        out, err = script.communicate()
        exited = False
    elapsed = time.monotonic() - started
    server = [int(line.split()[1]) for line in out.splitlines() if line.startswith("PID ")]
    assert server, f"the script printed no PID line:\nstdout:\n{out}\nstderr:\n{err}"
    reaper.track(server[0], MUTE[1])
    assert exited, "the interpreter did not exit within 5 s with a list_tools_future(timeout=None) pending"
    assert script.returncode == 0, err
    assert elapsed < 5.0
    assert wait_until(lambda: not pid_alive(server[0]), 5.0), f"server {server[0]} outlived the script"
