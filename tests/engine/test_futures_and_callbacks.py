"""The engine's futures and callbacks used the way a demanding program uses them: futures
waited on in odd places (a notification callback, a done-callback), cancelled, refused for what
a blocking call's future cannot do; callbacks that block, call ``sys.exit()`` or wait on other
futures, which must never stall the reader or starve the workers.
"""
from __future__ import annotations

import concurrent.futures
import sys
import threading
from typing import Any, Dict, List

import pytest

from conftest import LONG, faulty
from helpers import ScriptedServer
from reaping import in_thread, reaper  # noqa: F401  (fixtures: reaper)
from mcpclient import Client, ClientClosedError, Handlers, Limits, StdioTransport
from mcpclient.errors import MCPError, ProcessExited
from mcpclient._engine.deadline import Deadline
from mcpclient.testing import server_command


pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def scripted(started):
    """``scripted(...)``: a started ``ScriptedServer``, stopped after the test."""
    return lambda handle, **kwargs: started(ScriptedServer(handle, **kwargs))


def test_a_cancelled_future_counts_as_done_for_wait_and_as_completed(scripted):
    """``Future.cancel()`` alone wakes ``wait()``/``as_completed()``."""
    server = scripted(lambda method, params: None)  # never answers tools/call
    with Client(server.transport, timeout=LONG) as client:
        future = client.call_tool_future("t")
        waiter = concurrent.futures.ThreadPoolExecutor(1)
        try:
            waited = waiter.submit(concurrent.futures.wait, [future], LONG)
            completed = waiter.submit(lambda: next(concurrent.futures.as_completed([future], LONG)))
            assert future.cancel() and future.cancel()  # a second cancel changes nothing
            done, not_done = waited.result(LONG)
            assert done == {future} and not not_done
            assert completed.result(LONG) is future
        finally:
            waiter.shutdown()


def test_every_calls_future_answers_done_callbacks_and_exception_as_a_future_does(scripted):
    """The one future a request makes (what a blocking method waits on) is a whole
    ``concurrent.futures.Future``: ``done()``, done-callbacks, ``exception()`` and ``result()``."""
    server = scripted(lambda method, params: {"content": []})
    with Client(server.transport, timeout=LONG) as client:
        call = client._session.call("tools/call", {"name": "t"}, deadline=Deadline(LONG))
        seen: List[Any] = []
        called = threading.Event()
        call.add_done_callback(lambda done: (seen.append(done.result()), called.set()))
        assert call.result() == {"content": []}
        assert call.done() and call.exception() is None and not call.cancel()
        assert called.wait(LONG) and seen == [{"content": []}]


def test_waiting_on_a_future_from_a_notification_callback_does_not_deadlock():
    """The future's answer is not queued behind its progress callbacks, behind the very callback
    that waits for it."""
    box: Dict[str, Any] = {}
    waited = threading.Event()

    def on_log(level: str, logger: Any, data: Any) -> None:
        future = box.get("future")
        if future is not None and not waited.is_set():
            box["text"] = future.result(timeout=LONG / 2).text  # (well before the call's own timeout)
            waited.set()

    with Client(server_command(), timeout=6 * LONG, handlers=Handlers(on_log=on_log)) as client:
        client.set_logging_level("debug")
        box["future"] = client.call_tool_future("slow", {"steps": 3, "delay": 0.05}, on_progress=lambda *a: None)
        client.call_tool("log", {"level": "info", "message": "hi"})  # on_log runs on the notification thread
        assert waited.wait(LONG) and box["text"].startswith("done after 3 steps")


def test_done_callbacks_waiting_on_futures_never_starve_the_workers():
    """With every worker waiting in a done-callback for another future, that future is still
    finished."""
    results: List[str] = []
    done = threading.Event()
    with Client(server_command(), timeout=LONG, limits=Limits(workers=2)) as client:
        # each trigger's done-callback waits for a slower call: both workers wait before any of
        # those is answered, and its answer needs a worker
        others = [client.call_tool_future("slow", {"steps": 1, "delay": 0.3}) for i in range(4)]

        def wait_for_another(i: int) -> Any:
            def callback(_: Any) -> None:
                results.append(others[i].result(timeout=LONG / 2).text)
                if len(results) == 4:
                    done.set()
            return callback

        for i in range(4):
            client.call_tool_future("echo", {"text": f"trigger {i}"}).add_done_callback(wait_for_another(i))
        assert done.wait(LONG), results
        assert results == ["done after 1 steps"] * 4


