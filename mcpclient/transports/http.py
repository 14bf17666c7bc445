"""Streamable HTTP transport (MCP 2025-03-26 … 2025-11-25), on ``requests``.

Every client message is one POST. A blocking call POSTs on its own thread (it waits anyway);
a future's request is POSTed on a worker thread, so a slow or streaming response never holds up
other calls. Either way the body — one JSON message, or an SSE stream of messages ending with
the response — is fed to the session's reader through a queue.
Notifications and responses are POSTed on the caller's thread, which keeps them in order with
what the caller sends next. After the handshake a GET stream carries server-initiated messages.
An HTTP failure fails only the request it belongs to (``DeliveryFailed``). A request's SSE
stream that ends before its answer is resumed with a GET carrying ``Last-Event-ID``, after the
server's ``retry:`` delay (2025-11-25 polling); the GET stream is reopened the same way.

``requests`` is imported when a transport starts, not when mcpclient is imported.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from contextlib import contextmanager
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

from .._threads import Lane, next_instance, start_thread
from ..errors import AuthError, ConnectError, ConnectionClosed, HTTPError, ProtocolError, SessionExpired
from ..modern import META_VERSION, MODERN_VERSIONS, NAMED_METHODS, encode_header_value, param_headers
from ..retry import SAFE_METHODS, Retry
from ._http import (
    JSON, SSE, Auth, SSEEvent, abort, auth_headers, challenge_resolved, chunks, current_token, media_type, parse_sse,
    request_error, rpc_error_body, status_error,
)
from .base import DeliveryFailed, Transport, decode_frame, encode_frame

if TYPE_CHECKING:
    import requests

__all__ = ["HTTPTransport"]

log = logging.getLogger("mcpclient.transport.http")

_DELETE_TIMEOUT = 2.0
_RETRY_DEFAULT = 0.5  # seconds to wait before resuming a stream whose server named no retry: delay
_RETRY_MAX = 30.0  # a server's retry: delay is honoured up to this many seconds
_MAX_RESUMES = 10  # resumptions of one request's stream before giving up
_MAX_AUTH_ROUNDS = 3  # OAuth flows (first login, step-ups) for one request before its error stands


class HTTPTransport(Transport):
    """Talk to an MCP server over Streamable HTTP.

    Example::

        transport = HTTPTransport("https://mcp.example.com/mcp", auth=lambda: vault.token())
        with Client(transport) as client:
            print(client.list_tools())

    Args:
        url: the server's MCP endpoint.
        headers: extra headers sent with every request.
        auth: a bearer token, or a callable returning one (called for every request, from many
            threads at once). Sent as ``Authorization: Bearer <token>`` (see ``auth_header``).
        auth_header: the header that carries the token; with a name other than
            ``Authorization`` the raw token is sent, without ``Bearer``.
        session: a ``requests.Session`` to use (proxies, certificates, mTLS); its headers,
            proxies and certificate settings are read once at start, its cookies, auth, hooks
            and mounted adapters used on every request; the transport never changes it (nor
            closes it). By default the transport makes and owns one.
        connect_timeout: seconds to wait for a TCP/TLS connection.
        follow_redirects: follow 3xx answers (off: a redirect is an ``HTTPError``). The token is
            never sent to another origin either way (``requests`` drops it on cross-host redirects).
        pool_size: the most requests in flight at once (connections and worker threads).
        retry: when a request is sent again (``Retry``); by default safe requests get two more
            tries after a 429/503 or a broken connection, ``tools/call`` only when the connection
            was never made.
        reconnect: when the server forgets our session (404 to a request carrying its id),
            initialize a new one transparently and repeat the request once if it is safe to
            repeat (``tools/call`` only with ``Retry(retry_tool_calls=True)``); otherwise, or
            with ``reconnect=False``, the request fails with ``SessionExpired``.
        on_session_change: ``(old_id, new_id)`` after a new session replaced an expired one
            (called on a worker thread).
    """

    def __init__(self, url: str, *, headers: Optional[Dict[str, str]] = None,
                 auth: Auth = None, auth_header: str = "Authorization",
                 session: Optional["requests.Session"] = None, connect_timeout: float = 10.0,
                 follow_redirects: bool = False, pool_size: int = 32, retry: Optional[Retry] = None,
                 reconnect: bool = True, on_session_change: Optional[Callable[[Optional[str], Optional[str]], Any]] = None,
                 name: Optional[str] = None, sse_fallback: bool = False) -> None:
        if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
            raise ValueError(f"an HTTP transport needs an http(s) URL, not {url!r}")
        if follow_redirects and auth is not None and auth_header.lower() != "authorization":
            # requests drops only Authorization on a redirect to another host: refuse rather than leak
            raise ValueError("follow_redirects=True needs auth_header='Authorization' (a custom auth "
                             "header would be sent on to whatever host the server redirects to)")
        self.url = url
        self.headers = dict(headers or {})
        self.auth = auth
        self.auth_header = auth_header
        self.connect_timeout = connect_timeout
        self.follow_redirects = follow_redirects
        self.pool_size = pool_size
        self.retry = retry if retry is not None else Retry()
        self.reconnect = reconnect
        self.on_session_change = on_session_change
        self.sse_fallback = sse_fallback
        self._init_body: Optional[bytes] = None  # the initialize request, replayed to renew a session
        self._renew_lock = threading.Lock()
        self.name = name or "http"
        self.instance = next_instance()
        self.session_id: Optional[str] = None
        self.protocol_version: Optional[str] = None
        self._http = session
        self._owns_http = session is None
        self._inbox: "SimpleQueue[Any]" = SimpleQueue()
        self._posts: Optional[Lane] = None
        self._poster: Optional[_Poster] = None
        #: tool name -> its ``x-mcp-header`` arguments (filled by the client's ``list_tools`` in the
        #: 2026 era), mirrored into ``Mcp-Param-*`` headers on ``tools/call``.
        self.tool_headers: Dict[str, List[Tuple[Tuple[str, ...], str]]] = {}
        self._open: Set[Any] = set()  # responses being read, closed on close() to unblock readers
        self._streams: Dict[Any, Any] = {}  # request id -> its response stream being read
        self._cancelled: Set[Any] = set()  # 2026: requests cancelled before their response came
        self._open_lock = threading.Lock()
        self._closing = threading.Event()
        self._get_thread: Optional[threading.Thread] = None
        self._get_answered = threading.Event()

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        import requests
        from requests.adapters import HTTPAdapter

        if self._closing.is_set():
            raise ConnectionClosed("the transport is closed")
        if self._http is None:
            self._http = http = requests.Session()
            adapter = HTTPAdapter(pool_connections=1, pool_maxsize=self.pool_size, max_retries=0)
            http.mount("http://", adapter)
            http.mount("https://", adapter)
            # Read the environment (proxies, CA bundle) once, not on every request as requests
            # would (a fifth of a call's CPU); one endpoint means one answer for the whole session.
            env = http.merge_environment_settings(self.url, {}, None, None, None)
            http.proxies, http.verify, http.trust_env = env["proxies"], env["verify"], False
        self._poster = _Poster(self._http, self.url, self.headers) if not self.follow_redirects else None
        if hasattr(self.auth, "bind"):
            self.auth.bind(self.url)  # type: ignore[union-attr]  (OAuth: its tokens belong to this URL)
        self._posts = Lane(f"mcpclient-{self.instance}-http", self.pool_size, -1)

    def negotiated(self, protocol_version: str, stateless: bool = False) -> None:
        """Add the version header from now on, and open the GET stream: returns once the server
        answered it (or ``connect_timeout`` passed), so nothing it sends there after connect is lost."""
        self.protocol_version = protocol_version
        if protocol_version in MODERN_VERSIONS:
            return  # 2026-07-28: stateless, no GET stream (server messages come with each request)
        self._get_thread = start_thread(self._listen, f"mcpclient-{self.instance}-http-get")
        self._get_answered.wait(self.connect_timeout)

    remote = True
    sends_headers = True

    def identity(self) -> str:
        return self.url

    def credentials(self) -> Optional[str]:
        auth = self.auth
        token = auth() if callable(auth) else auth
        if token is None and not self.headers:
            return None
        import hashlib

        material = repr((token, sorted((str(k).lower(), str(v)) for k, v in self.headers.items())))
        return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]

    def fallback(self, error: BaseException) -> Optional[Transport]:
        if not self.sse_fallback or not isinstance(error, HTTPError) or error.status not in (400, 404, 405) \
                or '"jsonrpc"' in str(error):
            return None
        self.sse_fallback = False
        from .sse import SSETransport

        sse = SSETransport(self.url, headers=self.headers, auth=self.auth, name=self.name)
        sse.instance = self.instance
        return sse

    def close(self, deadline: Optional[float] = None) -> None:
        if self._closing.is_set():
            return
        self._closing.set()
        with self._open_lock:
            streams, self._open = list(self._open), set()
        for response in streams:  # unblocks the threads reading them (they close the responses)
            abort(response)
        if self.session_id is not None and self._http is not None:
            try:  # the spec asks clients to end their session; a 405 just means "not supported"
                self._http.delete(self.url, headers=self._headers("DELETE"), timeout=(self.connect_timeout, _DELETE_TIMEOUT),
                                  allow_redirects=False)
            except Exception as exc:  # best effort, bounded
                log.debug("DELETE of the session failed: %s", type(exc).__name__)
        if self._posts is not None:
            self._posts.shutdown(time.monotonic() + 1.0)
        if self._get_thread is not None:
            self._get_thread.join(1.0)
        if self._owns_http and self._http is not None:
            self._http.close()
        self._inbox.put(None)

    # --- sending --------------------------------------------------------------------------------

    def send(self, message: Any, *, deadline: Optional[float] = None, wait: bool = False,
             headers: Optional[Dict[str, str]] = None, idempotent: Optional[bool] = False, setup: bool = False) -> None:
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        if self._closing.is_set() or self._posts is None:
            raise ConnectionClosed("the transport is closed" if self._posts else "transport not started")
        body = encode_frame(message)
        rid = message.get("id") if isinstance(message, dict) and "method" in message else None
        if rid is not None and message.get("method") == "initialize":
            self._init_body = encode_frame(dict(message, id="mcpclient-renew-session"))
        extra = headers
        if rid is None:  # a notification or a response: send it now, in order
            response = self._post(body, timeout, extra=extra)
            try:
                if response.status_code not in (200, 202):
                    raise status_error(self.name, response)
                if response.status_code == 200 and response.content:
                    self._deliver_body(response)  # some servers answer a response with messages
            finally:
                response.close()
            return
        if wait:  # the caller blocks for the answer anyway: POST on its thread, no hand-off
            self._request(rid, message.get("method"), body, timeout, True, extra)
        else:
            self._posts.try_submit("POST", self._request, rid, message.get("method"), body, timeout, False, extra)

    def _routing_headers(self, message: Dict[str, Any]) -> Optional[Dict[str, str]]:
        """2026-07-28 requests (they carry the version in ``_meta``): ``MCP-Protocol-Version`` equal
        to it, ``Mcp-Method``, ``Mcp-Name`` and the tool's ``Mcp-Param-*`` headers."""
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(META_VERSION) if isinstance(meta, dict) else None
        if not isinstance(version, str):
            return None
        method = message["method"]
        headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
        name_key = NAMED_METHODS.get(method)
        name = params.get(name_key) if name_key else None  # type: ignore[union-attr]
        if isinstance(name, str):
            headers["Mcp-Name"] = encode_header_value(name)
            spec = None
            if spec:
                headers.update(param_headers(params.get("arguments"), spec))  # type: ignore[union-attr]
        return headers

    def _request(self, rid: Any, method: Optional[str], body: bytes, timeout: Optional[float],
                 inline: bool, extra: Optional[Dict[str, str]] = None) -> None:
        """Worker: POST one request (again, as ``self.retry`` allows) and feed what comes back
        to the reader, or its failure."""
        deadline = None if timeout is None else time.monotonic() + timeout
        renewed = False
        challenges = 0
        try:
            for attempt in range(self.retry.total + 2 + _MAX_AUTH_ROUNDS):
                sent_session = self.session_id
                sent_token = current_token(self.auth)
                try:
                    response = self._post(body, None if deadline is None else deadline - time.monotonic(),
                                          initialize=method == "initialize", extra=extra)
                except (ConnectError, ConnectionClosed) as exc:
                    reached = not isinstance(exc, ConnectError)  # a broken connection may have delivered it
                    if not self._may_retry(method, attempt, None, deadline, reached=reached):
                        raise
                    continue
                try:
                    if self._cancelled and rid in self._cancelled:
                        with self._open_lock:
                            self._cancelled.discard(rid)
                        return  # cancelled meanwhile (2026): closing the response tells the server
                    if response.status_code == 200:
                        self._deliver_body(response, rid, inline)
                        return
                    if challenges < _MAX_AUTH_ROUNDS and challenge_resolved(self.auth, self.url, response, sent_token):
                        challenges += 1  # OAuth got a (better) token: send the request again
                        continue
                    if response.status_code == 404 and sent_session is not None and method != "initialize":
                        if renewed or not self.reconnect:
                            raise SessionExpired(f"{self.name} no longer knows our session")
                        self._renew_session(sent_session, deadline)
                        renewed = True
                        if method in SAFE_METHODS or (self.retry.retry_tool_calls and method == "tools/call"):
                            continue
                        raise SessionExpired(f"{self.name} lost our session before {method} ran; a new session "
                                             f"was started, but {method} is not safe to repeat")
                    if response.status_code not in self.retry.statuses or not self._may_retry(
                            method, attempt, response.headers.get("Retry-After"), deadline, reached=True):
                        answer = rpc_error_body(response, rid)
                        if answer is None:
                            raise status_error(self.name, response)
                        self._inbox.put(answer)  # a JSON-RPC error sent with a 4xx/5xx: the call's answer
                        return
                finally:
                    response.close()
        except Exception as exc:
            if deadline is None or time.monotonic() < deadline:  # else the session reports its timeout
                self._fail(rid, exc)

    def _renew_session(self, expired: str, deadline: Optional[float]) -> None:
        """Replace the session ``expired`` with a new one (once, however many threads ask)."""
        with self._renew_lock:
            if self.session_id != expired:
                return  # another worker renewed it already
            if self._init_body is None:
                raise SessionExpired(f"{self.name} no longer knows our session")
            log.info("%s lost our session; starting a new one", self.name)
            self.session_id = None
            timeout = None if deadline is None else max(0.001, deadline - time.monotonic())
            response = self._post(self._init_body, timeout, initialize=True)
            try:
                if response.status_code != 200 or not self.session_id:
                    raise SessionExpired(f"{self.name} lost our session and refused a new one "
                                         f"(HTTP {response.status_code})")
                response.content  # the initialize result: read and dropped (the client's view stands)
            finally:
                response.close()
            notice = self._post(encode_frame({"jsonrpc": "2.0", "method": "notifications/initialized"}), timeout)
            notice.close()
        if self.on_session_change is not None:
            try:
                self.on_session_change(expired, self.session_id)
            except Exception:
                log.exception("on_session_change callback failed")

    def _may_retry(self, method: Optional[str], attempt: int, retry_after: Optional[str],
                   deadline: Optional[float], *, reached: bool) -> bool:
        """Wait and return True if the policy repeats this request and the call's deadline allows."""
        if self._closing.is_set() or not self.retry.may_repeat(method, attempt, reached_server=reached):
            return False
        wait = self.retry.wait(attempt, retry_after)
        if wait is None or (deadline is not None and time.monotonic() + wait >= deadline):
            return False
        log.debug("retrying %s to %s in %.2f s (attempt %d)", method, self.name, wait, attempt + 2)
        return not self._closing.wait(wait)

    def _post(self, body: bytes, timeout: Optional[float], initialize: bool = False,
              extra: Optional[Dict[str, str]] = None) -> "requests.Response":
        """POST one message. Only an ``initialize`` answer may set the session id (other answers
        echo it, and a late one from an expired session must not bring that session back)."""
        import requests

        headers = self._headers()
        if extra:
            headers.update(extra)
        read = None if timeout is None else max(timeout, 0.001)
        try:
            if self._poster is not None:
                response = self._poster.post(body, headers, (self.connect_timeout, read))
            else:
                headers["Accept"] = f"{JSON}, {SSE}"
                headers["Content-Type"] = JSON
                response = self._http.post(  # type: ignore[union-attr]
                    self.url, data=body, headers=headers, stream=True,
                    timeout=(self.connect_timeout, read), allow_redirects=True)
        except requests.exceptions.RequestException as exc:
            raise request_error(self.name, exc, self.connect_timeout) from exc
        session_id = response.headers.get("Mcp-Session-Id")
        if initialize and session_id and response.status_code == 200:
            self.session_id = session_id
        return response

    def _headers(self, method: str = "POST") -> Dict[str, str]:
        headers = auth_headers(self.headers, self.auth, self.auth_header, method, self.url)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    # --- receiving ------------------------------------------------------------------------------

    def receive(self) -> Optional[Any]:
        return self._inbox.get()

    def _deliver_body(self, response: "requests.Response", rid: Any = None, inline: bool = False) -> None:
        """Queue the messages of a 200 answer: one JSON body, or every event of an SSE stream
        (resumed until the answer to ``rid`` came, if the server lets it be resumed). ``inline``:
        this is the caller's own thread, which must not stay to resume a stream (the answer may
        come on another stream): a worker resumes it instead."""
        kind = media_type(response)
        if kind == JSON:
            with self._tracked(response):
                self._inbox.put(decode_frame(response.content))
            return
        if kind != SSE:
            raise ProtocolError(f"{self.name} answered with Content-Type {kind or 'none'!r}, not JSON or SSE")
        answered, last_id, retry = self._read_events(response, rid, None, None)
        if answered or rid is None or self._closing.is_set():
            return
        if last_id is None:
            raise ConnectionClosed(f"{self.name} ended the stream before the answer, with no event id "
                                   "to resume from")
        if inline:
            self._posts.try_submit("resume", self._resume_or_fail, rid, last_id, retry)  # type: ignore[union-attr]
        else:
            self._resume(rid, last_id, retry)

    def _read_events(self, response: "requests.Response", rid: Any, last_id: Optional[str],
                     retry: Optional[float]) -> Tuple[bool, Optional[str], Optional[float]]:
        """Queue one stream's messages; return (answer to ``rid`` seen, last event id, retry delay)."""
        answered = False
        with self._tracked(response, rid):
            for event in self._events(response):
                last_id = event.id if event.id is not None else last_id
                retry = min(event.retry / 1000, _RETRY_MAX) if event.retry is not None else retry
                message = self._message(event)
                if message is None:
                    continue
                self._inbox.put(message)
                if rid is not None and isinstance(message, dict) and message.get("id") == rid \
                        and ("result" in message or "error" in message):
                    answered = True
        return answered, last_id, retry

    def _resume(self, rid: Any, last_id: Optional[str], retry: Optional[float]) -> None:
        """2025-11-25 polling: after the server's retry delay, GET with ``Last-Event-ID`` and read
        on, until the answer to ``rid`` came."""
        for _ in range(_MAX_RESUMES):
            if self._closing.wait(retry if retry is not None else _RETRY_DEFAULT):
                return
            response = self._get_stream(last_id)
            try:
                if response.status_code != 200 or media_type(response) != SSE:
                    raise status_error(self.name, response)
                answered, last_id, retry = self._read_events(response, rid, last_id, retry)
            finally:
                response.close()
            if answered or self._closing.is_set():
                return
        raise ConnectionClosed(f"gave up resuming the answer stream from {self.name} after {_MAX_RESUMES} tries")

    def _resume_or_fail(self, rid: Any, last_id: Optional[str], retry: Optional[float]) -> None:
        try:
            self._resume(rid, last_id, retry)
        except Exception as exc:
            self._fail(rid, exc)

    def _fail(self, rid: Any, exc: Exception) -> None:
        """Fail the call ``rid`` with ``exc`` (mapped to an mcpclient error), unless closing."""
        if self._closing.is_set():
            return
        error = exc if isinstance(exc, (AuthError, HTTPError, ConnectionClosed, ProtocolError)) \
            else ConnectionClosed(f"POST to {self.name} failed: {exc}")
        self._inbox.put(DeliveryFailed(rid, error))

    def _message(self, event: SSEEvent) -> Any:
        """The JSON-RPC message an event carries, or None (no data, another event type, not JSON)."""
        if not event.data or event.event != "message":  # no data, or "" (a priming event)
            return None
        try:
            return json.loads(event.data)
        except ValueError:
            log.warning("%s sent an SSE event that is not JSON; skipped", self.name)
            return None

    def _get_stream(self, last_event_id: Optional[str] = None) -> "requests.Response":
        import requests

        headers = self._headers("GET")
        headers["Accept"] = SSE
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        try:
            return self._http.get(self.url, headers=headers, stream=True,  # type: ignore[union-attr]
                                  timeout=(self.connect_timeout, None), allow_redirects=False)
        except requests.exceptions.RequestException as exc:
            raise ConnectionClosed(f"GET to {self.name} failed: {type(exc).__name__}") from exc

    @contextmanager
    def _tracked(self, response: "requests.Response", rid: Any = None) -> Iterator[None]:
        """While reading ``response``, let ``close()`` (and ``cancel_request(rid)``) abort it."""
        with self._open_lock:
            if self._closing.is_set():
                raise ConnectionClosed("the transport is closed")
            self._open.add(response)
            if rid is not None:
                self._streams[rid] = response
        try:
            yield
        finally:
            with self._open_lock:
                self._open.discard(response)
                if rid is not None and self._streams.get(rid) is response:
                    del self._streams[rid]

    def cancel_request(self, rid: Any) -> bool:
        """2026-07-28: a request is cancelled by closing its response stream (no notification)."""
        if self.protocol_version not in MODERN_VERSIONS:
            return False
        with self._open_lock:
            response = self._streams.get(rid)
            if response is None:  # not answered yet: close its response as soon as it comes
                self._cancelled.add(rid)
                if len(self._cancelled) > 1024:
                    self._cancelled.pop()
        if response is not None:
            abort(response)
        return True

    def _events(self, response: "requests.Response") -> Iterator[SSEEvent]:
        """The events of an SSE response; a broken connection just ends them (the caller resumes)."""
        try:
            yield from parse_sse(chunks(response))
        except Exception as exc:  # the stream broke (or close() aborted it)
            log.debug("event stream from %s ended: %s", self.name, type(exc).__name__)

    def _listen(self) -> None:
        """The GET stream for server-initiated messages, reopened until close: after the server's
        ``retry:`` delay with ``Last-Event-ID`` when it gave ids, else with capped backoff."""
        import random

        delay = 0.5
        last_id: Optional[str] = None
        retry: Optional[float] = None
        while not self._closing.is_set():
            try:
                response = self._get_stream(last_id)
            except ConnectionClosed as exc:
                log.debug("%s", exc)
                self._get_answered.set()
            else:
                self._get_answered.set()
                try:
                    status = response.status_code
                    if 400 <= status < 500 and status != 429:  # 405 and friends: no GET stream here
                        log.debug("%s offers no GET stream (HTTP %s)", self.name, status)
                        return
                    if status == 200 and media_type(response) == SSE:
                        delay = 0.5
                        with self._tracked(response):
                            for event in self._events(response):
                                last_id = event.id if event.id is not None else last_id
                                retry = min(event.retry / 1000, _RETRY_MAX) if event.retry is not None else retry
                                message = self._message(event)
                                if message is not None:
                                    self._inbox.put(message)
                    else:
                        log.debug("GET stream to %s answered %s", self.name, status)
                except ConnectionClosed as exc:
                    log.debug("%s", exc)
                finally:
                    response.close()
            wait = retry if retry is not None else delay * (0.5 + random.random())
            if self._closing.wait(wait):
                return
            delay = min(delay * 2, 30.0)


