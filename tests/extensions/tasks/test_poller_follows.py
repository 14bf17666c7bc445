"""The poller answers a task's input requests under the follow that asked for them: a follow
given up while its handler ran sends nothing, fails nothing of a later follow, and leaves the
keys for that follow to ask again.

A context stands in for the client here: which follow a handler's answer belongs to is an
interleaving of the client's own threads (a wait given up, another begun, while the handler runs)
that no server can be made to produce on demand; the server side of it is in
``test_tasks_extension_stdio.py`` (Ctrl-C in a blocking call)."""
from __future__ import annotations

import logging
import threading
from concurrent.futures import Future
from typing import Any, Dict, List

from mcpclient.extensions.tasks.extension import TasksExtension
from mcpclient.extensions.tasks.poller import _Poller
from mcpclient.types import Task

from conftest import LONG

ASKING = {"taskId": "t1", "status": "input_required",
          "inputRequests": {"q1": {"method": "elicitation/create", "params": {"message": "n?"}}}}


class Context:
    """What the poller sends through: records each request (none is answered: the test drives
    the states), and runs ``handler`` as the client's input handler."""

    stateless = False

    def __init__(self, handler: Any) -> None:
        self.sent: List[str] = []
        self.handler = handler
        self.updated = threading.Event()  # a tasks/update went out

    def request_future(self, method: str, params: Dict[str, Any], timeout: Any = None) -> "Future[Any]":
        self.sent.append(method)
        if method == "tasks/update":
            self.updated.set()
        return Future()

    def answer(self, method: str, params: Dict[str, Any]) -> Any:
        return self.handler()


class Dropped(logging.Handler):
    """Sets ``done`` when the poller logs that it dropped what a follow given up had asked for."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.done = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "given up meanwhile" in record.getMessage():
            self.done.set()


def test_a_handler_that_fails_after_its_follow_was_given_up_leaves_the_next_follow_waiting_and_asking():
    running, go_on = threading.Event(), threading.Event()
    dropped, logger = Dropped(), logging.getLogger("mcpclient")
    logger.addHandler(dropped)
    level, logger.level = logger.level, logging.DEBUG
    calls: List[str] = []

    asked_again = threading.Event()

    def handler() -> Any:
        calls.append("asked")
        if len(calls) == 1:
            running.set()
            go_on.wait(LONG)
            raise RuntimeError("the person closed the dialog")
        asked_again.set()
        return {"action": "accept", "content": {"n": 1}}

    ctx = Context(handler)
    poller = _Poller(TasksExtension(default_poll_interval=30.0), ctx)
    try:
        first = poller.wait(Task.from_wire({"taskId": "t1", "status": "working"}))
        poller.update(Task.from_wire(ASKING))
        assert running.wait(LONG)
        first.let_go()  # given up (a handle's wait timed out): the task goes on, unanswered
        second = poller.wait(Task.from_wire({"taskId": "t1", "status": "working"}))
        go_on.set()
        assert dropped.done.wait(LONG)  # the failure was the given-up follow's: dropped
        poller.update(Task.from_wire(ASKING))  # the next state still asks: the new follow answers it
        assert asked_again.wait(LONG) and ctx.updated.wait(LONG) and second.done() is False
        poller.close()
        assert calls == ["asked", "asked"]
        assert ctx.sent.count("tasks/update") == 1 and "tasks/cancel" not in ctx.sent
    finally:
        poller.close()
        logger.removeHandler(dropped)
        logger.setLevel(level)


def test_an_answer_for_a_follow_given_up_is_not_sent_and_the_next_follow_asks_again():
    running, go_on = threading.Event(), threading.Event()
    dropped, logger = Dropped(), logging.getLogger("mcpclient")
    logger.addHandler(dropped)
    level, logger.level = logger.level, logging.DEBUG
    calls: List[str] = []

    def handler() -> Any:
        calls.append("asked")
        if len(calls) == 1:
            running.set()
            go_on.wait(LONG)
        return {"action": "accept", "content": {"n": len(calls)}}

    ctx = Context(handler)
    poller = _Poller(TasksExtension(default_poll_interval=30.0), ctx)
    try:
        first = poller.wait(Task.from_wire({"taskId": "t1", "status": "working"}))
        poller.update(Task.from_wire(ASKING))
        assert running.wait(LONG)
        first.let_go()
        poller.wait(Task.from_wire({"taskId": "t1", "status": "working"}))
        go_on.set()
        assert dropped.done.wait(LONG)
        assert "tasks/update" not in ctx.sent  # the first follow's answer
        poller.update(Task.from_wire(ASKING))
        assert ctx.updated.wait(LONG) and calls == ["asked", "asked"]  # the new follow asked afresh
    finally:
        poller.close()
        logger.removeHandler(dropped)
        logger.setLevel(level)
