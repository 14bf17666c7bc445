"""Tool output validated against the tool's ``outputSchema`` whatever the call order: a first
call lists the tools to learn it (once, however many threads call; a future lists on its worker),
a listing that fails is not made again by every call, a ``tools/list_changed`` makes the next
call list again, and one caller's short timeout never fails another's listing. Real tools of
the bundled and the official server validate on the first call. ``validate_output="listed"`` and
``False`` opt out. The scripted HTTP server on 127.0.0.1.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, List

import pytest

from conftest import LONG, require_official_sdk
from http_scripted import ScriptedHTTPServer
from mcpclient import Client, HTTPTransport, Handlers


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedHTTPServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedHTTPServer(handle, **kwargs))


def echo(seen, msg):
    if msg["method"] == "tools/list":
        return {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    return {"content": [{"type": "text", "text": f"{seen.path}:{msg['params']['arguments']['text']}"}]}


SHAPE = {"name": "shape", "inputSchema": {"type": "object"},
         "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}


def shapes(structured: Any, hold: "threading.Event" = None, tools: List[Dict[str, Any]] = (SHAPE,)):
    """A server whose ``shape`` tool declares an outputSchema and answers ``structured``; its
    ``tools/list`` waits for ``hold`` (if given) before answering."""
    def handle(seen, msg):
        if msg["method"] == "tools/list":
            if hold is not None:
                hold.wait(LONG)
            return {"tools": list(tools)}
        return {"content": [], "structuredContent": structured}
    return handle


def test_output_is_validated_on_the_first_call_without_list_tools(scripted):
    """structuredContent is validated on the first call, though the caller never called list_tools()."""
    from mcpclient import SchemaValidationError

    server = scripted(shapes({"n": "not a number"}))
    with Client(server.url, timeout=LONG, protocol="legacy") as client:
        with pytest.raises(SchemaValidationError, match="outputSchema"):
            client.call_tool("shape")
        with pytest.raises(SchemaValidationError):  # known now: no second listing
            client.call_tool("shape")
        with pytest.raises(SchemaValidationError):  # the future twin too (learned on its worker)
            client.call_tool_future("shape").result(LONG)
    assert len(server.requests("tools/list")) == 1


def test_the_future_twin_lists_on_its_worker_and_returns_at_once(scripted):
    from mcpclient import SchemaValidationError

    hold = threading.Event()
    server = scripted(shapes({"n": 1.5}, hold))
    with Client(server.url, timeout=LONG, protocol="legacy") as client:
        future = client.call_tool_future("shape")  # returns although the listing is held
        hold.set()
        with pytest.raises(SchemaValidationError):
            future.result(LONG)
    assert len(server.requests("tools/list")) == 1


def test_many_threads_calling_an_unknown_tool_list_once(started):
    """16 threads call a tool nobody listed, while the listing is held: one tools/list in all."""
    from helpers import ScriptedServer
    from mcpclient import SchemaValidationError

    hold = threading.Event()
    listings: List[int] = []

    def handle(method, params):
        if method == "tools/list":
            listings.append(1)
            hold.wait(LONG)
            return {"tools": [SHAPE]}
        return {"content": [], "structuredContent": {"n": "x"}}

    srv = started(ScriptedServer(handle))
    errors: List[BaseException] = []
    with Client(srv.transport, timeout=LONG) as client:
        gate = threading.Barrier(17)

        def call() -> None:
            gate.wait(LONG)
            try:
                client.call_tool("shape")
            except BaseException as exc:  # noqa: B902 - collected for the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=call, name=f"test-caller-{i}") for i in range(16)]
        for thread in threads:
            thread.start()
        gate.wait(LONG)
        assert srv.wait_for(lambda m: m.get("method") == "tools/list") is not None
        hold.set()
        for thread in threads:
            thread.join(LONG)
    assert len(errors) == 16 and all(isinstance(e, SchemaValidationError) for e in errors), \
        [e for e in errors if not isinstance(e, SchemaValidationError)][:3]
    assert len(listings) == 1


def test_a_tool_no_listing_names_is_called_unvalidated_and_not_listed_for_again(scripted, caplog):
    server = scripted(shapes({"n": "x"}, tools=[]))
    with Client(server.url, timeout=LONG, protocol="legacy") as client:
        with caplog.at_level("DEBUG", logger="mcpclient"):
            assert client.call_tool("shape").structured_content == {"n": "x"}
        client.call_tool("shape")
    assert len(server.requests("tools/list")) == 1
    assert any("not validated" in r.getMessage() for r in caplog.records)


def test_validate_output_listed_never_lists_and_false_never_validates(scripted):
    from mcpclient import SchemaValidationError

    server = scripted(shapes({"n": "x"}))
    with Client(server.url, timeout=LONG, protocol="legacy", validate_output="listed") as client:
        assert client.call_tool("shape").structured_content == {"n": "x"}
        assert server.requests("tools/list") == []
        client.list_tools()
        with pytest.raises(SchemaValidationError):
            client.call_tool("shape")
    with Client(server.url, timeout=LONG, protocol="legacy", validate_output=False) as client:
        client.list_tools()
        client.call_tool("shape")
    with pytest.raises(ValueError, match="validate_output"):
        Client(server.url, validate_output="always")


@pytest.mark.parametrize("twin", [False, True])
def test_a_listing_that_outlasts_the_timeout_fails_the_call_at_its_timeout(scripted, twin):
    """The call is answered at once; the listing that must come before its output is trusted
    never is: ``RequestTimeout`` at the call's timeout, saying why (blocking method and twin)."""
    from mcpclient import RequestTimeout

    hold = threading.Event()
    server = scripted(shapes({"n": 1}, hold))
    try:
        with Client(server.url, timeout=LONG, protocol="legacy") as client:
            started = time.monotonic()
            with pytest.raises(RequestTimeout, match="outputSchema"):
                if twin:
                    client.call_tool_future("shape", timeout=0.5).result(LONG)
                else:
                    client.call_tool("shape", timeout=0.5)
            assert 0.5 <= time.monotonic() - started < 0.5 + LONG / 4
            assert len(server.requests("tools/call")) == 1 and len(server.requests("tools/list")) == 1
            hold.set()
    finally:
        hold.set()


