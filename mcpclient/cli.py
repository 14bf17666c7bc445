"""The ``mcpclient`` command line: talk to any MCP server from a shell.

::

    mcpclient demo                                  # a tour of the bundled test server
    mcpclient tools "python server.py"              # list a server's tools
    mcpclient call "python server.py" add a=1 b=2   # call one (values parsed as JSON)
    mcpclient tools --config mcp.json --server fs   # the mcpServers format desktop hosts use

Every command takes ``--json`` (machine-readable output), ``--timeout SECONDS`` and ``-v``
(wire traffic and server logs on stderr). Exit codes: 0 success, 1 runtime error (including a
tool result with ``isError``), 2 usage error, 130 interrupted.

Only the standard library and mcpclient's public API are used; nothing heavy loads at import.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import textwrap
import threading
import time
import traceback
from typing import IO, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from mcpclient import (
    AudioContent, Client, EmbeddedResource, ImageContent, InvalidParams, MCPError, ProcessExited, ResourceContents,
    ResourceLink, StdioTransport, TextContent, ToolResult, __version__,
)

__all__ = ["main"]

PROG = "mcpclient"
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

Target = Any  # a command string, a URL string, or a Transport


class UsageError(Exception):
    """A mistake in the command line found after argparse ran (reported like argparse does, exit 2)."""


# --- terminal helpers ---------------------------------------------------------------------------

def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _can_encode(stream: Any, text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def _width(stream: Any) -> int:
    """Columns available on ``stream`` (80 when it is not a terminal)."""
    if not _isatty(stream):
        return 80
    return max(40, shutil.get_terminal_size((80, 24)).columns)


class _Style:
    """Glyphs for the current stdout/stderr: Unicode when they can encode it, ASCII otherwise."""

    def __init__(self, stream: Any) -> None:
        fancy = _can_encode(stream, "\u2192\u2026\u2014\u2588\u2591")
        self.arrow = "\u2192" if fancy else "->"
        self.ellipsis = "\u2026" if fancy else "..."
        self.dash = "\u2014" if fancy else "-"
        self.full = "\u2588" if fancy else "#"
        self.empty = "\u2591" if fancy else "."


def _truncate(text: str, width: int, ellipsis: str = "...") -> str:
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: max(0, width - len(ellipsis))] + ellipsis


def _one_line(text: Optional[str]) -> str:
    return " ".join((text or "").split())


def _table(rows: Sequence[Sequence[str]], headers: Optional[Sequence[str]] = None, *, indent: str = "",
           max_width: Optional[int] = None, ellipsis: str = "...") -> List[str]:
    """Left-aligned columns separated by two spaces; the last column is cut to ``max_width``."""
    all_rows = ([list(headers)] if headers else []) + [list(r) for r in rows]
    if not all_rows:
        return []
    ncols = max(len(r) for r in all_rows)
    for r in all_rows:
        r.extend([""] * (ncols - len(r)))
    widths = [max(len(r[i]) for r in all_rows) for i in range(ncols - 1)]
    lines = []
    for r in all_rows:
        head = "".join(cell.ljust(w) + "  " for cell, w in zip(r, widths))
        last = r[-1]
        if max_width is not None:
            last = _truncate(last, max_width - len(indent) - len(head), ellipsis)
        lines.append((indent + head + last).rstrip())
    return lines


class ProgressBar:
    """An ``on_progress`` callback that draws a bar on stderr (only when stderr is a terminal).

    Called on the client's notification thread; ``close()`` (main thread) stops all drawing, so a
    late notification can never scribble over the output that follows.
    """

    def __init__(self, label: str, stream: Optional[IO[str]] = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = _isatty(self.stream)
        self.style = _Style(self.stream)
        self.updates = 0
        self.last: Optional[Tuple[float, Optional[float], Optional[str]]] = None
        self._lock = threading.Condition()
        self._closed = False
        self._drawn = 0

    def __call__(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> None:
        with self._lock:
            if self._closed:
                return
            self.updates += 1
            self.last = (progress, total, message)
            if self.tty:
                self._draw()
            self._lock.notify_all()

    def wait_complete(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for ``progress >= total``: the client may deliver the last
        progress callbacks just after the call itself returned."""
        def complete() -> bool:
            return (self.last is not None and self.last[1] is not None
                    and isinstance(self.last[0], (int, float)) and self.last[0] >= self.last[1])
        with self._lock:
            return self._lock.wait_for(complete, timeout)

    def _draw(self) -> None:
        assert self.last is not None
        progress, total, message = self.last
        width = _width(self.stream) - 1
        if total:
            fraction = min(max(progress / total, 0.0), 1.0)
            cells = 24
            filled = int(round(fraction * cells))
            bar = "[" + self.style.full * filled + self.style.empty * (cells - filled) + "]"
            count = f"{_num(progress)}/{_num(total)}  {fraction * 100:3.0f}%"
        else:
            bar = ""
            count = f"{_num(progress)} so far"
        parts = [p for p in (self.label, bar, count, _one_line(message)) if p]
        line = _truncate("  ".join(parts), width, self.style.ellipsis)
        pad = " " * max(0, self._drawn - len(line))
        try:
            self.stream.write("\r" + line + pad)
            self.stream.flush()
        except (OSError, ValueError):
            return
        self._drawn = len(line)

    def close(self, keep: bool = False) -> None:
        """Stop drawing; keep the last bar on its own line or wipe it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if not (self.tty and self._drawn):
                return
            try:
                self.stream.write("\n" if keep else "\r" + " " * self._drawn + "\r")
                self.stream.flush()
            except (OSError, ValueError):
                pass


def _num(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


# --- rendering results --------------------------------------------------------------------------

def _json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=repr)


def render_block(block: Any) -> str:
    """One content block as text: text as-is, media and links as short bracketed summaries."""
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, (ImageContent, AudioContent)):
        return f"[{block.type} {block.mime_type or 'unknown type'}, {len(block.data)} bytes]"
    if isinstance(block, ResourceLink):
        return f"[link {block.uri}]"
    if isinstance(block, EmbeddedResource):
        contents = block.resource
        if contents.text is not None:
            return contents.text
        return f"[blob {len(contents.blob or b'')} bytes]"
    return f"[unknown type {getattr(block, 'type', '?')}]"


def _duplicates_structured(block: Any, structured: Any) -> bool:
    """True for the text block that merely repeats ``structuredContent`` as JSON (as the spec advises)."""
    if structured is None or not isinstance(block, TextContent):
        return False
    try:
        return json.loads(block.text) == structured
    except ValueError:
        return False


def render_tool_result(result: ToolResult) -> str:
    """Content blocks one per line, then structured content as indented JSON (not repeated twice)."""
    structured = result.structured_content
    lines = [render_block(b) for b in result.content if not _duplicates_structured(b, structured)]
    if structured is not None:
        lines.append(_json_text(structured))
    return "\n".join(lines)


def hex_bytes(data: bytes, limit: int = 256) -> str:
    """``00 01 02 ff``, 16 bytes a line, cut after ``limit`` bytes."""
    shown = data[:limit]
    lines = [" ".join(f"{b:02x}" for b in shown[i:i + 16]) for i in range(0, len(shown), 16)]
    if len(data) > limit:
        lines.append(f"... ({len(data) - limit} more bytes)")
    return "\n".join(lines) if lines else "(empty)"


def render_contents(contents: ResourceContents) -> str:
    if contents.text is not None:
        return contents.text
    if contents.blob is not None:
        return hex_bytes(contents.blob)
    return "(no content)"


def _arguments_summary(schema: Any) -> str:
    """``a, b, [delay]``: required arguments plain, optional ones in brackets."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return ""
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    return ", ".join(name if name in required else f"[{name}]" for name in schema["properties"])


