"""The command line's ``main()`` and the commands that talk to a given server (all but ``demo``):
each connects, makes its requests, and prints the result as text or, with ``--json``, as the raw
MCP result."""
from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..client import Client
from ..errors import ConnectError, InvalidParams, MCPError
from ..group.server_group import ServerGroup

from .args import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, PROG, UsageError, parse_args, parse_pairs
from .connect import EntryError, Server, open_client, servers
from ..group._tooltable import excluded
from .demo import cmd_demo
from .diagnostics import error_message, stderr_logging
from .render import (
    compact, print_message, print_server, prompt_arguments, render_block, render_contents,
    render_tool_result, schema_type, show_tools,
)
from .terminal import Output, ProgressBar, isatty, one_line


def _connect(ns: argparse.Namespace) -> Client:
    server = servers(ns)[0]
    assert isinstance(server, Server)
    ns.server_used = server  # for the error's hints (diagnostics.error_message)
    return open_client(ns, server)


def _each_server(ns: argparse.Namespace, out: Output, fetch: Callable[[Client], Any],
                 show: Callable[[Any], None], as_json: Callable[[Any], Any],
                 keep: Callable[[Any, Any], Any] = lambda found, server: found) -> int:
    """Run ``fetch`` on one server, or on every server of ``--config`` when no ``--server`` is
    given: those are connected in parallel (a ``ServerGroup``), each shown under its name; a
    server that fails is reported and the rest still shown (exit 1 if any failed). Entries
    disabled in the file are skipped."""
    chosen = servers(ns, every=True)
    if not ns.config or ns.server is not None or len(chosen) == 1:
        with _connect(ns) as client:
            found = fetch(client)
        if chosen and isinstance(chosen[0], Server):
            found = keep(found, chosen[0])
        if ns.json:
            out.json(as_json(found))
        else:
            show(found)
        return EXIT_OK
    if ns.header or ns.auth is not None or ns.auth_env is not None:
        raise UsageError("--header/--auth with every server of --config would send them to each one; "
                         "pick one with --server, or put \"headers\" in the entries")
    results: Dict[str, Tuple[Any, Optional[BaseException]]] = {}
    members: Dict[str, Client] = {}
    names = {}
    for i, item in enumerate(chosen):
        if isinstance(item, EntryError):  # an entry that could not be parsed
            results[item.name] = (None, item)
            continue
        name = item.name or f"#{i}"
        names[name] = item
        if not item.enabled:
            continue
        try:
            members[name] = open_client(ns, item)
            results[name] = (None, None)
        except (UsageError, ValueError, TypeError) as exc:
            results[name] = (None, exc)
    if members:
        group = ServerGroup(members)
        try:
            try:
                group.connect()
            except ConnectError:
                pass  # every server failed: each one's error is in its status
            for name, status in group.status.items():
                if status.error is not None:
                    results[name] = (None, status.error)
                    continue
                try:
                    results[name] = (keep(fetch(group.client(name)), names[name]), None)
                except (MCPError, ValueError, TypeError, OSError) as exc:
                    results[name] = (None, exc)
        finally:
            group.close()

    def message(name: str, exc: BaseException, verbose: int) -> str:
        if isinstance(exc, UsageError):
            return str(exc)
        return error_message(exc, verbose, ns, names.get(name))

    if ns.json:
        out.json({name: as_json(value) if error is None else {"error": message(name, error, 0)}
                  for name, (value, error) in results.items()})
    elif not results:
        out.line("(no enabled servers)")
    else:
        for i, (name, (value, error)) in enumerate(results.items()):
            if i:
                out.line()
            if error is None:
                out.line(f"[{name}]")
                show(value)
            else:
                out.line(f"[{name}] failed (the error is on stderr)")
                out.err.write(f"{PROG}: error: {name}: {message(name, error, ns.verbose)}\n")
    return EXIT_ERROR if any(error is not None for _, error in results.values()) else EXIT_OK


def _server_json(client: Client) -> Dict[str, Any]:
    server = client.server
    assert server is not None  # (connected)
    return {"serverInfo": server.implementation.raw, "protocolVersion": server.protocol_version,
            "capabilities": server.capabilities, "instructions": server.instructions}


def cmd_info(ns: argparse.Namespace, out: Output) -> int:
    def show(info: Dict[str, Any]) -> None:
        print_server(out, info["client"], indent="")

    def fetch(client: Client) -> Dict[str, Any]:
        return {"client": client, "json": _server_json(client)}

    return _each_server(ns, out, fetch, show, lambda info: info["json"])


