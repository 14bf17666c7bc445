"""Server -> client requests and notifications against a scripted in-memory server: what the
client declares, how it answers sampling / elicitation / roots / ping, how it refuses what it
did not declare, and how notifications reach the typed callbacks."""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, List

import pytest

from mcpclient import Client, CreateMessageResult, ElicitationRequest, ElicitationResult, Handlers, Limits, RPCError, Root, Tool, URLElicitationRequired, accept_defaults

from conftest import LONG
from helpers import ScriptedServer
from helpers import resource_updates, tool_changes

SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10,
          "modelPreferences": {"hints": [{"name": "claude"}, {"bad": 1}]}}
FORM = {"message": "Who are you?", "requestedSchema": {"type": "object", "properties": {
    "name": {"type": "string", "default": "John Doe"}, "age": {"type": "integer", "default": 30},
    "score": {"type": "number", "default": 95.5}, "verified": {"type": "boolean", "default": True},
    "status": {"type": "string", "enum": ["a", "b"], "default": "a"}, "nick": {"type": "string"}}}}


@pytest.fixture
def server():
    servers: List[ScriptedServer] = []

    def make(handle=lambda method, params: {}, **kwargs: Any) -> ScriptedServer:
        servers.append(ScriptedServer(handle, **kwargs))
        return servers[-1]

    yield make
    for s in servers:
        s.stop()


def capabilities_sent(srv: ScriptedServer) -> Dict[str, Any]:
    init = srv.wait_for(lambda m: m.get("method") == "initialize")
    assert init is not None
    return init["params"]["capabilities"]


def test_capabilities_are_declared_only_for_configured_handlers(server):
    bare = server()
    with Client(bare.transport, timeout=LONG):
        assert capabilities_sent(bare) == {}
    full = server()
    with Client(full.transport, timeout=LONG, capabilities={"sampling": {"tools": {}},
                                                                            "experimental": {"x": {}}}, handlers=Handlers(sampling=lambda r: {}, elicitation=accept_defaults, elicitation_modes=("form", "url"), roots=[])):
        assert capabilities_sent(full) == {"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}},
                                           "roots": {"listChanged": True}, "experimental": {"x": {}}}


def test_sampling_handler_gets_a_typed_request_and_may_return_a_typed_result_or_a_dict(server):
    seen = []

    def sample(request):
        seen.append(request)
        if request.max_tokens == 10:
            return CreateMessageResult(content=f"echo {request.messages[0].text}", model="m-1")
        return {"role": "assistant", "content": {"type": "text", "text": "raw"}, "model": "m-2"}

    srv = server()
    with Client(srv.transport, timeout=LONG, handlers=Handlers(sampling=sample)):
        answer = srv.ask("sampling/createMessage", SAMPLE)
        assert answer["result"] == {"role": "assistant", "content": {"type": "text", "text": "echo hi"},
                                    "model": "m-1", "stopReason": "endTurn"}
        assert srv.ask("sampling/createMessage", dict(SAMPLE, maxTokens=5))["result"]["model"] == "m-2"
        assert seen[0].model_hints == ["claude"] and seen[0].messages[0].role == "user"
        # tools were not declared: the client must refuse them, without calling the handler
        refused = srv.ask("sampling/createMessage", dict(SAMPLE, tools=[{"name": "t", "inputSchema": {}}]))
        assert refused["error"]["code"] == -32602 and len(seen) == 2
        # malformed params: invalid params, the handler is not called
        assert srv.ask("sampling/createMessage", {"messages": "no"})["error"]["code"] == -32602
        assert len(seen) == 2


def test_sampling_tools_pass_through_when_declared(server):
    got = []
    srv = server()
    tools = [{"name": "lookup", "inputSchema": {"type": "object"}}]
    with Client(srv.transport, timeout=LONG, capabilities={"sampling": {"tools": {}}}, handlers=Handlers(sampling=lambda r: got.append(r) or CreateMessageResult(
                    [{"type": "tool_use", "id": "u1", "name": "lookup", "input": {}}], "m", stop_reason="toolUse"))):
        result = srv.ask("sampling/createMessage", dict(SAMPLE, tools=tools, toolChoice={"mode": "auto"}))["result"]
    assert got[0].tools == tools and got[0].tool_choice == {"mode": "auto"}
    assert result["content"] == [{"type": "tool_use", "id": "u1", "name": "lookup", "input": {}}]
    assert result["stopReason"] == "toolUse"


def test_form_elicitation_with_the_ready_made_defaults_handler(server):
    srv = server()
    with Client(srv.transport, timeout=LONG, handlers=Handlers(elicitation=accept_defaults)):
        result = srv.ask("elicitation/create", FORM)["result"]
    assert result == {"action": "accept", "content": {"name": "John Doe", "age": 30, "score": 95.5,
                                                        "verified": True, "status": "a"}}


