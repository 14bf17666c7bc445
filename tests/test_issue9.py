"""Regressions of issue 9 (one engine, one thin Client): bugs that came from two request engines.

Each test failed on the code before the redesign (commit c6bbb0a) and passes after it; the
docstring of each says how it failed there. The HTTP ones (bugs 3, 4's DELETE, 6's OAuth lock)
live with the HTTP and auth tests; bug 8 (exports, twins) in test_api_surface.py.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, List

import pytest

from conftest import LONG, OFFICIAL_SERVER, SHORT, faulty
from helpers import ScriptedServer, StderrLines
from mcpclient import Client, ClientClosedError, StdioTransport
from mcpclient.errors import RequestTimeout

pytestmark = pytest.mark.timeout(60)

LOG_LEVEL = "io.modelcontextprotocol/logLevel"


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedServer(handle, **kwargs))


# --- bug 1: set_logging_level_future took the other engine's path --------------------------------


def test_set_logging_level_future_in_the_2026_era_sends_no_request_and_sets_the_level(scripted):
    """Before: the future twin sent ``logging/setLevel`` (removed in 2026) while the blocking method
    changed ``_meta``; against a server without that method it never completed."""
    # (tools/list answered: a first call lists the tools to learn their outputSchema, issue 12)
    server = scripted(lambda method, params: {"content": []} if method == "tools/call" else
                      {"tools": []} if method == "tools/list" else None,
                      capabilities={"tools": {}, "logging": {}}, modern=True)
    with Client(server.transport, timeout=LONG) as client:
        assert client.protocol_version == "2026-07-28"
        assert client.set_logging_level_future("warning").result(timeout=5) is None
        client.call_tool("anything")
        call = server.wait_for(lambda m: m.get("method") == "tools/call")
        assert call["params"]["_meta"][LOG_LEVEL] == "warning"
        client.set_logging_level("error")  # the blocking twin does the same
        client.call_tool("anything")
        calls = [m for m in server.received if m.get("method") == "tools/call"]
        assert calls[-1]["params"]["_meta"][LOG_LEVEL] == "error"
        assert [m for m in server.received if m.get("method") == "logging/setLevel"] == []


def test_set_logging_level_future_works_against_the_official_2026_server():
    """Before: ``CapabilityError`` against the official SDK's 2026 server."""
    pytest.importorskip("mcp", reason="the official `mcp` SDK needs Python 3.10+")
    with Client(OFFICIAL_SERVER, timeout=LONG) as client:
        assert client.protocol_version == "2026-07-28"
        assert client.set_logging_level_future("warning").result(timeout=LONG) is None
        assert client.call_tool("echo", {"text": "x"}).text == "x"


def test_call_tool_future_has_a_request_id_in_both_eras(scripted):
    """Before: a ``_RoundsFuture`` without ``request_id`` in the 2026 era, a ``CallFuture`` with one
    in the handshake era."""
    for modern in (False, True):
        server = scripted(lambda method, params: {"content": []}, modern=modern)
        with Client(server.transport, timeout=LONG) as client:
            future = client.call_tool_future("t")
            future.result(timeout=LONG)
            sent = server.wait_for(lambda m: m.get("method") == "tools/call")
            assert future.request_id == sent["id"]


# --- bug 2: an input round landing while close() runs ---------------------------------------------


def test_an_input_round_racing_close_leaves_no_worker_and_runs_no_handler_after_close():
    """Before: ``close()`` cleared the inputs lane before closing the session; an ``input_required``
    reply landing in that window made a new lane whose worker ran the user's handler after close
    and was never stopped (a leaked thread). The window is a few bytecodes wide: a sweep of start
    offsets over 300 tries aims at it. (With a 1 us GIL switch interval it was hit 14 times in 300
    before the redesign, but CPython 3.11 itself segfaults at 1 us and at 10 us intervals, in
    ``Client(...)`` construction, about once in 50 runs on a loaded machine: the test keeps the
    interpreter's own interval.)"""
    reply = {"resultType": "input_required", "inputRequests": {"q": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "?", "requestedSchema": {"type": "object", "properties": {}}}}}}
    late: List[int] = []
    prefixes: List[str] = []
    for attempt in range(300):
        server = ScriptedServer(lambda method, params: None, capabilities={"tools": {}}, modern=True)
        closed = threading.Event()
        try:
            client = Client(server.transport, timeout=LONG, elicitation_handler=lambda request, n=attempt, done=closed: (
                late.append(n) if done.is_set() else None) or {"action": "cancel"})
            client.connect()
            prefixes.append(f"mcpclient-{client.session.instance}-")
            client.call_tool_future("ask")
            call = server.wait_for(lambda m: m.get("method") == "tools/call")
            server.peer.send({"jsonrpc": "2.0", "id": call["id"], "result": reply})
            spin_until = time.perf_counter() + (attempt % 40) * 10e-6  # 0-400 µs: sweep the window
            while time.perf_counter() < spin_until:
                pass
            client.close()
            closed.set()
        finally:
            server.stop()
    threading.Event().wait(SHORT)  # what must not happen: a handler or a new thread after close()
    leaked = [t.name for t in threading.enumerate() if t.name.startswith(tuple(prefixes))]
    assert leaked == [] and late == [], f"threads left after close(): {leaked}; handlers run after close(): {late}"


# --- bug 4: a relaunch held the state lock across joins and a spawn ---------------------------------