def cmd_tools(ns: argparse.Namespace, out: Output) -> int:
    """The server's tools; a config entry's ``include``/``exclude`` globs apply, as in a group."""
    return _each_server(ns, out, lambda client: client.list_tools(), lambda tools: show_tools(out, tools),
                        lambda tools: [t.raw for t in tools],
                        lambda tools, server: [t for t in tools if not excluded([t.name], [(server.include,
                                                                                             server.exclude)])])


def _unknown_tool(client: Client, name: str) -> Optional[str]:
    """When the server lists no tool ``name``: the message saying so, with the closest names."""
    try:
        tools = [t.name for t in client.list_tools()]
    except MCPError:
        return None
    if name in tools:
        return None
    close = difflib.get_close_matches(name, tools, n=3, cutoff=0.6)
    if close:
        return f"the server has no tool {name!r}; did you mean {' or '.join(repr(c) for c in close)}?"
    listed = ", ".join(tools[:10]) + (", ..." if len(tools) > 10 else "")
    return f"the server has no tool {name!r} (its tools: {listed or 'none'})"


def _string_params(client: Client, name: str) -> List[str]:
    """The parameters of tool ``name`` whose schema allows a string (from the client's listing)."""
    try:
        tool = next((t for t in client.list_tools() if t.name == name), None)
    except MCPError:
        return []
    props = tool.input_schema.get("properties") if tool is not None and isinstance(tool.input_schema, dict) else None
    if not isinstance(props, dict):
        return []
    return [key for key, prop in props.items() if "string" in schema_type(prop).split("|")]


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
    bar = ProgressBar(ns.tool, out.err)
    unknown: Optional[str] = None
    try:
        with _connect(ns) as client:
            try:
                result = client.call_tool(ns.tool, arguments, on_progress=bar)
            except InvalidParams as exc:
                unknown = _unknown_tool(client, ns.tool)
                if unknown is None:
                    strings = set(_string_params(client, ns.tool))
                    coerced = [k for k, v in pairs.items() if not isinstance(v, str) and k in strings]
                    if not coerced:
                        raise
                    example = f"{coerced[0]}='\"{compact(pairs[coerced[0]])}\"'"
                    raise ValueError(f"{exc} (note: key=value values are parsed as JSON; to send a string, "
                                     f"quote it: {example})") from exc
            except MCPError:
                unknown = _unknown_tool(client, ns.tool)
                if unknown is None:
                    raise
            else:
                if result.is_error:
                    unknown = _unknown_tool(client, ns.tool)
    finally:
        bar.close()  # after the client closed (if the call failed, no late callback can redraw it)
    if unknown is not None:
        out.err.write(f"{PROG}: error: {unknown}\n")
        return EXIT_USAGE
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
                    one_line(r.description or r.title)) for r in resources],
                  ("URI", "NAME", "MIME TYPE", "SIZE", "DESCRIPTION"))
    else:
        out.line("(no resources)")
    if templates:
        out.line()
        out.table([(t.uri_template, t.name, t.mime_type or "", one_line(t.description or t.title))
                   for t in templates], ("URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"))
    return EXIT_OK


def cmd_read(ns: argparse.Namespace, out: Output) -> int:
    with _connect(ns) as client:
        contents = client.read_resource(ns.uri)
    if ns.output:
        data = b"".join(c.blob if c.blob is not None else (c.text or "").encode("utf-8") for c in contents)
        with open(ns.output, "wb") as f:
            f.write(data)
        out.err.write(f"{PROG}: wrote {len(data)} bytes to {ns.output}\n")
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
        out.table([(p.name, prompt_arguments(p), one_line(p.description or p.title)) for p in prompts],
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
        print_message(out, message.role, render_block(message.content), "")
    return EXIT_OK


def cmd_ping(ns: argparse.Namespace, out: Output) -> int:
    with _connect(ns) as client:
        start = time.perf_counter()
        client.ping()
        elapsed_ms = (time.perf_counter() - start) * 1000
        name = (client.server.name if client.server is not None else "") or "server"
    if ns.json:
        out.json({"server": name, "roundTripMs": round(elapsed_ms, 3)})
    else:
        out.line(f"pong from {name} in {elapsed_ms:.2f} ms")
    return EXIT_OK


HANDLERS: Dict[str, Callable[[argparse.Namespace, Output], int]] = {
    "info": cmd_info, "tools": cmd_tools, "call": cmd_call, "resources": cmd_resources,
    "read": cmd_read, "prompts": cmd_prompts, "prompt": cmd_prompt, "ping": cmd_ping,
}


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
                out.err.write(f"{PROG}: error: {error_message(exc, ns.verbose, ns, vars(ns).get('server_used'))}\n")
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
