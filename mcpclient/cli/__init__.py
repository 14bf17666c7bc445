"""The ``mcpclient`` command line: talk to any MCP server from a shell.

::

    mcpclient demo                       # a tour of the bundled test server
    mcpclient tools "python server.py"   # list a server's tools
    mcpclient call "python server.py" add a=1 b=2      # call one (JSON values)
    mcpclient tools --config mcp.json --server fs      # an mcpServers file
    mcpclient tools https://host/mcp --auth-env TOK    # a bearer token

Every command takes ``--json`` (machine-readable output), ``--timeout SECONDS`` and ``-v``
(wire traffic and server logs on stderr); those that talk to a server also ``--header``,
``--auth``/``--auth-env`` and ``--protocol``. Exit codes: 0 success, 1 runtime error (including a
tool result with ``isError``), 2 usage error, 130 interrupted.

The parts: ``commands`` (``main()``: parse, run the command, turn exceptions into exit codes;
and what each command that talks to a server does), ``demo``, ``args`` (the grammar, reading
``--config``), ``connect`` (the servers named and their clients: headers, token, protocol),
``render`` (MCP results as text), ``terminal`` (output, tables, the progress bar) and
``diagnostics`` (logs and error lines on stderr). Only the standard library and mcpclient's public
API are used; nothing heavy loads at import.

Imports: anything below it (``testing`` for the demo, ``group``, ``client``); nothing imports it
but ``__main__``.
"""
from .args import parse_value  # noqa: F401  (re-exported: tests import it from here)
from .commands import main

__all__ = ["main"]
