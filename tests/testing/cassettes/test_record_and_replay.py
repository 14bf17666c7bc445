"""Record and replay: a suite recorded once against real servers (stdio and Streamable
HTTP, handshake era and 2026-07-28) replays with the servers gone, in a process where spawning a
process or opening a socket raises; no secret sent while recording reaches a cassette; a request
the cassette does not have fails at once with a diff; silence and relaunches replay without
waiting."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from mcpclient import Client, HTTPTransport, Handlers, RequestTimeout, StdioTransport, Timeout
from mcpclient.testing import CassetteMismatch, RecordingTransport, ReplayTransport, server_command
from mcpclient.testing.cassettes.record import redact_message

from conftest import FAULTY, HAVE_OFFICIAL_SDK, LONG, OFFICIAL_SERVER

HAVE_MCP = HAVE_OFFICIAL_SDK

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
TOKEN = "sk-secret-token-4d1b8e"  # the HTTP bearer token: sent by the transport, never seen by the wrapper
ARG_SECRET = "hunter2-arg-secret-77a"  # a tool argument under a secret-looking key


def _sampling(request: Any) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}


def _elicitation(request: Any) -> Dict[str, Any]:
    return {"action": "accept", "content": {"name": "bob"}}


def suite(transport: Any, server: str, protocol: str = "auto") -> List[Any]:
    """The suite under test: the same calls recorded and replayed; returns what it saw."""
    progress: List[Any] = []
    with Client(transport, protocol=protocol, timeout=LONG, handlers=Handlers(sampling=_sampling, elicitation=_elicitation)) as client:
        seen: List[Any] = [client.server.protocol_version, client.server.name,
                           sorted(t.name for t in client.list_tools())[:5]]
        seen.append(client.call_tool("echo", {"text": "héllo"}).text)
        seen.append(client.read_resource("test://text")[0].text)
        seen.append(client.get_prompt("greet", {"name": "x"}).messages[0].content.text)
        seen.append(client.call_tool("slow", {"steps": 2}, on_progress=lambda *a: progress.append(a[:2])).text)
        if server == "bundled":  # a server->client request (sampling) and a secret argument
            asked = client.call_tool("ask_client", {"method": "sampling/createMessage",
                                                    "params": {"messages": [], "maxTokens": 5}})
            seen.append(asked.structured_content)
            seen.append(client.call_tool("echo", {"text": "x", "password": ARG_SECRET}).text)
        else:  # sampling and elicitation: server->client requests (handshake), input rounds (2026)
            seen.append(client.call_tool("mrtr_sample", {"prompt": "p"}).text)
            seen.append(client.call_tool("mrtr_elicit", {"message": "who?"}).text)
            seen.append(client.call_tool("echo", {"text": "y", "api_key": ARG_SECRET}).text)
    return seen + [progress]


#: name -> (server kind, protocol): the four combinations of transport and era.
CASES = {
    "stdio-legacy": ("bundled", "auto"),  # mcpclient.testing: handshake era (the probe is refused)
    "stdio-2026": ("official", "auto"),
    "http-2026": ("official", "auto"),
    "http-legacy": ("official", "2025-11-25"),
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Iterator[Dict[str, Any]]:
    """Each case recorded once against its real server: name -> (cassette path, results). The
    official SDK's server needs Python 3.10+: below, only the bundled server's case runs."""
    where = tmp_path_factory.mktemp("cassettes")
    out: Dict[str, Any] = {}
    for name, (server, protocol) in CASES.items():
        path = where / f"{name}.jsonl"
        if name.startswith("stdio") and (server == "bundled" or HAVE_MCP):
            inner = StdioTransport(server_command() if server == "bundled" else OFFICIAL_SERVER)
            out[name] = (path, suite(RecordingTransport(inner, path), server, protocol))
    if HAVE_MCP:
        from http_servers import official_http_server

        with official_http_server("--http") as url:
            for name in ("http-2026", "http-legacy"):
                server, protocol = CASES[name]
                path = where / f"{name}.jsonl"
                inner = HTTPTransport(url, auth=TOKEN)
                out[name] = (path, suite(RecordingTransport(inner, path), server, protocol))
    yield out


#: Run in a fresh interpreter: refuse every process spawn and socket, then replay each cassette.
_OFFLINE = textwrap.dedent("""
    import json, os, sys
    refused = []
    BANNED = ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty", "os.exec", "os.spawn", "os.system",
              "socket.connect", "socket.bind", "socket.sendto", "socket.getaddrinfo")
    def hook(event, args):
        if event in BANNED:
            refused.append(event)
            raise RuntimeError(f"refused in replay: {event}")
    sys.addaudithook(hook)
    sys.path[:0] = sys.argv[1].split(os.pathsep)
    import mcpclient.testing
    lazy = not any(m.startswith("mcpclient.testing.cassettes") for m in sys.modules)
    from test_record_and_replay import CASES, suite
    from mcpclient.testing import ReplayTransport
    results = {name: suite(ReplayTransport(path), *CASES[name]) for name, path in json.loads(sys.argv[2]).items()}
    try:
        import subprocess
        subprocess.Popen([sys.executable, "-c", "pass"])
        hook_works = False
    except RuntimeError:
        hook_works = True
    print(json.dumps({"results": results, "refused": refused, "hook_works": hook_works, "lazy": lazy}))
