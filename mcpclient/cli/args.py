"""The command line's grammar: the commands, their options and help, turning ``argv`` into a
namespace, ``key=value`` arguments, and the ``--config`` file (the ``mcpServers`` JSON format).

Also the exit codes and ``UsageError``, which every command may raise.
"""
from __future__ import annotations

import argparse
import json
import os
import re
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from .._version import __version__
from ..protocol.stateless import MODERN_VERSIONS
from ..protocol.spec import HANDSHAKE_VERSIONS
from ..transports.base import Endpoint

if TYPE_CHECKING:
    from ..transports.stdio import StdioTransport

PROG = "mcpclient"
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Default(float):
    """The ``--timeout`` not given: 60 s, unless a ``--config`` entry sets its own."""


DEFAULT_TIMEOUT = _Default(60.0)


class UsageError(Exception):
    """A mistake in the command line found after argparse ran (reported like argparse does, exit 2)."""


# --- values -------------------------------------------------------------------------------------

def _reject_constant(name: str) -> Any:
    raise ValueError(name)


class Server(NamedTuple):
    """One server to talk to: ``target`` is a URL or a command (string or ``StdioTransport``);
    ``kind`` is ``"http"``, ``"sse"`` or None (a URL: Streamable HTTP, falling back to HTTP+SSE).
    ``timeout``/``protocol``: a config entry's own (None/"auto": the command line's)."""
    name: Optional[str]
    target: Union[str, "StdioTransport"]
    headers: Dict[str, str]
    kind: Optional[str] = None
    timeout: Optional[float] = None
    protocol: str = "auto"
    enabled: bool = True
    include: Tuple[str, ...] = ()  # a config entry's tool filters (globs)
    exclude: Tuple[str, ...] = ()


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


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name (RFC 9110 token)


def parse_header(text: str) -> Tuple[str, str]:
    """``"K: V"`` (curl's form) or ``"K=V"`` -> ``("K", "V")``. A header name holds neither ``:``
    nor ``=``, so the first of them ends it; the value may contain both. The value is never
    quoted back in an error (it may be a secret)."""
    cut = min((i for i in (text.find(":"), text.find("=")) if i >= 0), default=-1)
    name = text[:cut].strip() if cut >= 0 else text.strip()
    if cut < 0 or not _TOKEN.fullmatch(name):
        shown = name if _TOKEN.fullmatch(name or "-") else "(not a header name)"
        raise argparse.ArgumentTypeError(f"expected 'Name: value' or Name=value, got a header named {shown}")
    value = text[cut + 1:].strip()
    if "\r" in value or "\n" in value:
        raise argparse.ArgumentTypeError(f"header {name}: the value contains a line break")
    return name, value


PROTOCOLS = ("auto", "legacy", "modern") + tuple(MODERN_VERSIONS) + tuple(HANDSHAKE_VERSIONS)


def _protocol_value(text: str) -> str:
    if text not in PROTOCOLS:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of: {', '.join(PROTOCOLS)}")
    return text


def config_entries(path: str) -> Dict[str, Any]:
    """The raw entries of a configuration file (``mcpServers``, or VS Code's ``servers``), in file
    order. Each is parsed on its own (``connect.config_server``), so an entry naming an unset
    ``${VAR}`` fails alone, not the servers beside it."""
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as f:
            data = json.load(f)
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ValueError(f"{path}: no \"mcpServers\" (or \"servers\") object")
    return servers


def config_entry(path: str, server: Optional[str]) -> Tuple[str, Any]:
    """The entry named ``server`` (or the only one) of a configuration file."""
    servers = config_entries(path)
    names = ", ".join(sorted(servers)) or "(none)"
    if server is None:
        if len(servers) != 1:
            raise UsageError(f"{path} defines several servers; choose one with --server ({names})")
        server = next(iter(servers))
    if server not in servers:
        raise UsageError(f"{path}: no server {server!r} (available: {names})")
    return server, servers[server]


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
picks a server from an mcpServers JSON file (the format desktop MCP hosts use; "type", "headers"
and ${VAR} are honoured); 'tools' and 'info' without --server show every server of the file.

examples:
  mcpclient demo
  mcpclient tools "python server.py"
  mcpclient call "python server.py" add a=1 b=2
  mcpclient call "python server.py" echo --args-json '{"text": "hi"}'
  mcpclient read --config ~/mcp.json --server files file:///tmp/notes.txt
  mcpclient tools https://mcp.example.com/mcp --auth-env MCP_TOKEN -H 'X-Team: blue'
  mcpclient prompt "python server.py" greet name=bob --json
