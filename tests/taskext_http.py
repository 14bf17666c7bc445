"""A Streamable HTTP server for the Tasks extension (``tests/servers/TASKS-EXT.md``, "HTTP").

``TaskExtHTTPServer(era="handshake"|"2026")`` is a ``ScriptedHTTPServer`` whose requests go to the
same ``TaskEngine`` as ``python -m mcpclient.testing --tasks-ext``. Handshake era: the client's
declaration is read from the ``initialize`` of the request's ``Mcp-Session-Id``; the task store
is shared by every session, so a second client can resume a task by id. 2026 era: it answers
``server/discover``, reads the declaration from each request's ``_meta``, puts ``resultType`` on
every result, answers ``ext_ask`` inline with MRTR ``input_required``, and serves
``subscriptions/listen`` with ``notifications.taskIds`` on an SSE stream that pushes
``notifications/tasks``. Every request is recorded with its headers (``seen``, ``requests()``),
so tests can check ``Mcp-Name`` / ``Mcp-Method``; in the 2026 era a request whose ``Mcp-Method``
or ``Mcp-Name`` (``tools/call``: the tool; ``tasks/*``: the task id) is missing or does not match
its body is refused as a 2026 server must: HTTP 400, ``-32020``.
"""
from __future__ import annotations

import json
import queue
import threading
from typing import Any, Dict, Iterator, List, Optional

from mcpclient.testing.server.taskext import (META_SUBSCRIPTION, TASK_METHODS, TASKS, TOOLS, Abandoned, TaskEngine,
                                       RpcError, declared_in_meta, declares, missing_capability)

from http_scripted import DROP, Reply, ScriptedHTTPServer, Seen

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
CAPABILITIES: Dict[str, Any] = {"tools": {}, "extensions": {TASKS: {}}}
DISCOVER: Dict[str, Any] = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": CAPABILITIES,
            "serverInfo": {"name": "taskext-2026", "version": "1"}}
_END = None  # what stop() puts on every listen's queue
#: 2026 era: the body param each method's ``Mcp-Name`` header must repeat.
NAMED = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
HEADER_MISMATCH = -32020


def header_mismatch(seen: Seen, method: Any, params: Dict[str, Any]) -> Optional[str]:
    """2026 era: why this request's routing headers do not match its body (None: they do)."""
    if seen.headers.get("mcp-method") != method:
        return f"Mcp-Method {seen.headers.get('mcp-method')!r} is not {method!r}"
    key = NAMED.get(method) if isinstance(method, str) else None
    if key is not None and seen.headers.get("mcp-name") != params.get(key):
        return f"Mcp-Name {seen.headers.get('mcp-name')!r} is not params.{key} {params.get(key)!r}"
    return None


def _event(method: str, params: Dict[str, Any]) -> bytes:
    """One SSE ``message`` event carrying a JSON-RPC notification."""
    data = json.dumps({"jsonrpc": "2.0", "method": method, "params": params})
    return f"event: message\ndata: {data}\n\n".encode()


