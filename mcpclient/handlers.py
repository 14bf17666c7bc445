"""What the client answers when the server asks: sampling, elicitation, roots.

A server (handshake era) sends ``sampling/createMessage``, ``elicitation/create`` and
``roots/list`` requests mid-call (2026 era: as ``input_required`` results). Handlers run on the
connection's handler threads (``mcpclient-<n>-handler_<k>``, at most ``max_workers`` at once);
they may block and may call back into the client. This module holds the typed requests and
results handlers see and return; ``_responder`` calls the handlers (and imports this module
only when the first server request arrives, to keep ``import mcpclient`` fast).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from ._responder import ELICITATION_MODES
from .errors import InvalidParams
from ._records import field
from .types import Content, Raw, TextContent, _Record, _record, parse_content


__all__ = [
    "CreateMessageRequest",
    "CreateMessageResult",
    "ElicitationRequest",
    "ElicitationResult",
    "Root",
    "SamplingMessage",
    "accept_defaults",
]

# --- sampling -----------------------------------------------------------------------------------

@_record
class SamplingMessage(_Record):
    """One message of a sampling conversation; ``content`` is always a list (the wire may send one block)."""

    role: str
    content: List[Content]
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @property
    def text(self) -> str:
        return "".join(c.text for c in self.content if isinstance(c, TextContent))

    @classmethod
    def from_wire(cls, raw: Any) -> "SamplingMessage":
        if not isinstance(raw, dict):
            raise InvalidParams(-32602, "sampling message: expected an object")
        content = raw.get("content")
        blocks = content if isinstance(content, list) else [content]
        return cls(str(raw.get("role", "")), [parse_content(b) for b in blocks], raw)


@_record
class CreateMessageRequest(_Record):
    """``sampling/createMessage``: the server asks the client's LLM for a completion.

    ``tools``/``tool_choice`` (2025-11-25) are passed through as received; they are only sent to a
    client that declared ``sampling.tools`` (``Client(capabilities={"sampling": {"tools": {}}})``).
    """

    messages: List[SamplingMessage]
    max_tokens: int
    system_prompt: Optional[str] = None
    model_preferences: Optional[Raw] = None
    include_context: Optional[str] = None
    temperature: Optional[float] = None
    stop_sequences: Optional[List[str]] = None
    metadata: Optional[Raw] = None
    tools: Optional[List[Raw]] = None
    tool_choice: Optional[Raw] = None
    meta: Optional[Raw] = None
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @property
    def model_hints(self) -> List[str]:
        """The server's model name hints, in order of preference (advisory only)."""
        hints = (self.model_preferences or {}).get("hints") or []
        return [h["name"] for h in hints if isinstance(h, dict) and isinstance(h.get("name"), str)]

    @classmethod
    def from_wire(cls, raw: Raw) -> "CreateMessageRequest":
        messages = raw.get("messages")
        max_tokens = raw.get("maxTokens")
        if not isinstance(messages, list) or not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            raise InvalidParams(-32602, "sampling/createMessage needs 'messages' (a list) and 'maxTokens' (an integer)")
        return cls([SamplingMessage.from_wire(m) for m in messages], max_tokens, raw.get("systemPrompt"),
                   raw.get("modelPreferences"), raw.get("includeContext"), raw.get("temperature"),
                   raw.get("stopSequences"), raw.get("metadata"), raw.get("tools"), raw.get("toolChoice"),
                   raw.get("_meta"), raw)


@_record
class CreateMessageResult(_Record):
    """What a sampling handler returns: the model's message.

    ``content`` may be a string (sent as one text block), a content object, a wire dict, or a
    list of those (2025-11-25 allows several blocks, e.g. ``tool_use``).
    """

    content: Any
    model: str
    role: str = "assistant"
    stop_reason: Optional[str] = "endTurn"
    meta: Optional[Raw] = None

    def to_wire(self) -> Raw:
        wire: Raw = {"role": self.role, "content": _content_to_wire(self.content), "model": self.model}
        if self.stop_reason is not None:
            wire["stopReason"] = self.stop_reason
        if self.meta:
            wire["_meta"] = self.meta
        return wire


def _content_to_wire(content: Any) -> Any:
    if isinstance(content, list):
        return [_content_to_wire(c) for c in content]
    if isinstance(content, str):
        return {"type": "text", "text": content}
    if isinstance(content, dict):
        return content
    raw = getattr(content, "raw", None)
    if isinstance(content, TextContent) and not raw:
        return {"type": "text", "text": content.text}
    if isinstance(raw, dict) and raw:
        return raw
    raise TypeError(f"cannot send {type(content).__name__} as sampling content; use a str or a wire dict")


# --- elicitation --------------------------------------------------------------------------------

