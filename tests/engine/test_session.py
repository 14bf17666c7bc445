"""The JSON-RPC engine on its own: id routing, timeouts, cancellation, late replies, reader death.

Most tests drive a ``Session`` over a ``MemoryTransport`` whose other end (``peer``) the test
scripts by hand, so each fault happens exactly when the test wants it.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import wait as futures_wait

import pytest

from mcpclient import (
    Client, ClientClosedError, ConnectionClosed, InvalidParams, MemoryTransport, ReaderThreadError,
    RequestTimeout,
)
from mcpclient._engine.chained import ChainedFuture
from mcpclient._engine.deadline import Deadline
from mcpclient._engine.futures import CallFuture
from mcpclient._engine.replies import NextRound
from mcpclient._engine.session import Session
from mcpclient._util.waiting import wait_for
from mcpclient.protocol.rpc_rules import MCPRules
from mcpclient.testing import server_command

from conftest import LONG, SHORT, wait_until


@pytest.fixture
def pair():
    transport, peer = MemoryTransport.pair()
    session = Session(transport, rules=MCPRules(), max_workers=2, max_queued=4)
    session.start()
    yield session, peer
    session.close()
    peer.close()


def reply(peer, request, result):
    peer.send({"jsonrpc": "2.0", "id": request["id"], "result": result})


def test_replies_are_routed_by_id_even_out_of_order(pair):
    session, peer = pair
    futures = [session.call("m", {"n": i}) for i in range(5)]
    requests = [peer.receive(LONG) for _ in range(5)]
    for req in reversed(requests):
        reply(peer, req, {"n": req["params"]["n"]})
    assert [f.result(LONG) for f in futures] == [{"n": i} for i in range(5)]


def test_error_reply_raises_the_typed_rpc_error(pair):
    session, peer = pair
    fut = session.call("tools/call")
    req = peer.receive(LONG)
    peer.send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32602, "message": "bad", "data": {"x": 1}}})
    with pytest.raises(InvalidParams) as info:
        fut.result(LONG)
    assert (info.value.code, info.value.data, info.value.method) == (-32602, {"x": 1}, "tools/call")


def test_timeout_raises_and_cancels_on_the_server(pair):
    session, peer = pair
    with pytest.raises(RequestTimeout) as info:
        session.call("slow/thing", deadline=Deadline(0.1)).result()
    assert isinstance(info.value, TimeoutError)
    request = peer.receive(LONG)
    cancel = peer.receive(LONG)
    assert cancel["method"] == "notifications/cancelled"
    assert cancel["params"]["requestId"] == request["id"]


def test_a_blocking_call_ends_at_its_deadline_and_is_cancelled_on_the_server(pair):
    session, peer = pair
    started = time.monotonic()
    with pytest.raises(RequestTimeout):
        wait_for(session.call, "slow/thing", deadline=Deadline(0.3))
    assert 0.3 <= time.monotonic() - started < 0.3 + 0.5
    request = peer.receive(LONG)
    assert peer.receive(LONG)["params"]["requestId"] == request["id"]


def test_a_blocking_calls_deadline_moved_by_progress_is_the_one_kept(pair):
    session, peer = pair
    answered = []
    caller = threading.Thread(target=lambda: answered.append(
        wait_for(session.call, "slow/thing", deadline=Deadline(0.4, resets=True), on_progress=lambda *_: None)))
    caller.start()
    request = peer.receive(LONG)
    token = request["params"]["_meta"]["progressToken"]
    until = time.monotonic() + 1.0  # past the first deadline, progress every 0.1 s moves it on
    while time.monotonic() < until:
        peer.send({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": token, "progress": 1}})
        time.sleep(0.1)  # (the pace of the progress, not a synchronisation)
    reply(peer, request, {"ok": True})
    caller.join(LONG)
    assert answered == [{"ok": True}]


def test_a_call_its_caller_announced_but_does_not_wait_for_still_ends_at_its_deadline(pair):
    """A blocking method that makes a call but returns another future (a chain's first link):
    nobody waits for the first call, and its deadline still ends it."""
    session, peer = pair
    made = []

    def submit():
        made.append(session.call("slow/thing", deadline=Deadline(0.3)))
        return CallFuture.completed(session, "chain", "done")

    assert wait_for(submit) == "done"
    done, _ = futures_wait(made, timeout=LONG)  # (waits without a result(): nothing enforces it there)
    assert done and isinstance(made[0].exception(), RequestTimeout)


def test_threads_waiting_on_one_call_all_get_its_value_from_one_step_per_round(pair):
    session, peer = pair
    steps = []

    def transform(raw):
        steps.append(raw)
        return NextRound({"page": 2}) if len(steps) == 1 else raw

    future = session.call("paged", transform=transform)
    got = []
    waiters = [threading.Thread(target=lambda: got.append(future.result(LONG))) for _ in range(4)]
    for waiter in waiters:
        waiter.start()
    assert wait_until(lambda: len(future._sleepers) == 4)  # (all four asleep on the call)
    reply(peer, peer.receive(LONG), {"page": 1})
    second = peer.receive(LONG)
    assert second["params"] == {"page": 2}
    reply(peer, second, {"page": 2, "last": True})
    for waiter in waiters:
        waiter.join(LONG)
    assert got == [{"page": 2, "last": True}] * 4
    assert steps == [{"page": 1}, {"page": 2, "last": True}]


@pytest.mark.parametrize("link", ["value", "done future"])
def test_a_chain_whose_link_gives_none_ends_with_it_for_the_thread_waiting(pair, link):
    session, peer = pair
    if link == "value":  # (the first link's value, None, is delivered to the chain)
        first = session.call("first", transform=lambda raw: None)
        chain = ChainedFuture(session, "chain", first, lambda value: value)
    else:  # (its outcome is delivered at once, on the thread running the link)
        first = session.call("first")
        chain = ChainedFuture(session, "chain", first, lambda value: CallFuture.completed(session, "next", None))
    got = []
    waiter = threading.Thread(target=lambda: got.append(chain.result(LONG)))
    waiter.start()
    assert wait_until(lambda: len(chain._sleepers) == 1)  # (asleep on the chain)
    reply(peer, peer.receive(LONG), {})
    waiter.join(LONG)
    assert got == [None]


def slow_round(monkeypatch, request_id):
    """A session whose request ``request_id`` is made only once the deadline timer has fired:
    the timer meets that round before it is pending."""
    expired = threading.Event()
    expire = Session.expire

    def expire_and_tell(self, call):
        expire(self, call)
        expired.set()
    monkeypatch.setattr(Session, "expire", expire_and_tell)

    class SlowRules(MCPRules):
        __slots__ = ()

        def decorate(self, params, rid, call):
            if rid == request_id:
                assert expired.wait(LONG)
            return super().decorate(params, rid, call)

    transport, peer = MemoryTransport.pair()
    session = Session(transport, rules=SlowRules(), max_workers=2, max_queued=4)
    session.start()
    return session, peer


def test_a_deadline_that_passes_before_the_request_is_registered_still_ends_the_call(monkeypatch):
    session, peer = slow_round(monkeypatch, 1)
    try:
        future = session.call("slow/thing", deadline=Deadline(0.05), on_progress=lambda *_: None)
        with pytest.raises(RequestTimeout):
            future.result(LONG)
        request = peer.receive(LONG)
        cancel = peer.receive(LONG)
        assert (cancel["method"], cancel["params"]["requestId"]) == ("notifications/cancelled", request["id"])
    finally:
        session.close()
        peer.close()


def test_a_later_round_whose_deadline_passes_before_it_is_pending_still_ends_the_call(monkeypatch):
    session, peer = slow_round(monkeypatch, 2)
    try:
        future = session.call("pages/thing", deadline=Deadline(0.3), on_progress=lambda *_: None,
                              transform=lambda raw: NextRound({"cursor": "2"}) if raw.get("next") else raw)
        reply(peer, peer.receive(LONG), {"next": True})  # at once: the second round begins in time
        with pytest.raises(RequestTimeout):
            future.result(LONG)
        second = peer.receive(LONG)
        cancel = peer.receive(LONG)
        assert (cancel["method"], cancel["params"]["requestId"]) == ("notifications/cancelled", second["id"])
    finally:
        session.close()
        peer.close()


def test_a_deadline_that_progress_moved_while_the_request_was_sent_is_the_one_kept(pair, monkeypatch):
    session, peer = pair
    deadline = Deadline(0.5, resets=True)
    moved = threading.Event()
    send = MemoryTransport.send

    def send_then_stall(self, message, **options):
        sent = send(self, message, **options)
        if message.get("method") == "slow/thing":  # progress comes late, before the sender goes
            first_at = deadline.at                 # on, and the first deadline passes meanwhile
            token = peer.receive(LONG)["params"]["_meta"]["progressToken"]
            assert wait_until(lambda: time.monotonic() > first_at - 0.2)
            peer.send({"jsonrpc": "2.0", "method": "notifications/progress",
                       "params": {"progressToken": token, "progress": 1}})
            assert wait_until(lambda: deadline.at > first_at)
            moved.set()
            assert wait_until(lambda: time.monotonic() > first_at)
        return sent
    monkeypatch.setattr(MemoryTransport, "send", send_then_stall)
    future = session.call("slow/thing", deadline=deadline, on_progress=lambda *_: None)
    assert moved.is_set()
    request_id = future.request_id
    reply(peer, {"id": request_id}, {"ok": True})
    assert future.result(LONG) == {"ok": True}


def test_late_reply_is_dropped_and_counted_not_delivered_to_the_next_caller(pair):
    session, peer = pair
    with pytest.raises(RequestTimeout):
        session.call("first", deadline=Deadline(0.05)).result()
    first = peer.receive(LONG)
    assert peer.receive(LONG)["method"] == "notifications/cancelled"
    second = session.call("second")
    reply(peer, first, "late answer")
    req2 = peer.receive(LONG)
    reply(peer, req2, "second answer")
    assert second.result(LONG) == "second answer"
    assert wait_until(lambda: session.late_replies == 1)
    assert session.unknown_replies == 0


def test_unknown_reply_id_is_counted(pair):
    session, peer = pair
    fut = session.call("m")
    req = peer.receive(LONG)
    peer.send({"jsonrpc": "2.0", "id": 424242, "result": "nobody asked"})
    reply(peer, req, "mine")
    assert fut.result(LONG) == "mine"
    assert session.unknown_replies == 1


def test_future_cancel_sends_cancelled_and_later_reply_is_ignored(pair):
    session, peer = pair
    fut = session.call("m")
    req = peer.receive(LONG)
    assert fut.cancel()
    with pytest.raises(CancelledError):
        fut.result(LONG)
    cancel = peer.receive(LONG)
    assert cancel["method"] == "notifications/cancelled" and cancel["params"]["requestId"] == req["id"]
    reply(peer, req, "too late")
    assert wait_until(lambda: session.late_replies == 1)
    assert not fut.cancel() or fut.cancelled()  # cancelling again changes nothing


def test_watched_future_times_out_without_a_waiter(pair):
    session, peer = pair
    fut = session.call("m", deadline=Deadline(0.1))
    assert isinstance(fut.exception(LONG), RequestTimeout)


def test_reader_death_fails_every_pending_call_at_once(pair):
    session, peer = pair
    futures = [session.call("m") for _ in range(10)]
    for _ in range(10):
        peer.receive(LONG)
    peer.close()
    errors = [f.exception(LONG) for f in futures]
    assert all(isinstance(e, ConnectionClosed) for e in errors)
    assert len({id(e) for e in errors}) == 10  # a fresh instance per caller
    with pytest.raises(ConnectionClosed):
        session.call("after")


def test_close_fails_pending_calls_and_refuses_new_ones(pair):
    session, peer = pair
    fut = session.call("m")
    session.close()
    assert isinstance(fut.exception(LONG), ClientClosedError)
    with pytest.raises(ClientClosedError):
        session.call("m").result()
    session.close()  # idempotent


def test_server_request_is_answered_on_a_handler_thread(pair):
    session, peer = pair
    threads = []

    def on_request(method, params):
        threads.append(threading.current_thread().name)
        return {"echo": params["v"]}

    session.requests.on_request = on_request
    peer.send({"jsonrpc": "2.0", "id": "s1", "method": "x/y", "params": {"v": 7}})
    assert peer.receive(LONG) == {"jsonrpc": "2.0", "id": "s1", "result": {"echo": 7}}
    assert threads[0].startswith(f"mcpclient-{session.instance}-handler")


def test_a_server_request_the_server_cancelled_is_not_answered(pair):
    session, peer = pair
    started = {1: threading.Event(), 2: threading.Event()}
    release = threading.Event()

    def slow(method, params):
        started[params["n"]].set()
        release.wait(LONG)
        return {"answer": params["n"]}

    session.requests.on_request = slow
    peer.send({"jsonrpc": "2.0", "id": "s1", "method": "x", "params": {"n": 1}})
    assert started[1].wait(LONG)
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s1"}})
    peer.send({"jsonrpc": "2.0", "id": "s2", "method": "x", "params": {"n": 2}})
    assert started[2].wait(LONG)  # the reader handles messages in order: it has seen the cancellation
    release.set()
    assert peer.receive(LONG) == {"jsonrpc": "2.0", "id": "s2", "result": {"answer": 2}}
    assert peer.receive(SHORT) is None  # s1 was never answered


def test_unhandled_server_request_gets_method_not_found(pair):
    session, peer = pair
    peer.send({"jsonrpc": "2.0", "id": 9, "method": "nope"})
    answer = peer.receive(LONG)
    assert answer["id"] == 9 and answer["error"]["code"] == -32601


def test_request_flood_is_refused_not_queued_without_bound(pair):
    session, peer = pair  # 2 workers + 4 queued = 6 admitted at once
    release = threading.Event()
    started = threading.Semaphore(0)

    def blocking(method, params):
        started.release()
        release.wait(LONG)
        return {}

    session.requests.on_request = blocking
    try:
        for i in range(20):
            peer.send({"jsonrpc": "2.0", "id": i, "method": "block"})
        busy = [peer.receive(LONG) for _ in range(14)]
        assert all(m["error"]["code"] == -32603 and "busy" in m["error"]["message"] for m in busy)
    finally:
        release.set()
    done = [peer.receive(LONG) for _ in range(6)]
    assert all(m["result"] == {} for m in done)


def test_close_from_a_handler_thread_does_not_deadlock(pair):
    session, peer = pair
    closed = threading.Event()

    def closing(method, params):
        session.close()
        closed.set()
        return {}

    session.requests.on_request = closing
    pending = session.call("m")
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "close-please"})
    assert closed.wait(LONG)
    assert isinstance(pending.exception(LONG), ClientClosedError)


def test_blocking_call_on_the_reader_thread_raises(pair):
    """The reader runs no user code (done-callbacks run on workers), but what runs there (a quick
    handler for server requests) is refused a blocking call rather than deadlocking the reader."""
    session, peer = pair
    caught = []

    def quick(rid, method, params):
        try:
            session.call("nested", deadline=Deadline(1)).result()
        except ReaderThreadError as exc:
            caught.append(exc)
            raise
        return True

    session.requests.on_request_read = quick
    peer.send({"jsonrpc": "2.0", "id": "s1", "method": "x/y"})
    nested = peer.receive(LONG)  # sent, then not waited for: the reader refuses to block on it
    answer = peer.receive(LONG)
    assert nested["method"] == "nested"
    assert answer["id"] == "s1" and answer["error"]["code"] == -32603
    assert len(caught) == 1 and "reader" in str(caught[0])


def test_done_callbacks_run_on_a_worker_thread_where_blocking_calls_work(pair):
    session, peer = pair
    seen = {}
    done = threading.Event()

    def callback(_):
        seen["thread"] = threading.current_thread().name
        nested = session.call("nested", deadline=Deadline(LONG))
        seen["nested"] = nested.result()
        done.set()

    fut = session.call("m")
    fut.add_done_callback(callback)
    reply(peer, peer.receive(LONG), "ok")
    reply(peer, peer.receive(LONG), "nested ok")
    assert done.wait(LONG)
    assert seen == {"thread": f"mcpclient-{session.instance}-worker-0", "nested": "nested ok"}


def test_batch_of_replies_is_split(pair):
    session, peer = pair
    a, b = session.call("a"), session.call("b")
    ra, rb = peer.receive(LONG), peer.receive(LONG)
    peer.send([{"jsonrpc": "2.0", "id": ra["id"], "result": 1}, {"jsonrpc": "2.0", "id": rb["id"], "result": 2}])
    assert (a.result(LONG), b.result(LONG)) == (1, 2)


def test_notifications_run_in_order_on_one_thread(pair):
    session, peer = pair
    seen = []
    done = threading.Event()

    def on_notification(method, params):
        seen.append((params["i"], threading.current_thread().name))
        if params["i"] == 3:
            done.set()

    session.reader.on_notification = on_notification
    for i in range(4):
        peer.send({"jsonrpc": "2.0", "method": "notifications/x", "params": {"i": i}})
    assert done.wait(LONG)
    assert [i for i, _ in seen] == [0, 1, 2, 3]
    assert len({name for _, name in seen}) == 1


def test_nothing_happens_to_a_call_that_is_not_answered(pair):
    session, peer = pair
    fut = session.call("m")
    with pytest.raises(FutureTimeout):  # the caller's own wait ran out; the call goes on
        fut.result(SHORT)
    assert not fut.done()
    fut.cancel()


@pytest.mark.timeout(120)
def test_32_threads_x_150_calls_over_stdio_each_get_their_own_answer():
    threads_n, calls = 32, 150
    barrier = threading.Barrier(threads_n)
    wrong = []
    counts = [0] * threads_n
    with Client(server_command(), timeout=LONG) as client:
        def worker(k):
            barrier.wait(LONG)
            for i in range(calls):
                text = f"{k}:{i}"
                got = client.call_tool("echo", {"text": text}).text
                if got != text:
                    wrong.append((text, got))
                counts[k] += 1

        workers = [threading.Thread(target=worker, args=(k,)) for k in range(threads_n)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(100)
        assert not any(w.is_alive() for w in workers)
        assert client._session.late_replies == 0 and client._session.unknown_replies == 0
    assert wrong == []
    assert counts == [calls] * threads_n


class _HookedLock:
    """A lock that runs ``after`` once on the reader thread, right after the reader releases it
    (armed by the test): a way to run another thread inside that exact window."""

    def __init__(self, lock, after):
        self._lock, self._after, self.armed = lock, after, False

    def __enter__(self):
        return self._lock.__enter__()

    def __exit__(self, *exc):
        self._lock.__exit__(*exc)
        if self.armed and threading.current_thread().name.endswith("-reader"):
            self.armed = False
            self._after()

    def acquire(self, *args, **kwargs):
        return self._lock.acquire(*args, **kwargs)

    def release(self):
        self._lock.release()


def test_a_reply_is_handled_once_when_a_progress_callback_waits_for_it_meanwhile(pair):
    """The reader parks the reply behind the call's queued progress; a progress callback that
    waits on the future meanwhile gets the reply delivered, and the reader does not deliver it a
    second time (the transform would run twice: a listing would get its pages twice, an input
    round would run a handler twice)."""
    session, peer = pair
    parsed = []
    go, waited = threading.Event(), threading.Event()

    def on_progress(progress, total, message):
        go.wait(LONG)
        future.result(LONG)  # waits on the notification thread: the parked reply is delivered now
        waited.set()

    def in_the_window():
        go.set()
        waited.wait(LONG)

    hooked = session._lock = _HookedLock(session._lock, in_the_window)
    future = session.call("slow", transform=lambda raw: parsed.append(raw) or raw, on_progress=on_progress)
    request = peer.receive(LONG)
    peer.send({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": request["params"]["_meta"]["progressToken"], "progress": 1}})
    assert wait_until(lambda: future.progress_queued)
    hooked.armed = True
    reply(peer, request, {"ok": True})
    assert waited.wait(LONG) and future.result(LONG) == {"ok": True}
    assert go.is_set() and not hooked.armed  # the callback ran inside the reader's window
    ping = session.call("ping", deadline=Deadline(LONG))
    reply(peer, peer.receive(LONG), {})
    assert ping.result(LONG) == {}  # the reader is well past the window
    assert not wait_until(lambda: len(parsed) > 1, SHORT)
    assert parsed == [{"ok": True}]


def test_a_ping_from_the_server_is_answered_at_once_while_every_handler_is_busy(pair):
    session, peer = pair  # 2 workers + 4 queued: all six taken by requests that block
    release = threading.Event()
    session.requests.on_request = lambda method, params: release.wait(LONG) and {}
    try:
        for i in range(6):
            peer.send({"jsonrpc": "2.0", "id": i, "method": "block"})
        peer.send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
        assert peer.receive(LONG) == {"jsonrpc": "2.0", "id": "p", "result": {}}  # not "busy"
    finally:
        release.set()
    assert sorted(peer.receive(LONG)["id"] for _ in range(6)) == list(range(6))


class LanguageServerRules:
    """Another protocol's rules over JSON-RPC (LSP's ``$/progress`` and ``$/cancelRequest``)."""

    def decorate(self, params, request_id, call):
        return dict(params or {}, workDoneToken=request_id)

    def cancel_message(self, request_id, reason):
        return {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request_id}}

    def on_notification(self, method, params, in_flight):
        if method == "$/progress":
            value = params["value"]
            return in_flight.progressed(params["token"], value["percentage"], 100, value.get("message"))
        return None

    def answer_at_once(self, method, params):
        return {"alive": True} if method == "$/alive" else None


def test_the_session_follows_the_rules_it_is_given_and_names_no_method_itself():
    transport, peer = MemoryTransport.pair()
    session = Session(transport, rules=LanguageServerRules())
    session.start()
    try:
        seen = []
        progressed = threading.Event()

        def on_progress(progress, total, message):
            seen.append((progress, total, message))
            progressed.set()

        future = session.call("textDocument/hover", {"x": 1}, on_progress=on_progress, deadline=Deadline(LONG))
        request = peer.receive(LONG)
        assert request["params"] == {"x": 1, "workDoneToken": request["id"]}
        peer.send({"jsonrpc": "2.0", "method": "$/progress",
                   "params": {"token": request["id"], "value": {"percentage": 50, "message": "half"}}})
        assert progressed.wait(LONG) and seen == [(50, 100, "half")]
        assert future.cancel()
        assert peer.receive(LONG) == {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request["id"]}}
        peer.send({"jsonrpc": "2.0", "id": 7, "method": "$/alive"})  # no on_request: only the rules answer it
        assert peer.receive(LONG) == {"jsonrpc": "2.0", "id": 7, "result": {"alive": True}}
        session.call("shutdown")
        assert "params" not in peer.receive(LONG)  # a call that reports no progress is sent as it is
    finally:
        session.close()
        peer.close()


def test_a_blocking_call_whose_later_round_is_left_to_a_waiting_thread_by_a_worker_still_ends():
    """A transport may leave one round's exchange to a waiting thread and send another at once.
    Here round 1 goes at once, its step runs on a worker (another thread's ``result(timeout)``
    ran out, so the announced caller is no longer counted on), and round 2 comes back as an
    exchange: the caller, asleep in the place its call took for it, is woken to run it."""
    import sys

    from mcpclient.transports import memory

    class Exchange:
        def __init__(self, end, message):
            self.end, self.message = end, message

        def run(self):
            memory._End.send(self.end, self.message)
            return None

        def post(self):
            memory._End.send(self.end, self.message)

    class SecondRoundAsAnExchange(memory.MemoryTransport):
        def send(self, message, **kwargs):
            if message.get("method") == "paged" and message["params"].get("page") == 2:
                return Exchange(self, message)
            return memory._End.send(self, message, **kwargs)

    transport, peer = SecondRoundAsAnExchange.pair()
    session = Session(transport, rules=MCPRules(), max_workers=2, max_queued=4)
    session.start()
    returned, timed_out = [], []
    other_left = threading.Event()

    def wait_briefly(future):
        try:
            future.result(SHORT / 4)
        except FutureTimeout:
            timed_out.append(True)

    def submit():
        future = session.call("paged", {"page": 1}, deadline=Deadline(LONG),
                              transform=lambda raw: NextRound({"page": 2}) if raw.get("page") == 1 else raw)
        other = threading.Thread(target=wait_briefly, args=(future,))  # (before the announced wait begins)
        other.start()
        other.join()
        other_left.set()
        return future

    owner = threading.Thread(target=lambda: returned.append(wait_for(submit)), name="test-owner")
    owner.start()
    try:
        first = peer.receive(LONG)
        assert other_left.wait(LONG) and timed_out == [True]
        assert wait_until(lambda: sys._current_frames()[owner.ident].f_code.co_name == "_wait_here")  # asleep
        peer.send({"jsonrpc": "2.0", "id": first["id"], "result": {"page": 1}})
        second = peer.receive(LONG)
        peer.send({"jsonrpc": "2.0", "id": second["id"], "result": {"page": 2, "last": True}})
        owner.join(LONG)
        assert not owner.is_alive() and returned == [{"page": 2, "last": True}]
    finally:
        session.close()
        peer.close()
        owner.join(LONG)

