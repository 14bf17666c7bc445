"""What the stdio transport does differently on Windows: ``kill_tree`` stands in for signalling
a process group, which Windows does not have."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

__all__ = ["kill_tree"]


def kill_tree(proc: "subprocess.Popen[bytes]", timeout: float) -> None:
    """Kill the child and every process it started (``taskkill /T /F``, waiting at most
    ``timeout`` for it), so no grandchild keeps our pipes open; if taskkill is missing, fails
    or is too slow, the child alone is killed."""
    import subprocess  # deferred, as in stdio: only stopping a child needs it

    system = os.environ.get("SYSTEMROOT", r"C:\Windows")
    try:
        done = subprocess.run(
            [os.path.join(system, "System32", "taskkill.exe"), "/T", "/F", "/PID", str(proc.pid)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            timeout=max(0.1, timeout), creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
        if done.returncode == 0:
            return
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        proc.kill()
    except OSError:  # gone already
        pass
