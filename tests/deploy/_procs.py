"""Process helpers of the deployment tests: spawning, stopping, and tracking processes via /proc.

- ``Spawned``: a process started in its own session with its output in a file; ``stop()`` sends
  SIGTERM, waits a bounded time, then SIGKILLs its whole group, and always reaps it.
- ``children_of(pid)``, ``descendants(pid)``, ``server_children(pid)`` (bundled test servers), ``pid_alive`` (a zombie
  counts as dead) and ``wait_until`` (polling with a deadline, only for what no event can signal:
  a process's death or a port opening).
- ``free_port()``: a loopback port to try (callers retry on collision).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import IO, Callable, Dict, List, Optional, Sequence, Tuple

from conftest import pid_alive, wait_until  # tests/conftest.py

__all__ = ["APPS", "EXAMPLES", "PY", "REPO", "SERVER_EXIT_WAIT", "Spawned", "all_dead", "children_of", "cmdline",
           "descendants", "env_with", "free_port", "pid_alive", "server_children", "still_alive", "wait_until"]

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
#: The deployment tests' own apps (the module-level client patterns, without ``mcpclient.contrib``).
APPS = Path(__file__).resolve().parent / "apps"
PY = sys.executable
#: Seconds a process gets to stop after SIGTERM before its group is SIGKILLed.
STOP_WAIT = 10.0
#: Seconds a server process gets to exit once every holder of its stdin is gone (EOF, then 1 s grace).
SERVER_EXIT_WAIT = 10.0


def free_port() -> int:
    """A loopback port that was free a moment ago (the caller retries if it is taken meanwhile)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cmdline(pid: int) -> str:
    """The process's argv joined by spaces ('' once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _parents() -> Dict[int, int]:
    """pid -> parent pid of every live (non-zombie) process."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            found[int(entry)] = int(fields[1])
    return found


def children_of(parent: int) -> List[int]:
    """Live (non-zombie) processes whose parent is ``parent``."""
    return [pid for pid, ppid in _parents().items() if ppid == parent]


def descendants(ancestor: int) -> List[int]:
    """Live processes below ``ancestor`` (children, their children, ...)."""
    parents = _parents()
    found: List[int] = []
    level = [ancestor]
    while level:
        level = [pid for pid, ppid in parents.items() if ppid in level]
        found.extend(level)
    return found


def server_children(parent: int) -> List[int]:
    """``parent``'s children that are bundled test servers (``python -m mcpclient.testing``)."""
    return [pid for pid in children_of(parent) if "mcpclient.testing" in cmdline(pid)]


def all_dead(pids: Sequence[int]) -> Callable[[], bool]:
    return lambda: not any(pid_alive(pid) for pid in pids)


def still_alive(pids: Sequence[int]) -> List[Tuple[int, str]]:
    """The live ones among ``pids``, with their command lines (for assertion messages)."""
    return [(pid, cmdline(pid)) for pid in pids if pid_alive(pid)]


def env_with(**extra: Optional[str]) -> Dict[str, str]:
    """This environment plus ``extra`` (None removes a variable), with this checkout importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


class Spawned:
    """A process in its own session, its stdout and stderr appended to ``log_path``."""

    def __init__(self, argv: Sequence[str], log_path: Path, env: Optional[Dict[str, str]] = None,
                 cwd: Optional[Path] = None, pass_fds: Tuple[int, ...] = ()) -> None:
        self.argv = list(argv)
        self.log_path = log_path
        self._log: IO[bytes] = open(log_path, "ab")
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                         stderr=subprocess.STDOUT, env=env, cwd=cwd, pass_fds=pass_fds,
                                         start_new_session=True)
        except BaseException:
            self._log.close()
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, size: int = 6000) -> str:
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return "(no log)"
        return data[-size:].decode("utf-8", "replace")

    def stop(self, sig: int = signal.SIGTERM, wait: float = STOP_WAIT) -> Optional[int]:
        """Send ``sig``, wait up to ``wait`` s, then SIGKILL the whole group; always reap.
        Returns the exit status, or None if it had to be killed."""
        status: Optional[int] = None
        try:
            if self.proc.poll() is None:
                try:
                    self.proc.send_signal(sig)
                    status = self.proc.wait(wait)
                except subprocess.TimeoutExpired:
                    status = None
            else:
                status = self.proc.returncode
        finally:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # stragglers of its group (workers)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            self._log.close()
        return status