def test_url_elicitation_needs_the_url_mode_declared(server):
    url = {"mode": "url", "message": "Sign in", "url": "https://example.com/x", "elicitationId": "e-7"}
    got: List[ElicitationRequest] = []

    def handler(request):
        got.append(request)
        return ElicitationResult.accept()

    form_only = server()
    with Client(form_only.transport, timeout=LONG, handlers=Handlers(elicitation=handler)):
        assert form_only.ask("elicitation/create", url)["error"]["code"] == -32602
    assert got == []
    both = server()
    with Client(both.transport, timeout=LONG, handlers=Handlers(elicitation=handler, elicitation_modes=("form", "url"))):
        assert both.ask("elicitation/create", url)["result"] == {"action": "accept"}
        assert both.ask("elicitation/create", FORM)["result"] == {"action": "accept"}
    assert (got[0].mode, got[0].url, got[0].elicitation_id) == ("url", "https://example.com/x", "e-7")
    assert got[1].mode == "form" and got[1].defaults()["age"] == 30


def test_url_elicitation_required_error_and_waiting_for_completion(server):
    data = {"elicitations": [{"mode": "url", "elicitationId": "e-1", "url": "https://example.com/a",
                              "message": "Sign in first"}]}

    def handle(method, params):
        srv.peer.send({"jsonrpc": "2.0", "id": srv.received[-1]["id"],
                       "error": {"code": -32042, "message": "URL elicitation required", "data": data}})

    srv = server(handle)
    with Client(srv.transport, timeout=LONG, handlers=Handlers(elicitation=accept_defaults, elicitation_modes=("url",))) as client:
        with pytest.raises(URLElicitationRequired) as info:
            client.call_tool("needs_auth")
        [pending] = info.value.elicitations
        assert (pending.url, pending.elicitation_id) == ("https://example.com/a", "e-1")
        assert client.wait_for_elicitation("e-1", timeout=0.05) is False
        srv.notify("notifications/elicitation/complete", {"elicitationId": "e-1"})
        assert client.wait_for_elicitation("e-1", timeout=LONG) is True


def test_roots_a_list_a_callable_and_set_roots_notifies_the_server(server):
    srv = server()
    with Client(srv.transport, timeout=LONG, handlers=Handlers(roots=["file:///work", Root("file:///data", "data")])) as client:
        assert srv.ask("roots/list")["result"] == {"roots": [{"uri": "file:///work"},
                                                             {"uri": "file:///data", "name": "data"}]}
        client.set_roots(lambda: [{"uri": "file:///other", "name": "o"}])
        assert srv.wait_for(lambda m: m.get("method") == "notifications/roots/list_changed") is not None
        assert srv.ask("roots/list")["result"] == {"roots": [{"uri": "file:///other", "name": "o"}]}
        with pytest.raises(ValueError):
            client.set_roots(["https://not-a-file"])
    with pytest.raises(ValueError):
        Client(srv.transport, handlers=Handlers(roots=["relative/path"]))
    plain = server()
    with Client(plain.transport, timeout=LONG) as client:
        assert plain.ask("roots/list")["error"]["code"] == -32601  # not declared
        with pytest.raises(ValueError):
            client.set_roots([])


def test_ping_is_answered_and_unknown_methods_refused(server):
    srv = server()
    with Client(srv.transport, timeout=LONG):
        assert srv.ask("ping")["result"] == {}
        assert srv.ask("sampling/createMessage", SAMPLE)["error"]["code"] == -32601
        assert srv.ask("no/such")["error"]["code"] == -32601


def test_a_handler_that_fails_answers_a_safe_error_and_is_logged(server, caplog):
    def sample(request):
        raise RuntimeError("secret internals /etc/passwd")

    srv = server()
    with Client(srv.transport, timeout=LONG, handlers=Handlers(sampling=sample, elicitation=lambda r: RPCError(-1, "User rejected"))) as client:
        error = srv.ask("sampling/createMessage", SAMPLE)["error"]
        assert error["code"] == -32603 and "secret" not in error["message"]
        assert any("secret internals" in (r.exc_text or "") or "sampling" in r.getMessage() for r in caplog.records)
        # a handler returning the wrong type is a handler bug: same safe error
        assert srv.ask("elicitation/create", FORM)["error"]["code"] == -32603

    def refuse(request):
        raise RPCError(-1, "User rejected sampling request")

    srv2 = server()
    with Client(srv2.transport, timeout=LONG, handlers=Handlers(sampling=refuse)):
        assert srv2.ask("sampling/createMessage", SAMPLE)["error"] == {"code": -1, "message": "User rejected sampling request"}


