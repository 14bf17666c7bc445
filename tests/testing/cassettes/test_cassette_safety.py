"""Record and replay where it is easy to get wrong: secrets the transport sends (bearer token, API-key header,
URL query, a stdio server's token argument or environment value) never reach a cassette even when
the server echoes them back; a damaged cassette fails with a typed error naming its line;
concurrent calls replay in any order."""
from __future__ import annotations

import json
import sys
import textwrap
import threading
from typing import Any, Dict

import pytest

from mcpclient import Client, HTTPTransport, Handlers, ProcessExited, StdioTransport
from mcpclient.testing import RecordingTransport, ReplayTransport, server_command

from conftest import LONG, require_official_sdk
from http_scripted import ScriptedHTTPServer

BEARER = "sk-bearer-echoed-51a9c3"
API_KEY = "xk-header-key-0b7e2f"
QUERY_KEY = "qk-query-key-93d1aa"
ARGV_TOKEN = "argv-token-6c2f18"
ENV_TOKEN = "env-token-e47b90"


def test_secrets_the_http_transport_sends_are_scrubbed_even_when_the_server_echoes_them(tmp_path):
    """A server that echoes what it was sent (the Authorization header, an X-API-Key header, the
    URL's query) in a tool result: none of the three secrets is in the cassette, which replays."""
    def handle(seen: Any, message: Dict[str, Any]) -> Dict[str, Any]:
        text = f"{seen.headers.get('authorization')} {seen.headers.get('x-api-key')} {seen.path}"
        return {"content": [{"type": "text", "text": text}]}

    server = ScriptedHTTPServer(handle)
    path = tmp_path / "echoed.jsonl"
    try:
        inner = HTTPTransport(f"{server.url}?api_key={QUERY_KEY}", headers={"X-API-Key": API_KEY}, auth=BEARER)
        with Client(RecordingTransport(inner, path), protocol="legacy", timeout=LONG) as client:
            live = client.call_tool("whoami").text
    finally:
        server.stop()
    assert BEARER in live and API_KEY in live and QUERY_KEY in live  # the server did echo them
    text = path.read_text(encoding="utf-8")
    for secret in (BEARER, API_KEY, QUERY_KEY):
        assert secret not in text, secret
    with Client(ReplayTransport(path), protocol="legacy", timeout=LONG) as client:
        assert "<redacted>" in client.call_tool("whoami").text


LEAKY_SERVER = textwrap.dedent("""
    import json, os, sys
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "leaky", "version": "1"}}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
        elif msg.get("method") == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("x", "login")]
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": tools}}), flush=True)
        elif msg.get("method") == "tools/call" and msg["params"]["name"] == "login":
            text = json.dumps({"access_token": "oauth-access-8f3e2a", "expires_in": 3600})
            result = {"content": [{"type": "text", "text": text}]}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
        elif msg.get("method") == "tools/call":
            print("argv", sys.argv[1:], "env", os.environ.get("SERVICE_TOKEN"), file=sys.stderr, flush=True)
            sys.exit(3)
""")


def test_a_stdio_servers_token_argument_and_environment_value_are_scrubbed_from_its_stderr(tmp_path):
    """The server is started with ``--token=...`` and ``SERVICE_TOKEN=...`` and prints both on
    stderr as it exits: the recorded ProcessExited carries its stderr tail without them."""
    script = tmp_path / "leaky.py"
    script.write_text(LEAKY_SERVER)
    path = tmp_path / "leaky.jsonl"
    inner = StdioTransport([sys.executable, str(script), f"--token={ARGV_TOKEN}"], env={"SERVICE_TOKEN": ENV_TOKEN})
    with Client(RecordingTransport(inner, path), protocol="legacy", timeout=LONG) as client:
        with pytest.raises(ProcessExited) as live:
            client.call_tool("x")
    assert ARGV_TOKEN in live.value.stderr_tail and ENV_TOKEN in live.value.stderr_tail
    text = path.read_text(encoding="utf-8")
    assert "stderr_tail" in text and ARGV_TOKEN not in text and ENV_TOKEN not in text
    with Client(ReplayTransport(path), protocol="legacy") as client:
        with pytest.raises(ProcessExited) as replayed:
            client.call_tool("x")
    assert replayed.value.returncode == 3


