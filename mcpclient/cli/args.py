"""The command line's grammar: the commands, their options and help, turning ``argv`` into a
namespace, ``key=value`` arguments, and the ``--config`` file (the ``mcpServers`` JSON format).

Also the exit codes and ``UsageError``, which every command may raise.
"""
from __future__ import annotations

import argparse
import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from mcpclient import StdioTransport, __version__

PROG = "mcpclient"
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """A mistake in the command line found after argparse ran (reported like argparse does, exit 2)."""


# --- values -------------------------------------------------------------------------------------

def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def parse_value(text: str) -> Any:
    """JSON when ``text`` parses as JSON (``3``, ``true``, ``[1,2]``, ``"3"``), else the string itself."""
    try:
        return json.loads(text, parse_constant=_reject_constant)  # NaN/Infinity stay strings
    except ValueError:
        return text


def parse_pairs(pairs: Sequence[str], *, typed: bool) -> Dict[str, Any]:
    """``["a=1", "name=bob"]`` -> ``{"a": 1, "name": "bob"}`` (values as strings unless ``typed``)."""
    result: Dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"expected key=value, got {pair!r}")
        result[key] = parse_value(value) if typed else value
    return result


def target_from_config(path: str, server: Optional[str]) -> Union[str, StdioTransport]:
    """A URL or a transport from an ``mcpServers`` JSON file (Claude Desktop, Cursor and others use it)."""
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except ValueError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ValueError(f"{path}: no \"mcpServers\" object")
    names = ", ".join(sorted(servers)) or "(none)"
    if server is None:
        if len(servers) != 1:
            raise ValueError(f"{path} defines several servers; choose one with --server ({names})")
        server = next(iter(servers))
    entry = servers.get(server)
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: no server {server!r} (available: {names})")
    if isinstance(entry.get("url"), str):
        return entry["url"]
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise ValueError(f"{path}: server {server!r} has no \"command\" (or \"url\")")
    args = entry.get("args", [])
    if not isinstance(args, list):
        raise ValueError(f"{path}: server {server!r}: \"args\" must be a list")
    env = entry.get("env") or {}
    if not isinstance(env, dict):
        raise ValueError(f"{path}: server {server!r}: \"env\" must be an object")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError(f"{path}: server {server!r}: \"cwd\" must be a string")
    return StdioTransport([command, *(str(a) for a in args)],
                          env={str(k): str(v) for k, v in env.items()},
                          cwd=os.path.expanduser(cwd) if cwd else None, name=server)


# --- the parser ---------------------------------------------------------------------------------

# name -> (extra positionals after TARGET, takes trailing key=value pairs, one-line help)
COMMANDS: Dict[str, Tuple[Tuple[str, ...], bool, str]] = {
    "demo": ((), False, "tour the bundled test server (no target needed)"),
    "info": ((), False, "show the server's name, version, protocol, capabilities and instructions"),
    "tools": ((), False, "list tools"),
    "call": (("tool",), True, "call a tool: TOOL key=value ... (values parsed as JSON)"),
    "resources": ((), False, "list resources and resource templates"),
    "read": (("uri",), False, "read a resource"),
    "prompts": ((), False, "list prompts"),
    "prompt": (("name",), True, "render a prompt: NAME key=value ... (values are strings)"),
    "ping": ((), False, "ping the server and print the round-trip time"),
}

_EPILOG = """\
TARGET is a URL or a quoted command line run over stdio, e.g. "python server.py" or
"npx -y @modelcontextprotocol/server-everything". Instead of TARGET, --config FILE --server NAME
picks a server from an mcpServers JSON file (the format desktop MCP hosts use).

examples:
  mcpclient demo
  mcpclient tools "python server.py"
  mcpclient call "python server.py" add a=1 b=2
  mcpclient call "python server.py" echo --args-json '{"text": "hi"}'
  mcpclient read --config ~/mcp.json --server files file:///tmp/notes.txt
  mcpclient prompt "python server.py" greet name=bob --json
"""


def _common_options(parser: argparse.ArgumentParser, *, target: bool, defaults: bool) -> None:
    """The options every command takes. Sub-parsers suppress defaults so values given before
    the command name survive."""
    d = (lambda value: value) if defaults else (lambda value: argparse.SUPPRESS)
    group = parser.add_argument_group("common options")
    group.add_argument("--json", action="store_true", default=d(False),
                       help="print machine-readable JSON (the raw MCP results) on stdout")
    group.add_argument("--timeout", type=_timeout_value, default=d(60.0), metavar="SECONDS",
                       help="per-request timeout (default 60; 0 waits forever)")
    group.add_argument("-v", "--verbose", action="count", default=d(0),
                       help="show wire traffic and server logs on stderr (-vv: all library debug logs)")
    if target:
        group.add_argument("--config", metavar="FILE", default=d(None),
                           help="read the server from an mcpServers JSON file instead of TARGET")
        group.add_argument("--server", metavar="NAME", default=d(None),
                           help="which server in --config (optional when it defines only one)")