def test_a_handler_may_call_back_into_the_client(server):
    def handle(method, params):
        return {"content": [{"type": "text", "text": "from the tool"}]}

    srv = server(handle)

    def sample(request):
        return CreateMessageResult(client.call_tool("t").text, "m")

    with Client(srv.transport, timeout=LONG, handlers=Handlers(sampling=sample)) as client:
        assert srv.ask("sampling/createMessage", SAMPLE)["result"]["content"]["text"] == "from the tool"


def test_list_changed_refreshes_the_list_for_the_typed_callback(server):
    tools = [["a"]]

    def handle(method, params):
        if method == "tools/list":
            return {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in tools[0]]}
        return {}

    got: List[List[str]] = []
    updated: List[str] = []
    changed, touched = threading.Event(), threading.Event()
    srv = server(handle, capabilities={"tools": {"listChanged": True}, "resources": {"subscribe": True}})

    def on_tools() -> None:
        got.append(list(tools[0]))
        changed.set()

    def on_updated(uri: str) -> None:
        updated.append(uri)
        if uri == "test://last":
            touched.set()

    updates, changes = resource_updates(on_updated), tool_changes(on_tools)

    def on_notification(method: str, params: Dict[str, Any]) -> None:
        updates(method, params)
        changes(method, params)

    with Client(srv.transport, timeout=LONG, handlers=Handlers(on_notification=on_notification)):
        tools[0] = ["a", "b"]
        srv.notify("notifications/tools/list_changed")
        assert changed.wait(LONG)
        assert got == [["a", "b"]]
        srv.notify("notifications/resources/updated", {"uri": "test://x"})
        srv.notify("notifications/resources/updated", {"uri": 5})  # malformed: ignored
        srv.notify("notifications/resources/updated", {"uri": "test://last"})
        assert touched.wait(LONG)  # notifications are routed in order: the ones before are done
    assert updated == ["test://x", "test://last"]


# --- over stdio, with the dependency-free server's ask_client tool ----------------------------------

def _handler_threads(client: Client) -> int:
    prefix = f"mcpclient-{client._session.instance}-handler"
    return sum(1 for t in threading.enumerate() if t.name.startswith(prefix))