def test_a_callback_that_calls_sys_exit_does_not_stop_later_callbacks(scripted):
    """``SystemExit`` from a callback does not end the notification thread: later callbacks run."""
    seen: List[int] = []
    second = threading.Event()

    def on_notification(method: str, params: Dict[str, Any]) -> None:
        seen.append(params["n"])
        if params["n"] == 1:
            sys.exit("the callback gives up")
        second.set()

    server = scripted(lambda method, params: None)
    with Client(server.transport, timeout=LONG, handlers=Handlers(on_notification=on_notification)):
        server.notify("notifications/x", {"n": 1})
        server.notify("notifications/x", {"n": 2})
        assert second.wait(LONG), seen
        assert seen == [1, 2]


# ---------------------------------------------------------------- Future.result() in a done-callback


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(20)
@pytest.mark.parametrize("wait", ["result", "exception"])
def test_waiting_on_another_future_in_a_done_callback_does_not_stall_the_connection(reaper, wait):
    """A done-callback that waits for another future runs on a worker thread, never the reader:
    the connection keeps answering other calls meanwhile, and the wait ends with the answer."""
    client = reaper.client(Client(faulty("late-reply"), timeout=LONG).connect())
    caught: Dict[str, Any] = {}
    called = threading.Event()
    slow = client.call_tool_future("echo", {"text": "slow", "delay": 1.5})  # answered after the ping below

    def on_done(_: Any) -> None:
        caught["thread"] = threading.current_thread().name
        try:
            caught["value"] = getattr(slow, wait)()  # not done yet: waits, on a worker thread
        except BaseException as exc:  # noqa: BLE001 - asserted below
            caught["error"] = exc
        called.set()

    trigger = client.call_tool_future("echo", {"text": "trigger", "delay": 0.3})
    trigger.add_done_callback(on_done)
    assert trigger.result(timeout=LONG).text == "trigger"
    try:
        client.ping(timeout=2)  # while the callback is still waiting for `slow`
    except MCPError as exc:
        pytest.fail(f"an unrelated ping failed while a done-callback waited: {exc!r}")
    assert not called.is_set() and not slow.done()
    assert called.wait(LONG), caught
    assert "-worker-" in caught["thread"] and "error" not in caught, caught
    assert (caught["value"].text == "slow") if wait == "result" else (caught["value"] is None)


# ---------------------------------------------------------------- thread-id reuse after the reader died


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(20)
def test_calls_on_a_dead_connection_from_fresh_threads_raise_process_exited(reaper):
    client = reaper.client(Client(StdioTransport(faulty("exit-on-call"), stderr=None), timeout=LONG).connect())
    readers = [t for t in client._session.threads() if t.name.endswith("-reader")]
    assert readers
    with pytest.raises(ProcessExited):
        client.call_tool("echo", {"text": "x"})
    for t in readers:
        t.join(LONG)
        assert not t.is_alive()
    kinds: List[BaseException] = []
    for i in range(50):  # new threads often get the dead reader's thread id
        outcome = in_thread(reaper, lambda: client.ping(timeout=LONG), f"test-probe-{i}")
        assert outcome.done.wait(LONG), outcome
        kinds.append(outcome.error)
    wrong = {repr(e) for e in kinds if not isinstance(e, (ProcessExited, ClientClosedError))}
    assert not wrong, f"ping() on a dead client raised {wrong}"


@pytest.fixture
def delivered(monkeypatch):
    """An event set each time a round's outcome reaches its call (``CallFuture.deliver``)."""
    from mcpclient._engine.futures import CallFuture

    event = threading.Event()
    deliver = CallFuture.deliver

    def deliver_and_tell(self: Any, *args: Any) -> None:
        deliver(self, *args)
        event.set()

    monkeypatch.setattr(CallFuture, "deliver", deliver_and_tell)
    return event


