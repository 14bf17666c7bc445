"""The commands that talk to a given server (all but ``demo``): each connects, makes its
requests, and prints the result as text or, with ``--json``, as the raw MCP result."""
from __future__ import annotations

import argparse
import json
import time
from typing import Any, Callable, Dict

from mcpclient import Client, InvalidParams

from .args import EXIT_ERROR, EXIT_OK, PROG, UsageError, parse_pairs, target_from_config
from .render import (
    arguments_summary, compact, print_message, print_server, prompt_arguments, render_block, render_contents,
    render_tool_result,
)
from .terminal import Output, ProgressBar, one_line


def _connect(ns: argparse.Namespace) -> Client:
    target = target_from_config(ns.config, ns.server) if ns.config else ns.target
    return Client(target, timeout=ns.timeout)


def cmd_info(ns: argparse.Namespace, out: Output) -> int:
    with _connect(ns) as client:
        if ns.json:
            out.json({"serverInfo": client.server_info.raw, "protocolVersion": client.protocol_version,
                      "capabilities": client.server_capabilities, "instructions": client.instructions})
        else:
            print_server(out, client, indent="")
    return EXIT_OK


def cmd_tools(ns: argparse.Namespace, out: Output) -> int:
    with _connect(ns) as client:
        tools = client.list_tools()
    if ns.json:
        out.json([t.raw for t in tools])
    elif not tools:
        out.line("(no tools)")
    else:
        out.table([(t.name, arguments_summary(t.input_schema), one_line(t.description or t.display_name))
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
    bar = ProgressBar(ns.tool, out.err)
    try:
        with _connect(ns) as client:
            try:
                result = client.call_tool(ns.tool, arguments, on_progress=bar)
            except InvalidParams as exc:
                coerced = [k for k, v in pairs.items() if not isinstance(v, str)]
                if not coerced:
                    raise
                example = f"{coerced[0]}='\"{compact(pairs[coerced[0]])}\"'"
                raise ValueError(f"{exc} (note: key=value values are parsed as JSON; to send a string, "
                                 f"quote it: {example})") from exc
    finally:
        bar.close()  # after the client closed (if the call failed, no late callback can redraw it)
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
        name = client.server_info.name or "server"
    if ns.json:
        out.json({"server": name, "roundTripMs": round(elapsed_ms, 3)})
    else:
        out.line(f"pong from {name} in {elapsed_ms:.2f} ms")
    return EXIT_OK


HANDLERS: Dict[str, Callable[[argparse.Namespace, Output], int]] = {
    "info": cmd_info, "tools": cmd_tools, "call": cmd_call, "resources": cmd_resources,
    "read": cmd_read, "prompts": cmd_prompts, "prompt": cmd_prompt, "ping": cmd_ping,
}
