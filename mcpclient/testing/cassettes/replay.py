"""Serve a recorded cassette to the client in place of the server: no process, no socket.

``ReplayTransport`` reads a cassette written by ``RecordingTransport`` (see ``record.py`` for the
format). Each request the client sends is matched to the first unused recorded request of the
same connection that equals it once volatile parts are set aside (ids, progress tokens, trace
context, the client's own version); what the server sent after that request was recorded (its
reply, server-to-client requests and notifications, the end of the connection) is then delivered
in the recorded order, with the reply's id (and progress tokens) renumbered to the live request's.
The client's answers to server-to-client requests are matched by id and must say what they said
(a handler under test that answers differently is a mismatch), its notifications by method.
A request the cassette does not have fails at once with ``CassetteMismatch``, whose message is a
unified diff against the closest recorded request (but a ``ping``, or a 2026 ``server/discover``,
beyond those recorded, as keepalive sends by the clock, is answered). A recorded request that never got an answer
fails at once with ``RequestTimeout``, as the silence ended it when recorded (a ``server/discover``
probe to a handshake-era stdio server), so replays never wait on the clock.
"""
from __future__ import annotations

import difflib
import itertools
import json
import queue
import re
import threading
from typing import Any, Callable, Dict, List, Optional, Set

from ... import errors as _errors
from ...errors import ConnectionClosed, MCPError, RequestTimeout
from ..._util.threads import Once
from ...transports.base import DeliveryFailed, Endpoint, RemakeKind, SessionRenewed, Transport, TransportInfo
from .record import CASSETTE_FORMAT, REDACTED, redact_message

__all__ = ["CassetteMismatch", "ReplayTransport", "default_matcher", "normalize", "rebuild_error"]


class CassetteMismatch(MCPError, AssertionError):
    """A replayed client sent a message its cassette does not have (``ReplayTransport``): the
    code under test changed, or the cassette is stale. The message is a unified diff against the
    closest recorded message (secrets redacted). Also an ``AssertionError``: a test failure, never
    a connection problem to retry."""

#: ``matcher(recorded, sent) -> bool``: does the live message ``sent`` match the recorded one?
Matcher = Callable[[Dict[str, Any], Dict[str, Any]], bool]

#: ``_meta`` keys that differ from run to run (progress tokens are request ids; trace context).
_VOLATILE_META = {"progressToken", "traceparent", "tracestate", "baggage"}
_CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
_SUBSCRIPTION_META = "io.modelcontextprotocol/subscriptionId"
#: Client notifications that depend on timing (a timeout, a progress report): sent or not in a
#: replay, they change nothing; what the server sent after one belongs to the send before it.
_TRANSPARENT = ("notifications/cancelled", "notifications/progress")
_END = object()
_chains = itertools.count(1)


def normalize(message: Any) -> Any:
    """``message`` without what legitimately differs between recording and replay: ``jsonrpc``,
    ``id``, volatile ``_meta`` keys (progress token, trace context) and the client's own version
    in ``clientInfo``.

    Args:
        message: a JSON-RPC message as sent by the client (or a batch).

    Returns:
        The comparable form (a new object).
    """
    if isinstance(message, list):
        return [normalize(m) for m in message]
    if not isinstance(message, dict):
        return message
    out = {k: v for k, v in message.items() if k not in ("jsonrpc", "id")}
    params = out.get("params")
    if isinstance(params, dict):
        params = dict(params)
        meta = params.get("_meta")
        if isinstance(meta, dict):
            meta = {k: v for k, v in meta.items() if k not in _VOLATILE_META}
            info = meta.get(_CLIENT_INFO_META)
            if isinstance(info, dict):
                meta[_CLIENT_INFO_META] = {k: v for k, v in info.items() if k != "version"}
            if meta:
                params["_meta"] = meta
            else:
                params.pop("_meta")
        if isinstance(params.get("clientInfo"), dict):
            params["clientInfo"] = {k: v for k, v in params["clientInfo"].items() if k != "version"}
        out["params"] = params
    return out


