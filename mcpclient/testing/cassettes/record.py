"""Record a client's session with a server to a cassette file, to replay it later without the server.

A cassette is JSON lines, human-readable and diff-friendly. The first line is a header
(``{"cassette": 1, "mcpclient": version, "redact": [...]}``); every other line is one event of one
connection (``conn``: 0 for the first transport, then one number per relaunch, reopen or fallback)
with ``t``, the seconds since recording started (informative: replay keeps the order, not the
pace):

- ``{"dir": "open", "how": "start"|"relaunch"|"reopen"|"fallback", "transport": {...}}``: a
  transport was made, with what it declares (``name``, ``remote``, ``sends_headers``,
  ``handshake_only``), so that the replay drives the client the same way;
- ``{"dir": "send", "seq": n, "msg": {...}, "headers": {...}}``: the client sent a message
  (routing headers, redacted, for transports that send them); ``{"dir": "unsent", "seq": n,
  "error": {...}}`` when that send raised;
- ``{"dir": "recv", "msg": {...}}``: a message from the server (``"via": "return", "seq": n``
  when the transport answered on the sending thread), or ``{"dir": "recv", "failed": {"id": ...,
  "error": {...}}}`` for a request that could not be delivered;
- ``{"dir": "end"}`` (``"error"``: why): the server ended the connection; ``{"dir": "close"}``:
  the client closed it; ``{"dir": "negotiated", ...}`` and ``{"dir": "renewed"}`` for the era
  agreed and an HTTP session renewed.

Secrets never reach the file: values under secret-looking keys (``authorization``, ``token``,
``password``, ``api_key``, ``cookie``, ``secret``... in messages and headers alike) become
``"<redacted>"``, then every occurrence of a redacted value (or of a ``secrets=`` literal, or of a
secret the wrapped transport itself sends: its fixed bearer token, secret-looking headers, URL
credentials and query values, ``--token=...`` arguments and environment values) is scrubbed from
every later line, server answers and stderr tails included.
"""
from __future__ import annotations

import copy
import itertools
import json
import threading
import time
from functools import partial
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

from ..._version import __version__
from ..._util.secrets import MIN_SCRUB, is_secret_key as _secret_key, secret_words
from ..._util.threads import Once
from ...errors import MCPError
from ...transports.base import DeliveryFailed, PendingExchange, Remake, RemakeKind, SessionRenewed, Transport, TransportInfo

__all__ = ["CASSETTE_FORMAT", "REDACTED", "RecordingTransport", "error_to_json", "redact_message"]

#: The cassette format version written in the header line.
CASSETTE_FORMAT = 1
#: What a redacted value is replaced with.
REDACTED = "<redacted>"

#: Error attributes kept in the cassette so the replay raises an equal error.
_ERROR_ATTRS = ("status", "code", "message", "data", "method", "http_status", "returncode", "stderr_tail",
                "www_authenticate", "limit", "request_id")

#: A redaction hook: takes an event (a dict about to be written) and returns it (changed or not).
Hook = Callable[[Dict[str, Any]], Dict[str, Any]]
#: What ``redact=`` takes: a dotted path (``"params.arguments.password"``; ``*`` matches any one
#: key or index), a hook, or a sequence of either.
Redaction = Union[str, Hook, Sequence[Union[str, Hook]], None]

_chains = itertools.count(1)


def _hide(value: Any, found: Set[str]) -> Any:
    """``value`` replaced by ``REDACTED`` (numbers, booleans and ``None`` are left alone); the
    secret strings it held go into ``found`` (a path may name a whole object: its strings)."""
    if value is None or isinstance(value, (bool, int, float)) or value == REDACTED:
        return value
    for string in _strings(value):
        found.add(string)
        found.update(secret_words(string))  # "Bearer sk-...": the token alone is scrubbed elsewhere too
    return REDACTED


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _by_keys(node: Any, found: Set[str]) -> Any:
    """Strings under secret-looking keys redacted; objects under them are searched instead (a
    tool's input schema has a ``password`` property, whose schema is no secret). A string that
    holds a JSON object (a tool's JSON-as-text result) is searched too: its secrets go into
    ``found``, to be scrubbed from the line."""
    if isinstance(node, str) and node[:1] in ("{", "["):
        try:
            _by_keys(json.loads(node), found)
        except (ValueError, RecursionError):
            pass
        return node
    if isinstance(node, dict):
        return {k: (_hide(v, found) if isinstance(v, str) and _secret_key(k) else _by_keys(v, found))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_by_keys(v, found) for v in node]
    return node