""")


def test_a_recorded_suite_replays_with_the_servers_gone_and_no_process_or_socket(recorded):
    """All four cases replay in a process where a spawn or a socket raises (the audit hook is
    shown to work): same results, nothing refused (so nothing was attempted)."""
    paths = {name: str(path) for name, (path, _) in recorded.items()}
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _OFFLINE, os.pathsep.join([str(HERE), str(ROOT / "tests")]), json.dumps(paths)], capture_output=True,
                          text=True, timeout=60, cwd=str(ROOT), env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["hook_works"] and report["refused"] == ["subprocess.Popen"]
    assert report["lazy"], "import mcpclient.testing loaded the cassette modules"
    for name, (_, results) in recorded.items():
        assert report["results"][name] == json.loads(json.dumps(results)), name
    assert recorded["stdio-legacy"][1][0] == "2025-11-25"
    if HAVE_MCP:
        assert set(report["results"]) == set(CASES)
        assert recorded["http-legacy"][1][0] == "2025-11-25"
        assert recorded["stdio-2026"][1][0] == recorded["http-2026"][1][0] == "2026-07-28"
    assert time.monotonic() - started < LONG  # (no wait on a server that is not there)


def test_no_secret_sent_while_recording_is_in_a_cassette(recorded):
    """The bearer token (which the wrapper never sees) and a secret tool argument appear in no
    cassette; the argument is there, redacted; the 2026 routing headers were recorded."""
    texts = {name: path.read_text(encoding="utf-8") for name, (path, _) in recorded.items()}
    for name, text in texts.items():
        assert TOKEN not in text and ARG_SECRET not in text, name
        assert "hunter2" not in text and '"<redacted>"' in text, name
    if HAVE_MCP:
        assert '"Mcp-Method": "tools/call"' in texts["http-2026"]
    first = json.loads(texts["stdio-legacy"].splitlines()[0])
    assert first["cassette"] == 1 and "mcpclient" in first


def test_a_request_the_cassette_lacks_fails_at_once_with_a_diff(recorded):
    path, _ = recorded["stdio-legacy"]
    with Client(ReplayTransport(path), timeout=LONG, handlers=Handlers(sampling=_sampling, elicitation=_elicitation)) as client:
        client.list_tools()
        started = time.monotonic()
        with pytest.raises(CassetteMismatch) as caught:
            client.call_tool("echo", {"text": "changed", "password": "new-secret-value"})
        assert time.monotonic() - started < 2
        message = str(caught.value)
        assert "closest recorded request" in message and "--- recorded" in message and "+++ sent" in message
        assert '-      "text": "x"' in message and '+      "text": "changed"' in message
        assert "new-secret-value" not in message  # the diff is redacted too
        assert isinstance(caught.value, AssertionError)
        assert client.call_tool("echo", {"text": "héllo"}).text == "héllo"  # the connection lives on


SILENT_SERVER = textwrap.dedent("""
    import json, sys
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "silent", "version": "1"}}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
        elif msg.get("method") == "tools/list":
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}), flush=True)
        # server/discover and tools/call: never answered (a handshake-era server that ignores them)
