"""JSON-RPC ids: the one rule by which a reply names the request it answers.

The client's requests carry integer ids. A reply names one when its id is the same JSON number:
``11`` or ``11.0`` (JSON does not tell them apart, and some servers round-trip ids through a
float), never ``true`` (which Python would take for 1) nor the string ``"11"``. The session and
the HTTP transports (which read a POST's answer before the session sees it) both apply it, so
neither takes a reply the other would drop.
"""
from __future__ import annotations

from typing import Optional

__all__ = ["names_request", "reply_id"]


def reply_id(value: object) -> Optional[int]:
    """The request id a reply's ``id`` names, or None if it names none of the client's."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return None


def names_request(value: object, request_id: object) -> bool:
    """Whether a reply's ``id`` (``value``) names the request sent with ``request_id``: by the
    rule above for the client's integer ids; an id of another kind (a transport's own, for a
    request it sent again) only by itself."""
    if type(request_id) is int:
        return reply_id(value) == request_id
    return type(value) is type(request_id) and value == request_id
