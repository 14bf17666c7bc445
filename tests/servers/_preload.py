"""Test servers on the official SDK, started in milliseconds: a process that imported the SDK once
forks a copy of itself for each server (stdio, Streamable HTTP, HTTP+SSE) the tests start.

Importing the official ``mcp`` package costs about a second of CPU (it builds ~550 pydantic
models), and the suite starts a stdio server on it about a hundred times. When a
*preloaded* process is about (``python tests/servers/_preload.py SOCKET``, one per pytest worker:
``tests/conftest.py``; its socket in ``MCPCLIENT_TEST_PRELOAD`` or in the ``REGISTRY`` file of an
ancestor process), a server script that calls ``hand_over()`` first thing becomes a small stand-in:

- it passes its stdin, stdout and stderr, argv, environment and working directory to the preloaded
  process, which forks; the fork runs the script as ``__main__`` on those very pipes, so the
  client talks to the real SDK server over its own pipes, as before;
- the stand-in stays the process the client started (its pid, its command line, its session):
  SIGTERM, SIGINT and SIGHUP sent to it are passed on to the server, and it exits as the server
  exited (the same code, or killed by the same signal);
- if the stand-in dies (SIGKILL, or its process group killed), the server exits at once: it
  watches the stand-in's socket for EOF.

SIGSTOP cannot be passed on: a test that freezes a server starts it with ``NO_PRELOAD`` set in
its environment (``http_servers.official_http_server(..., preload=False)``), and it starts the
usual way, as does anything the preloaded process cannot serve (another interpreter: the tasks venv).
"""
from __future__ import annotations

import json
import os
import signal
import socket
import sys
from types import ModuleType
from typing import Any, Dict, List, Optional, Tuple

ENV = "MCPCLIENT_TEST_PRELOAD"
#: Set (to anything) in a server's environment: it serves by itself (a test will freeze it).
NO_PRELOAD = "MCPCLIENT_TEST_NO_PRELOAD"
#: Where a pytest worker names its preloaded process's socket, in a file named after its pid: the
#: stdio transport passes servers only a few environment variables, so a stand-in looks for the
#: file of its nearest ancestor that has one (its client's process, or the worker above it).
REGISTRY = "/tmp/mcpclient-preload"
#: The server scripts the preloaded process imports (building their servers once); a fork calls
#: the script's ``main()``. Any other script that hands over is run whole in the fork.
SCRIPTS = ("official_server.py", "official_verbose.py", "official_without_subscriptions.py",
           "official_file_reader.py", "nested_arguments.py")
#: Modules their runs import later (stdio, and HTTP under uvicorn), imported once too.
PRELOAD = ("mcp.server.stdio", "anyio._backends._asyncio", "uvicorn", "uvicorn.server", "uvicorn.config",
           "uvicorn.lifespan.on", "uvicorn.loops.auto", "uvicorn.loops.asyncio", "uvicorn.protocols.http.auto",
           "uvicorn.protocols.http.h11_impl", "uvicorn.protocols.http.httptools_impl",
           "uvicorn.protocols.websockets.auto", "mcp.server.streamable_http_manager", "mcp.server.sse")
_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: True in a fork that serves: the script it runs must not hand over again.
_serving = False


# ------------------------------------------------------------------------- the stand-in


def _ancestors_socket() -> Optional[str]:
    """The socket named by the registry file of this process's nearest ancestor that has one."""
    pid = os.getppid()
    for _ in range(16):
        if pid <= 1:
            return None
        entry = os.path.join(REGISTRY, str(pid))
        try:
            if os.stat(entry).st_uid == os.getuid():
                with open(entry) as f:
                    return f.read().strip() or None
        except OSError:
            pass
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
    return None


def hand_over() -> None:
    """Let a fork of the preloaded process serve this run, then exit as it did; returns
    (nothing done) when there is none to ask, or it refuses: the script then serves by itself."""
    if _serving or os.environ.get(NO_PRELOAD):
        return
    path = os.environ.get(ENV) or _ancestors_socket()
    if not path:
        return
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        env = {k: v for k, v in os.environ.items() if k != ENV}
        header = json.dumps({"python": sys.executable, "script": os.path.abspath(sys.argv[0]), "argv": sys.argv[1:],
                             "env": env, "cwd": os.getcwd()}).encode()
        socket.send_fds(sock, [len(header).to_bytes(4, "big") + header], [0, 1, 2])
        reply = sock.makefile("rb")
        first = reply.readline().split()
    except OSError:
        sock.close()
        return
    if len(first) != 2 or first[0] != b"PID":
        sock.close()
        return  # refused (another interpreter): serve here
    child = int(first[1])

    def forward(signum: int, _frame: Any) -> None:
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    null = os.open(os.devnull, os.O_RDWR)  # the server alone holds the pipes now: its exit is their EOF
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    while True:
        try:
            line = reply.readline().split()
            break
        except InterruptedError:
            continue
    code = int(line[1]) if len(line) == 2 and line[0] == b"EXIT" else 1
    if code < 0:  # killed by a signal: so is the stand-in
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


