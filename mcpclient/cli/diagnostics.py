"""What the command line reports on stderr besides results: the library's log records (wire
traffic and server logs, per ``-v``) and the one-line message for an error.

Servers are logged by the library under ``mcpclient.server.<transport name>`` (e.g.
``mcpclient_testing`` for ``python -m mcpclient.testing``): both the lines the process writes on
its stderr (at INFO) and its ``notifications/message`` log entries (at their own level, prefixed
with ``[logger]`` when the server names one). Both are shown as ``[<transport name>] ...``.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
from typing import IO, Iterator, Optional

from ..errors import AuthError, HTTPError, ProcessExited, TransportError
from .args import Server, host_port, is_url

_SERVER = "mcpclient.server."


class _LogFormatter(logging.Formatter):
    """Wire lines bare (``-> {...}``), server lines tagged with the server, the rest with their logger."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.name == "mcpclient.wire":
            text = message
        elif record.name.startswith(_SERVER):
            text = f"[{record.name[len(_SERVER):]}] {message}"
        else:
            text = f"{record.name}: {record.levelname.lower()}: {message}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


@contextlib.contextmanager
def stderr_logging(verbose: int, stream: IO[str]) -> Iterator[None]:
    """Send the library's logs to ``stream`` while the block runs, then restore the logger levels
    and remove the handler (so ``main()`` can run in-process, e.g. in tests).

    Quiet: only what servers flag as warnings or worse (their stderr, logged at INFO, is not
    shown). ``-v``: also the wire traffic, the servers' stderr and info logs, library warnings.
    ``-vv``: every debug log of the library and the servers.
    """
    if verbose >= 2:
        levels = {"mcpclient": logging.DEBUG, "mcpclient.wire": logging.NOTSET, "mcpclient.server": logging.NOTSET}
    elif verbose == 1:
        levels = {"mcpclient": logging.WARNING, "mcpclient.wire": logging.DEBUG, "mcpclient.server": logging.INFO}
    else:
        levels = {"mcpclient": logging.CRITICAL + 1, "mcpclient.wire": logging.NOTSET,
                  "mcpclient.server": logging.WARNING}
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_LogFormatter())
    saved = {name: logging.getLogger(name).level for name in levels}
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    root = logging.getLogger("mcpclient")
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def error_message(exc: BaseException, verbose: int, ns: Optional[argparse.Namespace] = None,
                  server: Optional[Server] = None) -> str:
    """One line describing ``exc``: the first line of its message, plus a hint where useful.

    ``ns`` (the command line) and ``server`` (the ``connect.Server`` talked to) shape the hints:
    a 401 asks for ``--auth``/``--header`` or says the credentials given were refused. No
    credential is ever part of the line.
    """
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        return f"{exc.strerror}: {exc.filename}"
    auth = _find_cause(exc, AuthError)
    if isinstance(auth, AuthError) and auth.status in (401, 403):
        first = str(auth).partition("\n")[0]
        given = ns is not None and _credentials_given(ns, server)
        if auth.status == 403:
            return (f"{first}: the server refused access with the credentials given" if given else
                    f"{first}: the server refused access: pass --auth TOKEN or --header 'Authorization: ...'")
        if given:
            return (f"{first}: the server wants credentials and refused the ones given "
                    "(check --auth TOKEN / --header)")
        return f"{first}: the server wants credentials: pass --auth TOKEN or --header 'Authorization: ...'"
    where = _host_port(server)
    http = _find_cause(exc, HTTPError)
    if isinstance(http, HTTPError) and where:
        return f"{where} answered {str(http).partition(chr(10))[0]}"
    first = str(exc).strip().partition("\n")[0]
    if isinstance(exc, TransportError) and where and where not in first:
        return f"{where}: {first}"
    exited = _find_cause(exc, ProcessExited)
    if isinstance(exited, ProcessExited):
        # A wrapper (e.g. ConnectError) already names the exit in its first line.
        message = str(exc).partition("\n")[0]
        tail = [line.strip() for line in exited.stderr_tail.splitlines() if line.strip()]
        if tail:
            message += f"; its stderr ends: {tail[-1]}"
            if len(tail) > 1 and not verbose:
                message += " (run with -v to see all of it)"
        return message
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _find_cause(exc: Optional[BaseException], kind: type) -> Optional[BaseException]:
    """``exc`` or the first exception in its cause/context chain that is a ``kind``."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _credentials_given(ns: argparse.Namespace, server: Optional[Server]) -> bool:
    """Whether the command line or the config entry sent a token or headers (which may carry one)."""
    given = vars(ns)  # (the options a subcommand has: not every one has every option)
    return bool(given.get("auth") or given.get("auth_env") or given.get("header")
                or (server is not None and server.headers))


def _host_port(server: Optional[Server]) -> Optional[str]:
    """``host:port`` of the server's URL (None for a command)."""
    target = server.target if server is not None else None
    return host_port(target) if isinstance(target, str) and is_url(target) else None
