"""Command lines: a command string split into argv the way the platform's programs would see it.

``shlex`` has no Windows mode (in POSIX mode it eats the backslashes of ``C:\\Users\\me\\srv.exe``)
and ``subprocess.list2cmdline`` only goes the other way (argv -> command line), so the Windows rules
are implemented here, as the Microsoft C runtime documents them ("Parsing C++ command-line
arguments"; ``CommandLineToArgvW`` agrees except for ``""`` inside quotes).
"""
from __future__ import annotations

import os
import shlex
from typing import List, Optional

__all__ = ["split_command"]

_BLANKS = " \t"
_WINDOWS = os.name == "nt"


def split_command(command: str, windows: Optional[bool] = None) -> List[str]:
    """``command`` as an argv list: the Windows rules on Windows (``windows=None``: this
    platform's), else ``shlex.split`` (POSIX shell rules, without expansions)."""
    if windows is None:
        windows = _WINDOWS
    return _split_windows(command) if windows else shlex.split(command)


def _split_windows(command: str) -> List[str]:
    """The Microsoft C runtime's rules: blanks separate arguments; ``"`` groups (and is dropped);
    backslashes are literal except before a ``"``: 2n of them and a ``"`` give n backslashes and a
    grouping quote, 2n+1 give n backslashes and a literal ``"``; ``""`` inside a group is a literal
    ``"``. The program name (argv[0]) is simpler: quotes group, backslashes are always literal
    (it is a path). An unclosed group runs to the end."""
    args: List[str] = []
    i, n = 0, len(command)
    while i < n and command[i] in _BLANKS:
        i += 1
    if i == n:
        return args
    chars: List[str] = []
    quoted = False
    while i < n and (quoted or command[i] not in _BLANKS):  # the program name
        if command[i] == '"':
            quoted = not quoted
        else:
            chars.append(command[i])
        i += 1
    args.append("".join(chars))
    while True:
        while i < n and command[i] in _BLANKS:
            i += 1
        if i == n:
            return args
        chars, quoted = [], False
        while i < n and (quoted or command[i] not in _BLANKS):
            c = command[i]
            if c == "\\":
                start = i
                while i < n and command[i] == "\\":
                    i += 1
                count = i - start
                if i < n and command[i] == '"':
                    chars.append("\\" * (count // 2))
                    if count % 2:  # an escaped quote: literal
                        chars.append('"')
                        i += 1
                else:  # not before a quote: every backslash is literal
                    chars.append("\\" * count)
            elif c == '"':
                if quoted and i + 1 < n and command[i + 1] == '"':  # "" inside a group: a literal "
                    chars.append('"')
                    i += 2
                else:
                    quoted = not quoted
                    i += 1
            else:
                chars.append(c)
                i += 1
        args.append("".join(chars))
