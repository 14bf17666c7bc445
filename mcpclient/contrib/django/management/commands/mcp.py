"""``manage.py mcp status|tools|call``: the servers of ``settings.MCP_SERVERS`` from a shell.

    manage.py mcp status                 # each server: state, protocol, tools, error (exit 1 if one is down)
    manage.py mcp tools [--server files] # the group's tools (or one server's own), as signatures
    manage.py mcp call files_read_text_file path=/srv/notes.txt   # JSON values: n=3 flag=true
    every subcommand: --json (one JSON document)
"""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from .....cli.terminal import Output
from .... import commands
from ... import mcp


class Command(BaseCommand):
    help = "Talk to the MCP servers of settings.MCP_SERVERS: status, tools, call."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", metavar="{status,tools,call}")
        actions.required = True
        status = actions.add_parser("status", help="each server's state, protocol, tool count and error")
        tools = actions.add_parser("tools", help="the tools the servers offer")
        tools.add_argument("--server", help="one server's own tools (names as the server gives them)")
        call = actions.add_parser("call", help="call a tool: its namespaced name, then key=value arguments")
        call.add_argument("tool")
        call.add_argument("pairs", nargs="*", metavar="key=value")
        call.add_argument("--args-json", help="the arguments as one JSON object")
        call.add_argument("--timeout", type=float, default=None, help="seconds (default: the client's)")
        for sub in (status, tools, call):
            sub.add_argument("--json", action="store_true", help="one JSON document")

    def handle(self, *args: Any, **options: Any) -> None:
        out = Output(self.stdout, self.stderr)
        action = options["action"]
        try:
            if action == "status":
                code = commands.status(mcp, out, options["json"])
            elif action == "tools":
                code = commands.tools(mcp, out, options["server"], options["json"])
            else:
                timeout = options["timeout"]
                code = commands.call(mcp, out, options["tool"], options["pairs"], args_json=options["args_json"],
                                     as_json=options["json"], **({"timeout": timeout} if timeout is not None else {}))
        except commands.CommandFailed as exc:
            raise CommandError(str(exc), returncode=exc.code) from exc
        finally:
            out.flush()
        if code:
            raise CommandError("a server is not ready" if action == "status" else "the tool reported an error",
                               returncode=code)
