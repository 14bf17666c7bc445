"""Run fuzz cases through a real ``Client`` and check every exchange.

For every exchange (one client call answered by a scripted server):
  1. *typed*: the call returns, or raises an ``ALLOWED`` exception (``mcpclient.errors.MCPError``
     and its subclasses: ``RequestTimeout`` is the timeout); anything else is ``untyped``;
  2. *on time*: it ends within ``timeout + SLACK`` seconds (else ``late``);
  3. *bounded*: the process's peak RSS during the call (Linux ``VmHWM``, reset before each call)
     exceeds its RSS before the call by at most ``memory_bound`` (else ``memory``);
  4. *alive*: unless the case ended the stream on purpose, every vital ``mcpclient-<n>-*`` thread
     (reader, stderr, waiter, GET listener: ``VITAL_ROLES``) seen after connect is alive (else
     ``dead-thread``) and a follow-up ``ping`` on the same connection succeeds (else ``dead-connection``).
At every close (each batch of ``batch`` exchanges, and after a case that ended the stream):
  5. *no leak*: no ``mcpclient-<n>-*`` thread is left 5 s after ``close()``, the stdio server
     process is gone and reaped, and once the client is garbage-collected the process holds no
     more file descriptors than before (descriptors still open between ``close()`` and collection
     are counted as ``info:fds-held-until-gc``, not a violation).
"""
from __future__ import annotations

import gc
import inspect
import json
import logging
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Tuple

from mcpclient import Client, Handlers
from mcpclient.errors import MCPError
from mcpclient.transports import HTTPTransport, StdioTransport

ALLOWED: Tuple[type, ...] = (MCPError,)  # the only exceptions a call may raise
SLACK = 1.0  # seconds a call may run past its timeout (2 shared cores, many threads)
VITAL_ROLES = re.compile(r"-(reader|stderr|waiter|http-get|sse)$")
HERE = os.path.dirname(os.path.abspath(__file__))
PROTOCOL = "2025-11-25"
MiB = 1024 * 1024
FOLLOW_UP = 5.0  # the follow-up ping's timeout


class _FormatSink(logging.Handler):
    """Formats every record (so logging code paths run) and keeps none of it."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.format(record)
        except Exception:
            self.handleError(record)


CRASHES: List[Tuple[str, str]] = []  # (thread name, exception) of mcpclient threads that died of one


def _excepthook(args: Any) -> None:
    name = args.thread.name if args.thread is not None else "?"
    if name.startswith("mcpclient-"):
        CRASHES.append((name, f"{args.exc_type.__name__}: {str(args.exc_value)[:80]}"))
    elif _previous_hook is not None:
        _previous_hook(args)


_previous_hook: Optional[Callable[[Any], Any]] = None


def quiet_logging() -> Callable[[], None]:
    """Format-and-drop mcpclient's log records; count (not print) threads that die of an exception.
    Returns what puts both back as they were (the suite's later tests read mcpclient's records)."""
    global _previous_hook
    hook = threading.excepthook
    if hook is not _excepthook:
        _previous_hook = hook
        threading.excepthook = _excepthook
    logger = logging.getLogger("mcpclient")
    saved = (logger.handlers[:], logger.level, logger.propagate, logging.raiseExceptions)
    logger.handlers[:] = [_FormatSink()]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logging.raiseExceptions = False

    def restore() -> None:
        threading.excepthook = hook
        logger.handlers[:], level, logger.propagate, logging.raiseExceptions = saved
        logger.setLevel(level)

    return restore


# ------------------------------------------------------------------- process probes

def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def fd_targets() -> Dict[str, str]:
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return out


def process_gone(pid: int) -> bool:
    """No such process (a zombie, unreaped, still counts as there)."""
    return not os.path.exists(f"/proc/{pid}")


# ------------------------------------------------------------------- control channel

class Listener:
    """The harness end of a fuzz server's control connection."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.conn: Optional[socket.socket] = None
        self.file: Any = None

    def accept(self, timeout: float = 15.0) -> Dict[str, Any]:
        self.sock.settimeout(timeout)
        self.conn, _ = self.sock.accept()
        self.sock.close()
        self.conn.settimeout(30)
        self.file = self.conn.makefile("rwb")
        return self.recv()

    def recv(self) -> Dict[str, Any]:
        line = self.file.readline()
        if not line:
            raise ConnectionError("fuzz server control connection closed")
        return json.loads(line)  # type: ignore[no-any-return]

    def ask(self, obj: Dict[str, Any]) -> Dict[str, Any]:
        self.file.write(json.dumps(obj).encode() + b"\n")
        self.file.flush()
        return self.recv()

    def close(self) -> None:
        for thing in (self.file, self.conn, self.sock):
            try:
                if thing is not None:
                    thing.close()
            except OSError:
                pass


