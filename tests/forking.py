"""Fork scenarios run in a script of their own: ``run(SCRIPT, *args)`` runs ``PRELUDE`` + the
script in a fresh interpreter and returns the JSON it reports. The prelude gives the script
``in_child(fn)`` (fork, run ``fn`` in the child, get its result back through a pipe) and
``report(**fields)``, so a failure can never leave a forked pytest worker behind.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any, Dict


PRELUDE = """
    import json, os, sys, threading, time
    from mcpclient import Client, ForkedClientError, Handlers, Reconnect, Tasks
    from mcpclient.testing import server_command

    def report(**fields):
        print(json.dumps(fields), flush=True)

    def in_child(body):
        '''Fork; run body() in the child, send its result back; return the result.'''
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                out = body()
            except BaseException as exc:
                out = {"error": repr(exc)}
            os.write(w, json.dumps(out).encode())
            os._exit(0)
        os.close(w)
        chunks = []
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(r)
        os.waitpid(pid, 0)
        return json.loads(b"".join(chunks) or b"null")
"""


def run(script: str, *args: str, timeout: float = 60) -> Dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(PRELUDE) + textwrap.dedent(script), *args],
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, proc.stdout + proc.stderr
    return json.loads(lines[-1])  # type: ignore[no-any-return]
