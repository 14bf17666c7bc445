"""The fuzzer in the suite: a small fixed budget of seeded mutation cases and
hypothesis-drawn cases per transport, each exchange checked as ``harness.py`` says.

``MCPCLIENT_FUZZ=1`` runs the CI budget instead (``.ci/run`` uses ``python -m tests.fuzz``).
"""
from __future__ import annotations

import os
import random
import time
from typing import Any, Iterator

import pytest

pytest.importorskip("hypothesis", reason="the fuzzer draws cases with hypothesis (the test extra)")
from hypothesis import HealthCheck, given, settings  # noqa: E402

from .gen import make_case  # noqa: E402
from .harness import Runner  # noqa: E402
from .strategies import cases  # noqa: E402

LONG = os.environ.get("MCPCLIENT_FUZZ") == "1"
BUDGET = 60.0 if LONG else 1.0  # seconds of seeded mutation cases per transport
EXAMPLES = 500 if LONG else 20  # hypothesis cases per transport

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")


def _report(runner: Runner) -> str:
    lines = [f"{v.kind}: {v.detail} (in {v.where})" for v in runner.violations[:10]]
    return "\n".join(lines)


@pytest.fixture(params=["stdio", "http"])
def runner(request: Any) -> Iterator[Runner]:
    r = Runner(request.param)
    try:
        yield r
    finally:
        r.close()


@pytest.mark.timeout(300 if LONG else 60)
def test_seeded_mutation_cases(runner: Runner) -> None:
    """Seed 12's mutation cases for a fixed time: every exchange typed, on time, bounded, alive."""
    rng = random.Random(f"12-{runner.transport}")
    end = time.monotonic() + BUDGET
    while time.monotonic() < end:
        runner.run_case(make_case(rng, runner.transport, runner.max_size))
    runner.close()  # the leak check of the last batch
    assert runner.counts["exchanges"] > 0
    assert not runner.violations, _report(runner)


@pytest.mark.timeout(300 if LONG else 60)
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_hypothesis_cases(transport: str) -> None:
    """Hypothesis-drawn replies, notifications and server requests on one long-lived connection."""
    runner = Runner(transport)
    try:
        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(cases(transport))
        def check(case: Any) -> None:
            before = len(runner.violations)
            runner.run_case(case)
            new = runner.violations[before:]
            assert not new, "\n".join(f"{v.kind}: {v.detail}" for v in new)

        check()
    finally:
        runner.close()
    assert not runner.violations, _report(runner)


def test_a_closed_runner_leaves_logging_as_it_found_it() -> None:
    """The runner drops mcpclient's log records while it runs; the tests after it in the same
    worker read them (caplog), so closing it puts the logger and the thread hook back."""
    import logging
    import threading

    logger = logging.getLogger("mcpclient")
    before = (logger.handlers[:], logger.level, logger.propagate, threading.excepthook)
    runner = Runner("stdio")
    assert logger.propagate is False
    runner.close()
    assert (logger.handlers, logger.level, logger.propagate, threading.excepthook) == before