@pytest.fixture(scope="module")
def echo_cassette(tmp_path_factory) -> Any:
    """One small handshake-era stdio recording (two echo calls), reused by the tests below."""
    path = tmp_path_factory.mktemp("rev") / "echo.jsonl"
    with Client(RecordingTransport(StdioTransport(server_command()), path), protocol="legacy") as client:
        client.call_tool("echo", {"text": "one"})
        client.call_tool("echo", {"text": "two"})
    return path


@pytest.mark.parametrize("damage", ["truncated", "not-an-object", "no-header"])
def test_a_damaged_cassette_fails_with_a_value_error_naming_the_file_and_line(echo_cassette, tmp_path, damage):
    """A last line cut short (a run killed mid-write), a line that is JSON but not an event, or
    no header: a ``ValueError`` naming the file (and the line), not a JSON or attribute error
    from deep inside."""
    lines = echo_cassette.read_text(encoding="utf-8").splitlines()
    if damage == "truncated":
        lines[-1] = lines[-1][: len(lines[-1]) // 2]
    elif damage == "not-an-object":
        lines.insert(3, "[1, 2]")
    else:
        lines = lines[1:]
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        ReplayTransport(path)
    assert type(caught.value) is ValueError and str(path) in str(caught.value)
    if damage != "no-header":
        assert f"line {len(lines) if damage == 'truncated' else 4}" in str(caught.value)


def _concurrently(client: Any, words: Any) -> Dict[str, str]:
    """``echo`` each word (and ``add`` for a few) from its own thread, all released at once."""
    barrier = threading.Barrier(len(words))
    out: Dict[str, str] = {}

    def call(word: str) -> None:
        barrier.wait(LONG)
        if word.startswith("n"):
            out[word] = str(client.call_tool("add", {"a": len(word), "b": 1}, timeout=LONG).structured_content)
        else:
            out[word] = client.call_tool("echo", {"text": word}, timeout=LONG).text
    threads = [threading.Thread(target=call, args=(w,)) for w in words]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(LONG * 2)
    assert not any(t.is_alive() for t in threads)
    return out


def test_sixteen_concurrent_calls_replay_in_another_order(tmp_path):
    """16 threads call two tools at once (the same tool with different arguments): the replay,
    with the threads started in the reverse order, answers each call with its own answer."""
    words = [f"w{i}" for i in range(12)] + ["n1", "n22", "n333", "n4444"]
    path = tmp_path / "concurrent.jsonl"
    with Client(RecordingTransport(StdioTransport(server_command()), path), protocol="legacy") as client:
        live = _concurrently(client, words)
    with Client(ReplayTransport(path), protocol="legacy", timeout=LONG) as client:
        replayed = _concurrently(client, list(reversed(words)))
    assert replayed == live and live["w3"] == "w3"


def _sampler(text: str) -> Any:
    return lambda request: {"role": "assistant", "content": {"type": "text", "text": text}, "model": "m"}


def test_a_server_request_answered_differently_in_replay_fails_the_call_with_a_diff(tmp_path):
    """The sampling handler under test answers the server's request differently than when
    recorded: the call fails at once with ``CassetteMismatch`` (a diff), as a different request
    does, instead of passing on the recorded result."""
    from mcpclient.testing import CassetteMismatch

    path = tmp_path / "sampling.jsonl"
    ask = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
    with Client(RecordingTransport(StdioTransport(server_command()), path), protocol="legacy", handlers=Handlers(sampling=_sampler("recorded answer"))) as client:
        assert "recorded answer" in json.dumps(client.call_tool("ask_client", ask).structured_content)
    with Client(ReplayTransport(path), protocol="legacy", timeout=LONG, handlers=Handlers(sampling=_sampler("recorded answer"))) as client:
        assert "recorded answer" in json.dumps(client.call_tool("ask_client", ask).structured_content)
    with Client(ReplayTransport(path), protocol="legacy", timeout=LONG, handlers=Handlers(sampling=_sampler("a regression"))) as client:
        with pytest.raises(CassetteMismatch) as caught:
            client.call_tool("ask_client", ask)
    assert '-      "text": "recorded answer"' in str(caught.value) and '"a regression"' in str(caught.value)


def _listen_and_touch(client: Any, echo_first: bool) -> Any:
    """A resource subscription (a listen: a request whose id names the subscription) and an echo,
    in either order, then a change of the resource: the event the subscription gets."""
    if echo_first:
        client.call_tool("echo", {"text": "x"})
    with client.listen(resource_uris=["test://text"]) as subscription:
        if not echo_first:
            client.call_tool("echo", {"text": "x"})
        client.call_tool("touch", {"uri": "test://text"})
        event = subscription.get(3.0)
    return getattr(event, "uri", event)


@pytest.mark.skipif(sys.version_info < (3, 10), reason="the official `mcp` SDK needs Python 3.10+")
def test_a_2026_subscription_replays_when_its_request_id_changes(tmp_path):
    """2026 era: the server names the subscription by the listen request's id (in ``_meta``); the
    replay, which sends the listen as another id, renumbers it there too: the event arrives."""
    require_official_sdk()
    from conftest import OFFICIAL_SERVER

    path = tmp_path / "listen.jsonl"
    with Client(RecordingTransport(StdioTransport(OFFICIAL_SERVER), path), timeout=LONG) as client:
        assert client.server.protocol_version == "2026-07-28"
        live = _listen_and_touch(client, echo_first=False)
    assert live == "test://text"
    with Client(ReplayTransport(path), timeout=LONG) as client:
        assert _listen_and_touch(client, echo_first=True) == live


def test_a_numeric_secret_is_scrubbed_from_strings_only_and_the_cassette_stays_valid(tmp_path):
    """A password of digits, then the same digits as a number (an argument, a result): the
    scrubbing replaces the secret in strings, never inside a number of a line (invalid JSON)."""
    path = tmp_path / "digits.jsonl"
    with Client(RecordingTransport(StdioTransport(server_command()), path), protocol="legacy") as client:
        client.call_tool("echo", {"text": "x", "password": "123456"})
        live = client.call_tool("add", {"a": 123456, "b": 0}).structured_content
    lines = path.read_text(encoding="utf-8").splitlines()
    assert all(isinstance(json.loads(line), dict) for line in lines)
    assert '"123456"' not in "".join(lines)
    with Client(ReplayTransport(path), protocol="legacy", timeout=LONG) as client:
        client.call_tool("echo", {"text": "x", "password": "123456"})
        assert client.call_tool("add", {"a": 123456, "b": 0}).structured_content == live


def test_a_token_in_a_json_text_result_is_redacted(tmp_path):
    """A tool answers JSON as text (``{"access_token": ...}``, as many servers do): the token
    under its secret-looking key is redacted there too, and the replay serves the redacted text."""
    script = tmp_path / "leaky.py"
    script.write_text(LEAKY_SERVER)
    path = tmp_path / "login.jsonl"
    with Client(RecordingTransport(StdioTransport([sys.executable, str(script)]), path), protocol="legacy") as client:
        assert "oauth-access-8f3e2a" in client.call_tool("login").text
    assert "oauth-access-8f3e2a" not in path.read_text(encoding="utf-8")
    with Client(ReplayTransport(path), protocol="legacy", timeout=LONG) as client:
        assert json.loads(client.call_tool("login").text) == {"access_token": "<redacted>", "expires_in": 3600}


def test_a_secret_scrubbed_inside_a_longer_string_still_matches_on_replay(tmp_path):
    """The client sends a secret inside a longer string (``"Bearer ..."`` in a JSON text): the
    cassette has it scrubbed, and the replayed client, sending the real secret again, matches."""
    text = json.dumps({"header": "Bearer tok-client-abcdef", "authorization": "Bearer tok-client-abcdef"})
    path = tmp_path / "embedded.jsonl"
    with Client(RecordingTransport(StdioTransport(server_command()), path), protocol="legacy") as client:
        assert client.call_tool("echo", {"text": text}).text == text
    assert "tok-client-abcdef" not in path.read_text(encoding="utf-8")
    with Client(ReplayTransport(path), protocol="legacy", timeout=LONG) as client:
        assert "<redacted>" in client.call_tool("echo", {"text": text}).text


class _CountingReplay(ReplayTransport):
    """A replay that tells when the client has sent ``pings`` pings (keepalive: timing-driven)."""

    def __init__(self, path: Any, pings: int, method: str = "ping") -> None:
        super().__init__(path)
        self.pinged = threading.Event()
        self._left = pings
        self._method = method

    def send(self, message: Any, **kwargs: Any) -> Any:
        if isinstance(message, dict) and message.get("method") == self._method:
            self._left -= 1
            if self._left <= 0:
                self.pinged.set()
        return super().send(message, **kwargs)


def test_keepalive_pings_the_recording_did_not_make_are_answered_on_replay(echo_cassette):
    """Keepalive pings depend on the clock: a replay idle long enough to ping (the recording
    never did) gets them answered, instead of a mismatch per ping and the connection lost."""
    from mcpclient.policies.reconnect import Keepalive

    transport = _CountingReplay(echo_cassette, pings=3)
    with Client(transport, protocol="legacy", timeout=LONG, keepalive=Keepalive(0.05, failures=1)) as client:
        assert transport.pinged.wait(LONG)
        assert client.call_tool("echo", {"text": "one"}).text == "one"
        assert client.call_tool("echo", {"text": "two"}).text == "two"


def test_the_auth_scheme_word_is_not_scrubbed_as_a_secret(tmp_path):
    """``headers={"Authorization": "Bearer <token>"}``: the token is a secret, the word ``Bearer``
    is not: a server text that says "Bearer" replays as it was said."""
    server = ScriptedHTTPServer(lambda seen, message: {"content": [{"type": "text", "text": "send a Bearer token"}]})
    path = tmp_path / "scheme.jsonl"
    try:
        inner = HTTPTransport(server.url, headers={"Authorization": f"Bearer {BEARER}"})
        with Client(RecordingTransport(inner, path), protocol="legacy", timeout=LONG) as client:
            live = client.call_tool("hint").text
    finally:
        server.stop()
    with Client(ReplayTransport(path), protocol="legacy", timeout=LONG) as client:
        assert client.call_tool("hint").text == live == "send a Bearer token"


def test_a_token_from_a_callable_or_provider_is_scrubbed_when_echoed(tmp_path):
    """``auth=`` a token source (a callable, as a vault or an OAuth provider gives tokens): the
    tokens it hands the transport are learnt as they are sent, and scrubbed when echoed."""
    tokens = iter([f"sk-rotating-{n:06d}" for n in range(100)])
    server = ScriptedHTTPServer(lambda seen, message: {
        "content": [{"type": "text", "text": f"you are {seen.headers.get('authorization')}"}]})
    path = tmp_path / "rotating.jsonl"
    try:
        inner = HTTPTransport(server.url, auth=lambda: next(tokens))
        with Client(RecordingTransport(inner, path), protocol="legacy", timeout=LONG) as client:
            live = [client.call_tool("whoami").text for _ in range(2)]
    finally:
        server.stop()
    assert all("sk-rotating-" in text for text in live)
    assert "sk-rotating-" not in path.read_text(encoding="utf-8")


@pytest.mark.skipif(sys.version_info < (3, 10), reason="the official `mcp` SDK needs Python 3.10+")
def test_keepalive_in_the_2026_era_is_answered_on_replay_too(tmp_path):
    """2026 era: keepalive pings with ``server/discover``; those the recording did not make get
    the recorded discovery's answer, and the connection lives on."""
    require_official_sdk()
    from conftest import OFFICIAL_SERVER
    from mcpclient.policies.reconnect import Keepalive

    path = tmp_path / "modern.jsonl"
    with Client(RecordingTransport(StdioTransport(OFFICIAL_SERVER), path), timeout=LONG) as client:
        assert client.server.protocol_version == "2026-07-28"
        live = client.call_tool("echo", {"text": "one"}).text
    transport = _CountingReplay(path, pings=4, method="server/discover")  # the probe, then 3 keepalives
    with Client(transport, timeout=LONG, keepalive=Keepalive(0.05, failures=1)) as client:
        assert transport.pinged.wait(LONG)
        assert client.call_tool("echo", {"text": "one"}).text == live