"""


def _common_options(parser: argparse.ArgumentParser, *, target: bool, defaults: bool) -> None:
    """The options every command takes. Sub-parsers suppress defaults so values given before
    the command name survive."""
    d = (lambda value: value) if defaults else (lambda value: argparse.SUPPRESS)
    group = parser.add_argument_group("common options")
    group.add_argument("--json", action="store_true", default=d(False),
                       help="print machine-readable JSON (the raw MCP results) on stdout")
    group.add_argument("--timeout", type=_timeout_value, default=d(DEFAULT_TIMEOUT), metavar="SECONDS",
                       help="per-request timeout (default 60, or the --config entry's \"timeout\"; "
                            "0 waits forever)")
    group.add_argument("-v", "--verbose", action="count", default=d(0),
                       help="show wire traffic and server logs on stderr (-vv: all library debug logs)")
    if target:
        group.add_argument("--config", metavar="FILE", default=d(None),
                           help="read the server from an mcpServers JSON file instead of TARGET")
        group.add_argument("--server", metavar="NAME", default=d(None),
                           help="which server in --config (optional when it defines only one; "
                                "'tools' and 'info' without it show every server)")
        group.add_argument("-H", "--header", metavar="'NAME: VALUE'", type=parse_header, action="append",
                           default=d(None), help="an HTTP header to send (repeatable; NAME=VALUE works too); "
                                                 "URL targets only")
        group.add_argument("--auth", metavar="TOKEN", default=d(None),
                           help="a bearer token: sends 'Authorization: Bearer TOKEN' (URL targets only; "
                                "--auth-env keeps it out of the process list and shell history)")
        group.add_argument("--auth-env", metavar="VAR", default=d(None),
                           help="read the bearer token from the environment variable VAR")
        group.add_argument("--protocol", metavar="VERSION", type=_protocol_value, default=d("auto"),
                           help="auto (default: probe server/discover, else initialize), legacy "
                                "(the initialize handshake), modern (2026), or an exact revision such as "
                                "2025-06-18")


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
    ns, unknown = sub.parse_known_intermixed_args(ns.args, namespace=ns)  # options may follow key=value pairs
    ns.parser = sub
    if unknown:
        hint = _quote_hint(ns, unknown)
        options = [u.partition("=")[0] for u in unknown if u.startswith("-")]
        if hint or not options:
            sub.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
        sub.error(f"unrecognized option{'s' * (len(options) > 1)}: {' '.join(options)}")  # not their values
    try:
        _resolve_positionals(ns)
    except UsageError as exc:
        sub.error(str(exc))
    return ns


def looks_like_url(text: Any) -> bool:
    return isinstance(text, str) and re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text) is not None


def _quote_hint(ns: argparse.Namespace, rest: Sequence[str]) -> str:
    """When TARGET looks like the first word of a command the shell split (``mcpclient tools
    python server.py``): a hint to quote the whole command. Empty otherwise."""
    target = getattr(ns, "target", None)
    if ns.command == "demo" or getattr(ns, "config", None) is not None or not isinstance(target, str):
        return ""
    if looks_like_url(target) or " " in target.strip() or not rest:
        return ""
    words = " ".join([target, *rest])
    return (f" (TARGET is one argument: if the server's command is {words!r}, quote it: "
            f"{PROG} {ns.command} \"{words}\" ...)")


def _resolve_positionals(ns: argparse.Namespace) -> None:
    """Assign positionals by role; with --config there is no TARGET, so everything shifts left."""
    extra, pairs, _ = COMMANDS[ns.command]
    if ns.command == "demo":
        if any(getattr(ns, name) not in (None, "auto") for name in ("config", "server", "header", "auth",
                                                                    "auth_env", "protocol")):
            raise UsageError("demo runs the bundled test server; it takes no --config/--server/--header/"
                             "--auth/--protocol")  # given before the command name
        return
    if ns.auth is not None and ns.auth_env is not None:
        raise UsageError("give --auth or --auth-env, not both")
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
    if ns.config is None and ns.target is not None and not looks_like_url(ns.target) \
            and (ns.header or ns.auth is not None or ns.auth_env is not None):
        raise UsageError("--header and --auth apply to URL targets only")
    if pairs:
        if ns.config is not None and flat and "=" not in flat[0]:
            raise UsageError("give either TARGET or --config/--server, not both")
        bad = next((p for p in flat if "=" not in p), None)
        if bad is not None:
            split = [getattr(ns, name) for name in extra] + flat[:flat.index(bad) + 1]
            raise UsageError(f"expected key=value, got {bad!r}{_quote_hint(ns, split)}")
        ns.pairs = flat
    elif flat:
        hint = (" (give either TARGET or --config/--server, not both)" if ns.config is not None
                else _quote_hint(ns, [getattr(ns, name) for name in extra] + flat))
        raise UsageError(f"unexpected argument {flat[0]!r}{hint}")


def is_url(target: Any) -> bool:
    return isinstance(target, str) and target.lower().startswith(("http://", "https://"))


def host_port(url: str) -> str:
    """``https://user:pw@example.com/mcp`` -> ``example.com:443`` (never the userinfo)."""
    return Endpoint.of_url(url).address or "?"
