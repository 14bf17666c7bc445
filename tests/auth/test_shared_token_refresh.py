"""Authorization: crypto from ``cryptography``, token refresh safe across
processes and machines, and no authorization traffic to internal addresses.

The refresh tests run real processes (``python -c WORKER``) against a token endpoint on
127.0.0.1 that rotates refresh tokens and, like real authorization servers, revokes the whole
family when a used refresh token comes back. A line on stdin releases the workers together (a
barrier: each says "ready" first); the endpoint holds its first refresh answer until a second
refresh arrives or ``HOLD`` seconds pass, so a second refresh, if the client lets one through,
is in flight at the same time whatever the scheduling — and with the store's lock none comes.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional
from urllib.parse import parse_qs

import pytest

from conftest import LONG
from deploy.conftest import redis_url  # noqa: F401  (a fixture: a throwaway redis-server on loopback)
from mcpclient import AuthError
from mcpclient.auth import ClientCredentials, FileTokenStore, MemoryTokenStore, OAuth


REPO = Path(__file__).resolve().parents[2]
HOLD = 1.0  # seconds the endpoint holds the first refresh answer, waiting for a racing second one


class TokenEndpoint:
    """``/token`` on 127.0.0.1: the refresh_token grant with rotation and reuse detection."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.refreshes: List[str] = []  # the refresh tokens presented, in order
        self.valid = {"r1"}  # refresh tokens not yet used
        self.used: set = set()
        self.revoked = False
        self.second = threading.Event()  # a second refresh request arrived
        self.hold = True
        self.before_answer: Optional[Callable[[str], None]] = None  # a hook run before answering
        self.status = 200  # 503: the endpoint is down
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fields = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                status, body = endpoint.answer(fields)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="test-token-endpoint", daemon=True)
        self.thread.start()

    def answer(self, fields: Dict[str, str]) -> Any:
        if fields.get("grant_type") != "refresh_token":
            return 400, {"error": "unsupported_grant_type"}
        presented = fields.get("refresh_token", "")
        with self.lock:
            self.refreshes.append(presented)
            first = len(self.refreshes) == 1
            if not first:
                self.second.set()
            if self.status != 200:
                return self.status, {"error": "temporarily_unavailable"}
            if presented in self.used:  # reuse: a stolen or raced token; the family is revoked
                self.revoked = True
            ok = presented in self.valid and not self.revoked
            if ok:
                self.valid.discard(presented)
                self.used.add(presented)
                n = len(self.used) + 1
                self.valid.add(f"r{n}")
        if first and self.hold:
            self.second.wait(HOLD)  # a racing refresh, if any, arrives while this one is in flight
        if self.before_answer is not None:
            self.before_answer(presented)
        with self.lock:
            if not ok or self.revoked:
                return 400, {"error": "invalid_grant"}
        return 200, {"access_token": f"a{n}", "token_type": "Bearer", "expires_in": 3600, "refresh_token": f"r{n}"}

    def key(self) -> str:
        return self.base + "/mcp"  # the MCP server's URL: the store's key (no MCP server is needed)

    def expired_token(self, refresh: str = "r1", access: str = "a1") -> Dict[str, Any]:
        return {"access_token": access, "token_type": "Bearer", "refresh_token": refresh,
                "expires_at": time.time() - 60, "scope": "", "issuer": self.base,
                "token_endpoint": self.base + "/token", "client_id": "worker", "auth_method": "none",
                "resource": None}

    def stop(self) -> None:
        self.second.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(LONG)


@pytest.fixture
def endpoint() -> Iterator[TokenEndpoint]:
    ep = TokenEndpoint()
    try:
        yield ep
    finally:
        ep.stop()


# One worker process: its own OAuth on the shared store, bound to the server (the stored token,
# expired, is adopted), then a refresh when the test's line on stdin releases it.
WORKER = r"""
import json, sys
from mcpclient.auth import ClientCredentials, FileTokenStore, OAuth
kind, where, key = sys.argv[1:4]
if kind == "file":
    store = FileTokenStore(where)
else:
    from mcpclient.auth import RedisTokenStore
    store = RedisTokenStore(where, prefix=sys.argv[4])
oauth = OAuth(ClientCredentials("worker", client_secret="unused"), store=store, timeout=30)
oauth.bind(key)
import requests  # warm: both workers reach the refresh together, not one after an import
oauth._flow.session()
print("ready", flush=True)
sys.stdin.readline()
print(json.dumps({"token": oauth.token()}), flush=True)
"""


def _env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def race(args: List[str], n: int = 2) -> List[Optional[str]]:
    """Start ``n`` workers, release them at once, and return the token each ends with."""
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=_env()) for _ in range(n)]
    try:
        for p in procs:  # the barrier: every worker is ready...
            line = p.stdout.readline()
            assert line.strip() == "ready", p.stderr.read()
        for p in procs:  # ...then all go
            p.stdin.write("go\n")
            p.stdin.flush()
        results = []
        for p in procs:
            out, err = p.communicate(timeout=LONG * 3)
            assert p.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1])["token"])
        return results
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.communicate()


