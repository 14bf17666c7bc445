"""The deadline timer: every watched deadline fires on time, whatever order deadlines are
watched in and however many threads watch at once; finished calls it watched are forgotten."""
from __future__ import annotations

import random
import threading
import time
from typing import List, Optional

import pytest

from mcpclient._engine.timer import DeadlineTimer

pytestmark = pytest.mark.timeout(30)


class Watched:
    """A ``Timed``: expires at ``at``; ``fired`` holds when the timer expired it."""

    def __init__(self, at: float) -> None:
        self.at = at
        self.fired: Optional[float] = None
        self.event = threading.Event()
        self.finished = False

    def due(self) -> float:
        return self.at

    def done(self) -> bool:
        return self.finished or self.event.is_set()


def expire(call: Watched) -> None:
    call.fired = time.monotonic()
    call.event.set()


@pytest.fixture
def timer():
    made = DeadlineTimer("test-timer", expire, set())
    yield made
    made.stop()
    if made.thread is not None:
        made.thread.join(5)
        assert not made.thread.is_alive()


def test_a_deadline_earlier_than_the_one_the_timer_sleeps_until_fires_at_its_own_time(timer):
    far = Watched(time.monotonic() + 3600)
    timer.watch(far)
    near = Watched(time.monotonic() + 0.2)
    timer.watch(near)
    assert near.event.wait(5), "the earlier deadline never fired"
    assert near.fired is not None and near.fired >= near.at
    assert near.fired - near.at < 1.0
    assert far.fired is None


def test_deadlines_watched_from_many_threads_at_once_all_fire_on_time(timer):
    now = time.monotonic()
    rng = random.Random(7)
    batches: List[List[Watched]] = [[Watched(now + rng.uniform(0.05, 0.6)) for _ in range(300)] for _ in range(8)]
    go = threading.Barrier(len(batches))

    def watch_all(batch: List[Watched]) -> None:
        go.wait()
        for call in batch:
            timer.watch(call)

    threads = [threading.Thread(target=watch_all, args=(batch,)) for batch in batches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    calls = [call for batch in batches for call in batch]
    deadline = time.monotonic() + 10
    for call in calls:
        assert call.event.wait(max(0.0, deadline - time.monotonic())), "a watched deadline never fired"
    late = max(call.fired - call.at for call in calls)  # type: ignore[operator]
    assert all(call.fired >= call.at for call in calls)  # type: ignore[operator]
    assert late < 1.5, f"a deadline fired {late:.2f} s late"


def test_finished_calls_are_forgotten_so_the_timer_holds_a_bounded_number_of_entries(timer):
    near = Watched(time.monotonic() + 0.05)
    timer.watch(near)
    assert near.event.wait(5)  # the thread runs
    for _ in range(20_000):
        call = Watched(time.monotonic() + 3600)
        timer.watch(call)
        call.finished = True
    last = Watched(time.monotonic() + 0.05)
    timer.watch(last)
    assert last.event.wait(5)
    held = len(timer._heap) + len(timer._incoming)
    assert held <= 4 * 1024, f"the timer holds {held} entries for 20,000 finished calls"
