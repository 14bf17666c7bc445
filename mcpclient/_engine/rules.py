"""The protocols the rules of the protocol spoken over JSON-RPC plug into the engine with:
``RPCRules`` (what the session asks of them) and ``InFlight`` (what they may touch).

The engine is plain JSON-RPC: it names no method. What a request carries besides its params
for progress and tracing, how a request is cancelled, what a notification says about a request
in flight and which server requests are answered at once are its ``RPCRules``' to say
(``mcpclient.protocol.rpc_rules.MCPRules``, which the client gives to each ``Session``).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Protocol

from .futures import CallFuture

__all__ = ["InFlight", "RPCRules"]


class InFlight(Protocol):
    """The requests in flight both ways, as ``RPCRules.on_notification`` may touch them
    (``Session`` implements it). Both run on the reader thread and never block."""

    def progressed(self, request_id: Any, progress: Any, total: Any,
                   message: Any) -> Optional[Callable[[], object]]:
        """Our request ``request_id`` made progress: a deadline that resets starts again. Returns
        the call's ``on_progress(progress, total, message)``, bound, if it has one: run on the
        notification thread with the notification (ahead of the call's answer). Nothing happens
        for an id that is not pending."""

    def server_cancelled(self, request_id: Any) -> None:
        """The server cancelled its request ``request_id``: its handler runs on, but its answer
        is never sent."""


class RPCRules(Protocol):
    """What the protocol spoken over JSON-RPC adds to a session's messages; the session calls
    these, and names no method itself."""

    def decorate(self, params: Optional[Dict[str, Any]], request_id: int,
                 call: CallFuture[Any]) -> Optional[Dict[str, Any]]:
        """The params one round of ``call`` is sent with, for a call that can report progress
        (an ``on_progress``, a deadline that resets) or is traced (``call.trace``): what lets
        the server report that progress to ``InFlight.progressed(request_id, ...)`` and carry
        on the trace. On the sending thread, for every round; ``params`` is not changed."""

    def cancel_message(self, request_id: int, reason: str) -> Optional[Dict[str, Any]]:
        """The notification asking the server to stop our request ``request_id`` (``reason``
        says why: "timed out", "cancelled by the client"...), or None to send nothing. Sent by
        ``Session.abandon`` unless the transport cancelled the request itself."""

    def on_notification(self, method: str, params: Dict[str, Any],
                        in_flight: InFlight) -> Optional[Callable[[], object]]:
        """A notification was read (reader thread, before it is queued for the session's
        ``on_notification``): what it says about a request in flight goes to ``in_flight``.
        Returns what ``in_flight`` gave to run first on the notification thread (a call's
        ``on_progress``): it is queued with the notification, as one item. Never blocks, never
        runs user code."""

    def answer_at_once(self, method: str, params: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The result of a server request the reader answers at once, before and without any
        handler (a liveness check must never wait behind busy handlers), or None: the request
        goes the usual way."""