# ------------------------------------------------------------------------- the preloaded process


class _Fork(Exception):
    """Raised in a fresh fork: unwinds the serving loop, so the script runs at the top level."""

    def __init__(self, request: Dict[str, Any], conn: socket.socket) -> None:
        self.request, self.conn = request, conn


def _receive(conn: socket.socket) -> Tuple[Dict[str, Any], List[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    size = int.from_bytes(data[:4], "big")
    while len(data) < 4 + size:
        more = conn.recv(1 << 20)
        if not more:
            raise ConnectionError("the stand-in went away")
        data += more
    return json.loads(data[4:4 + size]), fds


def _serve(path: str) -> None:
    """Accept stand-ins until SIGTERM; fork for each; tell each stand-in its server's exit."""
    import selectors
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # (the wakeup fd does the work)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    children: Dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    print("READY", flush=True)
    while not stop:
        for key, _ in selector.select():
            if key.fileobj is listener:
                conn, _ = listener.accept()
                try:
                    request, fds = _receive(conn)
                except (OSError, ValueError):
                    conn.close()
                    continue
                if request.get("python") != sys.executable or len(fds) != 3:
                    conn.sendall(b"NO\n")
                    conn.close()
                    for fd in fds:
                        os.close(fd)
                    continue
                pid = os.fork()
                if pid == 0:  # the server: leave everything of the preloaded process behind
                    signal.set_wakeup_fd(-1)
                    for signum in (signal.SIGCHLD, signal.SIGTERM):
                        signal.signal(signum, signal.SIG_DFL)
                    selector.close()
                    listener.close()
                    for other in children.values():
                        other.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    for target, fd in enumerate(fds):
                        os.dup2(fd, target)
                        os.close(fd)
                    raise _Fork(request, conn)
                for fd in fds:
                    os.close(fd)
                children[pid] = conn
                try:
                    conn.sendall(b"PID %d\n" % pid)
                except OSError:
                    pass
            else:
                try:
                    os.read(wake_r, 4096)
                except BlockingIOError:
                    pass
                _reap(children)
    selector.close()
    listener.close()


def _reap(children: Dict[int, socket.socket]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(b"EXIT %d\n" % os.waitstatus_to_exitcode(status))
            except OSError:
                pass  # the stand-in is gone (killed): nobody to tell
            conn.close()


def _run(request: Dict[str, Any], conn: socket.socket, scripts: Dict[str, ModuleType]) -> None:
    """In the fork: become the script's process (its argv, environment, directory) and run it."""
    import runpy
    import threading

    def watch() -> None:  # the stand-in gone (killed): end at once, as its child would have
        try:
            while conn.recv(4096):
                pass
        except OSError:
            pass
        os._exit(137)

    threading.Thread(target=watch, name="preload-watch", daemon=True).start()
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    script = request["script"]
    sys.argv = [script, *request["argv"]]
    sys.path[0] = os.path.dirname(script)
    module = scripts.get(script)
    if module is not None:
        module.main()
    else:
        runpy.run_path(script, run_name="__main__")


def _preload() -> Dict[str, ModuleType]:
    """Import the server scripts (each builds its server) and what serving them imports later."""
    import importlib.util

    global _serving
    _serving = True  # (the scripts' own hand_over() must not ask this process)
    sys.modules["_preload"] = sys.modules[__name__]
    here = os.path.dirname(os.path.abspath(__file__))
    scripts = {}
    for name in SCRIPTS:
        path = os.path.join(here, name)
        spec = importlib.util.spec_from_file_location(f"preloaded_{name[:-3]}", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # (pydantic resolves the annotations there)
        try:
            spec.loader.exec_module(module)
        except Exception:  # (served the usual way then: run whole in the fork)
            del sys.modules[spec.name]
            continue
        scripts[path] = module  # (each has a main(): the fork calls it)
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    return scripts


def main(argv: Optional[List[str]] = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python tests/servers/_preload.py SOCKET")
    scripts = _preload()
    import gc

    gc.freeze()  # what the forks inherit stays out of their collections (fewer pages copied)
    try:
        _serve(args[0])
    except _Fork as fork:
        _run(fork.request, fork.conn, scripts)


if __name__ == "__main__":
    main()
