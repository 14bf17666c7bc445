"""stdio transport: the server is a child process speaking newline-delimited JSON-RPC.

Owns the child's whole life: spawning it (argv only, never a shell) with a filtered environment
(``_cmdline``), its process group (``_process``), draining its stderr on a thread, noticing its
exit on another (which then lets the stdout and stderr readers go, though a descendant outside
its process group may still hold the pipes: ``_pipes``), writing without ever blocking past a
deadline or a close (``_stdin``; on a writer thread where pipes cannot be non-blocking:
Windows), and the bounded shutdown ladder (close stdin, wait, SIGTERM, SIGKILL to the whole
process group; on Windows, ``taskkill`` of the process tree). Windows specifics are in
``_windows``. Standard library only.

Process-group signals are sent only while the group leader is alive or a zombie (not yet reaped),
so its pid, which names the group, cannot have been reused by an unrelated process.
"""
from __future__ import annotations

import logging
import os
import subprocess
import threading
import time
import weakref
from collections import deque
from functools import partial
from typing import IO, TYPE_CHECKING, Any, Callable, Deque, Dict, List, Mapping, Optional, Sequence, Union

from ..._util import fork as _fork
from ..._util.secrets import command_secrets, mapping_secrets, masked
from ..._util.threads import join_all, next_instance, start_thread
from ..._util.wire import should_log
from ...errors import ConnectError, ConnectionClosed, ProcessExited, ProtocolError
from ._cmdline import DEFAULT_ENV_KEYS, child_env, default_name, launch_args
from ._process import kill_group as _kill_group, open_transports as _open, reap_at_exit as _reap_at_exit
from ._stdin import POLL, StdinWriter
from ._windows import PipeWriter
from ..base import (
    CLOSE_BUDGET, DEFAULT_MAX_MESSAGE_SIZE, Endpoint, RemakeKind, Transport, TransportInfo, decode_frame, encode_frame,
)

if TYPE_CHECKING:
    from ..base import Message, Received

__all__ = ["DEFAULT_ENV_KEYS", "StdioTransport"]

log = logging.getLogger("mcpclient.transport.stdio")

StderrSink = Union[str, None, Callable[[str], object], IO[str]]

_STDERR_TAIL_LINES = 20
_STDERR_LINE_MAX = 1 << 16  # a longer stderr line is passed on in pieces of this size
_TAIL_LINE_CHARS = 500  # characters of one stderr line kept for the tail (a longer one is cut)
_TAIL_CHARS = 4000  # characters of the whole tail (ProcessExited's message: logs, Celery results)
_POSIX = os.name == "posix"
#: Pipes cannot be made non-blocking (Windows): writes go through a ``PipeWriter`` thread.
_BLOCKING_PIPES = not _POSIX
#: Pipes can be polled: stdout and stderr are read so that the exit watcher can let their readers
#: go when the server exits though a descendant still holds the pipes (``_pipes``: ``WokenLines``
#: for stdout on Linux, ``PipeLines`` elsewhere and for stderr).
_POLLED_READS = _POSIX
#: Wait for the child's exit without reaping it (the zombie keeps its pid, and so its group, ours).
_PEEK_EXIT = _POSIX and hasattr(os, "waitid") and hasattr(os, "WNOWAIT")
_KILL_WAIT = 0.5  # after SIGKILL, how long to wait for the exit
_TASKKILL_WAIT = 2.0  # Windows: how long taskkill may take at most


def _signal_group(reap_lock: threading.Lock, proc: "subprocess.Popen[bytes]", hard: bool, timeout: float) -> None:
    """Signal the server's group, but only while its leader is unreaped (see the module docstring).
    A function, not a method: the stdin writer holds it, and must not keep the transport alive."""
    with reap_lock:
        if proc.returncode is None:
            _kill_group(proc, hard, timeout)


def _stop_writing(closing: threading.Event, writer: Union[StdinWriter, PipeWriter]) -> None:
    """Mark the transport closing and wake its writer, whose thread then ends (for the finalizer
    of a transport never closed: neither refers to the transport)."""
    closing.set()
    writer.wake()