# ------------------------------------------------------------------- the client's side

def _sample(request: Any) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "s"}, "model": "m"}


def _elicit(request: Any) -> Any:
    from mcpclient import ElicitationResult
    return ElicitationResult.decline()


def do_call(client: Client, call: str, timeout: float) -> Any:
    """Make the case's client call (public API only)."""
    progress = lambda *a: None  # noqa: E731
    if call == "call_tool":
        return client.call_tool("fuzz", {"x": 1}, timeout=timeout, on_progress=progress)
    if call == "get_prompt":
        return client.get_prompt("p", {"a": "b"}, timeout=timeout)
    if call == "read_resource":
        return client.read_resource("test://r", timeout=timeout)
    if call == "complete":
        return client.complete({"type": "ref/prompt", "name": "p"}, "a", "b", timeout=timeout)
    return getattr(client, call)(timeout=timeout)


class Violation:
    def __init__(self, kind: str, detail: str, case: Dict[str, Any], history: List[Dict[str, Any]]) -> None:
        self.kind = kind
        self.detail = detail
        self.where = f"{case.get('family')}/{case.get('call')}"
        self.case = case
        self.history = history

    @property
    def key(self) -> str:
        return f"{self.kind}: {self.detail}"


class Connection:
    """One client connected to a fuzz server; the server for HTTP outlives it (``HTTPServer``)."""

    def __init__(self, transport: str, max_size: int, http: Optional["HTTPServer"] = None) -> None:
        self.transport = transport
        self.held_until_gc = 0
        self.fds_before = fd_count()
        self.fd_map = fd_targets()
        before = {t.name for t in threading.enumerate()}
        self.server_pid: Optional[int] = None
        if transport == "stdio":
            self.control = Listener()
            target: Any = StdioTransport([sys.executable, os.path.join(HERE, "stdio_server.py"), str(self.control.port)],
                                         max_message_size=max_size)
        else:
            assert http is not None
            self.control = http.control
            kwargs: Dict[str, Any] = {}
            if "max_message_size" in inspect.signature(HTTPTransport).parameters:
                kwargs["max_message_size"] = max_size
            target = HTTPTransport(f"http://127.0.0.1:{http.port}/mcp", **kwargs)
        self.notifications = 0
        self.client = Client(target, protocol=PROTOCOL, timeout=10.0, handlers=Handlers(sampling=_sample, elicitation=_elicit, roots=["file:///tmp"], on_notification=self._note, on_log=lambda *a: None))
        self.client.connect(timeout=15)
        if transport == "stdio":
            self.server_pid = self.control.accept()["pid"]
        else:
            self.control.ask({"op": "wait_get", "timeout": 5})
        self.client.ping(timeout=10)
        mine = [t for t in threading.enumerate() if t.name not in before and t.name.startswith("mcpclient-")]
        self.prefixes = {re.match(r"mcpclient-\d+-", t.name).group(0) for t in mine  # type: ignore[union-attr]
                         if re.match(r"mcpclient-\d+-", t.name)}
        self.vital = [t for t in mine if VITAL_ROLES.search(t.name)]

    def _note(self, method: str, params: Any) -> None:
        self.notifications += 1

    def dead_threads(self) -> List[str]:
        return [t.name for t in self.vital if not t.is_alive()]

    def close(self) -> List[str]:
        """Close; return what leaked."""
        try:
            self.client.close()
        except BaseException as exc:  # close() must not raise either
            return [f"close() raised {type(exc).__name__}: {exc}"]
        leaks: List[str] = []
        deadline = time.monotonic() + 5
        while True:
            left = [t.name for t in threading.enumerate()
                    if any(t.name.startswith(p) for p in self.prefixes) and t.is_alive()]
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        if left:
            leaks.append(f"threads left after close: {sorted(left)[:4]}")
        # What only collecting the client closes (the stdio control channel's own two sockets,
        # closed below, are not the client's)
        own = 2 if self.transport == "stdio" else 0
        self.held_until_gc = max(0, fd_count() - own - self.fds_before)
        self.client = None  # type: ignore[assignment]
        gc.collect()
        if self.transport == "stdio":
            self.control.close()
            while self.server_pid and not process_gone(self.server_pid) and time.monotonic() < deadline:
                time.sleep(0.02)
            if self.server_pid and not process_gone(self.server_pid):
                leaks.append("stdio server process left after close")
        deadline = min(deadline, time.monotonic() + 2)
        while fd_count() > self.fds_before and time.monotonic() < deadline:
            time.sleep(0.02)
        if fd_count() > self.fds_before:
            new = sorted(v.split(":")[0] for k, v in fd_targets().items() if self.fd_map.get(k) != v)
            leaks.append(f"file descriptors: {fd_count()} after close, {self.fds_before} before ({', '.join(new)})")
        return leaks