def test_a_list_changed_notification_makes_the_next_call_list_again(started):
    """The listing is cached until the server says its tools changed."""
    from helpers import ScriptedServer
    from mcpclient import SchemaValidationError

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    listings: List[int] = []

    def handle(method, params):
        if method == "tools/list":
            listings.append(1)
            return {"tools": [dict(SHAPE, outputSchema=schema)]}
        return {"content": [], "structuredContent": {"n": "x"}}

    srv = started(ScriptedServer(handle))
    changed = threading.Event()
    with Client(srv.transport, timeout=LONG, handlers=Handlers(on_notification=lambda method, params: changed.set())) as client:
        with pytest.raises(SchemaValidationError):
            client.call_tool("shape")
        schema = {"type": "object"}  # the server's tool changed: anything goes now
        srv.notify("notifications/tools/list_changed")
        assert changed.wait(LONG)
        assert client.call_tool("shape").structured_content == {"n": "x"}
    assert len(listings) == 2


@pytest.mark.parametrize("command", ["testing", "official"])
def test_real_servers_structured_tools_validate_on_the_first_call(command):
    from conftest import OFFICIAL_SERVER, TESTING_SERVER

    if command == "official":
        require_official_sdk()
    with Client(TESTING_SERVER if command == "testing" else OFFICIAL_SERVER, timeout=LONG) as client:
        assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"sum": 5}
        assert client._channel.tools.get("add") is not None  # the call listed the tools to learn its schema


def test_a_listing_that_fails_is_not_made_again_by_every_call(scripted):
    """A tools/list whose connection the server dropped (retried, with backoff, then
    ConnectionClosed) is not made again before every later call_tool, each paying the retries."""
    from http_scripted import DROP

    def handle(seen: Any, msg: Dict[str, Any]) -> Any:
        if msg["method"] == "tools/list":
            return DROP
        return {"content": [{"type": "text", "text": "fine"}]}

    server = scripted(handle)
    with Client(HTTPTransport(server.url), timeout=LONG) as client:
        assert client.call_tool("echo", {}).text == "fine"  # (listed first: it failed, the call went on)
        listed = len(server.requests("tools/list"))
        assert listed >= 1
        for _ in range(3):
            assert client.call_tool("echo", {}).text == "fine"
        assert len(server.requests("tools/list")) == listed


# --- listings shared by callers with different timeouts -------------------------------------------

def test_a_short_timeout_callers_listing_does_not_fail_a_patient_caller(started):
    """Threads calling an unlisted tool share one listing (SingleFlight). When the
    thread that started it had a short timeout, its RequestTimeout was handed to every thread
    waiting on the listing, so a caller with a long timeout failed at the other's deadline."""
    from helpers import ScriptedServer
    from mcpclient import Client, RequestTimeout, SchemaValidationError

    shape = {"name": "shape", "inputSchema": {"type": "object"},
             "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    hold = threading.Event()

    def handle(method, params):
        if method == "tools/list":
            hold.wait(LONG)
            return {"tools": [shape]}
        return {"content": [], "structuredContent": {"n": "x"}}

    srv = started(ScriptedServer(handle))
    outcome: List[BaseException] = []
    with Client(srv.transport, timeout=LONG) as client:
        hasty_done = threading.Event()

        def hasty() -> None:
            try:
                client.call_tool("shape", timeout=0.5)
            except RequestTimeout:
                pass
            finally:
                hasty_done.set()

        first = threading.Thread(target=hasty, name="test-hasty-caller")
        first.start()
        assert srv.wait_for(lambda m: m.get("method") == "tools/list") is not None  # its listing runs

        def patient() -> None:
            try:
                client.call_tool("shape", timeout=LONG)
            except BaseException as exc:  # noqa: B902 - collected for the assertion below
                outcome.append(exc)

        second = threading.Thread(target=patient, name="test-patient-caller")
        second.start()
        assert hasty_done.wait(LONG)
        hold.set()
        first.join(LONG)
        second.join(LONG)
    assert len(outcome) == 1 and isinstance(outcome[0], SchemaValidationError), outcome


def test_a_list_changed_during_the_first_listing_does_not_skip_validation(started):
    """A ``tools/list_changed`` that arrives while a call's own listing runs makes the registry
    drop that listing (it may be stale); the call does not go ahead unvalidated: it lists again
    (bounded) and validates."""
    from helpers import ScriptedServer
    from mcpclient import Client, SchemaValidationError

    shape = {"name": "shape", "inputSchema": {"type": "object"},
             "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    changed = threading.Event()
    listings: List[int] = []
    box: List[Any] = []

    def handle(method, params):
        if method == "tools/list":
            listings.append(1)
            if len(listings) == 1:  # the tools change while this listing is on its way
                box[0].notify("notifications/tools/list_changed")
                changed.wait(LONG)
            return {"tools": [shape]}
        return {"content": [], "structuredContent": {"n": "x"}}

    srv = started(ScriptedServer(handle))
    box.append(srv)
    with Client(srv.transport, timeout=LONG, handlers=Handlers(on_notification=lambda method, params: changed.set())) as client:
        with pytest.raises(SchemaValidationError):
            client.call_tool("shape")
    assert len(listings) == 2
