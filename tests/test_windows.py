"""Windows portability of the stdio transport, checked here with the platform faked (no Windows
machine runs these tests): command strings split the Windows way, the program found through
``PATH`` (``npx`` -> ``npx.cmd``), the process tree killed with ``taskkill``, and writes that keep
their deadlines on a blocking pipe (that path is real: forced on POSIX, against real children).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

import pytest

from conftest import LONG
from mcpclient import Client, StdioTransport
from mcpclient.connection import make_transport
from mcpclient.errors import ConnectError
from mcpclient.transports import _cmdline, stdio
from mcpclient.transports._cmdline import split_command

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
    assert fake_popen[0]["executable"] is None
    assert transport.argv == ["npx", "-y", "@x/srv"] and transport.name == "srv"  # identity unchanged


def test_on_posix_argv0_is_found_but_the_child_sees_it_as_given(monkeypatch, fake_popen):
    monkeypatch.setattr(shutil, "which", lambda name, mode=0, path=None: "/opt/bin/srv")
    with pytest.raises(ConnectError):
        StdioTransport(["srv", "--flag"]).start()
    assert fake_popen[0]["args"] == ["srv", "--flag"] and fake_popen[0]["executable"] == "/opt/bin/srv"


def test_argv0_not_found_or_with_a_directory_is_passed_as_given(monkeypatch, fake_popen):
    monkeypatch.setattr(stdio, "_POSIX", False)
    monkeypatch.setattr(shutil, "which", lambda name, mode=0, path=None: None)
    with pytest.raises(ConnectError, match="could not start server 'nosuch'"):
        StdioTransport(["nosuch", "x"]).start()
    monkeypatch.setattr(shutil, "which", lambda name, mode=0, path=None: "/elsewhere/bin/srv")
    with pytest.raises(ConnectError):
        StdioTransport(["bin/srv"]).start()  # relative to the child's cwd: not searched
    assert [(c["args"], c["executable"]) for c in fake_popen] == [(["nosuch", "x"], None), (["bin/srv"], None)]


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