class HTTPServer:
    """The long-lived HTTP fuzz server process of one run."""

    def __init__(self) -> None:
        self.control = Listener()
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "http_server.py"), str(self.control.port)],
                                     stdin=subprocess.DEVNULL)
        hello = self.control.accept()
        self.port = hello["port"]

    def close(self) -> None:
        self.control.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


# ------------------------------------------------------------------- the run

class Runner:
    """Runs cases on one transport, reconnecting every ``batch`` exchanges or after a stream ended."""

    def __init__(self, transport: str, max_size: int = MiB, batch: int = 500,
                 memory_bound: Optional[int] = None) -> None:
        self._loud: Optional[Callable[[], None]] = quiet_logging()
        self.transport = transport
        self.max_size = max_size
        self.batch = batch
        self.memory_bound = memory_bound if memory_bound is not None else 8 * max_size + 24 * MiB
        self.counts: Counter = Counter()
        self.violations: List[Violation] = []
        self.peak_growth = 0
        self.can_measure = reset_peak()
        self.http = HTTPServer() if transport == "http" else None
        self.conn: Optional[Connection] = None
        self.history: List[Dict[str, Any]] = []
        self.in_batch = 0

    def _violate(self, kind: str, detail: str, case: Dict[str, Any]) -> None:
        self.counts[f"violation:{kind}"] += 1
        self.violations.append(Violation(kind, detail, case, list(self.history[-12:])))

    def _connect(self) -> Connection:
        if self.conn is None:
            self.conn = Connection(self.transport, self.max_size, self.http)
            self.history = []
            self.in_batch = 0
        return self.conn

    def _disconnect(self, case: Dict[str, Any]) -> None:
        if self.conn is not None:
            for leak in self.conn.close():
                self._violate("leak", leak, case)
            if self.conn.held_until_gc:
                self.counts["info:fds-held-until-gc"] += 1
            self.conn = None

    def run_case(self, case: Dict[str, Any]) -> str:
        """Run one exchange; return its outcome label."""
        conn = self._connect()
        script = {k: case[k] for k in ("method", "frames", "get", "http", "times") if k in case}
        conn.control.ask({"op": "script", "script": script})
        self.history.append(case)
        timeout = case["timeout"]
        rss0 = _status("VmRSS:")
        measured = self.can_measure and reset_peak()
        start = time.monotonic()
        try:
            do_call(conn.client, case["call"], timeout)
            outcome = "ok"
        except ALLOWED as exc:
            outcome = type(exc).__name__
        except BaseException as exc:  # noqa: B902 - the point: nothing else may escape
            if isinstance(exc, KeyboardInterrupt):
                raise
            outcome = "untyped"
            self._violate("untyped", f"{type(exc).__name__}: {str(exc)[:100]}", case)
        elapsed = time.monotonic() - start
        if measured:
            growth = _status("VmHWM:") - rss0
            self.peak_growth = max(self.peak_growth, growth)
            if growth > self.memory_bound:
                self._violate("memory", f"peak above the bound", case)
        if elapsed > timeout + SLACK:
            self._violate("late", f"{case['family']} case ({elapsed:.1f} s with timeout={timeout})", case)
        if case.get("times", 1) > 1:
            conn.control.ask({"op": "flush"})
        self.counts["exchanges"] += 1
        self.counts[f"outcome:{outcome}"] += 1
        self.in_batch += 1
        if case.get("ends"):
            self._disconnect(case)
            return outcome
        while CRASHES:
            name, what = CRASHES.pop()
            self._violate("thread-crash", f"{name.split('-', 2)[-1]} died of {what}", case)
        dead = conn.dead_threads()
        if dead:
            self._violate("dead-thread", ', '.join(sorted(d.split('-', 2)[2] for d in dead)), case)
        try:
            conn.client.ping(timeout=FOLLOW_UP)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            self._violate("dead-connection", f"follow-up ping -> {type(exc).__name__}", case)
            self._disconnect(case)
            return outcome
        if dead or self.in_batch >= self.batch:
            self._disconnect(case)
        return outcome

    def close(self) -> None:
        self._disconnect({"family": "close", "call": "close"})
        if self.http is not None:
            self.http.close()
            self.http = None
        if self._loud is not None:
            self._loud()
            self._loud = None


def summarize(violations: List[Violation]) -> Dict[str, List[Violation]]:
    """Violations by class (kind and detail with numbers blurred)."""
    classes: Dict[str, List[Violation]] = {}
    for v in violations:
        key = re.sub(r"\(\d.*\)|\d+(\.\d+)?", "N", v.key)
        classes.setdefault(key, []).append(v)
    return classes
