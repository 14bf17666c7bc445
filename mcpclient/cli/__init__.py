"""The ``mcpclient`` command line: talk to any MCP server from a shell.

::

    mcpclient demo                                  # a tour of the bundled test server
    mcpclient tools "python server.py"              # list a server's tools
    mcpclient call "python server.py" add a=1 b=2   # call one (values parsed as JSON)
    mcpclient tools --config mcp.json --server fs   # the mcpServers format desktop hosts use
    mcpclient tools https://host/mcp --auth-env TOK # a bearer token (or --auth, --header)

Every command takes ``--json`` (machine-readable output), ``--timeout SECONDS`` and ``-v``
(wire traffic and server logs on stderr); those that talk to a server also ``--header``,
``--auth``/``--auth-env`` and ``--protocol``. Exit codes: 0 success, 1 runtime error (including a
tool result with ``isError``), 2 usage error, 130 interrupted.

This module owns ``main()``: parse, run the command, turn exceptions into exit codes. The parts:
``args`` (the grammar, reading ``--config``), ``connect`` (the servers named and their clients:
headers, token, protocol), ``commands`` and ``demo`` (what each command does),
``render`` (MCP results as text), ``terminal`` (output, tables, the progress bar) and
``diagnostics`` (logs and error lines on stderr). Only the standard library and mcpclient's public
API are used; nothing heavy loads at import.
"""
from __future__ import annotations

import os
import sys
import traceback
from typing import List, Optional

from ..errors import MCPError

from .args import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE, PROG, UsageError, parse_args
from .args import parse_value  # noqa: F401  (re-exported: tests import it from here)
from .commands import HANDLERS
from .demo import cmd_demo
from .diagnostics import error_message, stderr_logging
from .terminal import Output, isatty

__all__ = ["main"]


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line; returns the exit code (console scripts pass it to ``sys.exit``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        ns = parse_args(args)
    except SystemExit as exc:  # argparse printed usage/help already
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    handler = cmd_demo if ns.command == "demo" else HANDLERS[ns.command]
    out = Output()
    try:
        with stderr_logging(ns.verbose, out.err):
            try:
                return handler(ns, out)
            except UsageError as exc:
                ns.parser.print_usage(out.err)
                out.err.write(f"{ns.parser.prog}: error: {exc}\n")
                return EXIT_USAGE
            except KeyboardInterrupt:
                out.err.write(("\n" if isatty(out.err) else "") + f"{PROG}: error: interrupted\n")
                return EXIT_INTERRUPTED
            except (MCPError, ValueError, TypeError, OSError) as exc:
                if isinstance(exc, BrokenPipeError):
                    raise
                if ns.verbose:
                    traceback.print_exc(file=out.err)
                out.err.write(f"{PROG}: error: {error_message(exc, ns.verbose, ns, getattr(ns, 'server_used', None))}\n")
                return EXIT_ERROR
            finally:
                out.flush()
    except BrokenPipeError:  # e.g. `mcpclient tools X | head -1`: stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_ERROR
