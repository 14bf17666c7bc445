"""Windows portability of the stdio transport, checked here with the platform faked (no Windows
machine runs these tests): command strings split the Windows way, the program found through
``PATH`` (``npx`` -> ``npx.cmd``), the process tree killed with ``taskkill``, and writes that keep
their deadlines on a blocking pipe (that path is real: forced on POSIX, against real children).
"""
from __future__ import annotations

from typing import List

import pytest

from mcpclient.connection import make_transport
from mcpclient.transports import _cmdline
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