class TaskExtHTTPServer:
    """The Tasks extension over Streamable HTTP on 127.0.0.1 (``url``); ``stop()`` ends it."""

    def __init__(self, era: str = "handshake", *, poll_interval_ms: int = 30, ttl_ms: Optional[int] = 60000,
                 answer_delay: float = 0.0) -> None:
        """``era``: which protocol generation it serves; the options as in ``TaskEngine``;
        ``answer_delay``: seconds a ``tools/call`` holds its answer's headers back (the task,
        if it makes one, exists meanwhile): a server slow to answer."""
        if era not in ("handshake", "2026"):
            raise ValueError(f"era must be 'handshake' or '2026', not {era!r}")
        self.era = era
        self.answer_delay = answer_delay
        self.engine = TaskEngine(poll_interval_ms=poll_interval_ms, ttl_ms=ttl_ms)
        self._lock = threading.Lock()
        self._declared: Dict[str, bool] = {}  # handshake era: session id -> declared in its initialize
        self._listens: List["queue.Queue[Any]"] = []
        self.http = ScriptedHTTPServer(self._handle, capabilities=CAPABILITIES,
                                       discover=DISCOVER if era == "2026" else None, before=self._before)
        self.url = self.http.url

    # ----- what tests read ------------------------------------------------------------------

    @property
    def seen(self) -> List[Seen]:
        """Every HTTP request, in order (headers lower-case)."""
        with self.http.lock:
            return list(self.http.seen)

    def requests(self, rpc_method: Optional[str] = None) -> List[Seen]:
        """The POSTs of one JSON-RPC method (all when None)."""
        return self.http.requests(rpc_method, "POST")

    def log(self) -> Dict[str, Any]:
        """What ``ext_log`` would answer now."""
        return self.engine.log()

    def stop(self) -> None:
        """End the tasks' workers and every listen stream, then the HTTP server."""
        self.engine.stop()
        with self._lock:
            for listen in self._listens:
                listen.put(_END)
        self.http.stop()

    # ----- serving ----------------------------------------------------------------------------

    def _before(self, seen: Seen) -> None:
        body = seen.body if isinstance(seen.body, dict) else {}
        if body.get("method") == "notifications/cancelled" and "id" not in body:
            self.engine.note_cancelled()

    def _session_declared(self, seen: Seen) -> bool:
        """Handshake era: whether the ``initialize`` that opened this request's session declared TASKS."""
        session = seen.headers.get("mcp-session-id")
        if session is None:
            return False
        with self._lock:
            if session not in self._declared:
                opened = next((s for s in self.http.requests("initialize") if s.session == session), None)
                params = opened.body.get("params") if opened is not None else None
                self._declared[session] = declares(params.get("capabilities") if isinstance(params, dict) else None)
            return self._declared[session]

    def _handle(self, seen: Seen, msg: Dict[str, Any]) -> Any:
        method, rid = msg.get("method"), msg.get("id")
        raw = msg.get("params")
        params: Dict[str, Any] = raw if isinstance(raw, dict) else {}
        modern = self.era == "2026"
        declared = declared_in_meta(params) if modern else self._session_declared(seen)
        mismatch = header_mismatch(seen, method, params) if modern else None
        if mismatch is not None:
            return Reply(400, {"jsonrpc": "2.0", "id": rid,
                               "error": {"code": HEADER_MISMATCH, "message": f"Header mismatch: {mismatch}"}})
        entry = self.engine.record(str(method), params)
        try:
            if method == "tools/call":
                result, start = self.engine.call_tool(params, declared=declared, entry=entry, mrtr=modern)
                if start is not None:
                    start()  # (HTTP pushes only on a listen, which shows the current state first)
                if self.answer_delay and start is not None:  # a task exists now; its answer is held back
                    threading.Event().wait(self.answer_delay)  # (the server's own slowness, not synchronisation)
            elif method == "tools/list":
                result = {"tools": TOOLS}
            elif method == "ping":
                result = {}
            elif method in TASK_METHODS:
                result = self.engine.handle(method, params, declared=declared)
            elif method == "subscriptions/listen" and modern:
                return self._listen(rid, params, declared)
            else:
                raise RpcError(-32601, f"Method not found: {method}")
        except RpcError as exc:
            status = 400 if exc.code == -32021 else 200
            return Reply(status, {"jsonrpc": "2.0", "id": rid, "error": exc.to_json()})
        except Abandoned:
            return DROP  # an inline call the server stopped under
        if modern:
            result.setdefault("resultType", "complete")
        return result

    def _listen(self, rid: Any, params: Dict[str, Any], declared: bool) -> Reply:
        """``subscriptions/listen``: acknowledge the task ids we know, then push their states."""
        raw = params.get("notifications")
        wanted: Dict[str, Any] = raw if isinstance(raw, dict) else {}
        # (the schema.ts drift spells it tasksStatus / notifications/tasks/status: answered in kind)
        key = "tasksStatus" if "tasksStatus" in wanted and "taskIds" not in wanted else "taskIds"
        push = "notifications/tasks/status" if key == "tasksStatus" else "notifications/tasks"
        task_ids = wanted.get(key)
        if task_ids is not None and not declared:
            raise missing_capability()
        if task_ids is not None and not isinstance(task_ids, list):
            raise RpcError(-32602, f"notifications.{key} must be an array")
        pushed: "queue.Queue[Any]" = queue.Queue()
        agreed, listener = self.engine.watch(task_ids or [], pushed.put)
        with self._lock:
            self._listens.append(pushed)
        tag = {META_SUBSCRIPTION: rid}
        acknowledged = dict(wanted, **{key: agreed}) if task_ids is not None else dict(wanted)

        def events() -> Iterator[bytes]:
            try:
                yield _event(ACKNOWLEDGED, {"notifications": acknowledged, "_meta": tag})
                while not self.engine.stopping.is_set():
                    task = pushed.get()
                    if task is _END:
                        return
                    yield _event(push, {**task, "_meta": tag})
            finally:
                self.engine.unsubscribe(listener)
                with self._lock:
                    if pushed in self._listens:
                        self._listens.remove(pushed)

        return Reply(200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
                     stream=events())