class StdioTransport(Transport):
    """Run an MCP server as a child process and talk to it over its stdin/stdout.

    Example::

        transport = StdioTransport(["python", "server.py"], env={"API_KEY": key},
                                   cwd="/srv")
        with Client(transport) as client:
            print(client.list_tools())

    Args:
        argv: the command as a list (never run through a shell). A bare argv[0] is looked up in
            the child's ``PATH`` (on Windows with ``PATHEXT``, so ``npx`` finds ``npx.cmd``).
        env: variables set for the child, over ``DEFAULT_ENV_KEYS`` taken from this process
            (or over all of ``os.environ`` when ``inherit_env=True``).
        cwd: the child's working directory.
        stderr: where the child's stderr lines go: ``"logger"`` (default, the logger
            ``mcpclient.server.<name>`` at INFO), a callable taking each line, a text file, or
            ``None`` to drop them. The last lines are kept either way for ``ProcessExited``.
        max_message_size: a line longer than this many bytes is logged and skipped.
        on_exit: called once with the return code when the child exits (on the waiter thread).
        terminate_grace: seconds to wait after closing stdin before SIGTERM, and again before SIGKILL.
        name: label for thread and logger names (default: the command's basename).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Optional[Mapping[str, str]] = None,
        inherit_env: bool = False,
        cwd: Optional[str] = None,
        stderr: StderrSink = "logger",
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        on_exit: Optional[Callable[[Optional[int]], object]] = None,
        terminate_grace: float = 2.0,
        name: Optional[str] = None,
        _instance: int = 0,
    ) -> None:
        if isinstance(argv, (str, bytes)) or not argv:
            raise TypeError("argv must be a non-empty list of strings (use shlex.split for a command line)")
        self.argv = [os.fspath(a) for a in argv]
        self.env = dict(env or {})
        self.inherit_env = inherit_env
        self.cwd = cwd
        self.max_message_size = max_message_size
        self.on_exit = on_exit
        self.terminate_grace = terminate_grace
        self.name = name or default_name(self.argv)
        self._stderr_setting = stderr
        self._stderr_sink = self._make_sink(stderr)
        self._stderr_tail: Deque[str] = deque(maxlen=_STDERR_TAIL_LINES)
        self._proc: Optional["subprocess.Popen[bytes]"] = None
        self._stdout: Any = None  # WokenLines or PipeLines (see _pipes), or the raw file where pipes cannot be polled
        self._pipe_readers = False  # _stdout and _stderr are _pipes readers (which release() lets go)
        self._stderr: Any = None
        self._stdin_fd = -1
        self._lifecycle = threading.Lock()  # orders start() against close()
        self._wlock = threading.Lock()  # held while bytes go to stdin (close() takes it to close stdin)
        self._writer: Optional[Union[StdinWriter, PipeWriter]] = None  # all writes, once started
        self._reap_lock = threading.Lock()  # group signals vs. reaping the leader (pid reuse)
        self._exited = threading.Event()
        self._closing = threading.Event()
        self._starting = False  # the server is being (or was) spawned: by the first start()
        self._spawned = threading.Event()  # the first start() is over (the server spawned, or not)
        self._start_error: Optional[BaseException] = None  # what the first start() met, for later ones to raise
        self._threads: List[threading.Thread] = []
        self._instance = _instance or next_instance()
        self._info: Optional[TransportInfo] = None
        self.skipped_lines = 0
        self._receiving = False
        self._inherited = False  # in a forked child: the server is the parent's (see _forked)

    @property
    def info(self) -> TransportInfo:
        """A child process over pipes; its identity is the command, its directory and its
        environment (what makes it the same server); its secrets the tokens in its command line
        (``--token=...``) and the secret-looking environment values. It can be relaunched and
        reopened (``info.remake``)."""
        info = self._info
        if info is None:
            settings = dict(env=self.env, inherit_env=self.inherit_env, cwd=self.cwd, stderr=self._stderr_setting,
                            max_message_size=self.max_message_size, on_exit=self.on_exit,
                            terminate_grace=self.terminate_grace, name=self.name, _instance=self._instance)
            info = self._info = TransportInfo(
                self.name, Endpoint("pipe"), f"{self.cwd}|{self.argv!r}|{sorted(self.env.items())!r}",
                secrets=command_secrets(self.argv) | mapping_secrets(self.env), instance=self._instance,
                remake=partial(_remake, list(self.argv), settings))
        return info

    # --- lifecycle ------------------------------------------------------------------------------

    def _child_env(self) -> Dict[str, str]:
        return child_env(self.env, self.inherit_env, _POSIX)

    def start(self) -> None:
        """Spawn the server. Once: a later call (the client starts a stdio transport before it
        builds its engine, so that the server boots meanwhile; its session then starts it again)
        waits for the first, then returns or raises again what spawning raised."""
        with self._lifecycle:
            first = not self._starting
            self._starting = True
        if first:
            try:
                self._spawn()
            except BaseException as exc:
                self._start_error = exc
                raise
            finally:
                self._spawned.set()
            return
        self._spawned.wait()
        error = self._start_error
        if error is not None:
            raise error
        if self._closing.is_set():
            raise ConnectionClosed("the transport is closed")
        if self._inherited:  # started, then forked: that server is the parent's
            raise ConnectionClosed("the server was started by the parent process of this fork")

    def _spawn(self) -> None:
        with self._lifecycle:
            if self._closing.is_set():
                raise ConnectionClosed("the transport is closed")
        # A session of its own (POSIX): killpg reaches the server's children, the terminal's Ctrl-C
        # and hang-up never reach it, and (scheduler autogroups) a busy client cannot starve it: a
        # process group (``process_group=0``) was slower unpinned, 13.1k/10.3k against 16.2k/14.3k
        # calls/s @8/@32 (benchmarks/README.md, "the other launch"; below 3.11 it needs preexec_fn).
        kwargs: Dict[str, Any] = {"start_new_session": True} if _POSIX else {
            "creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
        env = self._child_env()
        try:
            args = launch_args(self.argv, env, _POSIX)  # npx -> npx.cmd on Windows
            proc = subprocess.Popen(
                args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=env, cwd=self.cwd, **kwargs)
        except (OSError, ValueError) as exc:
            raise ConnectError(f"could not start server {self.argv[0]!r}: {exc}") from exc
        if _POLLED_READS:  # before the process is published: close() may use them at once
            from ._pipes import PipeLines, stdout_lines  # deferred: loads while the server boots

            try:
                self._stdout, self._stderr = stdout_lines(proc.stdout), PipeLines(proc.stderr)  # type: ignore[arg-type]
            except OSError as exc:  # (out of file descriptors for the wake-up pipe)
                _kill_group(proc, hard=True)
                for pipe in (proc.stdin, proc.stdout, proc.stderr):
                    pipe.close()  # type: ignore[union-attr]
                try:
                    proc.wait(_KILL_WAIT)
                except subprocess.TimeoutExpired:  # not reaped yet: subprocess reaps it later
                    pass
                raise ConnectError(f"could not start server {self.argv[0]!r}: {exc}") from exc
            self._pipe_readers = True
        else:
            self._stdout, self._stderr = proc.stdout, proc.stderr
        with self._lifecycle:
            closed_meanwhile = self._closing.is_set()
            if not closed_meanwhile:
                self._proc = proc
        if closed_meanwhile:  # close() ran during Popen and found nothing to stop: stop it here
            _kill_group(proc, hard=True)
            try:
                proc.wait(_KILL_WAIT)
            except subprocess.TimeoutExpired:  # not reaped yet: subprocess reaps it later
                pass
            for pipe in (proc.stdin, self._stdout, self._stderr):
                pipe.close()  # type: ignore[union-attr]
            raise ConnectionClosed("the transport was closed while starting")
        self._stdin_fd = proc.stdin.fileno()  # type: ignore[union-attr]
        if not _BLOCKING_PIPES:
            os.set_blocking(self._stdin_fd, False)  # writes wait in select(), bounded by deadlines
        prefix = f"mcpclient-{self._instance}"
        if _BLOCKING_PIPES:  # every write on its own thread; senders wait till their deadline
            self._writer = PipeWriter(self._stdin_fd, self.name, f"{prefix}-stdin", self._wlock, self._closing)
        else:
            self._writer = StdinWriter(self._stdin_fd, self.name, f"{prefix}-stdin", self._wlock, self._closing,
                                       partial(_signal_group, self._reap_lock, proc, True, _TASKKILL_WAIT))
        # A transport forgotten without close(): its server is killed, its writer's thread ends.
        self._finalizer = weakref.finalize(self, _reap_at_exit, weakref.ref(self), proc, _fork.pid,
                                           partial(_stop_writing, self._closing, self._writer))
        _open.add(self)
        self._threads = [
            start_thread(self._drain_stderr, f"{prefix}-stderr"),
            start_thread(self._wait_exit, f"{prefix}-waiter"),
        ]
        log.debug("started %s (pid %s)", self.name, proc.pid)  # not argv: it may hold secrets

    @property
    def pid(self) -> Optional[int]:
        """The server process's id (``None`` before it started)."""
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> Optional[int]:
        """The server's exit status once it has exited, else ``None``."""
        return self._proc.returncode if self._proc and self._exited.is_set() else None

    @property
    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (kept for ``ProcessExited`` messages): at
        most 20 lines, each cut to 500 characters, and 4,000 characters in all (the last ones)."""
        tail = "\n".join(self._stderr_tail)
        return tail if len(tail) <= _TAIL_CHARS else "…" + tail[-(_TAIL_CHARS - 1):]

    def close(self, deadline: Optional[float] = None) -> None:
        """Close stdin, give the child ``terminate_grace`` s, SIGTERM, the same again, then SIGKILL
        the group (on Windows both steps kill the process tree); the graces shrink to fit ``deadline`` (default: ``CLOSE_BUDGET`` s from now;
        4.5 s at worst with the default grace)."""
        if self._inherited:  # a forked child's copy: the server, its pipes and threads are the parent's
            return
        with self._lifecycle:
            first = not self._closing.is_set()
            self._closing.set()  # writers stuck on a full pipe see this within _stdin.POLL and give up
            proc = self._proc
        if proc is None:
            return
        _open.discard(self)  # before stdin closes (its fd number may be reused after)
        if deadline is None:
            deadline = time.monotonic() + CLOSE_BUDGET
        if not first:
            self._join_threads(deadline)
            return
        grace = min(self.terminate_grace, max(0.0, (deadline - time.monotonic() - _KILL_WAIT) / 2))
        stdin_closed = self._close_stdin(proc, timeout=min(POLL * 4, grace))
        if not self._exited.wait(grace):
            log.info("server %s did not exit after stdin closed; sending SIGTERM", self.name)
            self._signal(proc, hard=False, deadline=deadline)
            if not self._exited.wait(grace):
                log.warning("server %s ignored SIGTERM; killing its process group", self.name)
                self._signal(proc, hard=True, deadline=deadline)
                self._exited.wait(max(0.0, min(_KILL_WAIT, deadline - time.monotonic())))
        self._signal(proc, hard=True, deadline=deadline)  # whatever the leader left behind in its group goes too
        self._release_readers()  # a descendant out of the group's reach may still hold stdout/stderr
        if not stdin_closed:
            self._close_stdin(proc, timeout=max(0.0, deadline - time.monotonic()))
        self._join_threads(deadline)
        if not self._receiving:  # nobody reads stdout (a transport used without a session): close it here
            self._stdout.close()
        self._finalizer.detach()

    def _close_stdin(self, proc: "subprocess.Popen[bytes]", timeout: float) -> bool:
        if self._writer is not None:
            self._writer.wake()
        if not self._wlock.acquire(timeout=timeout):
            return False
        try:
            proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        finally:
            self._wlock.release()
        return True

    def _signal(self, proc: "subprocess.Popen[bytes]", hard: bool, deadline: Optional[float] = None) -> None:
        timeout = _TASKKILL_WAIT if deadline is None else min(_TASKKILL_WAIT, deadline - time.monotonic())
        _signal_group(self._reap_lock, proc, hard, timeout)

    def _join_threads(self, deadline: float) -> None:
        writer = self._writer.thread if self._writer is not None else None
        join_all(self._threads + ([writer] if writer is not None else []), deadline)

    def _release_readers(self) -> None:
        """The server is gone (or being closed): the threads reading its stdout and stderr take
        what the pipes hold and stop, though a descendant may keep the pipes open (POSIX)."""
        if self._pipe_readers:  # (else the subprocess file objects: nothing to release)
            for lines in (self._stdout, self._stderr):
                if lines is not None:
                    lines.release()

    # --- I/O ------------------------------------------------------------------------------------

    def send(self, message: Message, *, deadline: Optional[float] = None,
             headers: Optional[Dict[str, str]] = None, idempotent: Optional[bool] = False, setup: bool = False) -> None:
        """Write one message, within ``deadline`` (then ``SendTimeout``, nothing of it sent);
        ``ConnectionClosed`` once the transport is closing or the server is gone
        (``ProcessExited`` when it exited). Many threads may send at once: their frames are
        combined, in order, and none is ever cut by another sender's deadline."""
        # How: _stdin.StdinWriter.send; on Windows _windows.PipeWriter.
        writer = self._writer
        if writer is None:
            raise ConnectionClosed("transport not started")
        failure = writer.send(encode_frame(message) + b"\n", deadline)
        if failure is not None:  # a broken pipe: the server is gone
            raise self._exit_error() from failure  # outside the writer's locks: it may wait for the exit

    def receive(self) -> Optional[Received]:
        self._receiving = True  # from now on the reader closes stdout when it sees EOF
        stdout = self._stdout
        limit = self.max_message_size
        while True:
            try:
                line = stdout.readline(limit + 1)
            except (OSError, ValueError):
                line = b""
            if not line:
                stdout.close()
                if self._closing.is_set():
                    return None
                raise self._exit_error()
            if len(line) > limit and not line.endswith(b"\n"):
                self._skip_rest_of_line(stdout, len(line))
                continue
            if line.isspace():
                continue
            try:
                return decode_frame(line)
            except ProtocolError as exc:  # not JSON, or not a message (null, a number, too deep)
                self.skipped_lines += 1
                if self.skipped_lines == 1:  # (quoted by a handshake that fails: info.stray_output)
                    self._info = self.info.replace(stray_output=masked(line[:200].decode("utf-8", "replace").rstrip(),
                                                                       self.info.secrets))
                if should_log(self.skipped_lines):
                    log.warning("server %s wrote a line that is not a JSON-RPC message (%d so far); skipped: "
                                "%.200r (%s)", self.name, self.skipped_lines, line[:200], exc)

    def _skip_rest_of_line(self, stdout: Any, seen: int) -> None:
        while True:
            chunk = stdout.readline(1 << 20)
            seen += len(chunk)
            if not chunk or chunk.endswith(b"\n"):
                break
        self.skipped_lines += 1
        if should_log(self.skipped_lines):
            log.warning("server %s sent a %d-byte message, over max_message_size=%d; skipped (%d so far)",
                        self.name, seen, self.max_message_size, self.skipped_lines)

    def _exit_error(self) -> ConnectionClosed:
        """The child closed stdout or our pipe broke: report its exit (waiting briefly for it)."""
        if self._exited.wait(self.terminate_grace) and self._threads:
            self._threads[0].join(0.5)  # let the stderr drain catch the last lines
            return ProcessExited(self._proc.returncode, self.stderr_tail)  # type: ignore[union-attr]
        return ConnectionClosed(f"server {self.name} closed its stdout")

    # --- helper threads -------------------------------------------------------------------------

    def _make_sink(self, stderr: StderrSink) -> Optional[Callable[[str], Any]]:
        if stderr is None:
            return None
        if stderr == "logger":
            logger = logging.getLogger(f"mcpclient.server.{self.name}")
            return lambda line: logger.info("%s", line)
        if callable(stderr):
            return stderr
        if hasattr(stderr, "write"):
            stream = stderr
            return lambda line: (stream.write(line + "\n"), stream.flush())
        raise TypeError("stderr must be 'logger', None, a callable or a text file")

    def _drain_stderr(self) -> None:
        stream = self._stderr
        sink = self._stderr_sink
        try:
            for raw in iter(lambda: stream.readline(_STDERR_LINE_MAX), b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self._stderr_tail.append(line if len(line) <= _TAIL_LINE_CHARS else line[:_TAIL_LINE_CHARS - 1] + "…")
                if sink is not None:
                    try:
                        sink(line)
                    except BaseException:  # a broken sink (sys.exit() too) must not stop the drain (the child would block)
                        log.exception("stderr sink for %s failed", self.name)
        except (OSError, ValueError):
            pass
        finally:
            try:
                stream.close()
            except OSError:
                pass

    def _wait_exit(self) -> None:
        proc = self._proc
        if _PEEK_EXIT:
            while True:
                try:
                    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # type: ignore[union-attr]
                    break
                except InterruptedError:
                    continue
                except ChildProcessError:
                    break
            with self._reap_lock:
                # The leader is a zombie: its group id is still ours. Kill what it left behind
                # (its own children) before reaping it, which frees the pid for reuse.
                _kill_group(proc, hard=True)  # type: ignore[arg-type]
                code = proc.wait()  # type: ignore[union-attr]
        else:
            code = proc.wait()  # type: ignore[union-attr]
        self._exited.set()
        self._release_readers()  # pending calls fail now, though a descendant may hold stdout
        log.debug("server %s exited with %s", self.name, code)
        if self.on_exit is not None:
            try:
                self.on_exit(code)
            except BaseException:  # (waiter thread) SystemExit included
                log.exception("on_exit callback for %s failed", self.name)


def _remake(argv: List[str], settings: Dict[str, Any], how: RemakeKind) -> Optional[StdioTransport]:
    """``TransportInfo.remake`` of a stdio transport: the same command and settings, relaunched
    or reopened (there is no fallback)."""
    return StdioTransport(argv, **settings) if how in ("relaunch", "reopen") else None