class _Poster:
    """POSTs to one URL without redoing, per request, what ``Session.request`` redoes: URL
    parsing, header merging, environment lookup (a third of a call's CPU on a fast server).
    The session's headers, proxies and certificate settings are read once, at start; its
    cookies, auth, hooks and adapters are still honoured on every request. Never follows
    redirects (with ``follow_redirects=True`` the transport uses ``Session.post``)."""

    def __init__(self, http: "requests.Session", url: str, headers: Dict[str, str]) -> None:
        import requests
        from requests.structures import CaseInsensitiveDict

        self._http = http
        self._new = requests.PreparedRequest
        template = http.prepare_request(requests.Request("POST", url, headers=headers, data=b"{}"))
        self.url = template.url
        self._headers = CaseInsensitiveDict(template.headers)
        self._headers["Accept"] = f"{JSON}, {SSE}"
        self._headers["Content-Type"] = JSON
        for name in ("Content-Length", "Cookie", "Authorization"):  # set per request below
            self._headers.pop(name, None)
        env = http.merge_environment_settings(self.url, {}, None, None, None)
        self._settings = {"proxies": env["proxies"], "verify": env["verify"], "cert": env["cert"]}

    def post(self, body: bytes, headers: Dict[str, str], timeout: Any) -> "requests.Response":
        http = self._http
        request = self._new()
        request.method = "POST"
        request.url = self.url
        request.headers = merged = self._headers.copy()
        merged.update(headers)
        merged["Content-Length"] = str(len(body))
        request.body = body
        request.hooks = http.hooks
        request.prepare_cookies(http.cookies)  # also gives requests the jar it expects on a 3xx
        if http.auth is not None:
            request.prepare_auth(http.auth, self.url)
        return http.send(request, stream=True, timeout=timeout, allow_redirects=False, **self._settings)