def test_an_answer_that_beats_its_blocking_caller_to_result_is_parsed_on_the_callers_thread(delivered):
    """``wait_for`` announces the caller: an answer read before the caller reaches ``result()``
    waits for it there, rather than being passed to a worker thread first."""
    from mcpclient._util.waiting import wait_for

    with Client(server_command(), timeout=LONG) as client:
        session = client._session
        parsed_on: List[str] = []

        def parse(raw: Any) -> Any:
            parsed_on.append(threading.current_thread().name)
            return raw

        def submit() -> Any:
            delivered.clear()
            future = session.call("ping", deadline=Deadline(LONG), transform=parse)
            assert delivered.wait(LONG)  # the answer is in before anyone waits for it
            return future

        for _ in range(3):
            assert wait_for(submit) == {}
        assert parsed_on == [threading.current_thread().name] * 3


def test_a_call_announced_but_not_waited_for_still_completes(delivered):
    """A call made while a blocking method made its future, that is not the future it waits
    for, is not left waiting for a caller that never comes."""
    from mcpclient._util.waiting import wait_for

    with Client(server_command(), timeout=LONG) as client:
        session = client._session
        first: List[Any] = []

        def submit() -> Any:
            delivered.clear()
            first.append(session.call("ping", deadline=Deadline(LONG), transform=lambda raw: "first"))
            assert delivered.wait(LONG)
            return session.call("ping", deadline=Deadline(LONG), transform=lambda raw: "second")

        assert wait_for(submit) == "second"
        done, _ = concurrent.futures.wait(first, LONG)  # (a wait that runs no step itself)
        assert done == {first[0]} and first[0].result() == "first"


def test_an_announced_call_its_caller_never_waits_for_still_times_out(scripted):
    """Its caller would have enforced its deadline; once the caller is gone the timer does."""
    from mcpclient._util.waiting import wait_for
    from mcpclient.errors import RequestTimeout

    server = scripted(lambda method, params: None)  # never answers tools/call
    with Client(server.transport, timeout=LONG) as client:
        made: List[Any] = []

        def submit() -> Any:
            made.append(client._session.call("tools/call", {"name": "t"}, deadline=Deadline(0.5)))
            raise ValueError("no future for the caller")

        with pytest.raises(ValueError):
            wait_for(submit)
        done, _ = concurrent.futures.wait(made, LONG)
        assert done == {made[0]} and isinstance(made[0].exception(), RequestTimeout)


def test_an_announced_call_left_by_an_inner_wait_of_its_own_still_times_out(scripted):
    from mcpclient._util.waiting import wait_for
    from mcpclient.errors import RequestTimeout

    server = scripted(lambda method, params: None)  # never answers tools/call
    with Client(server.transport, timeout=LONG) as client:
        made: List[Any] = []

        def submit() -> Any:
            made.append(client._session.call("tools/call", {"name": "t"}, deadline=Deadline(0.5)))
            with pytest.raises(concurrent.futures.TimeoutError):
                made[0].result(timeout=0.1)  # a wait of its own that gives up
            raise ValueError("no future for the caller")

        with pytest.raises(ValueError):
            wait_for(submit)
        done, _ = concurrent.futures.wait(made, LONG)
        assert done == {made[0]} and isinstance(made[0].exception(), RequestTimeout)


def test_a_parked_answer_handed_on_keeps_the_calls_deadline_for_its_next_round(scripted, delivered):
    """The caller made another future after all: the parked answer goes to a worker, whose next
    round (an input round, a second page) still ends at the call's one deadline."""
    from mcpclient._engine.futures import CallFuture
    from mcpclient._engine.replies import NextRound
    from mcpclient._util.waiting import wait_for
    from mcpclient.errors import RequestTimeout

    seen: List[str] = []

    def handle(method: str, params: Any) -> Any:
        seen.append(method)
        return {"content": []} if len(seen) == 1 else None  # round 2 is never answered

    def transform(raw: Any) -> Any:
        return NextRound({"name": "t"}) if len(seen) == 1 else raw

    server = scripted(handle)
    with Client(server.transport, timeout=LONG) as client:
        session = client._session
        made: List[Any] = []

        def submit() -> Any:
            delivered.clear()
            made.append(session.call("tools/call", {"name": "t"}, deadline=Deadline(0.5), transform=transform))
            assert delivered.wait(LONG)  # answered before the caller waits: parked for it
            return CallFuture.completed(session, "other", None)

        wait_for(submit)
        done, _ = concurrent.futures.wait(made, LONG)
        assert done == {made[0]} and isinstance(made[0].exception(), RequestTimeout)
        assert seen == ["tools/call", "tools/call"]
