"""Elicitation (``elicitation/create``): the server asks the user for input.

``ElicitationRequest`` is what an elicitation handler (``Handlers(elicitation=)``) receives,
``ElicitationResult`` what it returns; ``accept_defaults`` is a ready-made handler. ``mcpclient``
re-exports all three.

This module imports nothing of mcpclient but the JSON type aliases (``mcpclient.types`` imports
it, and decodes ``URLElicitationRequired.elicitations`` with it). A malformed request raises
``InvalidElicitation`` (a ``ValueError``); the client answers the server with -32602 and its message.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, cast

from ._json import JSONObject

__all__ = ["ELICITATION_MODES", "ElicitationRequest", "ElicitationResult", "InvalidElicitation", "accept_defaults"]

#: The elicitation modes a client can declare and a server can ask for.
ELICITATION_MODES = ("form", "url")

Raw = JSONObject
# As in ``types`` (not imported from there: see above): slots where dataclasses has them (3.10+).
_SLOTS: Dict[str, bool] = {"slots": True} if sys.version_info >= (3, 10) else {}


class InvalidElicitation(ValueError):
    """A malformed ``elicitation/create`` request (the server's fault): the client answers it with
    -32602 and this message.

    Raised inside the client only (the server gets the -32602 answer); nothing to retry on this
    side.
    """


@dataclass(frozen=True, **_SLOTS)
class ElicitationRequest:
    """``elicitation/create``: the server asks the user for input.

    ``mode`` is ``"form"`` (fill ``requested_schema``: a flat object of primitive fields) or
    ``"url"`` (send the user to ``url``, outside the client; ``accept`` means they agreed to go).
    Show ``message`` and which server asks; never open a URL without the user's consent.
    """

    mode: str
    message: str
    requested_schema: Optional[Raw] = field(default=None, hash=False)
    url: Optional[str] = None
    elicitation_id: Optional[str] = None
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    def defaults(self) -> JSONObject:
        """Every ``default`` the form's schema declares, by field name (``{}`` for URL mode)."""
        properties = (self.requested_schema or {}).get("properties")
        if not isinstance(properties, dict):
            return {}
        return {name: spec["default"] for name, spec in properties.items()
                if isinstance(spec, dict) and "default" in spec}

    @classmethod
    def from_wire(cls, raw: Raw) -> "ElicitationRequest":
        """Parse the request's params; ``InvalidElicitation`` if they are malformed."""
        mode = raw.get("mode", "form")
        if not isinstance(mode, str) or mode not in ELICITATION_MODES:
            raise InvalidElicitation(f"unknown elicitation mode {mode!r}")
        message = raw.get("message")
        if not isinstance(message, str):
            raise InvalidElicitation("elicitation/create needs a 'message' string")
        schema, url = raw.get("requestedSchema"), raw.get("url")
        if mode == "form" and not isinstance(schema, dict):
            raise InvalidElicitation("form elicitation needs a 'requestedSchema' object")
        if mode == "url" and not isinstance(url, str):
            raise InvalidElicitation("URL elicitation needs a 'url' string")
        loose: Dict[str, Any] = raw  # the optional fields pass through as received
        return cls(mode, message, schema if isinstance(schema, dict) and mode == "form" else None,
                   url if isinstance(url, str) and mode == "url" else None,
                   loose.get("elicitationId"), loose.get("_meta"), raw)


@dataclass(frozen=True, **_SLOTS)
class ElicitationResult:
    """The user's answer: ``ElicitationResult.accept({...})``, ``.decline()`` or ``.cancel()``."""

    action: str
    content: Optional[Mapping[str, object]] = field(default=None, hash=False)
    meta: Optional[Mapping[str, object]] = field(default=None, hash=False)

    @classmethod
    def accept(cls, content: Optional[Mapping[str, object]] = None) -> "ElicitationResult":
        """An ``accept`` answer carrying the form's ``content``."""
        return cls("accept", content)

    @classmethod
    def decline(cls) -> "ElicitationResult":
        """A ``decline`` answer (the user said no)."""
        return cls("decline")

    @classmethod
    def cancel(cls) -> "ElicitationResult":
        """A ``cancel`` answer (the user dismissed the request)."""
        return cls("cancel")

    def to_wire(self) -> Raw:
        """The ``ElicitResult`` wire dict.

        Raises ``ValueError`` if ``action`` is not ``accept``, ``decline`` or ``cancel``.
        """
        if self.action not in ("accept", "decline", "cancel"):
            raise ValueError(f"elicitation action must be accept, decline or cancel, not {self.action!r}")
        wire: Raw = {"action": self.action}
        if self.action == "accept" and self.content is not None:
            wire["content"] = cast(JSONObject, self.content)  # sent as JSON: the encoder checks it
        if self.meta:
            wire["_meta"] = cast(JSONObject, self.meta)
        return wire


def accept_defaults(request: ElicitationRequest) -> ElicitationResult:
    """A ready-made elicitation handler (``Handlers(elicitation=accept_defaults)``) for
    unattended use: accept every form with the schema's defaults; decline URL elicitations
    (nobody is there to open them).

    Like every handler, it runs on one of the connection's handler threads
    (``mcpclient-<n>-handler-<k>``), or on a ``mcpclient-<n>-task`` thread for a task-augmented
    request (``Handlers(task_requests=True)``). A form with a required field that has no default
    is declined too: the defaults cannot answer it (and an answer is checked against the schema)."""
    if request.mode == "url":
        return ElicitationResult.decline()
    defaults = request.defaults()
    required = (request.requested_schema or {}).get("required")
    if isinstance(required, list) and any(name not in defaults for name in required):
        return ElicitationResult.decline()
    return ElicitationResult.accept(defaults)
