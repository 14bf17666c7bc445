"""``mcpclient demo``: a guided tour of the bundled test server (``mcpclient.testing``) that makes
every kind of request and prints the answers; with ``--json``, one JSON report of them.

The bundled server's package loads when the demo runs (``_util.lazy.load``): every other
command would otherwise pay for it at start (about 6 ms, of a command line that starts in ~90).
"""
from __future__ import annotations

import argparse
from typing import Any, Dict

from .._util.lazy import load
from .._version import __version__
from ..client import Client

from .args import EXIT_OK, PROG
from .render import (
    arguments_summary, compact, duplicates_structured, hex_bytes, print_message, print_server,
    render_block, render_contents,
)
from .terminal import Output, ProgressBar, one_line

STEPS, DELAY = 20, 0.04  # the slow tool's arguments: long enough to watch the progress bar


def cmd_demo(ns: argparse.Namespace, out: Output) -> int:
    server_command = load("mcpclient.testing").server_command  # the bundled server: the demo only
    if not ns.json:
        out.line(f"mcpclient {__version__} demo {out.style.dash} talking to the bundled test server over stdio")
        out.line()
    bar = ProgressBar("slow" if ns.json else "  slow", out.err)
    report: Dict[str, Any] = {}
    try:
        with Client(server_command(), timeout=float(ns.timeout) if ns.timeout else None) as client:
            if ns.json:
                report = _report(client, bar)
            else:
                _tour(client, out, bar)
    finally:
        bar.close(keep=not ns.json)  # only if the slow call failed: the client is closed, no redraw can follow
    if ns.json:
        out.json(report)
    else:
        out.line(f"Done. Try it on your own server: {PROG} tools \"python my_server.py\"")
    return EXIT_OK


def _tour(client: Client, out: Output, bar: ProgressBar) -> None:
    s = out.style
    out.line("Server")
    print_server(out, client, indent="  ")
    out.line()

    tools = client.list_tools()
    out.line(f"Tools ({len(tools)})")
    out.table([(t.name, arguments_summary(t.input_schema), one_line(t.description)) for t in tools], indent="  ")
    out.line()

    out.line("Calling tools")
    labels = ['echo(text="hello, MCP")', "add(a=2, b=40)", f"slow(steps={STEPS}, delay={DELAY})",
              "picture()", 'fail(message="something went wrong")']
    column = max(len(label) for label in labels)

    def show(label: str, result: str) -> None:
        out.line(f"  {label.ljust(column)}  {s.arrow}  {result}")
        out.flush()  # progress bars go to stderr: keep the order on a shared terminal

    echo = client.call_tool("echo", {"text": "hello, MCP"})
    show(labels[0], repr(echo.text))
    add = client.call_tool("add", {"a": 2, "b": 40})
    show(labels[1], f"structured {compact(add.structured_content)}")

    slow = client.call_tool("slow", {"steps": STEPS, "delay": DELAY}, on_progress=bar)
    bar.close(keep=True)  # call_tool() returned after its progress callbacks: the bar is complete
    last = f", last: {bar.message!r}" if bar.message else ""
    show(labels[2], f"{slow.text!r}  ({bar.updates} progress updates{last})")

    picture = client.call_tool("picture")
    parts = [render_block(b) for b in picture.content if not duplicates_structured(b, picture.structured_content)]
    summary = ", ".join(p if p.startswith("[") else repr(p) for p in parts)
    show(labels[3], f"{summary}, structured {compact(picture.structured_content)}")

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
        print_message(out, message.role, render_block(message.content), "    ")
    out.line()

    out.line("Completion")
    completion = client.complete("greet", "style", "f")
    out.line(f'  greet.style starting with "f" {s.arrow} {", ".join(completion.values)}')
    out.line()


def _report(client: Client, bar: ProgressBar) -> Dict[str, Any]:
    """The same requests' raw results, for ``--json``."""
    slow = client.call_tool("slow", {"steps": STEPS, "delay": DELAY}, on_progress=bar)
    bar.close()  # wipe it: stdout gets the JSON
    server = client.server
    assert server is not None  # (connected)
    return {
        "serverInfo": server.implementation.raw, "protocolVersion": server.protocol_version,
        "capabilities": server.capabilities, "instructions": server.instructions,
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