def _by_path(node: Any, parts: List[str], found: Set[str]) -> Any:
    if not parts:
        return _hide(node, found)
    head, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        return {k: (_by_path(v, rest, found) if head in ("*", k) else v) for k, v in node.items()}
    if isinstance(node, list):
        return [_by_path(v, rest, found) if head in ("*", str(i)) else v for i, v in enumerate(node)]
    return node


def redact_message(message: Any, paths: Iterable[str] = (), *, defaults: bool = True,
                   found: Optional[Set[str]] = None) -> Any:
    """A copy of ``message`` with its secrets replaced by ``"<redacted>"``.

    Args:
        message: a JSON-RPC message (dict), a batch (list), or a dict of headers.
        paths: extra dotted paths to redact (``"params.arguments.password"``; ``*`` matches any
            one key or list index).
        defaults: also redact values under secret-looking keys (``authorization``, ``token``,
            ``password``, ``api_key``, ``secret``, ``cookie``...), case-insensitively.
        found: if given, the secret strings removed are added to it.

    Returns:
        The redacted copy (``message`` itself is never changed).
    """
    seen: Set[str] = set() if found is None else found
    result = _by_keys(message, seen) if defaults else copy.deepcopy(message)
    for path in paths:
        result = _by_path(result, path.split("."), seen)
    return result


def error_to_json(exc: BaseException) -> Dict[str, Any]:
    """An exception as a cassette entry, so that a replay raises an equal one.

    Args:
        exc: the exception a transport raised or reported.

    Returns:
        ``{"type": class name, "text": str(exc), "attrs": {...}}`` (attributes such as
        ``status``, ``code``, ``data``, ``returncode``; only those the exception has).
    """
    entry: Dict[str, Any] = {"type": type(exc).__name__, "text": str(exc)}
    attrs = {name: value for name, value in vars(exc).items() if name in _ERROR_ATTRS}
    if attrs:
        entry["attrs"] = attrs
    return entry


def _scrub(node: Any, secrets: List[str]) -> Any:
    """``node`` with every occurrence of ``secrets`` in its strings (keys too) replaced by
    ``REDACTED``; numbers are left alone (a secret of digits never breaks a line's JSON)."""
    if isinstance(node, str):
        for secret in secrets:
            if secret in node:
                node = node.replace(secret, REDACTED)
        return node
    if isinstance(node, dict):
        return {_scrub(k, secrets): _scrub(v, secrets) for k, v in node.items()}
    if isinstance(node, list):
        return [_scrub(v, secrets) for v in node]
    return node


def _json_safe(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


class _Recorder:
    """The file and state one recording chain (a transport and its replacements) shares."""

    def __init__(self, path: str, paths: List[str], hooks: List[Hook], secrets: Iterable[str], defaults: bool) -> None:
        self.path = path
        self.paths = paths
        self.hooks = hooks
        self.defaults = defaults
        self.secrets: Set[str] = {s for s in secrets if isinstance(s, str) and s}
        self.lock = threading.Lock()
        self.started: Optional[float] = None
        self.conns = itertools.count()
        self.seqs = itertools.count(1)
        self.identity = f"cassette-record:{path}#{next(_chains)}"
        self.stopped = False  # set by stop(): nothing more is written

    def stop(self) -> None:
        """Write nothing more (the pytest plugin moved the file in place: a client that lives on
        must not leave a headerless file behind)."""
        with self.lock:
            self.stopped = True

    def begin(self) -> None:
        """Truncate the file and write the header (once per chain, at the first start)."""
        with self.lock:
            if self.started is not None or self.stopped:
                return
            self.started = time.monotonic()
            header = {"cassette": CASSETTE_FORMAT, "mcpclient": __version__, "redact": self.paths}
            with open(self.path, "w", encoding="utf-8") as f:
                f.write(json.dumps(header, ensure_ascii=False) + "\n")

    def learn(self, secrets: FrozenSet[str]) -> None:
        """Secrets the inner transport sent (its own, and the credentials of its requests so
        far): scrubbed from every line from now on."""
        if not secrets <= self.secrets:
            with self.lock:
                self.secrets.update(secrets)

    def write(self, event: Dict[str, Any]) -> None:
        """Redact ``event`` and append it as one line (flushed: a crash keeps what happened)."""
        found: Set[str] = set()
        for key in ("msg", "headers", "error", "failed"):  # errors too: an RPCError's data may hold one
            if key in event:
                event[key] = redact_message(event[key], self.paths if key == "msg" else (),
                                            defaults=self.defaults, found=found)
        for hook in self.hooks:
            event = hook(event)
        with self.lock:
            if self.started is None or self.stopped:
                return
            event = {"t": round(time.monotonic() - self.started, 4), **event}
            self.secrets.update(s for s in found if len(s) >= MIN_SCRUB)
            plain = json.loads(json.dumps(event, default=repr))  # what the line will hold, as data
            line = json.dumps(_scrub(plain, sorted(self.secrets, key=len, reverse=True)), ensure_ascii=False)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line + "\n")