def _prompt_arguments(prompt: Any) -> str:
    return ", ".join(a.name if a.required else f"[{a.name}]" for a in prompt.arguments)


def _capabilities_summary(caps: Dict[str, Any]) -> str:
    parts = []
    for name, value in caps.items():
        flags = [k for k, v in value.items() if v is True] if isinstance(value, dict) else []
        parts.append(f"{name} ({', '.join(flags)})" if flags else name)
    return ", ".join(parts) or "(none)"


class Output:
    """Where a command writes: stdout for results, stderr for diagnostics."""

    def __init__(self, out: Optional[IO[str]] = None, err: Optional[IO[str]] = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.style = _Style(self.out)
        self.width = _width(self.out)
        self.cut = _isatty(self.out)  # only shorten lines for a human at a terminal

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def flush(self) -> None:
        try:
            self.out.flush()
        except (OSError, ValueError):
            pass

    def lines(self, lines: Iterable[str]) -> None:
        for text in lines:
            self.line(text)

    def json(self, value: Any) -> None:
        self.line(_json_text(value))

    def table(self, rows: Sequence[Sequence[str]], headers: Optional[Sequence[str]] = None,
              indent: str = "") -> None:
        self.lines(_table(rows, headers, indent=indent, max_width=self.width if self.cut else None,
                          ellipsis=self.style.ellipsis))

    def wrapped(self, text: str, indent: str, first: str = "") -> None:
        """``first`` then ``text`` wrapped to the terminal, continuation lines under ``indent``."""
        width = max(self.width, len(indent) + 20)
        self.lines(textwrap.wrap(_one_line(text), width, initial_indent=first.ljust(len(indent)),
                                 subsequent_indent=indent) or [first])


# --- arguments ----------------------------------------------------------------------------------

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


# --- config files -------------------------------------------------------------------------------

def target_from_config(path: str, server: Optional[str]) -> Target:
    """Build a target from an ``mcpServers`` JSON file (Claude Desktop, Cursor and others use it)."""
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except ValueError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ValueError(f"{path}: no \"mcpServers\" object")
    if server is None:
        if len(servers) != 1:
            names = ", ".join(sorted(servers)) or "(none)"
            raise ValueError(f"{path} defines several servers; choose one with --server ({names})")
        server = next(iter(servers))
    entry = servers.get(server)
    if not isinstance(entry, dict):
        names = ", ".join(sorted(servers)) or "(none)"
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
    """Parse the whole command line (may raise SystemExit like argparse)."""
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
    command = ns.command
    extra, pairs, _ = COMMANDS[command]
    if command == "demo":
        if getattr(ns, "config", None) is not None or getattr(ns, "server", None) is not None:
            raise UsageError("demo runs the bundled test server; it takes no --config/--server")
        return
    names = ("target",) + extra + (("pairs",) if pairs else ())
    flat: List[str] = []
    for name in names:
        value = getattr(ns, name, None)
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
        ns_value = flat.pop(0)
        if ns.config is not None and flat and "=" not in flat[0] and pairs:
            raise UsageError("give either TARGET or --config/--server, not both")
        setattr(ns, name, ns_value)
    if pairs:
        ns.pairs = flat
    elif flat:
        hint = " (give either TARGET or --config/--server, not both)" if ns.config is not None else ""
        raise UsageError(f"unexpected argument {flat[0]!r}{hint}")


# --- logging ------------------------------------------------------------------------------------

class _LogFormatter(logging.Formatter):
    """Wire lines bare (``-> {...}``), server lines tagged with the server, the rest with their logger."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.name == "mcpclient.wire":
            text = message
        elif record.name.startswith("mcpclient.server."):
            text = f"[{record.name[len('mcpclient.server.'):]}] {message}"
        else:
            text = f"{record.name}: {record.levelname.lower()}: {message}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


class _LoggingSetup:
    """Install (and on exit remove) the CLI's stderr log handler, so ``main()`` can run in-process."""

    LOGGERS = ("mcpclient", "mcpclient.wire", "mcpclient.server")

    def __init__(self, verbose: int, stream: IO[str]) -> None:
        self.verbose = verbose
        self.handler = logging.StreamHandler(stream)
        self.handler.setFormatter(_LogFormatter())
        self.saved: List[Tuple[logging.Logger, int]] = []

    def __enter__(self) -> "_LoggingSetup":
        if self.verbose >= 2:
            levels = {"mcpclient": logging.DEBUG}
        elif self.verbose == 1:
            levels = {"mcpclient": logging.WARNING, "mcpclient.wire": logging.DEBUG, "mcpclient.server": logging.INFO}
        else:  # quiet: only what servers themselves flag as warnings or worse
            levels = {"mcpclient": logging.CRITICAL + 1, "mcpclient.server": logging.WARNING}
        for name in self.LOGGERS:
            logger = logging.getLogger(name)
            self.saved.append((logger, logger.level))
            logger.setLevel(levels.get(name, logging.NOTSET))
        logging.getLogger("mcpclient").addHandler(self.handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        logging.getLogger("mcpclient").removeHandler(self.handler)
        for logger, level in self.saved:
            logger.setLevel(level)


# --- commands -----------------------------------------------------------------------------------

def _connect(ns: argparse.Namespace) -> Client:
    target = target_from_config(ns.config, ns.server) if ns.config else ns.target
    return Client(target, timeout=ns.timeout)


def cmd_info(ns: argparse.Namespace, out: Output) -> int:
    with _connect(ns) as client:
        info = client.server_info
        if ns.json:
            out.json({"serverInfo": info.raw, "protocolVersion": client.protocol_version,
                      "capabilities": client.server_capabilities, "instructions": client.instructions})
            return EXIT_OK
        _print_server(out, client, indent="")
    return EXIT_OK


def _print_server(out: Output, client: Client, indent: str) -> None:
    """Name, version, protocol, capabilities and instructions as an aligned, wrapped list."""
    info = client.server_info
    rows = [("name", info.name or "(unnamed)"), ("version", info.version or "?")]
    if info.title:
        rows.append(("title", info.title))
    rows += [("protocol", client.protocol_version or "?"),
             ("capabilities", _capabilities_summary(client.server_capabilities))]
    if client.instructions:
        rows.append(("instructions", client.instructions))
    column = max(len(key) for key, _ in rows) + 2
    for key, value in rows:
        out.wrapped(value, " " * (len(indent) + column), indent + key)


def cmd_tools(ns: argparse.Namespace, out: Output) -> int:
    with _connect(ns) as client:
        tools = client.list_tools()
    if ns.json:
        out.json([t.raw for t in tools])
    elif not tools:
        out.line("(no tools)")
    else:
        out.table([(t.name, _arguments_summary(t.input_schema), _one_line(t.description or t.display_name))
                   for t in tools], ("TOOL", "ARGUMENTS", "DESCRIPTION"))
    return EXIT_OK


def cmd_call(ns: argparse.Namespace, out: Output) -> int:
    arguments: Dict[str, Any] = {}
    if ns.args_json is not None:
        try:
            arguments = json.loads(ns.args_json)
        except ValueError as exc:
            raise UsageError(f"--args-json is not valid JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise UsageError("--args-json must be a JSON object")
    pairs = parse_pairs(ns.pairs, typed=True)
    arguments.update(pairs)
    coerced = [k for k, v in pairs.items() if not isinstance(v, str)]
    bar = ProgressBar(ns.tool, out.err)
    with _connect(ns) as client:
        try:
            result = client.call_tool(ns.tool, arguments, on_progress=bar)
        except InvalidParams as exc:
            if not coerced:
                raise
            example = f"{coerced[0]}='\"{_compact(pairs[coerced[0]])}\"'"
            raise ValueError(f"{exc} (note: key=value values are parsed as JSON; to send a string, "
                             f"quote it: {example})") from exc
        finally:
            bar.close()
    if ns.json:
        out.json(result.raw)
    elif not result.is_error:
        text = render_tool_result(result)
        if text:
            out.line(text)
    if result.is_error:
        message = render_tool_result(result) or "(no message)"
        out.err.write(f"{PROG}: error: tool {ns.tool!r} failed: {message}\n")
        return EXIT_ERROR
    return EXIT_OK


def cmd_resources(ns: argparse.Namespace, out: Output) -> int:
    with _connect(ns) as client:
        resources = client.list_resources()
        templates = client.list_resource_templates()
    if ns.json:
        out.json({"resources": [r.raw for r in resources], "resourceTemplates": [t.raw for t in templates]})
        return EXIT_OK
    if resources:
        out.table([(r.uri, r.name, r.mime_type or "", "" if r.size is None else str(r.size),
                    _one_line(r.description or r.title)) for r in resources],
                  ("URI", "NAME", "MIME TYPE", "SIZE", "DESCRIPTION"))
    else:
        out.line("(no resources)")
    if templates:
        out.line()
        out.table([(t.uri_template, t.name, t.mime_type or "", _one_line(t.description or t.title))
                   for t in templates], ("URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"))
    return EXIT_OK


def cmd_read(ns: argparse.Namespace, out: Output) -> int:
    with _connect(ns) as client:
        contents = client.read_resource(ns.uri)
    if ns.output:
        with open(ns.output, "wb") as f:
            for c in contents:
                f.write(c.blob if c.blob is not None else (c.text or "").encode("utf-8"))
        total = sum(len(c.blob) if c.blob is not None else len((c.text or "").encode("utf-8")) for c in contents)
        out.err.write(f"{PROG}: wrote {total} bytes to {ns.output}\n")
    if ns.json:
        out.json([c.raw for c in contents])
    elif not ns.output:
        for i, c in enumerate(contents):
            if len(contents) > 1:
                out.line(("" if i == 0 else "\n") + f"{out.style.dash * 2} {c.uri} ({c.mime_type or '?'})")
            out.line(render_contents(c))
    return EXIT_OK


def cmd_prompts(ns: argparse.Namespace, out: Output) -> int:
    with _connect(ns) as client:
        prompts = client.list_prompts()
    if ns.json:
        out.json([p.raw for p in prompts])
    elif not prompts:
        out.line("(no prompts)")
    else:
        out.table([(p.name, _prompt_arguments(p), _one_line(p.description or p.title)) for p in prompts],
                  ("PROMPT", "ARGUMENTS", "DESCRIPTION"))
    return EXIT_OK


def cmd_prompt(ns: argparse.Namespace, out: Output) -> int:
    arguments = parse_pairs(ns.pairs, typed=False)
    with _connect(ns) as client:
        result = client.get_prompt(ns.name, arguments)
    if ns.json:
        out.json(result.raw)
        return EXIT_OK
    if result.description:
        out.line(result.description)
        out.line()
    for message in result.messages:
        _print_message(out, message.role, render_block(message.content), "")
    return EXIT_OK


def _print_message(out: Output, role: str, text: str, indent: str) -> None:
    label = f"{indent}{role}: "
    body = text.splitlines() or [""]
    out.line(label + body[0])
    for rest in body[1:]:
        out.line(" " * len(label) + rest)


def cmd_ping(ns: argparse.Namespace, out: Output) -> int:
    with _connect(ns) as client:
        start = time.perf_counter()
        client.ping()
        elapsed_ms = (time.perf_counter() - start) * 1000
        name = client.server_info.name or "server"
    if ns.json:
        out.json({"server": name, "roundTripMs": round(elapsed_ms, 3)})
    else:
        out.line(f"pong from {name} in {elapsed_ms:.2f} ms")
    return EXIT_OK


# --- demo ---------------------------------------------------------------------------------------

def cmd_demo(ns: argparse.Namespace, out: Output) -> int:
    """A guided tour of the bundled test server: every kind of request, nicely printed."""
    from mcpclient.testing import server_command  # only the demo needs it

    steps, delay = 20, 0.04
    if ns.json:
        return _demo_json(ns, out, server_command(), steps, delay)
    s = out.style
    out.line(f"mcpclient {__version__} demo {s.dash} talking to the bundled test server over stdio")
    out.line()
    with Client(server_command(), timeout=ns.timeout) as client:
        out.line("Server")
        _print_server(out, client, indent="  ")
        out.line()

        tools = client.list_tools()
        out.line(f"Tools ({len(tools)})")
        out.table([(t.name, _arguments_summary(t.input_schema), _one_line(t.description))
                   for t in tools], indent="  ")
        out.line()

        out.line("Calling tools")
        labels = ['echo(text="hello, MCP")', "add(a=2, b=40)", f"slow(steps={steps}, delay={delay})",
                  "picture()", 'fail(message="something went wrong")']
        column = max(len(label) for label in labels)

        def show(label: str, result: str) -> None:
            out.line(f"  {label.ljust(column)}  {s.arrow}  {result}")
            out.flush()  # progress bars go to stderr: keep the order on a shared terminal

        echo = client.call_tool("echo", {"text": "hello, MCP"})
        show(labels[0], repr(echo.text))
        add = client.call_tool("add", {"a": 2, "b": 40})
        show(labels[1], f"structured {_compact(add.structured_content)}")

        bar = ProgressBar("  slow", out.err)
        try:
            slow = client.call_tool("slow", {"steps": steps, "delay": delay}, on_progress=bar)
            bar.wait_complete(0.5)
        finally:
            bar.close(keep=True)
        last = bar.last[2] if bar.last and bar.last[2] else ""
        show(labels[2], f"{slow.text!r}  ({bar.updates} progress updates"
                        f"{', last: ' + repr(last) if last else ''})")

        picture = client.call_tool("picture")
        parts = [render_block(b) for b in picture.content
                 if not _duplicates_structured(b, picture.structured_content)]
        summary = ", ".join(p if p.startswith("[") else repr(p) for p in parts)
        show(labels[3], f"{summary}, structured {_compact(picture.structured_content)}")

        fail = client.call_tool("fail", {"message": "something went wrong"})
        show(labels[4], f"is_error={fail.is_error}, text {fail.text!r}")
        out.line()

        out.line("Resources")
        rows = []
        for resource in client.list_resources():
            for c in client.read_resource(resource.uri):
                if c.blob is not None:
                    rows.append((c.uri, s.arrow, f"{hex_bytes(c.blob)}  ({len(c.blob)} bytes, {c.mime_type})"))
                else:
                    rows.append((c.uri, s.arrow, f"{c.text!r}  ({c.mime_type})"))
        for template in client.list_resource_templates():
            uri = template.uri_template.replace("{name}", "world")
            for c in client.read_resource(uri):
                rows.append((uri, s.arrow, f"{render_contents(c)!r}  (from template {template.uri_template})"))
        out.table(rows, indent="  ")
        out.line()

        out.line("Prompt")
        prompt = client.get_prompt("greet", {"name": "Ada", "style": "formal"})
        out.line(f'  greet(name="Ada", style="formal")  {s.dash}  {prompt.description or ""}'.rstrip())
        for message in prompt.messages:
            _print_message(out, message.role, render_block(message.content), "    ")
        out.line()

        out.line("Completion")
        completion = client.complete("greet", "style", "f")
        out.line(f'  greet.style starting with "f" {s.arrow} {", ".join(completion.values)}')
        out.line()
    out.line(f"Done. Try it on your own server: {PROG} tools \"python my_server.py\"")
    return EXIT_OK


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def _demo_json(ns: argparse.Namespace, out: Output, argv: List[str], steps: int, delay: float) -> int:
    with Client(argv, timeout=ns.timeout) as client:
        bar = ProgressBar("slow", out.err)
        try:
            slow = client.call_tool("slow", {"steps": steps, "delay": delay}, on_progress=bar)
            bar.wait_complete(0.5)
        finally:
            bar.close()
        report = {
            "serverInfo": client.server_info.raw, "protocolVersion": client.protocol_version,
            "capabilities": client.server_capabilities, "instructions": client.instructions,
            "tools": [t.raw for t in client.list_tools()],
            "calls": {"echo": client.call_tool("echo", {"text": "hello, MCP"}).raw,
                      "add": client.call_tool("add", {"a": 2, "b": 40}).raw,
                      "slow": slow.raw, "picture": client.call_tool("picture").raw,
                      "fail": client.call_tool("fail", {"message": "something went wrong"}).raw},
            "progressUpdates": bar.updates,
            "resources": {uri: [c.raw for c in client.read_resource(uri)] for uri in ("test://text", "test://blob")},
            "prompt": client.get_prompt("greet", {"name": "Ada", "style": "formal"}).raw,
            "completion": client.complete("greet", "style", "f").raw,
        }
    out.json(report)
    return EXIT_OK


HANDLERS: Dict[str, Callable[[argparse.Namespace, Output], int]] = {
    "demo": cmd_demo, "info": cmd_info, "tools": cmd_tools, "call": cmd_call, "resources": cmd_resources,
    "read": cmd_read, "prompts": cmd_prompts, "prompt": cmd_prompt, "ping": cmd_ping,
}


# --- entry point --------------------------------------------------------------------------------

def _error_message(exc: BaseException, verbose: int) -> str:
    """One line describing ``exc``: the first line of its message, plus a hint where useful."""
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        return f"{exc.strerror}: {exc.filename}"
    exited = _find_cause(exc, ProcessExited)
    if isinstance(exited, ProcessExited):
        message = f"server process exited with code {exited.returncode}"
        if exited is not exc:
            message = f"{str(exc).splitlines()[0].rstrip(':; ')} ({message})"
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


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line; returns the exit code (console scripts pass it to ``sys.exit``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        ns = parse_args(args)
    except SystemExit as exc:  # argparse printed usage/help already
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    out = Output()
    verbose = ns.verbose
    try:
        with _LoggingSetup(verbose, out.err):
            try:
                return HANDLERS[ns.command](ns, out)
            except UsageError as exc:
                ns.parser.print_usage(out.err)
                out.err.write(f"{ns.parser.prog}: error: {exc}\n")
                return EXIT_USAGE
            except KeyboardInterrupt:
                out.err.write(("\n" if _isatty(out.err) else "") + f"{PROG}: error: interrupted\n")
                return EXIT_INTERRUPTED
            except (MCPError, ValueError, TypeError, OSError) as exc:
                if isinstance(exc, BrokenPipeError):
                    raise
                if verbose:
                    traceback.print_exc(file=out.err)
                out.err.write(f"{PROG}: error: {_error_message(exc, verbose)}\n")
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
