"""``outcome``: what a JSON-RPC reply says, its result or the typed error it carries; ``NextRound``:
a transform's answer to one that asks for the request again."""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, Optional

from .._util.wire import format_message
from ..errors import MissingClientCapability, ProtocolError, RPCError

__all__ = ["NextRound", "outcome"]


def outcome(method: str, msg: Dict[str, Any], declared: FrozenSet[str] = frozenset()) -> Any:
    """The raw result of a reply, or raise the typed error it carries (``ProtocolError`` for a
    reply of a malformed shape: both or neither of result and error, an error object that is not
    ``{"code": int, "message": str, ...}``). ``declared``: the extensions this client declared
    (a ``MissingClientCapability`` says what happened to them)."""
    if "result" in msg:
        if "error" in msg:
            raise ProtocolError(f"reply to {method} has both a result and an error")
        return msg["result"]
    if "error" in msg:
        wire = msg["error"]
        if type(wire) is not dict or type(wire.get("code")) is not int or type(wire.get("message")) is not str:
            raise ProtocolError(f"reply to {method} has a malformed error object (not "
                                f"{{code: integer, message: string}}): {format_message(wire, 200)}")
        error = RPCError.from_wire(wire, method)
        error.http_status = msg.get("httpStatus")  # set by HTTP transports for a 4xx/5xx body
        if declared and isinstance(error, MissingClientCapability):
            error.explain(declared)
        raise error
    raise ProtocolError(f"reply to {method} has neither result nor error")


class NextRound:
    """A transform's answer meaning "not done: send the request again with ``params``"."""

    __slots__ = ("params",)

    def __init__(self, params: Optional[Dict[str, Any]]) -> None:
        self.params = params
