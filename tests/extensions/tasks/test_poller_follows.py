"""The poller answers a task's input requests under the follow that asked for them: a follow
given up while its handler ran sends nothing, fails nothing of a later follow, and leaves the
keys for that follow to ask again.

A context stands in for the client here: which follow a handler's answer belongs to is an
interleaving of the client's own threads (a wait given up, another begun, while the handler runs)
that no server can be made to produce on demand; the server side of it is in
``test_tasks_extension_stdio.py`` (Ctrl-C in a blocking call)."""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Callable, Dict, List

from mcpclient.extensions.tasks.extension import TasksExtension
from mcpclient.extensions.tasks.poller import _Poller
from mcpclient.types import Task

from conftest import LONG

WORKING = {"taskId": "t1", "status": "working"}
ASKING = {"taskId": "t1", "status": "input_required",
          "inputRequests": {"q1": {"method": "elicitation/create", "params": {"message": "n?"}}}}


class Context:
    """What the poller sends through: records each request (none is answered: the test drives
    the states), and runs ``handler`` as the client's input handler."""

    stateless = False

    def __init__(self, handler: Callable[[], Any]) -> None:
        self.sent: List[str] = []
        self.handler = handler

    def request_future(self, method: str, params: Dict[str, Any], timeout: Any = None) -> "Future[Any]":
        self.sent.append(method)
        return Future()

    def answer(self, method: str, params: Dict[str, Any]) -> Any:
        return self.handler()


class Poller(_Poller):
    """The poller, telling when each round of input answering is over (``answered``)."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(TasksExtension(default_poll_interval=30.0), ctx)
        self.answered = threading.Semaphore(0)

    def _answer(self, *args: Any) -> None:
        try:
            super()._answer(*args)
        finally:
            self.answered.release()


def first_answer_blocks(then: Callable[[], Any]) -> "tuple[Callable[[], Any], threading.Event, threading.Event, List[str]]":
    """A handler whose first run waits for ``go_on`` and then does ``then()``; later runs accept."""
    running, go_on, calls = threading.Event(), threading.Event(), []

    def handler() -> Any:
        calls.append("asked")
        if len(calls) == 1:
            running.set()
            go_on.wait(LONG)
            return then()
        return {"action": "accept", "content": {"n": len(calls)}}

    return handler, running, go_on, calls


def give_up_and_follow_again(poller: Poller, running: threading.Event, go_on: threading.Event) -> "Future[Any]":
    """Follow t1, let it ask for input, give the follow up while the handler runs (a handle's
    wait that timed out: the task goes on), follow it again, then let the handler finish."""
    first = poller.wait(Task.from_wire(WORKING))
    poller.update(Task.from_wire(ASKING))
    assert running.wait(LONG)
    first.let_go()
    second = poller.wait(Task.from_wire(WORKING))
    go_on.set()
    assert poller.answered.acquire(timeout=LONG)
    return second


def test_a_handler_that_fails_after_its_follow_was_given_up_leaves_the_next_follow_waiting_and_asking():
    def fail() -> Any:
        raise RuntimeError("the person closed the dialog")

    handler, running, go_on, calls = first_answer_blocks(fail)
    ctx = Context(handler)
    poller = Poller(ctx)
    try:
        second = give_up_and_follow_again(poller, running, go_on)
        assert not second.done() and "tasks/cancel" not in ctx.sent  # the failure was the old follow's
        poller.update(Task.from_wire(ASKING))  # the next state still asks: the new follow asks again
        assert poller.answered.acquire(timeout=LONG)
        assert calls == ["asked", "asked"] and ctx.sent.count("tasks/update") == 1 and not second.done()
    finally:
        poller.close()


def test_an_answer_for_a_follow_given_up_is_not_sent_and_the_next_follow_asks_again():
    handler, running, go_on, calls = first_answer_blocks(lambda: {"action": "accept", "content": {"n": 0}})
    ctx = Context(handler)
    poller = Poller(ctx)
    try:
        give_up_and_follow_again(poller, running, go_on)
        assert "tasks/update" not in ctx.sent  # the old follow's answer
        poller.update(Task.from_wire(ASKING))
        assert poller.answered.acquire(timeout=LONG)
        assert calls == ["asked", "asked"] and ctx.sent.count("tasks/update") == 1
    finally:
        poller.close()
