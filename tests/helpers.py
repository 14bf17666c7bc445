"""Test doubles shared by the test modules: a stderr sink to wait on, and a scripted in-memory server."""
from __future__ import annotations

import itertools
import threading
from typing import Any, Callable, Dict, List, Optional, Union

from mcpclient import MemoryTransport
from mcpclient.errors import ConnectionClosed

LONG = 10.0

Handler = Callable[[str, Dict[str, Any]], Any]


class StderrLines:
    """A ``stderr=`` sink that records lines and lets a test wait for one (no polling)."""

    def __init__(self) -> None:
        self.lines: List[str] = []
        self._cond = threading.Condition()

    def __call__(self, line: str) -> None:
        with self._cond:
            self.lines.append(line)
            self._cond.notify_all()

    def seen(self, line: str) -> bool:
        with self._cond:
            return line in self.lines

    def wait_for(self, match: Union[str, Callable[[str], bool]], timeout: float = LONG) -> Optional[str]:
        """The first line equal to ``match`` (or satisfying it), or None after ``timeout``."""
        test = match if callable(match) else (lambda line: line == match)
        found: List[str] = []

        def seen() -> bool:
            found[:] = [line for line in self.lines if test(line)][:1]
            return bool(found)

        with self._cond:
            self._cond.wait_for(seen, timeout)
        return found[0] if found else None


class ScriptedServer:
    """A handshake-era server on a ``MemoryTransport`` peer, for faults a real server won't make.

    It answers ``initialize`` and ``ping`` itself and every other request with
    ``handle(method, params)``; a ``None`` from ``handle`` sends no answer (``handle`` may use
    ``server.peer`` to send anything else). Every message received is kept in ``received``.
    """

    def __init__(self, handle: Handler, capabilities: Optional[Dict[str, Any]] = None, modern: bool = False,
                 discover_delay: float = 0.0) -> None:
        """``modern``: answer ``server/discover`` as a 2026-07-28 server (else: unknown method);
        ``discover_delay``: seconds that answer takes (a server slow to start)."""
        self.modern = modern
        self.discover_delay = discover_delay
        self.transport, self.peer = MemoryTransport.pair()
        self.handle = handle
        self.capabilities = capabilities if capabilities is not None else {"tools": {}, "prompts": {}}
        self.received: List[Dict[str, Any]] = []
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        self.thread = threading.Thread(target=self._run, name="test-scripted-server", daemon=True)
        self.thread.start()

    def wait_for(self, predicate: Callable[[Dict[str, Any]], bool], timeout: float = LONG) -> Optional[Dict[str, Any]]:
        """The first received message satisfying ``predicate``, or None after ``timeout``."""
        found: List[Dict[str, Any]] = []

        def seen() -> bool:
            found[:] = [m for m in self.received if predicate(m)][:1]
            return bool(found)

        with self._cond:
            self._cond.wait_for(seen, timeout)
        return found[0] if found else None

    def ask(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: float = LONG) -> Dict[str, Any]:
        """Send a server->client request and return the client's whole response message."""
        rid = f"srv-{next(self._ids)}"
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.peer.send(message)
        answer = self.wait_for(lambda m: m.get("id") == rid and "method" not in m, timeout)
        assert answer is not None, f"the client did not answer {method} within {timeout} s"
        return answer

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.peer.send(message)

    def _run(self) -> None:
        try:
            self._serve()
        except ConnectionClosed:  # the client went away before an answer: nothing left to serve
            return

    def _serve(self) -> None:
        while True:
            msg = self.peer.receive()
            if msg is None:
                return
            with self._cond:
                self.received.append(msg)
                self._cond.notify_all()
            if "id" not in msg or "method" not in msg:
                continue
            if msg["method"] == "server/discover" and self.modern:
                threading.Event().wait(self.discover_delay)  # the server's own slowness, not synchronisation
                self.peer.send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                    "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": self.capabilities,
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted-2026", "version": "1"}}}})
                continue
            if msg["method"] == "server/discover":  # a handshake-era server: unknown method
                self.peer.send({"jsonrpc": "2.0", "id": msg["id"],
                                "error": {"code": -32601, "message": "Method not found"}})
                continue
            if msg["method"] == "initialize":
                result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": self.capabilities,
                          "serverInfo": {"name": "scripted", "version": "1"}}
            elif msg["method"] == "ping":
                result = {}
            else:
                result = self.handle(msg["method"], msg.get("params") or {})
            if result is not None:
                self.peer.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def stop(self) -> None:
        self.peer.close()
        self.thread.join(LONG)


def resource_updates(callback: Callable[[Any], Any]) -> Callable[[str, Dict[str, Any]], None]:
    """A ``Handlers(on_notification=)`` that calls ``callback(uri)`` for each
    ``notifications/resources/updated`` (of the resources ``subscribe_resource`` asked for)."""
    def on_notification(method: str, params: Dict[str, Any]) -> None:
        if method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            callback(params["uri"])
    return on_notification


def tool_changes(callback: Callable[[], Any]) -> Callable[[str, Dict[str, Any]], None]:
    """A ``Handlers(on_notification=)`` that calls ``callback()`` for each
    ``notifications/tools/list_changed``."""
    def on_notification(method: str, params: Dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            callback()
    return on_notification


_UNSET: Any = object()  # "timeout=" left out: the client's


class Twins:
    """The futures of requests whose method has no public ``_future`` twin (only ``call_tool``
    and ``request`` have one), for tests that need such a request in flight while they do
    something else: made exactly as the blocking methods make them."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.channel = client._channel

    def _deadline(self, timeout: Any) -> Any:
        from mcpclient import DEFAULT

        return self.channel.deadline(DEFAULT if timeout is _UNSET else timeout)

    def list_tools(self, *, timeout: Any = _UNSET) -> Any:
        from mcpclient._client.tools import list_tools

        return list_tools(self.channel, self._deadline(timeout))

    def list_prompts(self, *, timeout: Any = _UNSET) -> Any:
        from mcpclient.types import Prompt

        return self.channel.listing("prompts/list", "prompts", Prompt.from_wire, self._deadline(timeout))

    def ping(self, *, timeout: Any = _UNSET) -> Any:
        return self.client._ping(self._deadline(timeout))

    def read_resource(self, uri: str, *, timeout: Any = _UNSET) -> Any:
        from mcpclient.protocol import params

        return self.channel.call("resources/read", {"uri": uri}, params.contents, self._deadline(timeout))

    def subscribe_resource(self, uri: str, *, timeout: Any = _UNSET) -> Any:
        return self.client._subscription("resources/subscribe", uri, self._deadline(timeout))

    def set_logging_level(self, level: str, *, timeout: Any = _UNSET) -> Any:
        return self.client._logging_level(level, self._deadline(timeout))



def declared_extensions(client: Any) -> Dict[str, Any]:
    """The extensions ``client`` declares: id -> settings (what its capabilities carry)."""
    channel = client._channel
    return channel.extensions_of(channel.responder.capabilities())


def supports(client: Any, extension_id: str) -> bool:
    """Whether both ``client`` and its server declared ``extension_id``."""
    server = client.server
    return extension_id in declared_extensions(client) and server is not None and extension_id in server.extensions