def test_close_during_a_relaunch_neither_waits_for_it_nor_lets_it_start_a_server():
    """Before: the relaunch after a failed probe closed the old session (a whole SIGTERM ladder
    here: the old server ignores SIGTERM) and spawned the new server while holding the client's
    state lock, so a concurrent ``close()`` waited for all of it."""
    grace = 1.0
    lines = StderrLines()
    client = Client(StdioTransport(faulty("stubborn-discover"), stderr=lines, terminate_grace=grace),
                    timeout=LONG, probe_timeout=LONG)
    outcome: Dict[str, Any] = {}

    def connect() -> None:
        try:
            client.connect()
        except BaseException as exc:  # noqa: BLE001 - asserted below
            outcome["error"] = exc

    connecting = threading.Thread(target=connect)
    connecting.start()
    assert lines.wait_for("sigterm", timeout=LONG)  # the old server's shutdown ladder is under way
    started = time.monotonic()
    client.close()
    elapsed = time.monotonic() - started
    connecting.join(LONG)
    assert not connecting.is_alive()
    assert isinstance(outcome.get("error"), ClientClosedError), outcome
    assert elapsed < grace / 2, f"close() took {elapsed:.2f} s: it waited for the relaunch"
    assert len([line for line in lines.lines if line.startswith("started=")]) == 1, lines.lines


# --- bug 5: a listing racing a tools/list_changed put old schemas back -------------------------------


def test_a_listing_that_raced_a_tools_change_does_not_put_the_old_schema_back(scripted):
    """Before: ``tools/list_changed`` replaced the schema table on the notification thread while
    the listing wrote into it from the caller's: the old ``outputSchema`` came back and a result
    valid for the new tool failed validation."""
    old_schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    answer_listing = threading.Event()
    listing_sent = threading.Event()

    new_schema = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    listings: List[int] = []

    def handle(method: str, params: Dict[str, Any]) -> Any:
        if method == "tools/list":
            listings.append(1)
            if len(listings) > 1:  # listed again after the change (issue 12: the call lists the unknown tool)
                return {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": new_schema}]}
            listing_sent.set()
            assert answer_listing.wait(LONG)
            return {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": old_schema}]}
        return {"content": [], "structuredContent": {"s": "the new tool's output"}}

    server = scripted(handle, capabilities={"tools": {"listChanged": True}})
    changed = threading.Event()
    with Client(server.transport, timeout=LONG,
                on_notification=lambda method, params: changed.set()) as client:
        listing = client.list_tools_future()
        assert listing_sent.wait(LONG)
        server.notify("notifications/tools/list_changed")  # the tool changed while it was being listed
        assert changed.wait(LONG)  # routed (and the table forgotten) before the listing's answer
        answer_listing.set()
        assert [t.name for t in listing.result(LONG)] == ["t"]
        result = client.call_tool("t")  # not validated against the schema the change made stale
        assert result.structured_content == {"s": "the new tool's output"}
    assert len(listings) == 2  # the stale listing was not kept: the call listed the new tool


# --- bug 6: a subscription change held a lock across the listen's acknowledgement -------------------


def test_a_subscription_change_behind_another_keeps_its_own_timeout(scripted):
    """Before: ``_resubscribe`` held a lock while it waited (up to its timeout) for the server to
    acknowledge the new listen, so a second ``subscribe_resource(timeout=0.3)`` waited behind it
    for the first one's whole timeout (here ``LONG``) before its own clock even started."""
    server = scripted(lambda method, params: None, capabilities={"resources": {"subscribe": True}}, modern=True)
    outcome: List[Any] = []

    def first() -> None:
        try:
            client.subscribe_resource("test://a", timeout=LONG)  # never acknowledged
        except Exception as exc:  # noqa: BLE001 - the close() below ends it
            outcome.append(exc)

    with Client(server.transport, timeout=LONG) as client:
        waiter = threading.Thread(target=first, name="test-first-subscriber")
        waiter.start()
        try:
            assert server.wait_for(lambda m: m.get("method") == "subscriptions/listen")
            started = time.monotonic()
            with pytest.raises(RequestTimeout):
                client.subscribe_resource("test://b", timeout=0.3)
            assert time.monotonic() - started < LONG / 2
        finally:
            client.close()
            waiter.join(LONG)
    assert not waiter.is_alive() and isinstance(outcome[0], ClientClosedError)


# --- bug 7: future transforms ran on the reader thread -----------------------------------------------


def test_a_futures_validation_runs_off_the_reader_and_never_stalls_other_calls(scripted, monkeypatch):
    """Before: a future's transform (output validation, the first ``import jsonschema``, the
    cache's deep copy) ran on the reader thread: while it ran, no other call on the connection
    could be answered."""
    import mcpclient.protocol.params as params_module

    schema = {"type": "object"}
    held, release = threading.Event(), threading.Event()
    where: List[str] = []
    real = params_module.validate_structured

    def slow_validation(value: Any, schema: Any, tool: Any = None) -> None:
        where.append(threading.current_thread().name)
        held.set()
        release.wait(LONG)
        real(value, schema, tool)

    monkeypatch.setattr(params_module, "validate_structured", slow_validation)
    server = scripted(lambda method, params: {"tools": [{"name": "t", "inputSchema": {}, "outputSchema": schema}]}
                      if method == "tools/list" else {"content": [], "structuredContent": {}})
    with Client(server.transport, timeout=LONG) as client:
        client.list_tools()
        future = client.call_tool_future("t")
        try:
            assert held.wait(LONG)
            client.ping(timeout=5)  # answered while the validation is still running
        except RequestTimeout:
            pytest.fail("a ping could not be answered while a future's result was being validated")
        finally:
            release.set()
        assert future.result(LONG).structured_content == {}
        assert len(where) == 1 and "-worker-" in where[0], where
