"""Windows portability of the stdio transport, checked here with the platform faked (no Windows
machine runs these tests): command strings split the Windows way, the program found through
``PATH`` (``npx`` -> ``npx.cmd``), the process tree killed with ``taskkill``, and writes that keep
their deadlines on a blocking pipe (that path is real: forced on POSIX, against real children).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from conftest import LONG, SERVERS, TESTING_SERVER, faulty, pid_alive, wait_until
from mcpclient import Client, StdioTransport
from mcpclient.transports.targets import make_transport
from mcpclient.errors import ConnectError, ConnectionClosed, ProcessExited, SendTimeout
from mcpclient.transports.base import CLOSE_BUDGET
from mcpclient.transports.stdio import _cmdline, _process, transport as stdio
from mcpclient.transports.stdio._cmdline import split_command
from mcpclient.transports.stdio._windows import PipeWriter

pytestmark = pytest.mark.timeout(60)

# "Parsing C++ command-line arguments" (Microsoft C runtime documentation): command line -> argv[1:]
MS_EXAMPLES = [
    ('"abc" d e', ["abc", "d", "e"]),
    (r'a\\b d"e f"g h', [r"a\\b", "de fg", "h"]),
    (r'a\\\"b c d', [r'a\"b', "c", "d"]),
    (r'a\\\\"b c" d e', [r"a\\b c", "d", "e"]),
    ('a"b"" c d', ['ab" c d']),
]


@pytest.mark.parametrize("line, expected", MS_EXAMPLES)
def test_split_command_follows_the_documented_windows_examples(line: str, expected: List[str]):
    assert split_command("prog " + line, windows=True) == ["prog"] + expected


def test_split_command_windows_program_names_and_edge_cases():
    assert split_command(r"C:\Users\me\srv.exe --flag", windows=True) == [r"C:\Users\me\srv.exe", "--flag"]
    # the program name: quotes group, backslashes stay (even before a quote: it is a path)
    assert split_command(r'"C:\Program Files\srv\" x', windows=True) == [r"C:\Program Files\srv" "\\", "x"]
    assert split_command('  srv\t"" "a b"  c\\', windows=True) == ["srv", "", "a b", "c\\"]
    assert split_command('srv "unclosed arg', windows=True) == ["srv", "unclosed arg"]
    assert split_command(" \t ", windows=True) == []


def test_split_command_is_shlex_on_posix():
    assert split_command(r"srv 'a b' c\ d", windows=False) == ["srv", "a b", "c d"]


def test_a_command_string_target_is_split_the_windows_way_on_windows(monkeypatch):
    monkeypatch.setattr(_cmdline, "_WINDOWS", True)
    transport = make_transport(r'C:\Users\me\srv.exe --root "C:\data dir"', None, None)
    assert transport.argv == [r"C:\Users\me\srv.exe", "--root", r"C:\data dir"]  # type: ignore[attr-defined]


class FakePopen:
    """Records how ``Popen`` was called, then fails like a missing program (nothing starts)."""

    calls: List[Dict[str, Any]] = []

    def __init__(self, args: List[str], **kwargs: Any) -> None:
        FakePopen.calls.append(dict(kwargs, args=args))
        raise FileNotFoundError(2, "No such file or directory", args[0])


@pytest.fixture
def fake_popen(monkeypatch) -> List[Dict[str, Any]]:
    FakePopen.calls = []
    monkeypatch.setattr(subprocess, "Popen", FakePopen)
    return FakePopen.calls


def test_on_windows_argv0_is_found_with_pathext_and_replaces_argv0(monkeypatch, fake_popen):
    looked_up: List[Tuple[str, Optional[str]]] = []

    def which(name: str, mode: int = 0, path: Optional[str] = None) -> Optional[str]:
        looked_up.append((name, path))
        return r"C:\nodejs\npx.cmd" if name == "npx" else None

    monkeypatch.setattr(stdio, "_POSIX", False)
    monkeypatch.setattr(shutil, "which", which)
    transport = StdioTransport(["npx", "-y", "@x/srv"], env={"PATH": "/nodejs"})
    with pytest.raises(ConnectError, match="'npx'"):  # the error names the command as given
        transport.start()
    assert looked_up == [("npx", "/nodejs")]  # in the child's PATH
    assert fake_popen[0]["args"] == [r"C:\nodejs\npx.cmd", "-y", "@x/srv"]
    assert "executable" not in fake_popen[0]  # argv[0] replaced, no executable override
    assert transport.argv == ["npx", "-y", "@x/srv"] and transport.name == "srv"  # identity unchanged


def test_on_posix_argv0_goes_to_popen_as_given_which_searches_the_childs_path(monkeypatch, fake_popen):
    looked_up: List[str] = []
    monkeypatch.setattr(shutil, "which", lambda name, mode=0, path=None: looked_up.append(name))
    with pytest.raises(ConnectError):
        StdioTransport(["srv", "--flag"]).start()
    assert fake_popen[0]["args"] == ["srv", "--flag"] and "executable" not in fake_popen[0]
    assert looked_up == []  # (the real search: test_a_bare_program_name_found_only_in_the_childs_path_runs)


def test_argv0_not_found_or_with_a_directory_is_passed_as_given(monkeypatch, fake_popen):
    monkeypatch.setattr(stdio, "_POSIX", False)
    monkeypatch.setattr(shutil, "which", lambda name, mode=0, path=None: None)
    with pytest.raises(ConnectError, match="could not start server 'nosuch'"):
        StdioTransport(["nosuch", "x"]).start()
    monkeypatch.setattr(shutil, "which", lambda name, mode=0, path=None: "/elsewhere/bin/srv")
    with pytest.raises(ConnectError):
        StdioTransport(["bin/srv"]).start()  # relative to the child's cwd: not searched
    assert [(c["args"], c.get("executable", "none given")) for c in fake_popen] == [
        (["nosuch", "x"], "none given"), (["bin/srv"], "none given")]


def test_a_bare_program_name_found_only_in_the_childs_path_runs():
    program_dir, program = os.path.split(sys.executable)
    transport = StdioTransport([program, "-m", "mcpclient.testing"], env={"PATH": program_dir}, stderr=None)
    with Client(transport, timeout=LONG) as client:
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"


def test_a_batch_file_argument_cmd_exe_would_misread_is_refused(monkeypatch, fake_popen):
    """cmd.exe (which CreateProcess puts in front of a .cmd file) expands % and runs what follows
    an unquoted &; such an argument is refused before anything starts, and is not shown."""
    monkeypatch.setattr(stdio, "_POSIX", False)
    monkeypatch.setattr(shutil, "which", lambda name, mode=0, path=None: r"C:\nodejs\npx.CMD")
    for arg in ["https://h/sse?a=1&b=2", "%SECRET%", 'say "hi"', "a\nb"]:
        with pytest.raises(ConnectError, match="npx.CMD is a batch file") as info:
            StdioTransport(["npx", "mcp-remote", arg]).start()
        assert arg not in str(info.value)
    assert fake_popen == []
    with pytest.raises(ConnectError, match="No such file"):  # quoted by list2cmdline: & and () are safe
        StdioTransport(["npx", "-y", "pkg", r"C:\Program Files (x86)\a & b", ""]).start()
    assert fake_popen[0]["args"][-2:] == [r"C:\Program Files (x86)\a & b", ""]


# --- the process tree is killed (taskkill /T /F) ---------------------------------------------------

class FakeProc:
    pid = 4321

    def __init__(self) -> None:
        self.killed = 0

    def kill(self) -> None:
        self.killed += 1


@pytest.mark.parametrize("outcome, falls_back", [
    (0, False),  # taskkill killed the tree
    (128, True),  # "process not found" or denied: the child itself is killed
    (FileNotFoundError(2, "no taskkill"), True),
    (subprocess.TimeoutExpired("taskkill", 0.5), True),
])
def test_kill_tree_runs_taskkill_on_the_tree_bounded_else_kills_the_child(monkeypatch, outcome, falls_back):
    calls: List[Tuple[List[str], Dict[str, Any]]] = []

    def run(args: List[str], **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        if isinstance(outcome, BaseException):
            raise outcome
        return subprocess.CompletedProcess(args, outcome)

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setenv("SYSTEMROOT", "/win")
    monkeypatch.setattr(_process, "_POSIX", False)
    proc = FakeProc()
    _process.kill_group(proc, hard=False, timeout=0.5)  # type: ignore[arg-type]  # no SIGTERM on Windows: the tree
    assert calls[0][0] == [os.path.join("/win", "System32", "taskkill.exe"), "/T", "/F", "/PID", "4321"]
    assert calls[0][1]["timeout"] == 0.5 and calls[0][1]["stdin"] == subprocess.DEVNULL
    assert proc.killed == (1 if falls_back else 0)


#: A stand-in for taskkill.exe: /T /F /PID kills the process and its descendants (found in /proc).
TASKKILL = """
import os, signal, sys
open(LOG, "a").write(" ".join(sys.argv[1:]) + "\\n")
root = int(sys.argv[sys.argv.index("/PID") + 1])
parents = {}
for entry in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{entry}/stat") as f:
            parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        pass