# --- two processes, one refresh -------------------------------------------------------

def test_two_processes_refreshing_one_file_token_make_one_refresh_request(endpoint, tmp_path):
    """One refresh request; both processes end with its token."""
    path = str(tmp_path / "tokens.json")
    FileTokenStore(path).set(endpoint.key(), endpoint.expired_token())
    tokens = race(["file", path, endpoint.key()])
    assert endpoint.refreshes == ["r1"], "one refresh for both processes"
    assert not endpoint.revoked
    assert tokens == ["a2", "a2"]
    stored = FileTokenStore(path).get(endpoint.key())
    assert stored is not None and stored["refresh_token"] == "r2" and stored["access_token"] == "a2"


def test_two_processes_refreshing_one_redis_token_make_one_refresh_request(endpoint, redis_url):  # noqa: F811
    """The same guarantee across machines."""
    from mcpclient.auth import RedisTokenStore

    prefix = f"test-{uuid.uuid4().hex}:"
    RedisTokenStore(redis_url, prefix=prefix).set(endpoint.key(), endpoint.expired_token())
    tokens = race(["redis", redis_url, endpoint.key(), prefix])
    assert endpoint.refreshes == ["r1"], "one refresh for both processes"
    assert not endpoint.revoked
    assert tokens == ["a2", "a2"]
    stored = RedisTokenStore(redis_url, prefix=prefix).get(endpoint.key())
    assert stored is not None and stored["refresh_token"] == "r2"


# --- invalid_grant forgets only the generation that failed ------------------------------

def _client(store: Any, endpoint: TokenEndpoint) -> OAuth:
    oauth = OAuth(ClientCredentials("worker", client_secret="unused"), store=store, timeout=LONG)
    oauth.bind(endpoint.key())
    return oauth


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_an_invalid_grant_keeps_a_newer_token_another_client_stored(endpoint, tmp_path, kind):
    """A refresh refused with invalid_grant deletes only the token it failed with, never a newer
    generation another client has just stored."""
    store = MemoryTokenStore() if kind == "memory" else FileTokenStore(str(tmp_path / "tokens.json"))
    endpoint.hold = False
    endpoint.valid = {"r5"}  # r1 is no longer valid: the answer is invalid_grant
    store.set(endpoint.key(), endpoint.expired_token("r1"))
    oauth = _client(store, endpoint)
    newer = dict(endpoint.expired_token("r9", "a9"), expires_at=time.time() + 3600)
    # another client (one not taking the lock, or whose Redis lock expired) stores a new generation
    endpoint.before_answer = lambda presented: store.set(endpoint.key(), newer)
    assert oauth.token() == "a9"  # the newer token is adopted
    assert endpoint.refreshes == ["r1"]
    assert store.get(endpoint.key())["refresh_token"] == "r9"


def test_an_invalid_grant_deletes_the_failed_generation(endpoint, tmp_path):
    endpoint.hold = False
    endpoint.valid = set()
    store = FileTokenStore(str(tmp_path / "tokens.json"))
    store.set(endpoint.key(), endpoint.expired_token("r1"))
    oauth = _client(store, endpoint)
    assert oauth.token() is None
    assert store.get(endpoint.key()) is None


def test_a_failing_token_endpoint_does_not_delete_the_refresh_token(endpoint, tmp_path):
    """A 503 says nothing about the refresh token: it is kept for the next try."""
    endpoint.hold = False
    endpoint.status = 503
    store = FileTokenStore(str(tmp_path / "tokens.json"))
    store.set(endpoint.key(), endpoint.expired_token("r1"))
    oauth = _client(store, endpoint)
    assert oauth.token() == "a1"  # the current (expiring) token is kept
    assert store.get(endpoint.key())["refresh_token"] == "r1"


def test_a_refresh_lock_held_too_long_is_an_auth_error_and_no_request(endpoint, tmp_path):
    """Waiting for another client's refresh is bounded by OAuth's timeout."""
    store = FileTokenStore(str(tmp_path / "tokens.json"))
    store.set(endpoint.key(), endpoint.expired_token("r1"))
    oauth = OAuth(ClientCredentials("worker", client_secret="unused"), store=store, timeout=0.3)
    oauth.bind(endpoint.key())
    with store.lock(endpoint.key(), LONG):  # another client is refreshing (this test holds its lock)
        started = time.monotonic()
        with pytest.raises(AuthError, match="refresh lock"):
            oauth.token()
        assert time.monotonic() - started < LONG
    assert endpoint.refreshes == []


def test_the_redis_store_deletes_a_token_only_if_its_refresh_token_still_matches(redis_url):  # noqa: F811
    from mcpclient.auth import RedisTokenStore

    store = RedisTokenStore(redis_url, prefix=f"test-{uuid.uuid4().hex}:")
    store.set("k", {"access_token": "a2", "refresh_token": "r2"})
    assert store.delete_if("k", "r1") is False
    assert store.get("k") == {"access_token": "a2", "refresh_token": "r2"}
    assert store.delete_if("k", "r2") is True
    assert store.get("k") is None
    assert store.delete_if("k", "r2") is False