""")


def test_silence_is_replayed_at_once(tmp_path):
    """A probe that timed out on silence, and a call that never got an answer, replay without the
    wait: the client does what it did when recorded, at once."""
    script = tmp_path / "silent.py"
    script.write_text(SILENT_SERVER)
    path = tmp_path / "silent.jsonl"
    with Client(RecordingTransport(StdioTransport([sys.executable, str(script)]), path), timeout=Timeout(60.0, probe=0.3)) as client:
        assert client.server.protocol_version == "2025-11-25"
        with pytest.raises(RequestTimeout):
            client.call_tool("anything", timeout=0.3)
    started = time.monotonic()
    with Client(ReplayTransport(path), timeout=Timeout(60.0, probe=LONG)) as client:  # the default would wait 2 s
        assert client.server.protocol_version == "2025-11-25"
        with pytest.raises(RequestTimeout):
            client.call_tool("anything", timeout=LONG)
    assert time.monotonic() - started < 1.5


def test_a_relaunch_after_the_probe_is_replayed(tmp_path):
    """A server that dies on server/discover is started again when recorded: the replay gives the
    client a second recorded connection the same way."""
    path = tmp_path / "relaunch.jsonl"
    inner = StdioTransport(FAULTY + ["stubborn-discover"], terminate_grace=0.1)
    with Client(RecordingTransport(inner, path), timeout=LONG) as client:
        recorded = [client.server.protocol_version, client.call_tool("echo", {"text": "again"}).text]
    events = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert [e["how"] for e in events if e["dir"] == "open"] == ["start", "relaunch"]
    with Client(ReplayTransport(path), timeout=LONG) as client:
        assert [client.server.protocol_version, client.call_tool("echo", {"text": "again"}).text] == recorded


@pytest.mark.skipif(not HAVE_MCP, reason="the official `mcp` SDK needs Python 3.10+")
def test_a_fallback_to_http_sse_is_replayed(tmp_path):
    """A URL target tries Streamable HTTP, is refused by an HTTP+SSE server and falls back: the
    replay falls back the same way (a second recorded connection, handshake era only)."""
    from http_servers import official_http_server

    from mcpclient.transports.targets import make_transport

    path = tmp_path / "fallback.jsonl"
    with official_http_server("--sse") as url:
        with Client(RecordingTransport(make_transport(url, None, TOKEN), path), timeout=LONG) as client:
            recorded = [client.server.protocol_version, client.call_tool("echo", {"text": "sse"}).text]
    text = path.read_text()
    opened = [json.loads(line)["transport"] for line in text.splitlines() if '"dir": "open"' in line]
    assert [o["class"] for o in opened] == ["HTTPTransport", "SSETransport"] and opened[1]["handshake_only"]
    assert TOKEN not in text
    with Client(ReplayTransport(path), timeout=LONG) as client:
        assert [client.server.protocol_version, client.call_tool("echo", {"text": "sse"}).text] == recorded


def test_a_server_exit_is_replayed_with_its_error(tmp_path):
    """The server exits on tools/call (code 7, "bye" on stderr): the replayed call fails with the
    same ProcessExited, return code and stderr tail included."""
    from mcpclient import ProcessExited

    path = tmp_path / "exit.jsonl"
    with Client(RecordingTransport(StdioTransport(FAULTY + ["exit-on-call"]), path), protocol="legacy") as client:
        with pytest.raises(ProcessExited) as live:
            client.call_tool("echo", {"text": "x"})
    with Client(ReplayTransport(path), protocol="legacy") as client:
        with pytest.raises(ProcessExited) as replayed:
            client.call_tool("echo", {"text": "x"})
    assert replayed.value.returncode == live.value.returncode == 7
    assert "bye" in replayed.value.stderr_tail and str(replayed.value) == str(live.value)


def test_redaction_paths_wildcards_and_hooks(tmp_path):
    message = {"method": "tools/call", "params": {"name": "login", "arguments": {
        "user": "ann", "pin": "12345678", "Authorization": "Bearer abcdefgh123", "keys": [{"key": "k-1"}, {"key": "k-2"}],
        "schema": {"password": {"type": "string"}}, "maxTokens": 5}}}
    out = redact_message(message, ["params.arguments.pin", "params.arguments.keys.*.key"])
    args = out["params"]["arguments"]
    assert args["pin"] == args["Authorization"] == "<redacted>" and args["user"] == "ann"
    assert args["keys"] == [{"key": "<redacted>"}, {"key": "<redacted>"}]
    assert args["schema"] == {"password": {"type": "string"}} and args["maxTokens"] == 5  # not secrets
    assert message["params"]["arguments"]["pin"] == "12345678"  # the original is untouched

    def drop_name(event: Dict[str, Any]) -> Dict[str, Any]:
        if isinstance(event.get("msg"), dict) and "serverInfo" in json.dumps(event["msg"]):
            event["msg"] = {"hidden": True}
        return event

    path = tmp_path / "hooked.jsonl"
    with Client(RecordingTransport(StdioTransport(server_command()), path, redact=[drop_name],
                                   secrets=["mcpclient-testing"]), protocol="legacy") as client:
        client.call_tool("echo", {"text": "the mcpclient-testing server"})
    text = path.read_text()
    assert '{"hidden": true}' in text and "mcpclient-testing" not in text and "the <redacted> server" in text