def _same(recorded: Any, sent: Any) -> bool:
    """Equal, where a recorded ``"<redacted>"`` stands for any value (inside a string: for any text)."""
    if isinstance(recorded, str) and recorded == REDACTED:
        return True
    if isinstance(recorded, str) and REDACTED in recorded and isinstance(sent, str):  # "Bearer <redacted>"
        pattern = "(?s)" + ".*?".join(re.escape(part) for part in recorded.split(REDACTED))
        return re.fullmatch(pattern, sent) is not None
    if isinstance(recorded, dict) and isinstance(sent, dict):
        return recorded.keys() == sent.keys() and all(_same(recorded[k], sent[k]) for k in recorded)
    if isinstance(recorded, list) and isinstance(sent, list):
        return len(recorded) == len(sent) and all(_same(a, b) for a, b in zip(recorded, sent))
    return type(recorded) is type(sent) and recorded == sent


def default_matcher(recorded: Dict[str, Any], sent: Dict[str, Any]) -> bool:
    """The default request matcher: same method and params once ``normalize``\\ d (a redacted
    recorded value matches anything).

    Args:
        recorded: the request as the cassette has it.
        sent: the request the client sends now.

    Returns:
        True if ``sent`` is a replay of ``recorded``.
    """
    return _same(normalize(recorded), normalize(sent))


def rebuild_error(entry: Any) -> MCPError:
    """The exception a cassette's error entry describes, to raise it again in a replay.

    Args:
        entry: ``{"type": class name, "text": message, "attrs": {...}}`` as ``error_to_json`` wrote it.

    Returns:
        An instance of that ``mcpclient.errors`` class (or ``CassetteMismatch``) with the same
        text and attributes (``ConnectionClosed`` for a class it does not know).
    """
    entry = entry if isinstance(entry, dict) else {}
    cls = {**vars(_errors), "CassetteMismatch": CassetteMismatch}.get(str(entry.get("type")))
    if not (isinstance(cls, type) and issubclass(cls, MCPError)):
        cls = ConnectionClosed
    exc = cls.__new__(cls)
    Exception.__init__(exc, str(entry.get("text", "")))
    for name, value in (entry.get("attrs") or {}).items():
        setattr(exc, name, value)
    return exc


def _load(path: str, lines: Any) -> List[Any]:
    """The cassette's lines parsed; a line that is not a JSON object (a run killed mid-write, a
    bad merge) is a ``ValueError`` naming the file and line, not an error from deep inside."""
    out: List[Any] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}, line {number}: not JSON ({exc}); the cassette is damaged (a run "
                             "interrupted while recording?): record it again") from None
        if not isinstance(item, dict):
            raise ValueError(f"{path}, line {number}: not a cassette event (a JSON object); record it again")
        out.append(item)
    return out


class _Conn:
    """One recorded connection: its events, and what the replay consumed of them."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.events: List[Dict[str, Any]] = []
        self.declared: Dict[str, Any] = {}
        self.how = "start"
        self.cancel_closes = False


class _Cassette:
    """A loaded cassette, shared by a replay transport and its relaunches / reopens / fallbacks."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            with open(path, encoding="utf-8") as f:
                lines = _load(path, f)
        except FileNotFoundError:
            raise FileNotFoundError(f"no cassette at {path}: record it first (RecordingTransport, "
                                    "or pytest --mcp-record=missing)") from None
        if not lines or not isinstance(lines[0], dict) or lines[0].get("cassette") != CASSETTE_FORMAT:
            raise ValueError(f"{path} is not a cassette of format {CASSETTE_FORMAT}")
        self.header = lines[0]
        self.paths = [p for p in self.header.get("redact") or () if isinstance(p, str)]
        self.conns: Dict[int, _Conn] = {}
        for event in lines[1:]:
            number = event.get("conn", 0)
            conn = self.conns.setdefault(number, _Conn(number))
            kind = event.get("dir")
            if kind == "open":
                conn.how, conn.declared = event.get("how", "start"), event.get("transport") or {}
            elif kind == "negotiated":
                conn.cancel_closes = bool(event.get("cancel_closes"))
            elif kind in ("send", "recv", "unsent", "end", "renewed"):
                conn.events.append(event)
        self.lock = threading.Lock()
        self.next_conn = 1
        self.identity = f"cassette-replay:{path}#{next(_chains)}"

    def take(self, how: str) -> Optional[_Conn]:
        """The next recorded connection, if it was made the way (``how``) asked for."""
        with self.lock:
            conn = self.conns.get(self.next_conn)
            if conn is None or conn.how != how:
                return None
            self.next_conn += 1
            return conn