tree, grew = {root}, True
while grew:
    found = {pid for pid, parent in parents.items() if parent in tree} - tree
    tree |= found
    grew = bool(found)
for pid in tree:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
"""


def test_on_windows_close_kills_the_whole_tree_so_pipes_held_by_grandchildren_end(tmp_path, monkeypatch):
    """The server ignores stdin EOF and SIGTERM and has a grandchild holding its stdout and
    stderr. Windows has no process group: terminating the child alone would leave the
    grandchild (and the pipes it holds) behind. A stand-in taskkill.exe here kills the tree."""
    log = tmp_path / "taskkill.log"
    system32 = tmp_path / "System32"
    system32.mkdir()
    taskkill = system32 / "taskkill.exe"
    taskkill.write_text(f"#!{sys.executable}\n" + TASKKILL.replace("LOG", repr(str(log))))
    taskkill.chmod(0o755)
    monkeypatch.setenv("SYSTEMROOT", str(tmp_path))
    monkeypatch.setattr(stdio, "_POSIX", False)
    monkeypatch.setattr(_process, "_POSIX", False)  # (the process group's kill: taskkill of the tree)
    grandchild: List[int] = []
    seen = threading.Event()

    def on_stderr(line: str) -> None:
        if line.startswith("grandchild="):
            grandchild.append(int(line.split("=", 1)[1]))
            seen.set()

    transport = StdioTransport(faulty("ignore-sigterm"), stderr=on_stderr, terminate_grace=0.2)
    transport.start()
    try:
        assert seen.wait(LONG)
    finally:
        started = time.monotonic()
        transport.close()
    assert time.monotonic() - started < CLOSE_BUDGET
    assert log.read_text().splitlines()[0] == f"/T /F /PID {transport.pid}"
    assert not any(t.is_alive() for t in transport._threads)  # the stderr drain saw EOF: no holder left
    assert wait_until(lambda: not pid_alive(grandchild[0])), "the grandchild survived"


# --- writes keep their deadlines on a blocking pipe ------------------------------------------------

@pytest.fixture
def blocking_pipes(monkeypatch) -> None:
    """The Windows write path, on this machine: stdin stays blocking (``os.set_blocking`` does
    nothing on a Windows pipe), so a write the server does not read blocks in ``os.write``."""
    monkeypatch.setattr(stdio, "_BLOCKING_PIPES", True)
    monkeypatch.setattr(os, "set_blocking", lambda fd, blocking: None)


def slow_reader(out: Path, pause: float, answer: bool = False) -> List[str]:
    """A peer that reads nothing for ``pause`` s, then 64 KiB every 1 ms (tests/servers/slow_reader.py)."""
    return [sys.executable, str(SERVERS / "slow_reader.py"), str(out), str(pause), "65536", "0.001",
            "1" if answer else "0"]


def notification(method: str, size: int = 900) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": {"p": "x" * size}}


def test_blocking_pipes_a_send_to_a_server_that_does_not_read_times_out_at_its_deadline(tmp_path, blocking_pipes):
    transport = StdioTransport(slow_reader(tmp_path / "got.jsonl", pause=60), stderr=None, terminate_grace=0.2)
    transport.start()
    outcome: Dict[str, BaseException] = {}

    def send_forever() -> None:
        try:
            transport.send(notification("patient"))
        except BaseException as exc:  # noqa: BLE001 - asserted below
            outcome["patient"] = exc

    patient = threading.Thread(target=send_forever)
    try:
        assert os.get_blocking(transport._stdin_fd)  # the non-blocking path is not in play
        for _ in range(200):  # ~180 KiB: more than the pipe holds
            try:
                transport.send(notification("fill"), deadline=time.monotonic() + 0.05)
            except SendTimeout:
                break
        else:
            raise AssertionError("the pipe never filled")
        for _ in range(3):
            began = time.monotonic()
            with pytest.raises(SendTimeout):
                transport.send(notification("late"), deadline=began + 0.3)
            assert 0.3 <= time.monotonic() - began < 0.3 + 1.0  # at its deadline, not later
        assert transport.returncode is None  # the server was not killed for it
        patient.start()  # no deadline: waits until the close
    finally:
        closing = time.monotonic()
        transport.close()
        if patient.ident is not None:
            patient.join(LONG)
    assert time.monotonic() - closing < CLOSE_BUDGET
    assert isinstance(outcome.get("patient"), ConnectionClosed), outcome


def test_blocking_pipes_a_timed_out_frame_is_dropped_or_sent_whole_never_cut(tmp_path, blocking_pipes):
    out = tmp_path / "got.jsonl"
    transport = StdioTransport(slow_reader(out, pause=1.0), stderr=None)
    transport.start()
    try:
        taken, timed_out = [], 0
        for n in range(400):  # ~360 KiB, most of it while the server does not read
            try:
                transport.send(notification(f"n{n}", 900), deadline=time.monotonic() + 0.005)
                taken.append(f"n{n}")
            except SendTimeout:
                timed_out += 1
        transport.send(notification("last", 300_000), deadline=time.monotonic() + LONG)  # once it reads
        assert timed_out, "no send timed out: nothing was tested"
        assert wait_until(lambda: out.exists() and out.read_bytes().endswith(b"\n") and b'"last"' in out.read_bytes())
        sent = [json.loads(line)["method"] for line in out.read_text().splitlines()]  # every line whole
        assert sent[-1] == "last" and set(taken) <= set(sent)  # what was taken arrived
        assert len(sent) < 400 + 1  # frames not begun by their deadline were dropped
        assert sent[:-1] == sorted(sent[:-1], key=lambda m: int(m[1:]))  # in order
    finally:
        transport.close()


def test_blocking_pipes_carry_a_real_clients_traffic(blocking_pipes):
    transport = StdioTransport(TESTING_SERVER, stderr=None)
    with Client(transport, timeout=LONG) as client:
        assert isinstance(transport._writer, PipeWriter) and os.get_blocking(transport._stdin_fd)
        assert "echo" in [tool.name for tool in client.list_tools()]
        big = "y" * (1 << 20)  # 1 MiB: many pipe-fulls through the writer thread
        assert client.call_tool("echo", {"text": big}).text == big
        results: Dict[int, str] = {}

        def caller(i: int) -> None:
            for j in range(20):
                results[i * 100 + j] = client.call_tool("echo", {"text": f"{i}-{j}"}).text

        threads = [threading.Thread(target=caller, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(LONG)
        assert results == {i * 100 + j: f"{i}-{j}" for i in range(8) for j in range(20)}


def test_blocking_pipes_a_send_to_a_server_that_exited_reports_the_exit(blocking_pipes):
    transport = StdioTransport([sys.executable, "-c", "import sys; sys.stdin.close(); print('bye', file=sys.stderr)"],
                               stderr=None)
    transport.start()
    try:
        assert transport._exited.wait(LONG)
        with pytest.raises(ProcessExited):
            for _ in range(100):  # the first write may still land in the pipe before it breaks
                transport.send(notification("x", 100_000), deadline=time.monotonic() + LONG)
    finally:
        transport.close()