def _timeout_value(text: str) -> Optional[float]:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return value or None


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: global options and the command name; the rest goes to the command."""
    commands = "\n".join(f"  {name:<10} {spec[2]}" for name, spec in COMMANDS.items())
    parser = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        usage=f"{PROG} [-h] [--version] COMMAND [TARGET] [ARGS ...] [options]",
        description="Talk to Model Context Protocol servers from the command line.\n\ncommands:\n" + commands,
        epilog=_EPILOG + f"\nRun '{PROG} COMMAND -h' for a command's options.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    _common_options(parser, target=True, defaults=True)
    parser.add_argument("command", nargs="?", choices=list(COMMANDS), metavar="COMMAND", help=argparse.SUPPRESS)
    parser.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def build_command_parser(command: str) -> argparse.ArgumentParser:
    extra, pairs, summary = COMMANDS[command]
    takes_target = command != "demo"
    parser = argparse.ArgumentParser(prog=f"{PROG} {command}", description=summary[0].upper() + summary[1:] + ".",
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=_EPILOG if takes_target else None)
    if takes_target:
        words = " ".join(e.upper() for e in extra) + (" [key=value ...]" if pairs else "")
        parser.usage = (f"{PROG} {command} (TARGET | --config FILE [--server NAME]) {words} [options]"
                        .replace("  ", " "))
        parser.add_argument("target", nargs="?", metavar="TARGET", help="a URL or a quoted command line")
        helps = {"tool": "the tool's name", "uri": "the resource's URI", "name": "the prompt's name"}
        for name in extra:
            parser.add_argument(name, nargs="?", metavar=name.upper(), help=helps[name])
        if pairs:
            parser.add_argument("pairs", nargs="*", metavar="key=value",
                                help="arguments; values are parsed as JSON when they parse ('n=3' is a "
                                     "number, 'flag=true' a boolean), else kept as strings (quote a "
                                     "number to send it as a string: 'text=\"42\"')"
                                if command == "call" else "arguments (always strings)")
    if command == "call":
        parser.add_argument("--args-json", metavar="JSON",
                            help="all arguments as one JSON object (key=value pairs override it)")
    if command == "read":
        parser.add_argument("-o", "--output", metavar="FILE",
                            help="write the resource's raw contents (text or bytes) to FILE")
    _common_options(parser, target=takes_target, defaults=False)
    return parser


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse the whole command line (may raise SystemExit like argparse); ``ns.parser`` is the
    command's parser, for reporting later usage errors."""
    top = build_parser()
    ns = top.parse_args(argv)
    if ns.command is None:
        if not argv:
            top.print_help()
            raise SystemExit(EXIT_USAGE)
        top.error(f"choose a COMMAND: {', '.join(COMMANDS)}")
    sub = build_command_parser(ns.command)
    ns = sub.parse_intermixed_args(ns.args, namespace=ns)  # options may follow key=value pairs
    ns.parser = sub
    try:
        _resolve_positionals(ns)
    except UsageError as exc:
        sub.error(str(exc))
    return ns


def _resolve_positionals(ns: argparse.Namespace) -> None:
    """Assign positionals by role; with --config there is no TARGET, so everything shifts left."""
    extra, pairs, _ = COMMANDS[ns.command]
    if ns.command == "demo":
        if ns.config is not None or ns.server is not None:  # given before the command name
            raise UsageError("demo runs the bundled test server; it takes no --config/--server")
        return
    flat: List[str] = []
    for name in ("target", *extra, *(("pairs",) if pairs else ())):
        value = getattr(ns, name)
        if isinstance(value, list):
            flat.extend(value)
        elif value is not None:
            flat.append(value)
    if ns.server is not None and ns.config is None:
        raise UsageError("--server needs --config FILE")
    if ns.config is None:
        if not flat:
            raise UsageError("give a TARGET (a URL or a quoted command) or --config FILE --server NAME")
        ns.target = flat.pop(0)
    else:
        ns.target = None
    for name in extra:
        if not flat:
            raise UsageError(f"the following argument is required: {name.upper()}")
        setattr(ns, name, flat.pop(0))
    if pairs:
        if ns.config is not None and flat and "=" not in flat[0]:
            raise UsageError("give either TARGET or --config/--server, not both")
        ns.pairs = flat
    elif flat:
        hint = " (give either TARGET or --config/--server, not both)" if ns.config is not None else ""
        raise UsageError(f"unexpected argument {flat[0]!r}{hint}")