class RecordingTransport(Transport):
    """Wraps any transport and records everything that crosses it to a cassette file.

    Use it in place of the transport it wraps; the client cannot tell the difference, except
    that the era verdict it remembers per server is kept apart (``info.identity`` names the
    recording), so that every recorded session starts with the full negotiation and replays the
    same way whatever else ran in the process. Example::

        server = StdioTransport(["python", "server.py"])
        transport = RecordingTransport(server, "session.jsonl",
                                       redact=["params.arguments.card_number"])
        with Client(transport) as client:
            client.call_tool("pay", {"card_number": "4111..."})

    The file is written when the transport starts (truncated, then one line per event, flushed
    as it happens); a relaunch, reopen or fallback of the inner transport records into the same
    file as a new connection.
    """

    def __init__(self, inner: Transport, path: Any, redact: Redaction = None, *, secrets: Iterable[str] = (),
                 redact_defaults: bool = True, _recorder: Optional[_Recorder] = None, _how: str = "start") -> None:
        """Wrap ``inner``.

        Args:
            inner: the transport that talks to the real server (unstarted).
            path: the cassette file to write (``str`` or ``os.PathLike``).
            redact: extra redaction: dotted paths into messages (``"params.arguments.password"``,
                ``"params.arguments.*.key"``) and/or hooks ``(event) -> event`` run on each
                event before it is written.
            secrets: literal strings scrubbed from every line (e.g. the bearer token the inner
                transport sends, which this wrapper never sees).
            redact_defaults: redact values under secret-looking keys (default True).

        Raises:
            TypeError: ``inner`` is not a ``Transport``.
        """
        if not isinstance(inner, Transport):
            raise TypeError(f"inner must be a Transport, not {type(inner).__name__}")
        self.inner = inner
        if _recorder is None:
            items = [redact] if isinstance(redact, str) or callable(redact) else list(redact or ())
            paths = [p for p in items if isinstance(p, str)]
            hooks = [h for h in items if callable(h)]
            if len(paths) + len(hooks) != len(items):
                raise TypeError("redact= takes dotted paths (str) and hooks (callables)")
            _recorder = _Recorder(str(path), paths, hooks, secrets, redact_defaults)
        self._rec = _recorder
        _recorder.learn(inner.info.secrets)
        self._how = _how
        self._conn = next(_recorder.conns)
        self._closed = False
        self._info: Optional[Tuple[TransportInfo, TransportInfo]] = None  # (the inner's, this one's)
        self._started = Once()
        if _how != "start" and _recorder.started is not None:
            self._note()

    # --- what the inner transport declares, forwarded ---------------------------------------------

    @property
    def info(self) -> TransportInfo:
        """The inner transport's, but for its identity (the recording's own name: era memory never
        skips the negotiation in a recording, which the replay must find in the cassette) and
        its ``remake`` (a relaunch, reopen or fallback of the inner transport, recorded into the
        same cassette as a new connection)."""
        inner = self.inner.info
        seen = self._info
        if seen is None or seen[0] is not inner:
            remake = None if inner.remake is None else partial(_remade, inner.remake, self._rec)
            seen = self._info = (inner, inner.replace(identity=self._rec.identity, remake=remake))
        return seen[1]

    def _declared(self) -> Dict[str, Any]:
        inner = self.inner.info
        return {"name": inner.name, "class": type(self.inner).__name__, "remote": inner.remote,
                "sends_headers": inner.sends_headers, "handshake_only": inner.handshake_only,
                "credentials": inner.credentials is not None}

    def _note(self) -> None:
        self._event({"dir": "open", "how": self._how, "transport": self._declared()})

    def _event(self, event: Dict[str, Any]) -> None:
        self._rec.learn(self.inner.info.secrets)  # (what its requests carried so far: a token renewed)
        self._rec.write({"conn": self._conn, **event})

    # --- the Transport contract -----------------------------------------------------------------

    def start(self) -> None:
        """Start the inner transport (once); the first start of a chain (re)writes the cassette file.

        Raises:
            ConnectError: the inner transport could not start (recorded as the end).
        """
        self._started.run(self._start)

    def _start(self) -> None:
        if self._rec.started is None:
            self._rec.begin()
            self._note()
        self._event({"dir": "start"})
        try:
            self.inner.start()
        except MCPError as exc:
            self._event({"dir": "end", "error": error_to_json(exc)})
            raise

    def send(self, message: Any, *, deadline: Optional[float] = None, headers: Optional[Dict[str, str]] = None,
             idempotent: Optional[bool] = False, setup: bool = False) -> Optional[PendingExchange]:
        """Record ``message`` (before it goes: its answer is never recorded first), send it
        through the inner transport, and record the reply its exchange returns to a waiting
        caller's thread, if any (``Transport.send``).

        Raises:
            TransportError: as the inner transport raises (recorded as ``unsent``).
        """
        seq = next(self._rec.seqs)
        event: Dict[str, Any] = {"dir": "send", "seq": seq, "msg": message}
        if headers:
            event["headers"] = dict(headers)
        if setup:
            event["setup"] = True
        self._event(event)
        try:
            here = self.inner.send(message, deadline=deadline, headers=headers, idempotent=idempotent, setup=setup)
        except Exception as exc:
            self._event({"dir": "unsent", "seq": seq, "error": error_to_json(exc)})
            raise
        return None if here is None else _RecordedExchange(here, self._event, seq)

    def receive(self) -> Optional[Any]:
        """The inner transport's next item, recorded: a message, a ``DeliveryFailed``, or the end.

        Raises:
            TransportError: the connection broke (recorded as the end, with its error).
        """
        try:
            item = self.inner.receive()
        except MCPError as exc:
            if not self._closed:
                self._event({"dir": "end", "error": error_to_json(exc)})
            raise
        if item is None:
            if not self._closed:
                self._event({"dir": "end"})
        elif type(item) is SessionRenewed:
            self._event({"dir": "renewed"})
        elif type(item) is DeliveryFailed:
            self._event({"dir": "recv", "failed": {"id": _json_safe(item.request_id),
                                                   "error": error_to_json(item.error)}})
        else:
            self._event({"dir": "recv", "msg": item})
        return item

    def close(self, deadline: Optional[float] = None) -> None:
        """Record the close (what the server does after it is not recorded), close the inner."""
        if not self._closed:
            self._closed = True
            if self._rec.started is not None:
                self._event({"dir": "close"})
        self.inner.close(deadline)

    def negotiated(self, protocol_version: str, stateless: bool) -> None:
        """Forwarded; recorded with how the inner transport cancels requests in this era."""
        self.inner.negotiated(protocol_version, stateless)
        # A request id never sent: the inner transport only says how it cancels (base.py).
        cancels = bool(self.inner.cancel_request("mcpclient-record-probe"))
        self._event({"dir": "negotiated", "version": protocol_version, "stateless": stateless,
                     "cancel_closes": cancels})

    def cancel_request(self, request_id: Any) -> bool:
        """Forwarded to the inner transport."""
        return self.inner.cancel_request(request_id)


def _remade(remake: Remake, recorder: _Recorder, how: RemakeKind) -> Optional[Transport]:
    """A remade inner transport (``how``), recorded into the same cassette as a new connection."""
    fresh = remake(how)
    return None if fresh is None else RecordingTransport(fresh, recorder.path, _recorder=recorder, _how=how)


class _RecordedExchange:
    """The inner transport's ``PendingExchange``, with the reply it returns to a waiting caller's
    thread recorded."""

    __slots__ = ("_inner", "_event", "_seq")

    def __init__(self, inner: PendingExchange, event: Callable[[Dict[str, Any]], None], seq: int) -> None:
        self._inner, self._event, self._seq = inner, event, seq

    def run(self) -> Optional[Dict[str, Any]]:
        reply = self._inner.run()
        if reply is not None:
            self._event({"dir": "recv", "via": "return", "seq": self._seq, "msg": reply})
        return reply

    def post(self) -> None:
        self._inner.post()
