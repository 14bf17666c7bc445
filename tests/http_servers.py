"""Run the official-SDK contract server (tests/servers/official_server.py) over HTTP for a test.

    with official_http_server("--http", "--json-response") as url:   # url = http://127.0.0.1:PORT/mcp
        ...

Flags (see the server's docstring): ``--http [--json-response] [--stateless]`` (Streamable HTTP,
url ends in ``/mcp``) or ``--sse`` (legacy HTTP+SSE, url ends in ``/sse``).

The server prints ``READY <url>`` once it is serving. It exits when its stdin closes, so it dies
with the test process even if nothing gets to terminate it; the context manager closes stdin,
sends SIGTERM to its process group, waits, SIGKILLs if needed and reaps it, so the leak guard
(tests/conftest.py) sees no child left.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import IO, ContextManager, Dict, Iterator, List, Optional

OFFICIAL_SERVER = Path(__file__).resolve().parent / "servers" / "official_server.py"

#: Seconds to wait for the ``READY <url>`` line.
READY_TIMEOUT = 10.0
#: Seconds to wait for the server to exit after SIGTERM before SIGKILL.
STOP_TIMEOUT = 5.0
#: Bytes of stderr kept for error messages.
STDERR_TAIL = 4000


class ServerStartError(RuntimeError):
    """The server died or did not print ``READY <url>`` in time."""


def _drain(stream: IO[bytes], sink: List[bytes]) -> None:
    """Read ``stream`` to EOF, keeping only the last ``STDERR_TAIL`` bytes (so a chatty server never blocks)."""
    try:
        for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]
            sink.append(chunk)
            while len(sink) > 1 and sum(map(len, sink)) - len(sink[0]) >= STDERR_TAIL:
                del sink[0]
    except (OSError, ValueError):
        pass


def _read_ready(proc: subprocess.Popen, timeout: float) -> Optional[str]:
    """The first stdout line of ``proc`` (decoded, stripped), or None on EOF / timeout."""
    box: List[bytes] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()),  # type: ignore[union-attr]
                              name="test-http-ready", daemon=True)
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
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT), (signal.SIGKILL, STOP_TIMEOUT)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)  # start_new_session=True: the group id is the pid
        except ProcessLookupError:
            break
        try:
            proc.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue
    proc.wait()  # reap (after SIGKILL this returns promptly)


@contextmanager
def http_server(argv: List[str], ready_timeout: float = READY_TIMEOUT,
                env: Optional[Dict[str, str]] = None) -> Iterator[str]:
    """Start a test server that prints ``READY <url>`` (``argv``); yield the url; stop and reap it."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, env=env)
    stderr_tail: List[bytes] = []
    drainer = threading.Thread(target=_drain, args=(proc.stderr, stderr_tail), name="test-http-stderr", daemon=True)
    drainer.start()
    try:
        started = time.monotonic()
        line = _read_ready(proc, ready_timeout)
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
            raise ServerStartError(
                f"{' '.join(argv[1:])} {what} (after {time.monotonic() - started:.1f} s); "
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


def official_http_server(*flags: str, ready_timeout: float = READY_TIMEOUT, preload: bool = True) -> "ContextManager[str]":
    """Start the official contract server with ``flags``; yield its MCP endpoint url; stop and reap it.
    ``preload=False``: the server is the process started (not a fork of the worker's preloaded
    process, tests/servers/_preload.py), for a test that freezes it with SIGSTOP."""
    env = None if preload else dict(os.environ, MCPCLIENT_TEST_NO_PRELOAD="1")
    return http_server([sys.executable, str(OFFICIAL_SERVER), *flags], ready_timeout, env=env)
