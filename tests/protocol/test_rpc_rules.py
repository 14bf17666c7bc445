"""What MCP adds to the engine's JSON-RPC (``MCPRules``): progress tokens and trace context in
``_meta``, ``notifications/cancelled``, and ``ping`` answered by the rules themselves."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import pytest

from mcpclient._engine.deadline import Deadline
from mcpclient._engine.futures import CallFuture
from mcpclient.protocol.rpc_rules import MCPRules


class Trace:
    def __init__(self, meta: Optional[Dict[str, str]]) -> None:
        self.meta = meta


class InFlight:
    def __init__(self) -> None:
        self.seen: List[Tuple[Any, ...]] = []

    def progressed(self, request_id: Any, progress: Any, total: Any, message: Any) -> None:
        self.seen.append(("progressed", request_id, progress, total, message))

    def server_cancelled(self, request_id: Any) -> None:
        self.seen.append(("server_cancelled", request_id))


def call(*, on_progress: Any = None, resets: bool = False, trace: Optional[Trace] = None) -> CallFuture[Any]:
    made: CallFuture[Any] = CallFuture(None, "tools/call")  # type: ignore[arg-type]  (decorate reads, never calls)
    made.on_progress = on_progress
    made.deadline = Deadline(5, resets=resets)
    made.trace = trace  # type: ignore[assignment]
    return made


TRACEPARENT = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}


@pytest.mark.parametrize("made, params, sent", [
    (call(on_progress=print), {"name": "t"}, {"name": "t", "_meta": {"progressToken": 7}}),
    (call(resets=True), None, {"_meta": {"progressToken": 7}}),
    (call(on_progress=print), {"_meta": {"mine": 1}}, {"_meta": {"mine": 1, "progressToken": 7}}),
    (call(trace=Trace(TRACEPARENT)), {"name": "t"}, {"name": "t", "_meta": TRACEPARENT}),
    (call(trace=Trace(TRACEPARENT)), {"_meta": {"traceparent": "the caller's"}}, {"_meta": {"traceparent": "the caller's"}}),
    (call(trace=Trace(TRACEPARENT)), {"_meta": "junk"}, {"_meta": TRACEPARENT}),
    (call(on_progress=print, trace=Trace(TRACEPARENT)), {}, {"_meta": {"progressToken": 7, **TRACEPARENT}}),
    (call(trace=Trace(None)), {"name": "t"}, {"name": "t"}),
])
def test_a_round_carries_its_progress_token_and_trace_context_in_meta_without_changing_the_callers_params(
        made: CallFuture[Any], params: Optional[Dict[str, Any]], sent: Dict[str, Any]) -> None:
    before = repr(params)
    assert MCPRules().decorate(params, 7, made) == sent
    assert repr(params) == before


def test_a_request_given_up_on_is_cancelled_with_notifications_cancelled() -> None:
    assert MCPRules().cancel_message(3, "timed out") == {
        "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "reason": "timed out"}}


def test_progress_and_the_servers_cancellations_go_to_the_requests_in_flight() -> None:
    in_flight = InFlight()
    rules = MCPRules()
    rules.on_notification("notifications/progress", {"progressToken": 4, "progress": 1, "total": 2, "message": "m"},
                          in_flight)
    rules.on_notification("notifications/cancelled", {"requestId": "s1", "reason": "bye"}, in_flight)
    rules.on_notification("notifications/message", {"level": "info"}, in_flight)
    assert in_flight.seen == [("progressed", 4, 1, 2, "m"), ("server_cancelled", "s1")]


def test_only_ping_is_answered_by_the_rules() -> None:
    rules = MCPRules()
    assert rules.answer_at_once("ping", {}) == {}
    assert rules.answer_at_once("roots/list", {}) is None
