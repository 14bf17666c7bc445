"""The extension registry: ``Client(extensions=...)`` declared in ``initialize`` and in
every 2026 request's ``_meta``; the server's extensions; gating (``CapabilityError``, nothing
sent); bad ids and conflicts; ``-32021`` naming the missing extension; a ``resultType`` nobody
claims is a ``ProtocolError`` in both eras; a user ``Extension`` with a request handler, a
notification handler and a result type of its own, end to end; the Tasks extension's ``Mcp-Name``
over HTTP in both eras. Servers: the scripted in-memory server (tests/helpers.py) and the
scripted HTTP server (tests/http_scripted.py), both eras.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Dict, FrozenSet, List, Mapping

import pytest

from mcpclient import CallFuture, CapabilityError, Client, Handlers, MissingClientCapability, ProtocolError, RequestTimeout
from mcpclient._engine.chained import ChainedFuture
from mcpclient.extensions import APP_MIME_TYPE, APPS, TASKS, Extension, ExtensionContext, check_id

from conftest import LONG
from helpers import ScriptedServer, Twins, declared_extensions, supports
from http_scripted import Reply, ScriptedHTTPServer

pytestmark = pytest.mark.timeout(60)

JOBS = "com.example/jobs"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"


def discover(capabilities: Dict[str, Any]) -> Dict[str, Any]:
    return {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": capabilities,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted-2026", "version": "1"}}}


class Jobs(Extension):
    """A user extension: answers ``example/ping``, records ``notifications/example/event``,
    and resolves ``resultType: "deferred"`` on ``tools/call`` by fetching ``example/fetch``."""

    id = JOBS

    def __init__(self, use_future: bool = False) -> None:
        self.events: List[Dict[str, Any]] = []
        self.got_event = threading.Event()
        self.bound: List[ExtensionContext] = []
        self.use_future = use_future

    def settings(self) -> Dict[str, Any]:
        return {"version": 1}

    def request_handlers(self) -> Mapping[str, Any]:
        return {"example/ping": lambda params: {"pong": params.get("n")}}

    def notification_handlers(self) -> Mapping[str, Any]:
        return {"notifications/example/event": self._event}

    def _event(self, params: Dict[str, Any]) -> None:
        self.events.append(params)
        self.got_event.set()

    def result_types(self) -> Mapping[str, FrozenSet[str]]:
        return {"deferred": frozenset({"tools/call"})}

    def bind(self, ctx: ExtensionContext) -> None:
        self.bound.append(ctx)

    def resolve(self, kind: str, method: str, raw: Dict[str, Any], ctx: ExtensionContext) -> Any:
        assert kind == "deferred" and method == "tools/call" and not threading.current_thread().name.endswith(("-reader", "-notify"))
        if self.use_future:
            return ctx.request_future("example/fetch", {"job": raw["job"]})
        return ctx.request("example/fetch", {"job": raw["job"]})


def jobs_server(handle_extra: Any = None, modern: bool = False, declare: bool = True) -> ScriptedServer:
    caps: Dict[str, Any] = {"tools": {}}
    if declare:
        caps["extensions"] = {JOBS: {"limit": 3}}

    def handle(method: str, params: Dict[str, Any]) -> Any:
        if method == "tools/call" and params["name"] == "slow":
            return {"resultType": "deferred", "job": "j1"}
        if method == "tools/call":
            return {"content": [{"type": "text", "text": "plain"}]}
        if method == "tools/list":
            return {"tools": []}
        if method == "example/fetch":
            return {"resultType": "complete", "content": [{"type": "text", "text": f"done {params['job']}"}]}
        return handle_extra(method, params) if handle_extra else {}

    return ScriptedServer(handle, caps, modern=modern)


def connect(server: ScriptedServer, **options: Any) -> Client:
    return Client(server.transport, timeout=LONG, **options)


def sent(server: ScriptedServer, method: str) -> List[Dict[str, Any]]:
    return [m for m in server.received if m.get("method") == method]


# --- declaration ------------------------------------------------------------------------------------

def test_declared_in_initialize_with_built_in_settings(started):
    server = started(jobs_server())
    with connect(server, extensions={APPS: {}, "com.example/plain": True, JOBS: Jobs(),
                                     "org.other/cfg": {"a": 1}}) as client:
        declared = sent(server, "initialize")[0]["params"]["capabilities"]["extensions"]
        assert declared == {APPS: {"mimeTypes": [APP_MIME_TYPE]}, "com.example/plain": {}, JOBS: {"version": 1},
                            "org.other/cfg": {"a": 1}}
        assert dict(declared_extensions(client)) == declared
        assert dict(client.server.extensions) == {JOBS: {"limit": 3}}
        assert supports(client, JOBS) and not supports(client, APPS)


def test_apps_mime_type_is_always_declared(started):
    server = started(jobs_server())
    with connect(server, extensions={APPS: {"mimeTypes": ["text/x-other"], "extra": True}}) as client:
        assert declared_extensions(client)[APPS] == {"mimeTypes": [APP_MIME_TYPE, "text/x-other"], "extra": True}


def test_declared_in_every_2026_request_and_nothing_without_extensions(started):
    server = started(jobs_server(modern=True))
    with connect(server, extensions={JOBS: Jobs(), TASKS: {}}, capabilities={"extensions": {"x.y/z": {}}}) as client:
        assert client.server.protocol_version == "2026-07-28"
        client.list_tools()
        client.call_tool("echo")
        client.request("tasks/get", {"taskId": "t1"})
        requests = [m for m in server.received if "method" in m and "id" in m]
        assert {m["method"] for m in requests} >= {"server/discover", "tools/list", "tools/call", "tasks/get"}
        for message in requests:
            extensions = message["params"]["_meta"][META_CAPS]["extensions"]
            assert set(extensions) == {JOBS, TASKS, "x.y/z"}, message["method"]
            assert extensions[JOBS] == {"version": 1}
    for options in ({}, {"extensions": {}}):
        plain = started(jobs_server())
        with connect(plain, **options) as client:
            assert "extensions" not in sent(plain, "initialize")[0]["params"]["capabilities"]
            assert declared_extensions(client) == {} and supports(client, JOBS) is False


# --- bad input ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["tasks", "io.modelcontextprotocol/", "/tasks", "1io.x/y", "io..x/y", "io-/y",
                                 "io.x/-y", "io.x/y z", "", 3])
def test_bad_ids_are_refused(bad):
    with pytest.raises(ValueError):
        check_id(bad)
    with pytest.raises((ValueError, TypeError)):
        Client("python -c pass", extensions={bad: {}})


def test_good_ids_pass():
    for good in (TASKS, APPS, "com.example-co/my_ext.v2", "a/b", "x1.y/z"):
        assert check_id(good) == good


def test_conflicts_and_bad_values_are_refused():
    with pytest.raises(ValueError, match="declared twice"):
        Client("python -c pass", extensions={JOBS: {}}, capabilities={"extensions": {JOBS: {}}})
    with pytest.raises(ValueError, match="whose id is"):
        Client("python -c pass", extensions={"com.example/other": Jobs()})
    with pytest.raises(TypeError):
        Client("python -c pass", extensions={JOBS: 3})
    with pytest.raises(TypeError):
        Client("python -c pass", extensions=[JOBS])

    class Twice(Jobs):
        id = "com.example/twice"

    with pytest.raises(ValueError, match="two extensions handle"):
        Client("python -c pass", extensions={JOBS: Jobs(), Twice.id: Twice()})


# --- gating and errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("modern", [False, True])
def test_a_server_without_the_extension_gets_no_extension_request(started, modern):
    server = started(jobs_server(modern=modern, declare=False))
    jobs = Jobs()
    with connect(server, extensions={JOBS: jobs}) as client:
        ctx = jobs.bound[-1]
        assert ctx.server_settings is None and ctx.client_settings == {"version": 1}
        with pytest.raises(CapabilityError) as caught:
            ctx.request("example/fetch", {"job": "x"})
        assert caught.value.capability == f"extensions.{JOBS}" and caught.value.method == "example/fetch"
        with pytest.raises(CapabilityError):
            ctx.request_future("example/fetch")
        client.ping()  # (the messages before it have all arrived)
        assert sent(server, "example/fetch") == []


@pytest.mark.parametrize("modern", [False, True])
def test_missing_client_capability_names_the_extension(started, modern):
    def handle(method: str, params: Dict[str, Any]) -> Any:
        server.peer.send({"jsonrpc": "2.0", "id": server.received[-1]["id"], "error": {
            "code": -32021, "message": "Missing required client capability",
            "data": {"requiredCapabilities": {"extensions": {TASKS: {}}}}}})
        return None

    server = started(ScriptedServer(handle, {"tools": {}}, modern=modern))
    with connect(server) as client:
        with pytest.raises(MissingClientCapability) as caught:
            client.call_tool("needs_tasks")
    assert caught.value.missing_extensions == [TASKS]
    assert caught.value.code == -32021
    assert f"Client(extensions={{{TASKS!r}: {{}}}})" in str(caught.value)
    assert MissingClientCapability(-32021, "x", {"requiredCapabilities": {"sampling": {}}}).missing_extensions == []


@pytest.mark.parametrize("modern", [False, True])
def test_a_result_type_nobody_claims_is_a_protocol_error(started, modern):
    def handle(method: str, params: Dict[str, Any]) -> Any:
        return {"resultType": "task", "taskId": "t1", "status": "working"}

    server = started(ScriptedServer(handle, {"tools": {}, "resources": {}}, modern=modern))
    with connect(server, extensions={JOBS: Jobs()}) as client:
        with pytest.raises(ProtocolError, match="resultType 'task'"):
            client.call_tool("anything")
        with pytest.raises(ProtocolError, match="resultType 'task'"):
            client.call_tool_future("anything").result(LONG)
        if modern:
            with pytest.raises(ProtocolError, match="resultType 'task'"):
                client.read_resource("file:///x")


# --- a user extension, end to end ---------------------------------------------------------------------------

@pytest.mark.parametrize("modern", [False, True])
@pytest.mark.parametrize("use_future", [False, True])
def test_a_user_extension_resolves_its_result_type(started, modern, use_future):
    server = started(jobs_server(modern=modern))
    jobs = Jobs(use_future)
    with connect(server, extensions={JOBS: jobs}) as client:
        assert len(jobs.bound) == 1 and jobs.bound[0].server_settings == {"limit": 3}
        assert client.call_tool("slow").text == "done j1"
        assert client.call_tool_future("slow").result(LONG).text == "done j1"
        assert client.call_tool("fast").text == "plain"
        assert len(sent(server, "example/fetch")) == 2
        if modern:  # the extension's own requests carry the declaration too
            for message in sent(server, "example/fetch"):
                assert message["params"]["_meta"][META_CAPS]["extensions"] == {JOBS: {"version": 1}}


class Chain(ChainedFuture):
    """A future of its own for ``call_tool_future`` (what the Tasks extension's is)."""

    def __init__(self, first: CallFuture, transform: Any, ctx: ExtensionContext) -> None:
        self.transform, self.ctx = transform, ctx
        super().__init__(first._session, "tools/call", first, self.step)

    def step(self, raw: Any) -> Any:
        if raw.get("resultType") == "deferred":  # fetch the result, then parse it
            self._link = self.transform
            return self.ctx.request_future("example/fetch", {"job": raw["job"]})
        return self.transform(raw)


class TakingJobs(Jobs):
    """Takes ``call_tool_future`` over: its transform takes the kind ``AsIs``, so nothing resolves it."""

    def call_future(self, ctx: ExtensionContext, method: str, params: Dict[str, Any], transform: Any,
                    deadline: Any, on_progress: Any) -> Any:
        from mcpclient.extensions import AsIs

        return Chain(ctx.call(method, params, AsIs(frozenset(("deferred",))), deadline, on_progress=on_progress),
                     transform, ctx)


@pytest.mark.parametrize("modern", [False, True])
def test_an_extension_may_take_over_the_futures_of_the_methods_it_claims(started, modern):
    server = started(jobs_server(modern=modern))
    with connect(server, extensions={JOBS: TakingJobs()}) as client:
        future = client.call_tool_future("slow")
        assert isinstance(future, Chain)
        assert future.result(LONG).text == "done j1"
        inline = client.call_tool_future("fast")
        assert isinstance(inline, Chain) and inline.result(LONG).text == "plain"
        assert client.call_tool("slow").text == "done j1"  # (a blocking call: resolve, on the caller's thread)
        assert type(Twins(client).list_tools()) is CallFuture


class Stuck(Jobs):
    """Resolves into a future nobody completes; records its close."""

    def __init__(self) -> None:
        super().__init__()
        self.futures: List[Future] = []
        self.closed = threading.Event()

    def resolve(self, kind: str, method: str, raw: Dict[str, Any], ctx: ExtensionContext) -> Any:
        self.futures.append(Future())
        return self.futures[-1]

    def close(self) -> None:
        self.closed.set()


@pytest.mark.parametrize("modern", [False, True])
def test_the_calls_timeout_covers_resolve_and_cancels_its_future(started, modern):
    server = started(jobs_server(modern=modern))
    stuck = Stuck()
    with connect(server, extensions={JOBS: stuck}) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", timeout=0.3)
        assert stuck.futures[0].cancelled()
        assert not stuck.closed.is_set()
    assert stuck.closed.is_set()


def test_a_user_extension_answers_requests_and_gets_notifications(started):
    server = started(jobs_server())
    jobs = Jobs()
    seen: List[str] = []
    with connect(server, extensions={JOBS: jobs}, handlers=Handlers(on_notification=lambda m, p: seen.append(m))) as client:
        answer = server.ask("example/ping", {"n": 7})
        assert answer["result"] == {"pong": 7}
        assert server.ask("example/unknown")["error"]["code"] == -32601
        server.notify("notifications/example/event", {"step": 1})
        assert jobs.got_event.wait(LONG)
        assert jobs.events == [{"step": 1}]
        client.ping()
        assert "notifications/example/event" in seen  # on_notification still gets it


def test_the_context_answers_with_the_clients_own_handlers(started):
    server = started(jobs_server())
    jobs = Jobs()
    with connect(server, extensions={JOBS: jobs}, handlers=Handlers(roots=["file:///tmp"])):
        ctx = jobs.bound[-1]
        assert ctx.answer("roots/list", {}) == {"roots": [{"uri": "file:///tmp"}]}
        assert ctx.id == JOBS


# --- Mcp-Name for the Tasks extension's methods over HTTP ------------------------------------------------------

@pytest.mark.parametrize("era", ["handshake", "2026"])
def test_tasks_methods_carry_mcp_name_over_http(started, era):
    caps = {"tools": {}, "extensions": {TASKS: {}}}
    server = started(ScriptedHTTPServer(lambda seen, msg: {"resultType": "complete"}, caps,
                                        discover=discover(caps) if era == "2026" else None))
    with Client(server.url, timeout=LONG, extensions={TASKS: {}}) as client:
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            client.request(method, {"taskId": "task-7"})
            headers = server.requests(method)[-1].headers
            assert headers.get("mcp-name") == "task-7" and headers.get("mcp-method") == method, (era, method)


def test_no_routing_headers_in_the_handshake_era_without_the_tasks_extension(started):
    server = started(ScriptedHTTPServer(lambda seen, msg: {}, {"tools": {}}))
    with Client(server.url, timeout=LONG) as client:
        client.request("tasks/get", {"taskId": "task-7"})
        headers = server.requests("tasks/get")[-1].headers
        assert "mcp-name" not in headers and "mcp-method" not in headers


def test_a_failing_notification_handler_is_logged_and_the_core_still_runs(started, caplog):
    class Broken(Jobs):
        def _event(self, params: Dict[str, Any]) -> None:
            raise RuntimeError("boom")

    server = started(jobs_server())
    got = threading.Event()
    with connect(server, extensions={JOBS: Broken()}, handlers=Handlers(on_notification=lambda m, p: got.set() if m == "notifications/example/event" else None)):
        server.notify("notifications/example/event", {})
        assert got.wait(LONG)
    assert "extension handler for notifications/example/event failed" in caplog.text


def test_registry_require_is_the_gate():
    from mcpclient.extensions.registry import Registry

    assert Registry.require({"extensions": {JOBS: {"a": 1}}}, JOBS, "x/y") == {"a": 1}
    with pytest.raises(CapabilityError):
        Registry.require({"extensions": {JOBS: "not an object"}}, JOBS)


def test_known_tool_reads_the_latest_listing_without_a_request(started):
    def handle(method: str, params: Dict[str, Any]) -> Any:
        return {"tools": [{"name": "counter", "inputSchema": {"type": "object"},
                           "_meta": {"ui": {"resourceUri": "ui://counter/app.html"}}}]}

    server = started(ScriptedServer(handle, {"tools": {"listChanged": True}}))
    with Client(server.transport, timeout=LONG) as client:
        assert client._known_tool("counter") is None and sent(server, "tools/list") == []
        client.list_tools()
        tool = client._known_tool("counter")
        assert tool is not None and tool.name == "counter" and client._known_tool("other") is None
        assert len(sent(server, "tools/list")) == 1


# --- the registry's rarer paths ---------------------------------------------------------------------------

def test_an_extension_handler_returning_no_json_object_is_answered_with_an_error(started):
    """A handler's result that is not a JSON object (``None``, a list) or that JSON cannot carry
    is the handler's bug: the server gets -32603 at once (not ``result: null``, not silence)."""
    class Sloppy(Jobs):
        def request_handlers(self) -> Mapping[str, Any]:
            return {"example/none": lambda params: None, "example/list": lambda params: [1],
                    "example/set": lambda params: {"ids": {1, 2}}}

    server = started(jobs_server())
    with connect(server, extensions={JOBS: Sloppy()}) as client:
        for method in ("example/none", "example/list", "example/set"):
            answer = server.ask(method, {}, timeout=LONG)
            assert "result" not in answer and answer["error"]["code"] == -32603, method
        client.ping()  # the client lives on


class Fragile(Extension):
    """Binds; raises from ``bind`` when told to (a user extension's bug)."""

    def __init__(self, extension_id: str, fail: bool) -> None:
        self.id, self.fail, self.binds = extension_id, fail, 0

    def bind(self, ctx: ExtensionContext) -> None:
        self.binds += 1
        if self.fail:
            raise RuntimeError("bind broke")


def test_a_failing_bind_is_logged_and_spoils_neither_connect_nor_reconnect(caplog):
    import os
    import signal

    from conftest import wait_until
    from mcpclient.testing import server_command

    broken, fine = Fragile("com.example/broken", True), Fragile("com.example/fine", False)
    reconnected = threading.Event()
    with Client(server_command(), timeout=LONG, reconnect=True, extensions={broken.id: broken, fine.id: fine}, handlers=Handlers(on_reconnect=lambda: reconnected.set())) as client:  # (connect() did not raise)
        assert (broken.binds, fine.binds) == (1, 1)
        os.kill(client.transport.pid, signal.SIGKILL)
        assert wait_until(lambda: client.state == "lost")
        assert client.call_tool("add", {"a": 2, "b": 2}).structured_content == {"sum": 4}  # it reconnects
        assert reconnected.wait(LONG) and (broken.binds, fine.binds) == (2, 2)
    assert caplog.text.count("extension com.example/broken: bind() failed") == 2


def test_an_interrupted_bind_stops_the_server_the_connect_started():
    """Ctrl-C (or ``SystemExit``) in an extension's ``bind()`` ends ``connect()`` with nothing left
    running: the server it started is stopped and the client closed, as for a failed handshake."""
    from conftest import pid_alive, wait_until
    from mcpclient.testing import server_command

    class Interrupted(Extension):
        id = "com.example/interrupted"

        def bind(self, ctx: ExtensionContext) -> None:
            self.pid = client.transport.pid
            raise KeyboardInterrupt

    ext = Interrupted()
    client = Client(server_command(), timeout=LONG, extensions={ext.id: ext})
    with pytest.raises(KeyboardInterrupt):
        with client:
            pass
    assert ext.pid and wait_until(lambda: not pid_alive(ext.pid))
    assert client.state == "closed"


def test_an_extension_handler_raising_system_exit_leaves_the_cores_handling_alone(started):
    class Exiting(Jobs):
        def notification_handlers(self) -> Mapping[str, Any]:
            return {"notifications/message": self._exit, "notifications/example/event": self._exit}

        def _exit(self, params: Dict[str, Any]) -> None:
            raise SystemExit(3)

    class Second(Jobs):
        id = "com.example/second"

        def request_handlers(self) -> Mapping[str, Any]:
            return {}

        def result_types(self) -> Mapping[str, FrozenSet[str]]:
            return {}

    logged = threading.Event()
    second = Second()
    server = started(jobs_server())
    with connect(server, extensions={JOBS: Exiting(), Second.id: second}, handlers=Handlers(on_log=lambda level, logger, data: logged.set())):
        server.notify("notifications/message", {"level": "info", "data": "hello"})
        assert logged.wait(LONG)  # the core's log routing still ran
        server.notify("notifications/example/event", {"n": 1})
        assert second.got_event.wait(LONG)  # and the other extension's handler


def test_extensions_declared_through_capabilities_are_declared_extensions(started):
    server = started(jobs_server())
    with connect(server, capabilities={"extensions": {JOBS: {"v": 2}}}, extensions={APPS: True}) as client:
        wire = sent(server, "initialize")[0]["params"]["capabilities"]["extensions"]
        assert dict(declared_extensions(client)) == wire == {JOBS: {"v": 2}, APPS: {"mimeTypes": [APP_MIME_TYPE]}}
        assert supports(client, JOBS)


def test_an_extension_instance_serves_one_client(started):
    """Shared, its ``bind`` would point it at the last client: its requests (a task's polls)
    would go out on another client's connection, maybe to another server with other credentials;
    and its ``close()`` (the first client's) is final."""
    jobs = Jobs()
    first = started(jobs_server())
    with connect(first, extensions={JOBS: jobs}) as client:
        with pytest.raises(ValueError, match="serves one Client"):
            Client("python -c pass", extensions={JOBS: jobs})
        assert client.call_tool("slow").text == "done j1"
    with pytest.raises(ValueError, match="serves one Client"):
        Client("python -c pass", extensions={JOBS: jobs})


def test_a_second_close_does_not_close_the_extensions_again(started):
    stuck = Stuck()
    with connect(started(jobs_server()), extensions={JOBS: stuck}) as client:
        pass
    assert stuck.closed.is_set()
    stuck.closed.clear()
    client.close()
    assert not stuck.closed.is_set()


def test_a_client_that_failed_to_construct_does_not_keep_its_extension(started):
    jobs = Jobs()
    with pytest.raises(TypeError) as caught:
        Client("python -c pass", extensions={JOBS: jobs}, handlers=Handlers(sampling=5))  # type: ignore[arg-type]
    kept = caught  # (the traceback holds the half-made client)
    with connect(started(jobs_server()), extensions={JOBS: jobs}) as client:
        assert client.call_tool("slow").text == "done j1" and kept is not None


def test_a_context_whose_client_was_collected_is_not_stateless(started):
    """A Tasks poller thread reads ``ctx.stateless`` in its loop: a client collected before it
    released its extensions made that read raise, and the poller thread died of it."""
    import gc

    jobs = Jobs()
    client = connect(started(jobs_server(modern=True)), extensions={JOBS: jobs}).connect()
    ctx = client._channel.extensions.context(JOBS)
    assert ctx is not None and ctx.stateless is True
    with pytest.warns(ResourceWarning):
        del client
        gc.collect()
    assert ctx.stateless is False


def test_false_declares_nothing():
    """``{TASKS: False}`` reads as "not declared" (as ``tracing=False`` does), not a ``TypeError``."""
    from mcpclient import TASKS

    server = ScriptedServer(lambda method, params: {})
    try:
        with Client(server.transport, extensions={TASKS: False, "com.acme/x": True}, timeout=LONG) as client:
            assert dict(declared_extensions(client)) == {"com.acme/x": {}}
        init = server.wait_for(lambda m: m.get("method") == "initialize")
        assert init is not None and init["params"]["capabilities"].get("extensions") == {"com.acme/x": {}}
    finally:
        server.stop()
