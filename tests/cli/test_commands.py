"""The ``mcpclient`` command line, run for real: child processes against the bundled test server."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from typing import Any, Dict, List, Optional

import pytest

import mcpclient.testing
from mcpclient.cli import main, parse_value
from mcpclient.cli.render import signature

from http_scripted import Reply, ScriptedHTTPServer

TARGET = " ".join(shlex.quote(a) for a in mcpclient.testing.server_command())
RUN_TIMEOUT = 30


def run(*args: str, env: Optional[Dict[str, str]] = None) -> "subprocess.CompletedProcess[str]":
    """``python -m mcpclient ARGS`` in a child process; output captured as text."""
    return subprocess.run([sys.executable, "-m", "mcpclient", *args], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT, env=None if env is None else {**os.environ, **env})


def error_lines(stderr: str) -> List[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def assert_one_error_line(proc: "subprocess.CompletedProcess[str]") -> str:
    lines = error_lines(proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("mcpclient: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


# --- demo ---------------------------------------------------------------------------------------

def test_demo_shows_every_part_and_exits_0():
    proc = run("demo")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for expected in ("mcpclient-testing", "2025-11-25", "instructions",      # server info
                     "Tools (9)", "echo", "bad_output",                       # tool table
                     "'hello, MCP'", '{"sum": 42}',                           # echo, add
                     "done after 20 steps", "20 progress updates",            # slow + progress
                     "[image image/png, 70 bytes]",                           # picture
                     "00 01 02 ff", "'hello, world'",                         # resources
                     "Please greet Ada in a formal way.",                     # prompt
                     "formal, friendly, funny",                               # completion
                     "is_error=True"):                                        # fail
        assert expected in out, f"{expected!r} missing from demo output:\n{out}"
    assert "{'" not in out  # no raw dict dumps
    assert proc.stderr == ""  # stderr is not a terminal: no progress bar drawn


def test_demo_json_is_one_json_document():
    proc = run("demo", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["calls"]["add"]["structuredContent"] == {"sum": 42}
    assert report["calls"]["fail"]["isError"] is True


# --- commands, as child processes ---------------------------------------------------------------

def test_tools_json_lists_every_tool():
    proc = run("tools", TARGET, "--json")
    assert proc.returncode == 0, proc.stderr
    names = [tool["name"] for tool in json.loads(proc.stdout)]
    assert names == ["echo", "add", "slow", "picture", "fail", "log", "bad_output", "mixed", "ask_client"]


def test_call_add_json_has_structured_sum():
    proc = run("call", TARGET, "add", "a=1", "b=2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["structuredContent"] == {"sum": 3}


def test_call_echo_with_args_json():
    proc = run("call", TARGET, "echo", "--args-json", '{"text": "hi there"}')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hi there\n"


def test_call_slow_reports_progress_without_a_terminal():
    proc = run("call", TARGET, "slow", "steps=3", "delay=0")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done after 3 steps\n"
    assert proc.stderr == ""  # no bar when stderr is a pipe


def test_call_fail_prints_the_error_text_and_exits_1():
    proc = run("call", TARGET, "fail", "message=it broke")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "it broke" in assert_one_error_line(proc)


def test_read_blob_shows_hex():
    proc = run("read", TARGET, "test://blob")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "00 01 02 ff"


def test_prompt_greet_with_string_argument():
    proc = run("prompt", TARGET, "greet", "name=bob")
    assert proc.returncode == 0, proc.stderr
    assert "user: Please greet bob in a friendly way." in proc.stdout


def test_ping_prints_round_trip_time():
    proc = run("ping", TARGET)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("pong from mcpclient-testing in ")
    assert proc.stdout.rstrip().endswith(" ms")


def test_info_json():
    proc = run("info", TARGET, "--json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["serverInfo"]["name"] == "mcpclient-testing"
    assert info["protocolVersion"] == "2025-11-25"
    assert "tools" in info["capabilities"]
    assert info["instructions"].startswith("mcpclient-testing")


def test_missing_command_is_one_error_line_exit_1():
    proc = run("tools", "definitely-not-a-command-4242")
    assert proc.returncode == 1
    assert "definitely-not-a-command-4242" in assert_one_error_line(proc)


def test_url_target_is_one_error_line_exit_1():
    proc = run("ping", "http://127.0.0.1:9/mcp")
    assert proc.returncode == 1
    assert_one_error_line(proc)


def test_unknown_tool_is_one_error_line():
    proc = run("call", TARGET, "no_such_tool")
    assert proc.returncode == 2
    line = assert_one_error_line(proc)
    assert "no tool 'no_such_tool'" in line and "echo, add, slow" in line


def test_unknown_tool_suggests_the_closest_names_and_exits_2():
    proc = run("call", TARGET, "ad", "a=1", "b=2")
    assert proc.returncode == 2
    line = assert_one_error_line(proc)
    assert line == "mcpclient: error: the server has no tool 'ad'; did you mean 'add'?"  # no "quote it" hint


def test_a_command_split_by_the_shell_gets_the_quote_hint():
    proc = run("tools", "python", "server.py")
    assert proc.returncode == 2
    assert 'quote it: mcpclient tools "python server.py"' in proc.stderr
    proc = run("tools", "python", "-m", "mcpclient.testing")
    assert proc.returncode == 2
    assert 'quote it: mcpclient tools "python -m mcpclient.testing"' in proc.stderr
    proc = run("call", "python", "server.py", "add", "a=1")
    assert proc.returncode == 2
    assert "expected key=value, got 'add'" in proc.stderr and '"python server.py add"' in proc.stderr
    # a quoted command, a URL: no hint
    for argv in (("call", TARGET, "add", "a"), ("tools", "http://127.0.0.1:9/mcp", "extra")):
        proc = run(*argv)
        assert proc.returncode == 2 and "quote" not in proc.stderr, proc.stderr


def test_a_wrong_type_gets_the_json_quote_hint_only_for_string_parameters(capsys):
    assert main(["call", TARGET, "add", "a=x", "b=1"]) == 1  # a number wanted: quoting would not help
    err = capsys.readouterr().err
    assert "must be of type number" in err and "quote" not in err


def test_server_that_exits_at_once_is_reported_with_its_stderr():
    crash = f"{shlex.quote(sys.executable)} -c \"import sys; sys.stderr.write('kaput\\n'); sys.exit(3)\""
    proc = run("tools", crash)
    assert proc.returncode == 1
    line = assert_one_error_line(proc)
    assert "code 3" in line and "kaput" in line


def test_usage_errors_exit_2():
    assert run("tools").returncode == 2                            # no target
    assert run("call", TARGET, "add", "a").returncode == 2         # not key=value
    assert run("call", TARGET, "add", "--args-json", "[1]").returncode == 2
    assert run("nonsense").returncode == 2


def test_config_file_selects_a_server(tmp_path):
    argv = mcpclient.testing.server_command("--name", "from-config")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "testing": {"command": argv[0], "args": argv[1:], "env": {"EXAMPLE": "1"}, "cwd": str(tmp_path)},
        "other": {"command": "definitely-not-a-command-4242"},
    }}))
    proc = run("info", "--config", str(config), "--server", "testing")
    assert proc.returncode == 0, proc.stderr
    assert "from-config" in proc.stdout

    proc = run("call", "--config", str(config), "--server", "testing", "add", "a=2", "b=3", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["structuredContent"] == {"sum": 5}

    proc = run("tools", "--config", str(config), "--server", "missing")
    assert proc.returncode == 2  # a usage error
    assert "testing" in error_lines(proc.stderr)[-1]  # lists the available names


def test_tools_applies_a_config_entrys_include_and_exclude_filters(tmp_path):
    argv = mcpclient.testing.server_command()
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "a": {"command": argv[0], "args": argv[1:], "include": ["a*", "e*"], "exclude": ["echo"]},
        "b": {"command": argv[0], "args": argv[1:], "include": ["echo"]},
    }}))
    proc = run("tools", "--config", str(config), "--server", "a", "--json")
    assert proc.returncode == 0, proc.stderr
    assert sorted(t["name"] for t in json.loads(proc.stdout)) == ["add", "ask_client"]
    proc = run("tools", "--config", str(config), "--json")  # every server at once
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert sorted(t["name"] for t in report["a"]) == ["add", "ask_client"]
    assert [t["name"] for t in report["b"]] == ["echo"]


def test_config_without_server_lists_every_servers_tools_and_reports_a_failing_one(tmp_path):
    argv = mcpclient.testing.server_command("--name", "first")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "testing": {"command": argv[0], "args": argv[1:]},
        "broken": {"command": "definitely-not-a-command-4242"},
    }}))
    proc = run("tools", "--config", str(config))
    assert proc.returncode == 1  # one server failed; the other is still listed
    assert proc.stdout.splitlines()[:2] == ["[testing]", "echo(text: string)"]
    assert "[broken] failed (the error is on stderr)" in proc.stdout
    assert error_lines(proc.stderr) == [line for line in error_lines(proc.stderr)
                                        if line.startswith("mcpclient: error: broken: ")]
    assert "definitely-not-a-command-4242" in proc.stderr

    proc = run("tools", "--config", str(config), "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert [t["name"] for t in report["testing"]][:2] == ["echo", "add"]
    assert "definitely-not-a-command-4242" in report["broken"]["error"]

    proc = run("info", "--config", str(config), "--json")
    assert json.loads(proc.stdout)["testing"]["serverInfo"]["name"] == "first"

    proc = run("tools", "--config", str(config), "--auth", "tok")  # would go to every server
    assert proc.returncode == 2 and "pick one with --server" in proc.stderr and "tok" not in proc.stderr

    proc = run("ping", "--config", str(config))  # one server at a time for the other commands
    assert proc.returncode == 2 and "choose one with --server" in error_lines(proc.stderr)[-1]


def test_every_server_a_command_started_is_stopped_when_one_fails_or_it_is_interrupted(tmp_path, capsys,
                                                                                       monkeypatch):
    from conftest import child_pids, faulty, wait_until
    from mcpclient import Client

    first, second = (mcpclient.testing.server_command("--name", n) for n in ("first", "second"))
    exits = faulty("bad-version")  # starts, then fails the handshake
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "first": {"command": first[0], "args": first[1:]},
        "second": {"command": second[0], "args": second[1:]},
        "exits": {"command": exits[0], "args": exits[1:]},
    }}))
    before = child_pids()
    assert main(["tools", "--config", str(config)]) == 1  # one failed; the others listed, then stopped
    assert "[first]" in capsys.readouterr().out
    assert wait_until(lambda: child_pids() == before)

    real, seen = Client.list_tools, []

    def interrupted(self: Client, **kwargs: Any) -> Any:  # Ctrl-C while the second server lists
        seen.append(self.transport.pid)
        if len(seen) == 2:
            raise KeyboardInterrupt
        return real(self, **kwargs)

    monkeypatch.setattr(Client, "list_tools", interrupted)
    assert main(["tools", "--config", str(config)]) == 130
    assert len(seen) == 2 and wait_until(lambda: child_pids() == before)


def test_protocol_legacy_skips_the_discovery_probe():
    proc = run("ping", TARGET, "--protocol", "legacy", "-v")
    assert proc.returncode == 0, proc.stderr
    assert "server/discover" not in proc.stderr and '"method": "initialize"' in proc.stderr
    assert run("ping", TARGET, "--protocol", "1999-01-01").returncode == 2


def test_verbose_shows_wire_traffic_on_stderr():
    proc = run("ping", TARGET, "-v")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    # auto: the server/discover probe first, then (a handshake-era server) initialize
    assert any(line.startswith('-> {"jsonrpc": "2.0", "id": 1, "method": "server/discover"') for line in lines)
    assert any(line.startswith('-> {"jsonrpc": "2.0", "id": 2, "method": "initialize"') for line in lines)
    assert any(line.startswith("<- ") for line in lines)
    assert any('"method": "ping"' in line for line in lines)
    assert proc.stdout.startswith("pong")


def test_verbose_error_shows_traceback():
    proc = run("tools", "definitely-not-a-command-4242", "-v")
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr
    assert proc.stderr.rstrip().splitlines()[-1].startswith("mcpclient: error: ")


# --- in process ---------------------------------------------------------------------------------

def test_main_in_process_tools_signatures(capsys):
    assert main(["tools", TARGET]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["echo(text: string)", "    Return the given text unchanged."]
    assert "add(a: number, b: number)" in lines
    assert "slow(steps: integer = 3, delay: number = 0.01)" in lines
    assert any(line.startswith("log(level: 'debug'|'info'|") and line.endswith(", message: string)")
               for line in lines)
    assert "picture()" in lines


def test_signature_types():
    schema = {"type": "object", "required": ["mode"], "properties": {
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"enum": ["a", "b"]},
        "n": {"type": "integer", "default": 5},
        "x": {"type": ["number", "null"]},
        "u": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "k": {"type": "array", "items": {"enum": ["x", "y"]}},
        "p": {"$ref": "#/$defs/Point"},
        "free": {},
    }}
    assert signature("f", schema) == ("f(mode: 'a'|'b', tags?: string[], n: integer = 5, x?: number|null, "
                                      "u?: string|null, k?: ('x'|'y')[], p?: Point, free?: any)")
    assert signature("g", {"type": "object"}) == "g()"
    assert signature("h", None) == "h()"


def test_main_in_process_renders_every_content_type(capsys):
    assert main(["call", TARGET, "mixed"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "some text",
        "[image image/png, 70 bytes]",
        "[audio audio/wav, 46 bytes]",
        "[link test://text]",
        "hello, world",
        "[unknown type hologram]",
    ]


def test_main_in_process_structured_content_shown_once(capsys):
    assert main(["call", TARGET, "picture"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[image image/png, 70 bytes]\na 1x1 pixel\n")
    assert json.loads(out.split("a 1x1 pixel\n", 1)[1]) == {"width": 1, "height": 1}


def test_main_in_process_resources_lists_templates(capsys):
    assert main(["resources", TARGET]) == 0
    out = capsys.readouterr().out
    assert "test://text" in out and "test://blob" in out and "test://greeting/{name}" in out


def test_main_in_process_quoted_json_string_and_hint(capsys):
    assert main(["call", TARGET, "echo", 'text="42"']) == 0
    assert capsys.readouterr().out == "42\n"
    assert main(["call", TARGET, "echo", "text=42"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "quote it" in err


def test_main_in_process_usage_error_returns_2(capsys):
    assert main(["read", TARGET]) == 2
    assert "URI" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["tools"], "TARGET"),
    (["nonsense"], "invalid choice"),
    (["call", "{target}", "add", "a"], "key=value"),
    (["call", "{target}", "add", "--args-json", "[1]"], "JSON object"),
    (["call", "{target}", "add", "--args-json", "{{"], "not valid JSON"),
    (["ping", "{target}", "--protocol", "1999-01-01"], "1999-01-01"),
    (["ping", "{target}", "--timeout", "-1"], ">= 0"),
    (["ping", "--server", "a"], "--server needs --config"),
    (["ping", "{target}", "--config", "{config}"], "not both"),
    (["ping", "--config", "{config}"], "choose one with --server"),
    (["ping", "--config", "{config}", "--server", "missing"], "no server 'missing'"),
    (["tools", "--config", "{config}", "--auth", "tok"], "pick one with --server"),
    (["ping", "{target}", "--auth", "tok"], "URL targets only"),
    (["ping", "{target}", "-H", "X-A: 1"], "URL targets only"),
    (["ping", "http://127.0.0.1:9/mcp", "--auth", "a", "--auth-env", "B"], "not both"),
    (["ping", "http://127.0.0.1:9/mcp", "--auth-env", "MCPCLIENT_TEST_UNSET_VARIABLE"], "not set"),
    (["ping", "http://127.0.0.1:9/mcp", "--auth", " "], "token is empty"),
    (["ping", "--config", "{config}", "--server", "with_headers"], "apply to \"url\" servers only"),
    (["demo", "--config", "{config}"], "unrecognized option: --config"),
])
def test_every_usage_error_exits_2_and_says_why(argv, says, tmp_path, capsys):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"a": {"command": "definitely-not-a-command-4242"},
                                                 "with_headers": {"command": "x", "headers": {"A": "1"}}}}))
    argv = [a.format(target=TARGET, config=config) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert says in err, err
    assert "tok " not in err and "tok\n" not in err  # (a token given is never echoed)


@pytest.mark.parametrize("text, value", [
    ("3", 3), ("2.5", 2.5), ("true", True), ("null", None), ("bob", "bob"), ('"3"', "3"),
    ("[1, 2]", [1, 2]), ('{"a": 1}', {"a": 1}), ("NaN", "NaN"), ("", ""), ("hello world", "hello world"),
])
def test_parse_value(text, value):
    assert parse_value(text) == value


# --- HTTP: credentials, headers, errors -----------------------------------------------------------

SECRET = "s3cret-tok-9f8e7d"

TOOLS = [{"name": "add", "description": "Add two numbers.", "inputSchema": {
    "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}]


def _tools_only(seen: Any, message: Dict[str, Any]) -> Any:
    if message["method"] == "tools/list":
        return {"tools": TOOLS}
    if message["method"] == "tools/call":
        args = message["params"]["arguments"]
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}
    return Reply(200, {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}})


@pytest.fixture
def protected():
    """A bearer-protected MCP server on 127.0.0.1: every request needs ``Bearer SECRET``."""
    server = ScriptedHTTPServer(_tools_only, authorization=f"Bearer {SECRET}")
    try:
        yield server
    finally:
        server.stop()


def _authorizations(server: ScriptedHTTPServer) -> List[Optional[str]]:
    return [s.headers.get("authorization") for s in server.requests(http_method="POST")]


def test_auth_header_and_auth_env_reach_a_bearer_protected_server(protected):
    for extra, env in ((["--auth", SECRET], None),
                       (["--header", f"Authorization: Bearer {SECRET}"], None),
                       (["-H", f"Authorization=Bearer {SECRET}"], None),
                       (["--auth-env", "MY_MCP_TOKEN"], {"MY_MCP_TOKEN": SECRET})):
        before = len(protected.seen)
        proc = run("call", protected.url, "add", "a=1", "b=2", *extra, env=env)
        assert (proc.returncode, proc.stdout) == (0, "3\n"), (extra, proc.stderr)
        seen = protected.seen[before:]
        assert seen and all(s.headers.get("authorization") == f"Bearer {SECRET}" for s in seen)


def test_extra_headers_are_sent(protected):
    proc = run("tools", protected.url, "--auth", SECRET, "-H", "X-Team: blue", "-H", "X-Trace=a=b:c", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [t["name"] for t in json.loads(proc.stdout)] == ["add"]
    seen = protected.requests("tools/list")[-1].headers
    assert (seen["x-team"], seen["x-trace"]) == ("blue", "a=b:c")


def test_config_entry_headers_with_env_expansion_and_type_are_honoured(protected, tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "remote": {"type": "http", "url": protected.url, "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "as-sse": {"type": "sse", "url": protected.url, "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "unset": {"url": protected.url, "headers": {"Authorization": "Bearer ${NOT_SET_4242}"}},
    }}))
    token = {"TOKEN": SECRET}
    proc = run("call", "--config", str(config), "--server", "remote", "add", "a=2", "b=3", env=token)
    assert (proc.returncode, proc.stdout) == (0, "5\n"), proc.stderr
    assert _authorizations(protected)[-1] == f"Bearer {SECRET}"
    # "type": "sse" is the legacy transport: it opens a GET stream (the scripted server refuses it)
    before = len(protected.seen)
    proc = run("tools", "--config", str(config), "--server", "as-sse", env=token)
    assert proc.returncode == 1
    assert [s.method for s in protected.seen[before:]] == ["GET"]
    assert protected.seen[before].headers["authorization"] == f"Bearer {SECRET}"
    # every server at once: the one naming an unset variable fails alone, naming it
    proc = run("tools", "--config", str(config), "--json", env=token)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert [t["name"] for t in report["remote"]] == ["add"]
    assert "NOT_SET_4242" in report["unset"]["error"]
    assert SECRET not in proc.stdout + proc.stderr
    # without the variable, the entry's own header carries no token: the 401 hint, no secret shown
    proc = run("tools", "--config", str(config), "--server", "remote", env={"TOKEN": "wrong"})
    assert proc.returncode == 1 and "refused the ones given" in assert_one_error_line(proc)


def test_a_missing_or_wrong_token_gets_the_401_hint_and_is_never_echoed(protected):
    port = protected.url.split(":")[2].split("/")[0]
    proc = run("tools", protected.url)
    assert proc.returncode == 1
    line = assert_one_error_line(proc)
    assert f"127.0.0.1:{port}" in line and "401" in line
    assert "the server wants credentials: pass --auth TOKEN or --header" in line

    for extra in (["--auth", "wrong-" + SECRET], ["-H", f"Authorization: Bearer wrong-{SECRET}"]):
        for verbose in ([], ["-v"], ["-vv"]):
            proc = run("tools", protected.url, *extra, *verbose)
            assert proc.returncode == 1
            assert SECRET not in proc.stdout + proc.stderr, (extra, verbose)
            assert "refused the ones given" in proc.stderr.splitlines()[-1]


def test_an_html_error_page_is_summarized_with_host_and_port():
    page = (b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title><style>body{}</style></head>"
            b"<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>")
    server = ScriptedHTTPServer(lambda seen, message: Reply(502, page, {"Content-Type": "text/html"}))
    try:
        proc = run("tools", server.url)
    finally:
        server.stop()
    assert proc.returncode == 1
    line = assert_one_error_line(proc)
    assert "DOCTYPE" not in line and "<" not in line
    assert "HTTP 502: 502 Bad Gateway" in line and server.url.split("/")[2] in line