class ReplayTransport(Transport):
    """Plays a cassette back to the client: the server's side of a recorded session, offline.

    Example::

        with Client(ReplayTransport("session.jsonl")) as client:
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"

    Its ``info`` declares what the recorded transport declared (``remote``, ``sends_headers``,
    ``handshake_only``), so the client negotiates the same way; its ``identity`` is its own, so
    no era verdict of the process (or of the recording) changes what the client sends; a
    connection the recording relaunched, reopened or fell back to is the ``remake`` of the
    same kind (the next recorded connection, if it was made that way here).
    """

    def __init__(self, path: Any, *, matcher: Optional[Matcher] = None, _cassette: Optional[_Cassette] = None,
                 _conn: Optional[_Conn] = None, _instance: int = 0) -> None:
        """Load the cassette at ``path``.

        Args:
            path: the cassette file (``str`` or ``os.PathLike``).
            matcher: ``(recorded, sent) -> bool`` for requests (default ``default_matcher``).

        Raises:
            FileNotFoundError: there is no cassette at ``path``.
            ValueError: the file is not a cassette.
        """
        self._cassette = _cassette if _cassette is not None else _Cassette(str(path))
        self._conn = _conn if _conn is not None else self._cassette.conns.get(0) or _Conn(0)
        self._matcher = matcher or default_matcher
        declared = self._conn.declared
        cassette = self._cassette
        # A constant stand-in for the credentials when the recorded transport carried some.
        self._info = TransportInfo(
            str(declared.get("name") or "cassette"), Endpoint(), cassette.identity,
            "cassette" if declared.get("credentials") else None, remote=bool(declared.get("remote")),
            sends_headers=bool(declared.get("sends_headers")), handshake_only=bool(declared.get("handshake_only")),
            instance=_instance, remake=lambda how: _next(cassette, how, self._matcher, self._info.instance))
        self._started = Once()
        self._inbox: "queue.Queue[Any]" = queue.Queue()
        self._lock = threading.Lock()
        self._used: Set[int] = set()  # indexes of consumed send events
        self._ids: Dict[Any, Any] = {}  # recorded request id -> live id
        self._held: Dict[Any, List[Any]] = {}  # replies to requests not sent yet, by recorded id
        self._waiting: Set[Any] = set()  # live ids of matched requests whose reply is not delivered
        self._closed = False
        self._answered = self._answers()
        self._let_go = self._let_go_ids()

    def _answers(self) -> Set[Any]:
        """Recorded request ids that got a reply (or a delivery failure) in this connection."""
        found: Set[Any] = set()
        for event in self._conn.events:
            msg = event.get("msg")
            if event.get("dir") == "recv":
                for item in msg if isinstance(msg, list) else [msg]:
                    if isinstance(item, dict) and "method" not in item and "id" in item:
                        found.add(_key(item["id"]))
                if isinstance(event.get("failed"), dict):
                    found.add(_key(event["failed"].get("id")))
        return found

    def _let_go_ids(self) -> Set[Any]:
        """Recorded request ids the client itself ended (a listen closed, a call cancelled: not
        a timeout): unanswered, yet no silence to replay; the client ends them again."""
        found: Set[Any] = set()
        for event in self._conn.events:
            msg = event.get("msg")
            if event.get("dir") == "send" and isinstance(msg, dict) and "id" not in msg \
                    and msg.get("method") == "notifications/cancelled":
                params = msg.get("params")
                params = params if isinstance(params, dict) else {}
                if params.get("reason") != "timed out":
                    found.add(_key(params.get("requestId")))
        return found

    # --- the Transport contract -----------------------------------------------------------------

    @property
    def info(self) -> TransportInfo:
        """What the recorded transport declared; the replay's own identity."""
        return self._info

    def start(self) -> None:
        """Deliver what the server sent before the client's first message (if anything); once."""
        self._started.run(self._start)

    def _start(self) -> None:
        with self._lock:
            deliveries = self._followers(-1)
        self._deliver(deliveries)

    def send(self, message: Any, *, deadline: Optional[float] = None, headers: Optional[Dict[str, str]] = None,
             idempotent: Optional[bool] = False, setup: bool = False) -> None:
        """Match ``message`` against the cassette and queue what the server answered to it (a
        reply the recorded transport read on a waiting caller's thread comes through
        ``receive()`` too).

        Raises:
            CassetteMismatch: the cassette has no such message (the diff is in the message).
            ConnectionClosed: the transport is closed.
        """
        if self._closed:
            raise ConnectionClosed("the replay transport is closed")
        kind = _kind(message)
        with self._lock:
            index = self._match(message, kind)
            if index is None:
                mismatch = self._mismatch(message, kind)
                if kind != "request":  # nothing fails with this send: the calls waiting on it do
                    failures = [DeliveryFailed(live, _copy_error(mismatch)) for live in self._waiting]
                    self._waiting.clear()
                else:
                    failures = []
            else:
                mismatch = None
                deliveries, returned, unsent = self._consume(index, message, kind)
        if mismatch is not None:
            if _transparent(message):
                return None  # timing-dependent: never an error
            pong = self._keepalive(message) if kind == "request" else None
            if pong is not None:  # keepalive pings by the clock, not by the code under test
                self._inbox.put(pong)
                return None
            for failure in failures:
                self._inbox.put(failure)
            raise mismatch
        if unsent is not None:
            raise rebuild_error(unsent)
        self._deliver(deliveries)
        if returned is not None:
            self._inbox.put(returned)
        return None

    def receive(self) -> Optional[Any]:
        """The next recorded item for the client; ``None`` once closed or the recording ended.

        Raises:
            TransportError: the recorded connection broke here (the recorded error).
        """
        item = self._inbox.get()
        if item is _END or self._closed:
            self._inbox.put(_END)
            return None
        if isinstance(item, _Ended):
            self._inbox.put(_END)
            if item.error is None:  # the server ended the stream cleanly
                return None
            raise rebuild_error(item.error)
        return item

    def close(self, deadline: Optional[float] = None) -> None:
        """Make ``receive()`` return None; idempotent."""
        self._closed = True
        self._inbox.put(_END)

    def cancel_request(self, request_id: Any) -> bool:
        """As the recorded transport answered in this era (2026 HTTP closes the stream)."""
        return self._conn.cancel_closes

    def _keepalive(self, message: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The answer to a keepalive ping the cassette lacks (``ping``: an empty result; 2026
        era ``server/discover``: the recorded discovery's answer), or None for any other request."""
        method = message.get("method")
        if method == "ping":
            return {"jsonrpc": "2.0", "id": message.get("id"), "result": {}}
        if method != "server/discover":
            return None
        events = self._conn.events
        asked = {e["msg"].get("id") for e in events if e.get("dir") == "send" and isinstance(e.get("msg"), dict)
                 and e["msg"].get("method") == method}
        for event in reversed(events):
            msg = event.get("msg")
            if event.get("dir") == "recv" and isinstance(msg, dict) and "result" in msg and msg.get("id") in asked:
                return {**json.loads(json.dumps(msg)), "id": message.get("id")}
        return None

    # --- matching -------------------------------------------------------------------------------

    def _match(self, message: Any, kind: str) -> Optional[int]:
        events = self._conn.events
        candidates = [i for i, e in enumerate(events) if e.get("dir") == "send" and i not in self._used
                      and _kind(e.get("msg")) == kind]
        if kind == "request" or kind == "batch":
            for i in candidates:
                if self._matcher(events[i]["msg"], message) if kind == "request" else \
                        _same(normalize(events[i]["msg"]), normalize(message)):
                    return i
        elif kind == "answer":  # the one to the same server request, if it says the same
            for i in candidates:
                if events[i]["msg"].get("id") == message.get("id"):
                    return i if _same(normalize(events[i]["msg"]), normalize(message)) else None
        else:  # a notification: the same one if there, else the first of its method
            same = [i for i in candidates if events[i]["msg"].get("method") == message.get("method")]
            for i in same:
                if _same(normalize(events[i]["msg"]), normalize(message)):
                    return i
            return same[0] if same else None
        return None

    def _mismatch(self, message: Any, kind: str) -> CassetteMismatch:
        events = self._conn.events
        shown = json.dumps(normalize(redact_message(message, self._cassette.paths)), indent=2, sort_keys=True,
                           ensure_ascii=False).splitlines()
        unused = [e["msg"] for i, e in enumerate(events) if e.get("dir") == "send" and i not in self._used
                  and _kind(e.get("msg")) == kind]
        method = message.get("method") if isinstance(message, dict) else None
        if kind == "answer":
            pool = [m for m in unused if m.get("id") == message.get("id")] or unused
        else:
            pool = [m for m in unused if isinstance(m, dict) and m.get("method") == method] or unused
        best, best_ratio = None, -1.0
        for candidate in pool:
            lines = json.dumps(normalize(candidate), indent=2, sort_keys=True, ensure_ascii=False).splitlines()
            ratio = difflib.SequenceMatcher(None, lines, shown).ratio()
            if ratio > best_ratio:
                best, best_ratio = lines, ratio
        what = {"request": f"request {method!r}", "notification": f"notification {method!r}",
                "answer": f"answer to server request {message.get('id')!r}", "batch": "batch"}[kind]
        where = f"{self._cassette.path} (connection {self._conn.number})"
        if best is None:
            return CassetteMismatch(f"{what} is not in the cassette {where}: it has no unused {kind} left; "
                                    f"sent:\n" + "\n".join(shown))
        diff = difflib.unified_diff(best, shown, "recorded", "sent", lineterm="")
        return CassetteMismatch(f"{what} is not in the cassette {where}; closest recorded {kind}:\n"
                                + "\n".join(diff))

    def _consume(self, index: int, message: Any, kind: str) -> "tuple[List[Any], Any, Any]":
        """(Lock held.) Use send event ``index``: map its id, gather what followed it."""
        self._used.add(index)
        event = self._conn.events[index]
        recorded = event["msg"]
        items = recorded if isinstance(recorded, list) else [recorded]
        live = message if isinstance(message, list) else [message]
        for old, new in zip(items, live):
            if isinstance(old, dict) and "method" in old and "id" in old and isinstance(new, dict):
                self._ids[_key(old["id"])] = new.get("id")
                if _key(old["id"]) in self._answered:
                    self._waiting.add(new.get("id"))
        seq = event.get("seq")
        returned = unsent = None
        for later in self._conn.events[index + 1:]:
            if later.get("seq") == seq and later.get("dir") == "unsent":
                unsent = later.get("error")
            elif later.get("seq") == seq and later.get("via") == "return":
                returned = self._translate(later["msg"])
        deliveries = [] if _transparent(recorded) else self._followers(index)
        for old, new in zip(items, live):
            if isinstance(old, dict) and "method" in old and "id" in old and isinstance(new, dict):
                for held in self._held.pop(_key(old["id"]), []):
                    if isinstance(held, _Failed):
                        self._waiting.discard(new.get("id"))
                        deliveries.append(DeliveryFailed(new.get("id"), rebuild_error(held.failed.get("error"))))
                    else:
                        deliveries.append(self._translate(held))
                if _key(old["id"]) not in self._answered and unsent is None and _key(old["id"]) not in self._let_go \
                        and old.get("method") != "subscriptions/listen":  # silence when recorded (a timeout)
                    deliveries.append(DeliveryFailed(new.get("id"), RequestTimeout(
                        f"{old.get('method')}: no answer in the cassette (the server was silent when recorded)",
                        method=old.get("method"), request_id=new.get("id"))))
        return deliveries, returned, unsent

    def _followers(self, index: int) -> List[Any]:
        """(Lock held.) What the server sent after send event ``index`` and before the next
        send (replies returned on a sending thread belong to their request instead)."""
        out: List[Any] = []
        for event in self._conn.events[index + 1:]:
            kind = event.get("dir")
            if kind == "send":
                if _transparent(event.get("msg")):
                    continue
                break
            if kind == "recv" and event.get("via") != "return":
                if "failed" in event:
                    failed = event["failed"] or {}
                    rid = _key(failed.get("id"))
                    if rid in self._ids:
                        self._waiting.discard(self._ids[rid])
                        out.append(DeliveryFailed(self._ids[rid], rebuild_error(failed.get("error"))))
                    else:
                        self._held.setdefault(rid, []).append(_Failed(failed))
                else:
                    translated = self._translate(event.get("msg"))
                    if translated is not None:
                        out.append(translated)
            elif kind == "end":
                out.append(_Ended(event.get("error")))
            elif kind == "renewed":
                out.append(SessionRenewed(None))
        return out

    def _translate(self, msg: Any) -> Any:
        """(Lock held.) A recorded server message with the client's ids renumbered; a reply to a
        request not sent yet is held (None)."""
        if isinstance(msg, list):
            parts = [self._translate(m) for m in msg]
            kept = [p for p in parts if p is not None]
            return kept or None
        if not isinstance(msg, dict):
            return msg
        msg = json.loads(json.dumps(msg))
        if "method" not in msg and "id" in msg:  # a reply to one of the client's requests
            rid = _key(msg["id"])
            if rid not in self._ids:
                self._held.setdefault(rid, []).append(msg)
                return None
            msg["id"] = self._ids[rid]
            self._waiting.discard(msg["id"])
            return msg
        params = msg.get("params")
        if isinstance(params, dict):
            for key in ("progressToken", "requestId"):
                if key in params and _key(params[key]) in self._ids:
                    params[key] = self._ids[_key(params[key])]
            meta = params.get("_meta")  # 2026: a listen's events name it by its request id
            if isinstance(meta, dict) and _key(meta.get(_SUBSCRIPTION_META)) in self._ids:
                meta[_SUBSCRIPTION_META] = self._ids[_key(meta[_SUBSCRIPTION_META])]
        return msg

    def _deliver(self, items: List[Any]) -> None:
        for item in items:
            self._inbox.put(item)


class _Ended:
    """The recorded end of the connection (``error``: why, or None for a clean end)."""

    def __init__(self, error: Any) -> None:
        self.error = error


class _Failed:
    """A recorded delivery failure of a request the replay has not seen yet."""

    def __init__(self, failed: Dict[str, Any]) -> None:
        self.failed = failed


def _next(cassette: _Cassette, how: RemakeKind, matcher: Optional[Matcher], instance: int) -> Optional[Transport]:
    """The replay of the next recorded connection, if it was made ``how`` (``TransportInfo.remake``)."""
    conn = cassette.take(how)
    if conn is None:
        return None
    return ReplayTransport(cassette.path, matcher=matcher, _cassette=cassette, _conn=conn, _instance=instance)


def _kind(message: Any) -> str:
    if isinstance(message, list):
        return "batch"
    if not isinstance(message, dict):
        return "other"
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "answer"


def _transparent(message: Any) -> bool:
    return isinstance(message, dict) and "id" not in message and message.get("method") in _TRANSPARENT


def _key(rid: Any) -> Any:
    """A recorded id as a dict key (JSON has no tuples; ids are ints or strings)."""
    return json.dumps(rid, sort_keys=True) if isinstance(rid, (dict, list)) else rid


def _copy_error(exc: CassetteMismatch) -> CassetteMismatch:
    return CassetteMismatch(str(exc))
