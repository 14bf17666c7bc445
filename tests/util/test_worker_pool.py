"""The worker pool behind the session's lanes: ``flush`` waits for everything queued so far,
however the work was queued, and a worker that waits for work of its own lane gets a helper."""
from __future__ import annotations

import threading
import time

from conftest import LONG
from mcpclient._util.threads import WorkerPool


def test_flush_waits_for_work_queued_while_the_worker_was_busy() -> None:
    pool = WorkerPool("test-lane", 1, 8)
    first_release, second_started, second_release = threading.Event(), threading.Event(), threading.Event()
    try:
        assert pool.try_submit("first", first_release.wait, LONG)
        assert pool.try_submit("second", lambda: (second_started.set(), second_release.wait(LONG)))
        first_release.set()  # the worker finishes the first job and goes straight on to the second
        assert second_started.wait(LONG)
        assert not pool.flush(time.monotonic() + 0.2)  # the second job is still running
        second_release.set()
        assert pool.flush(time.monotonic() + LONG)
    finally:
        first_release.set()
        second_release.set()
        pool.shutdown(time.monotonic() + LONG)
    assert not any(t.is_alive() for t in pool.threads())


def test_a_worker_waiting_for_work_of_its_own_lane_gets_a_helper() -> None:
    pool = WorkerPool("test-lane", 1, 8)
    gate, inner_ran, outer_done = threading.Event(), threading.Event(), threading.Event()

    def outer() -> None:
        with pool.waiting():
            if inner_ran.wait(LONG):
                outer_done.set()
    try:
        assert pool.try_submit("gate", gate.wait, LONG)
        assert pool.try_submit("outer", outer)  # queued behind the gate: nobody is free for it
        assert pool.try_submit("inner", inner_ran.set)  # queued behind outer, which waits for it
        gate.set()
        assert outer_done.wait(LONG)
        assert pool.flush(time.monotonic() + LONG)
    finally:
        gate.set()
        inner_ran.set()
        pool.shutdown(time.monotonic() + LONG)
    assert not any(t.is_alive() for t in pool.threads())
