"""Fixtures of the deployment tests: the servers the example apps talk to.

- ``mcp_http_url`` (per module): a Streamable HTTP MCP server (the official SDK's contract server,
  ``tests/http_servers.py``) on 127.0.0.1, or None where the ``mcp`` package is not installed
  (Python 3.9): the apps then leave out their HTTP client.
- ``redis_url`` (per module): a throwaway ``redis-server`` on a free loopback port, no persistence.

Process helpers are in ``_procs.py``.
"""
from __future__ import annotations

import os
import shutil
import socket
import sys
from typing import Iterator, Optional

import pytest

from ._procs import Spawned, free_port, wait_until

if not sys.platform.startswith("linux"):
    # They fork, and follow processes through /proc (as the leak guard does): Linux only.
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(scope="module")
def mcp_http_url() -> Iterator[Optional[str]]:
    """A Streamable HTTP MCP server's endpoint on 127.0.0.1, or None without the ``mcp`` package."""
    from conftest import HAVE_OFFICIAL_SDK  # tests/conftest.py

    if not HAVE_OFFICIAL_SDK:
        yield None
        return
    from http_servers import official_http_server

    with official_http_server("--http") as url:
        yield url


def _redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis://127.0.0.1:PORT/0`` of a fresh ``redis-server`` (no RDB, no AOF), stopped after.

    Skipped (with the reason) only when ``redis-server`` is not installed and this is not CI
    (``CI`` set): ``.ci/run`` installs it, so under CI a missing server fails the test instead.
    Skipped too without the ``redis`` package (the test extra has it; an unpacked sdist may not).
    """
    pytest.importorskip("redis", reason="the redis package comes with the test extra")
    if shutil.which("redis-server") is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed (CI must have it: .ci/run installs it)")
        pytest.skip("redis-server is not installed (apt-get install redis-server); CI runs this test")
    workdir = tmp_path_factory.mktemp("redis")
    server: Optional[Spawned] = None
    try:
        for attempt in range(5):  # a port free a moment ago may be taken before redis binds it
            port = free_port()
            candidate = Spawned(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no", "--dir", str(workdir)], workdir / f"redis-{attempt}.log")
            server = candidate
            wait_until(lambda: candidate.proc.poll() is not None or _redis_ping(port))
            if candidate.proc.poll() is None and _redis_ping(port):
                break
            candidate.stop()
            server = None
        if server is None:
            pytest.fail("redis-server did not start on a free loopback port in 5 attempts")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        if server is not None:
            server.stop()