def test_200_server_requests_while_16_threads_call_tools(tmp_path):
    """200 concurrent sampling requests from the server (each handler calling back into the
    client) while 16 threads make calls: all answered, handler threads within max_workers."""
    from mcpclient.testing import server_command

    peak = [0]
    lock = threading.Lock()

    def sample(request):
        with lock:
            peak[0] = max(peak[0], _handler_threads(client))
        client.ping()  # a handler may call back into the client
        return CreateMessageResult(f"ok {request.messages[0].text}", "m")

    params = {"messages": [{"role": "user", "content": {"type": "text", "text": "q"}}], "maxTokens": 5}
    errors: List[BaseException] = []
    start = threading.Barrier(17)

    def caller(n: int) -> None:
        try:
            start.wait(LONG)
            for i in range(50):
                assert client.call_tool("echo", {"text": f"{n}-{i}"}).text == f"{n}-{i}"
        except BaseException as exc:  # reported below
            errors.append(exc)

    with Client(server_command(), timeout=60, limits=Limits(workers=4), handlers=Handlers(sampling=sample)) as client:
        threads = [threading.Thread(target=caller, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        start.wait(LONG)
        asked = client.call_tool("ask_client", {"method": "sampling/createMessage", "params": params,
                                                "count": 200}).structured_content
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        assert asked["answered"] == 200 and asked["errors"] == []
        assert all(r["content"]["text"] == "ok q" for r in asked["results"])
        assert 1 <= peak[0] <= 4 and _handler_threads(client) <= 4


def test_a_handler_blocked_forever_does_not_hang_close():
    from mcpclient._engine.session import HANDLER_GRACE
    from mcpclient.testing import server_command

    entered, release = threading.Event(), threading.Event()

    def stuck(request):
        entered.set()
        release.wait(60)  # ignores close(); released by the test once close() returned
        return CreateMessageResult("late", "m")

    client = Client(server_command(), timeout=LONG, handlers=Handlers(sampling=stuck)).connect()
    try:
        future = client.call_tool_future("ask_client", {"method": "sampling/createMessage", "params": {
            "messages": [], "maxTokens": 1}, "timeout": 30})
        assert entered.wait(LONG)
        began = time.monotonic()
        client.close()
        took = time.monotonic() - began
        assert HANDLER_GRACE <= 1.0 and took < 2.5, f"close() took {took:.2f} s"  # not the 5 s budget
        assert future.done()
    finally:
        release.set()
    handlers = [t for t in threading.enumerate() if t.name.startswith(f"mcpclient-{client._session.instance}-handler")]
    for t in handlers:
        t.join(LONG)


def test_a_request_the_server_cancels_gets_no_answer(server):
    entered, release, cancel_seen = threading.Event(), threading.Event(), threading.Event()

    def slow_form(request):
        entered.set()
        release.wait(LONG)
        return ElicitationResult.accept({"name": "too late"})

    def on_notification(method, params):
        if method == "notifications/cancelled":
            cancel_seen.set()  # routed after the reader marked the request cancelled

    srv = server()
    with Client(srv.transport, timeout=LONG, limits=Limits(workers=1), handlers=Handlers(elicitation=slow_form, on_notification=on_notification)):
        srv.peer.send({"jsonrpc": "2.0", "id": "c1", "method": "elicitation/create", "params": FORM})
        assert entered.wait(LONG)
        srv.notify("notifications/cancelled", {"requestId": "c1", "reason": "user closed the dialog"})
        assert cancel_seen.wait(LONG)
        release.set()
        assert srv.ask("ping")["result"] == {}  # one handler thread: c1 was finished before this
    assert not [m for m in srv.received if m.get("id") == "c1"]


def test_ping_and_task_polls_are_answered_while_every_handler_waits_for_a_user(server):
    release = threading.Event()
    waiting = threading.Semaphore(0)

    def slow_form(request):
        waiting.release()
        release.wait(LONG)
        return ElicitationResult.decline()

    srv = server()
    try:
        with Client(srv.transport, timeout=LONG, limits=Limits(workers=2), handlers=Handlers(elicitation=slow_form, task_requests=True)):
            for i in range(2):  # both handler threads now wait for "the user"
                srv.peer.send({"jsonrpc": "2.0", "id": f"e{i}", "method": "elicitation/create", "params": FORM})
            assert waiting.acquire(timeout=LONG) and waiting.acquire(timeout=LONG)
            assert srv.ask("ping", timeout=LONG)["result"] == {}
            created = srv.ask("elicitation/create", dict(FORM, task={"ttl": 1000}))["result"]["task"]
            assert created["status"] == "working" and created["ttl"] == 1000
            srv.peer.send({"jsonrpc": "2.0", "id": "r1", "method": "tasks/result", "params": {"taskId": created["taskId"]}})
            assert srv.ask("tasks/get", {"taskId": created["taskId"]})["result"]["status"] == "working"
            assert srv.ask("tasks/get", {"taskId": "nope"})["error"]["code"] == -32602
            release.set()
            result = srv.wait_for(lambda m: m.get("id") == "r1")
            assert result["result"]["action"] == "decline"
            assert result["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": created["taskId"]}
    finally:
        release.set()


def test_a_task_augmented_request_is_checked_before_a_task_is_made(server):
    srv = server()
    with Client(srv.transport, timeout=LONG, handlers=Handlers(elicitation=accept_defaults, task_requests=True)):
        url = {"mode": "url", "message": "m", "url": "https://example.com", "task": {}}
        assert srv.ask("elicitation/create", url)["error"]["code"] == -32602  # url mode not declared
        assert srv.ask("tasks/list")["result"] == {"tasks": []}
        bad = srv.ask("sampling/createMessage", dict(SAMPLE, task={}))  # no sampling handler
        assert bad["error"]["code"] == -32601


def test_wait_for_elicitation_ends_when_the_client_closes(server):
    from mcpclient import ClientClosedError

    srv = server()
    client = Client(srv.transport, timeout=LONG, handlers=Handlers(elicitation=accept_defaults)).connect()
    raised: List[BaseException] = []
    waiter = threading.Thread(target=lambda: raised.extend(_capture(lambda: client.wait_for_elicitation("x"))))
    waiter.start()
    client.close()
    waiter.join(LONG)
    assert not waiter.is_alive() and isinstance(raised[0], ClientClosedError)
    with pytest.raises(ClientClosedError):
        client.wait_for_elicitation("x", timeout=LONG)


def _capture(fn) -> List[BaseException]:
    try:
        fn()
    except BaseException as exc:  # returned for the assertion
        return [exc]
    return []


def test_malformed_server_requests_are_invalid_params_and_answers_are_checked(server):
    answers = {"extra": ElicitationResult.accept({"name": "x", "secret": "s3cr3t"}),
               "nested": ElicitationResult.accept({"name": {"first": "x"}})}
    pick: List[str] = []

    def handler(request):
        return answers[pick[-1]]

    srv = server()
    with Client(srv.transport, timeout=LONG, handlers=Handlers(sampling=lambda r: {}, elicitation=handler)):
        bad = dict(SAMPLE, messages=[{"role": "user", "content": "not a block"}])
        assert srv.ask("sampling/createMessage", bad)["error"]["code"] == -32602
        pick.append("extra")
        form = {"message": "m", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}
        assert srv.ask("elicitation/create", form)["result"] == {"action": "accept", "content": {"name": "x"}}
        pick.append("nested")
        assert srv.ask("elicitation/create", form)["error"]["code"] == -32603
