"""Shared fixtures: the leak guard every test runs under, and server commands.

The leak guard fails any test that leaves an ``mcpclient-*`` thread or a child process alive:
threads are given ``LONG`` seconds to finish (close() joins them, so they should already be gone).
"""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, List, Set, TypeVar

import pytest

# The suite starts hundreds of Python processes (test servers, CLIs, workers): with bytecode
# writing off (PYTHONDONTWRITEBYTECODE, as some CI images set it) each of them compiled the package
# from source again, and each pytest worker re-ran the assertion rewriting of every test module.
# The caches go to __pycache__ folders that git and the sdist leave out.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

from mcpclient.testing import server_command  # noqa: E402

def _pace() -> float:
    """How much slower than the machine the waits below were set on this one runs Python (1 to
    2): a fixed pure-Python loop, timed once by the first process (the pytest controller, before
    its workers start) and handed to the workers in ``MCPCLIENT_TEST_PACE`` (set it to choose)."""
    given = os.environ.get("MCPCLIENT_TEST_PACE")
    if given:
        return float(given)
    best = float("inf")
    for _ in range(3):
        started, total = time.perf_counter(), 0
        for i in range(200_000):
            total += i
        best = min(best, time.perf_counter() - started)
    pace = min(2.0, max(1.0, best / 0.006))  # (0.006 s: that machine's time for the loop)
    os.environ["MCPCLIENT_TEST_PACE"] = f"{pace:.2f}"
    return pace


#: How much slower this machine is than the one the waits were set on (see ``_pace``).
PACE = _pace()
#: A wait for something that should happen; generous, so a loaded or slower CI machine does
#: not flake (10 s, times ``PACE``).
LONG = 10.0 * PACE
#: A wait for something that should NOT happen (kept short; only used for negative checks).
SHORT = 0.2

#: The checkout (or unpacked sdist), tests/ in it, and the test servers.
ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
SERVERS = Path(__file__).parent / "servers"
OFFICIAL_SERVER = [sys.executable, str(SERVERS / "official_server.py")]
FAULTY = [sys.executable, str(SERVERS / "faulty.py")]
TESTING_SERVER = server_command()

T = TypeVar("T")


def _official_sdk() -> bool:
    """Whether the official SDK 2.x (PyPI ``mcp``) is installed, read from its metadata: importing it
    costs a second of CPU, and every pytest worker collects every test module."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return int(version("mcp").split(".")[0]) >= 2
    except (PackageNotFoundError, ValueError):
        return False


#: The official SDK's servers can run here (the test extra has it on Python 3.10+).
HAVE_OFFICIAL_SDK = _official_sdk()
NO_OFFICIAL_SDK = "the official `mcp` SDK 2.x (the test extra, Python 3.10+)"


def require_official_sdk() -> None:
    """Skip the test (or, at module level, the module) where the official SDK is not installed."""
    if not HAVE_OFFICIAL_SDK:
        pytest.skip(NO_OFFICIAL_SDK, allow_module_level=True)


@pytest.fixture
def started() -> Iterator[Callable[[T], T]]:
    """``started(server)``: returns ``server`` and calls its ``stop()`` when the test ends."""
    servers: List[Any] = []

    def keep(server: T) -> T:
        servers.append(server)
        return server

    yield keep
    for server in servers:
        server.stop()


def faulty(mode: str) -> List[str]:
    return FAULTY + [mode]


def server_script(name: str, *args: str) -> List[str]:
    """``tests/servers/NAME.py`` (with ``args``) run with this interpreter."""
    return [sys.executable, str(SERVERS / f"{name}.py"), *args]


def child_pids() -> Set[int]:
    """Live (non-zombie) processes whose parent is this test process."""
    me = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[1] == me and fields[0] != "Z":
            found.add(int(entry))
    return found


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(predicate, timeout: float = LONG) -> bool:
    """Poll ``predicate`` until true; only for conditions no event can signal (process death)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def _mcpclient_threads() -> Set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("mcpclient-")}


@pytest.fixture(autouse=True)
def fresh_era_memory():
    """Each test starts without the era verdicts and discovery results earlier tests left in this
    process. They are keyed by URL, and a scripted server's free port may be one an earlier
    test's server of the other era had: a remembered "legacy" would make a 2026 test run its
    client in the handshake era (and the 2026 re-issue tests fail now and then)."""
    from mcpclient._client.connection import ERAS

    ERAS.clear()
    yield


@pytest.fixture(scope="session", autouse=True)
def preloaded_official_sdk() -> Iterator[None]:
    """One process per pytest worker that imported the official SDK, forked for each server on it
    the tests start, stdio, HTTP or SSE (tests/servers/_preload.py): each start costs milliseconds of CPU
    instead of a second. Without the SDK (Python 3.9) or off Linux, the servers start as usual."""
    import selectors
    import shutil
    import socket
    import subprocess
    import tempfile

    if not HAVE_OFFICIAL_SDK or not hasattr(socket, "send_fds") or not sys.platform.startswith("linux"):
        yield
        return
    folder = tempfile.mkdtemp(prefix="mcpclient-preload-")  # (short: a socket path has ~100 bytes)
    path = os.path.join(folder, "sdk")
    sys.path.insert(0, str(SERVERS))
    try:
        from _preload import REGISTRY
    finally:
        sys.path.remove(str(SERVERS))
    entry = os.path.join(REGISTRY, str(os.getpid()))
    proc = subprocess.Popen([sys.executable, str(SERVERS / "_preload.py"), path], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            ready = bool(selector.select(3 * LONG)) and proc.stdout.readline().strip() == b"READY"
        if ready:  # (the servers' environment is filtered: they find it by this process's pid)
            os.makedirs(REGISTRY, mode=0o700, exist_ok=True)
            with open(entry, "w") as f:
                f.write(path)
        yield
    finally:
        try:
            os.unlink(entry)
        except OSError:
            pass
        proc.terminate()
        try:
            proc.wait(LONG)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def leak_guard():
    threads_before = _mcpclient_threads()
    children_before = child_pids() if sys.platform.startswith("linux") else set()
    yield
    leaked = []
    # A client that outlives the test (a module-scoped fixture's) may grow its worker pool during
    # it: a reply that beats its caller to result() goes to a worker. Those threads are that
    # client's, stopped by its close(), not this test's.
    live = {t.name.split("-")[1] for t in threads_before}
    for t in _mcpclient_threads() - threads_before:
        if "-worker-" in t.name and t.name.split("-")[1] in live:
            continue
        t.join(LONG)
        if t.is_alive():
            leaked.append(t.name)
    assert not leaked, f"test leaked mcpclient threads: {sorted(leaked)}"
    if sys.platform.startswith("linux"):
        assert wait_until(lambda: not (child_pids() - children_before)), \
            f"test leaked child processes: {sorted(child_pids() - children_before)}"


@pytest.fixture
def certificate(tmp_path):
    """A self-signed certificate for 127.0.0.1: (certificate file, key file)."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True, timeout=60)
    return cert, key