def test_an_unreachable_redis_is_an_auth_error_without_its_password():
    pytest.importorskip("redis")
    from mcpclient.auth import RedisTokenStore

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    store = RedisTokenStore(f"redis://:pw-secret@127.0.0.1:{port}/0")
    assert "pw-secret" not in repr(store)
    for attempt in (lambda: store.get("k"), lambda: store.set("k", {}), lambda: store.delete_if("k", "r1")):
        with pytest.raises(AuthError) as err:
            attempt()
        assert "pw-secret" not in str(err.value) and "ConnectionError" in str(err.value)


# --- locks whose holders die ----------------------------------------------------------

HOLDER = r"""
import sys
from mcpclient.auth import FileTokenStore, RedisTokenStore
kind, where = sys.argv[1:3]
store = FileTokenStore(where) if kind == "file" else RedisTokenStore(where, prefix=sys.argv[3], lock_ttl=2.0)
with store.lock("k", 10):
    print("locked", flush=True)
    sys.stdin.readline()  # held until the test kills us
"""


def _dying_holder(args: List[str]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env())
    line = proc.stdout.readline()
    assert line.strip() == "locked", proc.stderr.read()
    return proc


def _kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=LONG)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_redis_refresh_lock_whose_holder_died_expires(redis_url):  # noqa: F811
    """The Redis lock has an expiry: a holder killed mid-refresh does not
    block every other worker for good; the others get the lock within ``lock_ttl``."""
    from mcpclient.auth import RedisTokenStore

    prefix = f"test-{uuid.uuid4().hex}:"
    store = RedisTokenStore(redis_url, prefix=prefix, lock_ttl=2.0)
    proc = _dying_holder(["redis", redis_url, prefix])
    try:
        with pytest.raises(TimeoutError):
            with store.lock("k", 0):
                pass
    finally:
        _kill(proc)
    started = time.monotonic()
    with store.lock("k", LONG):
        waited = time.monotonic() - started
    assert waited <= 2.0 + 1.0


def test_a_redis_lock_release_leaves_a_later_holders_lock(redis_url):  # noqa: F811
    """Released by the holder's own random value: a holder whose lock expired (and went to
    another) does not free the other's."""
    import redis

    from mcpclient.auth import RedisTokenStore

    prefix = f"test-{uuid.uuid4().hex}:"
    store = RedisTokenStore(redis_url, prefix=prefix)
    raw = redis.Redis.from_url(redis_url)
    with store.lock("k", LONG):
        raw.delete(prefix + "lock:k")  # as if it expired
        with store.lock("k", 0):  # another worker takes it
            raw.set(prefix + "lock:k", "someone-else")
    assert raw.get(prefix + "lock:k") == b"someone-else"  # neither release touched the other's value
    raw.delete(prefix + "lock:k")
    raw.close()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_file_refresh_lock_whose_holder_died_is_free(tmp_path):
    """The file lock is the operating system's: it goes with its holder."""
    path = str(tmp_path / "tokens.json")
    proc = _dying_holder(["file", path])
    try:
        with pytest.raises(TimeoutError):
            with FileTokenStore(path).lock("k", 0):
                pass
    finally:
        _kill(proc)
    with FileTokenStore(path).lock("k", 0):
        pass


def test_a_live_holders_redis_lock_does_not_expire(redis_url):  # noqa: F811
    """The Redis refresh lock does not expire after ``lock_ttl`` while its holder is still
    refreshing (a slow token endpoint: ``requests``' timeout is per read, and a DPoP nonce retry
    makes two requests); if it did, a second worker would refresh the same rotating refresh token
    and the family would be revoked. A live holder keeps its lock; a dead one's still expires
    (``test_a_redis_refresh_lock_whose_holder_died_expires``)."""
    import uuid

    from mcpclient.auth import RedisTokenStore

    prefix = f"test-{uuid.uuid4().hex}:"
    store = RedisTokenStore(redis_url, prefix=prefix, lock_ttl=0.3)
    other = RedisTokenStore(redis_url, prefix=prefix, lock_ttl=0.3)
    holding, release = threading.Event(), threading.Event()
    outcome: List[str] = []

    def holder() -> None:
        with store.lock("k", LONG):
            holding.set()
            release.wait(LONG)

    thread = threading.Thread(target=holder, name="test-lock-holder")
    thread.start()
    try:
        assert holding.wait(LONG)
        try:
            with other.lock("k", 1.5):  # five TTLs: an expiring lock would be taken
                outcome.append("taken")
        except TimeoutError:
            outcome.append("waited")
    finally:
        release.set()
        thread.join(LONG)
    assert outcome == ["waited"], "a second worker took the lock while its holder was still refreshing"
    with other.lock("k", LONG):  # released by its holder: free at once
        pass
    assert [t for t in threading.enumerate() if "redis-lock" in t.name] == []
