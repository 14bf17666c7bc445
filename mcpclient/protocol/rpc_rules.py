"""``MCPRules``: what MCP adds to the plain JSON-RPC the engine speaks (its ``RPCRules``).

- **Progress.** A request that can report progress (an ``on_progress``, a timeout that resets
  on progress) carries ``_meta.progressToken``: its JSON-RPC id, so a ``notifications/progress``
  finds its call by id (``InFlight.progressed``).
- **Tracing.** A traced request carries its trace context (``traceparent``...) in ``_meta``.
- **Cancellation.** A request given up on (timed out, cancelled, interrupted) is stopped with
  ``notifications/cancelled``; one the server sends marks its own request, whose answer is then
  never sent (``InFlight.server_cancelled``).
- **Ping.** The server's ``ping`` is answered on the reader thread, never queued behind slow
  handlers.

The client gives one to each session it makes (``_client.connection``); it holds no state.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from .._engine.futures import CallFuture
from .._engine.rules import InFlight

__all__ = ["MCPRules"]

PROGRESS = "notifications/progress"
CANCELLED = "notifications/cancelled"
PING = "ping"


def _with_trace_context(params: Optional[Dict[str, Any]], context: Dict[str, str]) -> Dict[str, Any]:
    """A copy of ``params`` whose ``_meta`` has the trace ``context`` (``CallTrace.meta``); a
    ``traceparent`` the caller put in ``_meta`` is kept, with the rest of the caller's keys."""
    params = dict(params or {})
    own = params.get("_meta")
    if not isinstance(own, dict):
        params["_meta"] = dict(context)
    elif "traceparent" not in own:
        params["_meta"] = {**context, **own}
    return params


class MCPRules:
    """MCP's progress tokens, cancellation, ping and trace context, for one session (the
    engine's ``RPCRules``)."""

    __slots__ = ()

    def decorate(self, params: Optional[Dict[str, Any]], request_id: int,
                 call: CallFuture[Any]) -> Optional[Dict[str, Any]]:
        """``params`` with ``_meta.progressToken`` (the round's id) for a call that can report
        progress, and the call's trace context for a traced one (``params`` is not changed)."""
        if call.on_progress is not None or call.deadline.resets:
            params = dict(params or {})
            params["_meta"] = dict(params.get("_meta") or {}, progressToken=request_id)
        trace = call.trace
        if trace is not None and trace.meta is not None:
            params = _with_trace_context(params, trace.meta)
        return params

    def cancel_message(self, request_id: int, reason: str) -> Optional[Dict[str, Any]]:
        """``notifications/cancelled`` for ``request_id``."""
        return {"jsonrpc": "2.0", "method": CANCELLED, "params": {"requestId": request_id, "reason": reason}}

    def on_notification(self, method: str, params: Dict[str, Any],
                        in_flight: InFlight) -> Optional[Callable[[], object]]:
        """``notifications/progress`` moves its call along (and gives its ``on_progress`` to
        run); ``notifications/cancelled`` marks the server's request cancelled."""
        if method == PROGRESS:
            return in_flight.progressed(params.get("progressToken"), params.get("progress"), params.get("total"),
                                        params.get("message"))
        if method == CANCELLED:
            in_flight.server_cancelled(params.get("requestId"))
        return None

    def answer_at_once(self, method: str, params: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """``ping``'s empty result."""
        return {} if method == PING else None
