"""Command lines: a command string split into argv the way the platform's programs would see it,
the program an argv names found the way the platform finds it, the environment a stdio server
is started with (the allow-list), and the readable name of a command (for threads and loggers).

``shlex`` has no Windows mode (in POSIX mode it eats the backslashes of ``C:\\Users\\me\\srv.exe``)
and ``subprocess.list2cmdline`` only goes the other way (argv -> command line), so the Windows rules
are implemented here, as the Microsoft C runtime documents them ("Parsing C++ command-line
arguments"; ``CommandLineToArgvW`` agrees except for ``""`` inside quotes).
"""
from __future__ import annotations

import os
import re
import shlex
from typing import Dict, List, Mapping, Optional, Sequence

__all__ = ["DEFAULT_ENV_KEYS", "child_env", "default_name", "launch_args", "split_command"]

#: Environment variables a child inherits by default; everything else (tokens, keys) stays behind
#: unless passed in ``env=`` or ``inherit_env=True`` is given.
DEFAULT_ENV_KEYS = (
    "HOME", "LOGNAME", "USER", "USERNAME", "SHELL", "PATH", "TERM", "TZ",
    "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TMPDIR", "TEMP", "TMP",
    # Windows essentials
    "APPDATA", "LOCALAPPDATA", "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "SYSTEMROOT", "SYSTEMDRIVE",
    "COMSPEC", "PATHEXT", "PROGRAMDATA", "PROGRAMFILES", "WINDIR",
)

_ALLOWED = frozenset(DEFAULT_ENV_KEYS)

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


#: What ``cmd.exe`` reads its own way in a batch file's arguments: always, and outside quotes
#: (``list2cmdline`` quotes an argument only when it holds a blank).
_CMD_ALWAYS = frozenset('%!"\r\n')
_CMD_UNQUOTED = frozenset("&|<>^()")


def launch_args(argv: Sequence[str], env: Mapping[str, str], posix: bool) -> List[str]:
    """The args for ``Popen``. On POSIX the argv as given: ``Popen`` itself
    searches the child's ``PATH`` for a bare name (``os.get_exec_path(env)``), so nothing is
    looked up here (nor ``shutil`` imported before the server starts). On Windows a bare
    program name is looked up in the child's ``PATH`` with ``shutil.which``, which also tries
    ``PATHEXT``, so ``npx`` runs ``npx.cmd`` (``CreateProcess`` alone looks for ``npx.exe``
    only), and the found file replaces argv[0]. A name with a directory part (run relative to
    the child's ``cwd``) or not found is left as given, so starting it fails as it always did.

    ``CreateProcess`` starts a ``.cmd``/``.bat`` file through ``%ComSpec% /c`` by itself (with
    ``shell=False``, in every Python version: python/cpython#77696), so ``npx.cmd`` runs; but
    ``cmd.exe`` then reads the arguments by its own rules (``%`` expands, ``&`` starts another
    command), so an argument it would misread raises ``ValueError`` instead (run the program the
    batch file wraps, e.g. ``node``, to pass it)."""
    if posix:
        return list(argv)
    import shutil  # deferred: import cost (shutil); only starting a process on Windows needs it

    args = list(argv)
    found = None
    if not os.path.dirname(args[0]):
        found = shutil.which(args[0], path=os.pathsep.join(os.get_exec_path(dict(env))))
    if found is not None:
        args[0] = found
    if args[0].lower().endswith((".cmd", ".bat")):
        for arg in args[1:]:
            unsafe = _CMD_ALWAYS if " " in arg or "\t" in arg else _CMD_ALWAYS | _CMD_UNQUOTED
            if unsafe.intersection(arg):  # the argument itself is not shown: it may be a secret
                raise ValueError(f"{os.path.basename(args[0])} is a batch file and cmd.exe would misread "
                                 f"{''.join(sorted(unsafe.intersection(arg)))!r} in an argument")
    return args


def child_env(env: Mapping[str, str], inherit_env: bool, posix: bool) -> Dict[str, str]:
    """A stdio server's environment: ``DEFAULT_ENV_KEYS`` from ours (or all of it with
    ``inherit_env``), then ``env``. Names match exactly on POSIX, where ``path`` is not ``PATH``;
    on Windows, whose names ignore case, in any case. An allow-listed value that looks like an
    exported shell function (``() {``: shellshock-style input for a server that runs bash) is left
    out; what ``env`` (or ``inherit_env``) asks for is passed as it is."""
    if inherit_env:
        base = dict(os.environ)
    else:
        allowed = _ALLOWED.__contains__ if posix else (lambda k: k.upper() in _ALLOWED)
        base = {k: v for k, v in os.environ.items() if allowed(k) and not v.startswith("() {")}
    base.update(env)
    return base


_LAUNCHERS = ("python", "python3", "py", "node", "npx", "uv", "uvx", "pipx", "bun", "bunx", "deno")


def default_name(argv: Sequence[str]) -> str:
    """A readable label for a command: the script, module or package a launcher runs, else argv[0].

    ``python server.py`` -> ``server``; ``python -m pkg.mod`` -> ``pkg_mod``; ``npx -y @x/srv`` -> ``srv``.
    """
    program = os.path.basename(argv[0])
    label = program
    if re.sub(r"[\d.]+$", "", program.lower().replace(".exe", "")) in _LAUNCHERS:
        rest = list(argv[1:])
        while rest and rest[0] in ("run", "x", "-y", "--yes", "-u", "-q"):
            rest.pop(0)
        if rest[:1] == ["-m"] and len(rest) > 1:
            label = rest[1]
        elif rest and not rest[0].startswith("-"):
            label = os.path.splitext(os.path.basename(rest[0].rstrip("/")))[0]
    return re.sub(r"[^A-Za-z0-9_-]+", "_", label).strip("_") or "server"
