"""``call_tool`` and its future twin: arguments that are not JSON (NaN, infinity) are refused
before anything is sent; progress restarts the timeout when asked, and a hard cap still ends a
call that keeps reporting progress; a blocking call made from a progress callback does not hang.
"""
from __future__ import annotations

import sys
import time
from typing import Any, Dict, Optional

import pytest

from conftest import LONG
from helpers import ScriptedServer
from reaping import Outcome, in_thread, reaper  # noqa: F401  (fixtures: reaper)
from mcpclient import Client, Timeout
from mcpclient.errors import RequestTimeout
from mcpclient.testing import server_command


def echo_tool(method: str, params: Dict[str, Any]) -> Dict[str, Any]:
    return {"content": [{"type": "text", "text": str((params.get("arguments") or {}).get("text"))}]}


# ---------------------------------------------------------------- progress


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(20)
def test_nested_progress_call_from_a_progress_callback_does_not_hang(reaper):
    client = reaper.client(Client(server_command(), timeout=LONG).connect())
    inner = Outcome()
    inner_timeout, outer_timeout = 1.0, 2.0

    def outer_progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
        if progress == 1:  # on the notification thread: a blocking call that reports progress itself
            inner.run(lambda: client.call_tool("slow", {"steps": 2, "delay": 0.01},
                                               on_progress=lambda *a: None, timeout=inner_timeout).text)()

    outer = in_thread(reaper, lambda: client.call_tool("slow", {"steps": 2, "delay": 0.01},
                                                       on_progress=outer_progress, timeout=outer_timeout).text,
                      "test-outer")
    assert outer.done.wait(outer_timeout + 1.0), f"outer call blocked past its timeout: {outer}; inner: {inner}"
    assert inner.done.is_set(), inner
    assert inner.value == "done after 2 steps" or isinstance(inner.error, RequestTimeout), inner
    assert inner.elapsed <= inner_timeout + 1.0, inner
    assert outer.value == "done after 2 steps" or isinstance(outer.error, RequestTimeout), outer
    client.ping(timeout=LONG)


# ---------------------------------------------------------------- arguments that are not JSON


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(20)
@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_a_non_finite_float_argument_is_refused_before_sending(value):
    server = ScriptedServer(echo_tool)
    try:
        with Client(server.transport, timeout=LONG) as client:
            with pytest.raises(ValueError):
                client.call_tool("echo", {"text": value})
            client.ping()  # a round trip: the peer has seen everything sent before it
            assert [m.get("method") for m in server.received if "id" in m] == ["server/discover", "initialize", "ping"]
            assert client.call_tool("echo", {"text": "still fine"}).text == "still fine"
    finally:
        server.stop()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes and pipes through /proc")
@pytest.mark.timeout(20)
def test_call_tool_future_accepts_reset_timeout_on_progress(reaper):
    client = reaper.client(Client(server_command(), timeout=LONG).connect())
    try:
        # 4 steps 0.25 s apart: 1 s in all, longer than the 0.6 s timeout each progress restarts
        future = client.call_tool_future("slow", {"steps": 4, "delay": 0.25}, timeout=Timeout(0.6, reset_on_progress=True))
    except TypeError as exc:
        pytest.fail(f"call_tool_future rejects reset_timeout_on_progress: {exc}")
    assert future.result(timeout=LONG).text == "done after 4 steps"


def test_the_hard_cap_stops_a_call_that_keeps_reporting_progress():
    # slow: 20 steps of 0.1 s = 2 s; progress resets the 0.5 s timeout, but the cap is 0.6 s in all.
    with Client(server_command(), timeout=Timeout(LONG, reset_on_progress=True, total=0.6)) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            client.call_tool("slow", {"steps": 20, "delay": 0.1}, timeout=0.5)
        assert 0.55 <= time.monotonic() - started < 1.9
        assert info.value.method == "tools/call"
        assert client.call_tool("echo", {"text": "still fine"}).text == "still fine"


def test_a_clients_tools_run_every_call_at_once_and_answer_failures_as_values():
    """A client as a ``ToolHost`` (``ClientTools``: what the LLM adapters drive, as a
    ``ServerGroup``'s ``call_tools``): the results in order, an unknown tool's error and an
    unsendable call's error in their places."""
    from mcpclient import MCPError
    from mcpclient._client.tool_host import ClientTools
    from mcpclient.testing import server_command

    with Client(server_command(), timeout=LONG) as client:
        results = ClientTools(client).call_tools([("add", {"a": 1, "b": 2}), ("no_such_tool", {}), ("echo", {"text": "hi"}),
                                     ("echo", {"text": float("nan")})])
    assert results[0].structured_content == {"sum": 3}
    assert isinstance(results[1], MCPError) or results[1].is_error
    assert results[2].text == "hi"
    assert isinstance(results[3], MCPError)  # NaN is no JSON: refused before anything was sent
