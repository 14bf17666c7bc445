"""Multi-round-trip requests (2026-07-28): answering ``input_required`` results.

A server that needs something from the client while handling ``tools/call``, ``prompts/get`` or
``resources/read`` answers ``resultType: "input_required"`` with ``inputRequests`` (sampling,
elicitation, roots). The client answers each with the same handlers that serve handshake-era
server requests, and repeats the request — a new JSON-RPC id, the original params plus
``inputResponses`` and the server's ``requestState`` echoed exactly. This module is that one
step; ``stateless_era.Stateless`` runs it inside the call's transform, so the blocking caller or the
worker thread of a future runs the handlers (never the reader), within the call's one deadline.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ..errors import MethodNotFound, ProtocolError

__all__ = ["next_round"]

Answer = Callable[[str, Dict[str, Any]], Any]  # Responder.answer: (method, params) -> result


def next_round(method: str, params: Optional[Dict[str, Any]], raw: Dict[str, Any], answer: Answer) -> Dict[str, Any]:
    """The retry of ``method``: ``params`` plus answers to ``raw``'s input requests."""
    requests = raw.get("inputRequests") or {}
    if not isinstance(requests, dict):
        raise ProtocolError(f"{method}: inputRequests is not an object")
    answers = {}
    for key, request in requests.items():
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            raise ProtocolError(f"{method}: input request {key!r:.50} has no method")
        inner = request.get("params") if isinstance(request.get("params"), dict) else {}
        try:
            answers[key] = answer(request["method"], inner)
        except MethodNotFound:
            raise ProtocolError(f"{method}: the server asked for {request['method']}, which this client "
                                "did not declare (configure its handler)") from None
    retry = {k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")}
    retry["inputResponses"] = answers
    if "requestState" in raw:
        retry["requestState"] = raw["requestState"]  # echoed exactly, never parsed
    return retry
