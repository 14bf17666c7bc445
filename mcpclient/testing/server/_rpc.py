"""The JSON-RPC error the test servers answer with (shared by ``stdio`` and ``taskext``)."""

from __future__ import annotations

from typing import Any, Dict


class RpcError(Exception):
    """A JSON-RPC error to send back as the response's ``error`` member."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def to_json(self) -> Dict[str, Any]:
        """The JSON-RPC ``error`` object."""
        err: Dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err