@_record
class ElicitationRequest(_Record):
    """``elicitation/create``: the server asks the user for input.

    ``mode`` is ``"form"`` (fill ``requested_schema``: a flat object of primitive fields) or
    ``"url"`` (send the user to ``url``, outside the client; ``accept`` means they agreed to go).
    Show ``message`` and which server asks; never open a URL without the user's consent.
    """

    mode: str
    message: str
    requested_schema: Optional[Raw] = None
    url: Optional[str] = None
    elicitation_id: Optional[str] = None
    meta: Optional[Raw] = None
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    def defaults(self) -> Dict[str, Any]:
        """Every ``default`` the form's schema declares, by field name (``{}`` for URL mode)."""
        properties = (self.requested_schema or {}).get("properties")
        if not isinstance(properties, dict):
            return {}
        return {name: spec["default"] for name, spec in properties.items()
                if isinstance(spec, dict) and "default" in spec}

    @classmethod
    def from_wire(cls, raw: Raw) -> "ElicitationRequest":
        mode = raw.get("mode", "form")
        if mode not in ELICITATION_MODES:
            raise InvalidParams(-32602, f"unknown elicitation mode {mode!r}")
        message = raw.get("message")
        if not isinstance(message, str):
            raise InvalidParams(-32602, "elicitation/create needs a 'message' string")
        schema, url = raw.get("requestedSchema"), raw.get("url")
        if mode == "form" and not isinstance(schema, dict):
            raise InvalidParams(-32602, "form elicitation needs a 'requestedSchema' object")
        if mode == "url" and not isinstance(url, str):
            raise InvalidParams(-32602, "URL elicitation needs a 'url' string")
        return cls(mode, message, schema if mode == "form" else None, url if mode == "url" else None,
                   raw.get("elicitationId"), raw.get("_meta"), raw)


@_record
class ElicitationResult(_Record):
    """The user's answer: ``ElicitationResult.accept({...})``, ``.decline()`` or ``.cancel()``."""

    action: str
    content: Optional[Dict[str, Any]] = None
    meta: Optional[Raw] = None

    @classmethod
    def accept(cls, content: Optional[Dict[str, Any]] = None) -> "ElicitationResult":
        return cls("accept", content)

    @classmethod
    def decline(cls) -> "ElicitationResult":
        return cls("decline")

    @classmethod
    def cancel(cls) -> "ElicitationResult":
        return cls("cancel")

    def to_wire(self) -> Raw:
        if self.action not in ("accept", "decline", "cancel"):
            raise ValueError(f"elicitation action must be accept, decline or cancel, not {self.action!r}")
        wire: Raw = {"action": self.action}
        if self.action == "accept" and self.content is not None:
            wire["content"] = self.content
        if self.meta:
            wire["_meta"] = self.meta
        return wire


def accept_defaults(request: ElicitationRequest) -> ElicitationResult:
    """A ready-made ``elicitation_handler`` for unattended use: accept every form with the
    schema's defaults; decline URL elicitations (nobody is there to open them).

    Like every handler, it runs on one of the connection's handler threads
    (``mcpclient-<n>-handler_<k>``), or on a ``mcpclient-<n>-task`` thread for a task-augmented
    request (``Client(task_requests=True)``)."""
    if request.mode == "url":
        return ElicitationResult.decline()
    return ElicitationResult.accept(request.defaults())


# --- roots --------------------------------------------------------------------------------------

@_record
class Root(_Record):
    """A directory or file the server may work in (``file://`` URI), with an optional name."""

    uri: str
    name: Optional[str] = None
    meta: Optional[Raw] = None

    def to_wire(self) -> Raw:
        wire: Raw = {"uri": self.uri}
        if self.name is not None:
            wire["name"] = self.name
        if self.meta:
            wire["_meta"] = self.meta
        return wire


RootsSetting = Union[Sequence[Union[Root, str, Dict[str, Any]]], Callable[[], Sequence[Union[Root, str, Dict[str, Any]]]]]
SamplingHandler = Callable[[CreateMessageRequest], Union[CreateMessageResult, Dict[str, Any]]]
ElicitationHandler = Callable[[ElicitationRequest], Union[ElicitationResult, Dict[str, Any]]]


def roots_to_wire(roots: Sequence[Any]) -> List[Raw]:
    """Check and convert a roots list (``Root``, URI string, or wire dict per entry)."""
    if isinstance(roots, (str, bytes)) or not isinstance(roots, Sequence):
        raise TypeError("roots must be a list of Root objects, URI strings or dicts")
    wire = []
    for root in roots:
        if isinstance(root, str):
            root = Root(root)
        if isinstance(root, Root):
            entry = root.to_wire()
        elif isinstance(root, dict) and isinstance(root.get("uri"), str):
            entry = root
        else:
            raise TypeError(f"not a root: {root!r:.100}")
        if not entry["uri"].startswith("file://"):
            raise ValueError(f"a root must be a file:// URI, not {entry['uri']!r:.200}")
        wire.append(entry)
    return wire
