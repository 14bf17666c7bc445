"""What the client answers when the server asks: sampling, elicitation, roots.

A server (handshake era) sends ``sampling/createMessage``, ``elicitation/create`` and
``roots/list`` requests mid-call. Handlers run on the connection's handler threads
(``mcpclient-<n>-handler_<k>``, at most ``max_workers`` at once); they may block and may call
back into the client. The user gives ``Client`` plain callables; this module turns the
wire params into typed requests, calls the user's handler, checks and converts what it returns,
and says which client capabilities the configured handlers declare. No I/O and no threads here:
``Responder.answer`` runs on one of the session's handler threads.
"""
from __future__ import annotations

import logging
from dataclasses import field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Union

from .errors import InvalidParams, MethodNotFound, ProtocolError
from .types import Content, Raw, TextContent, _Record, _record, parse_content

if TYPE_CHECKING:
    from .tasks import TaskStore

__all__ = [
    "CreateMessageRequest",
    "CreateMessageResult",
    "ElicitationRequest",
    "ElicitationResult",
    "Root",
    "SamplingMessage",
    "accept_defaults",
]

log = logging.getLogger("mcpclient")

ELICITATION_MODES = ("form", "url")
TASK_METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel")


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


# --- the dispatcher -----------------------------------------------------------------------------

class Responder:
    """Answers the server's requests with the configured handlers (on a handler thread)."""

    def __init__(self, sampling: Optional[SamplingHandler], elicitation: Optional[ElicitationHandler],
                 elicitation_modes: Sequence[str], roots: Optional[RootsSetting],
                 extra_capabilities: Optional[Dict[str, Any]], tasks: Optional["TaskStore"] = None) -> None:
        for name, handler in (("sampling_handler", sampling), ("elicitation_handler", elicitation)):
            if handler is not None and not callable(handler):
                raise TypeError(f"{name} must be callable")
        modes = tuple(elicitation_modes)
        if not modes or any(m not in ELICITATION_MODES for m in modes):
            raise ValueError(f"elicitation_modes must name 'form' and/or 'url', not {elicitation_modes!r}")
        if roots is not None and not callable(roots):
            roots_to_wire(roots)  # fail at construction, not when the server asks
        if extra_capabilities is not None and not isinstance(extra_capabilities, dict):
            raise TypeError("capabilities must be a dict")
        self.sampling = sampling
        self.elicitation = elicitation
        self.elicitation_modes = modes
        self.roots = roots
        self.extra_capabilities = dict(extra_capabilities or {})
        self.tasks = tasks

    def capabilities(self) -> Dict[str, Any]:
        """The ``ClientCapabilities`` to declare: one entry per configured handler, plus extras."""
        caps: Dict[str, Any] = {}
        if self.sampling is not None:
            caps["sampling"] = {}
        if self.elicitation is not None:
            caps["elicitation"] = {mode: {} for mode in self.elicitation_modes}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        if self.tasks is not None:  # the client runs task-augmented sampling / elicitation
            requests: Dict[str, Any] = {}
            if self.sampling is not None:
                requests["sampling"] = {"createMessage": {}}
            if self.elicitation is not None:
                requests["elicitation"] = {"create": {}}
            caps["tasks"] = {"list": {}, "cancel": {}, "requests": requests}
        return _merged(caps, self.extra_capabilities)

    def quick(self, rid: Any, method: str, params: Dict[str, Any], reply: Callable[..., None]) -> bool:
        """What can be answered on the reader thread (see ``Session.on_quick_request``): the
        server's ``tasks/*`` and the creation of a task for a task-augmented request (checked,
        then run on a task thread), so neither waits for a free handler thread."""
        if self.tasks is None:
            return False
        if method in TASK_METHODS:
            return self.tasks.quick(rid, method, params, reply)
        if isinstance(params.get("task"), dict) and (
                (method == "sampling/createMessage" and self.sampling is not None)
                or (method == "elicitation/create" and self.elicitation is not None)):
            run = self._prepare_sample(params) if method == "sampling/createMessage" else self._prepare_elicit(params)
            reply(rid, self.tasks.start(method, params, run))
            return True
        return False

    def answer(self, method: str, params: Dict[str, Any]) -> Any:
        """The result for one server request, or an ``RPCError`` raised for the error reply.

        The request is parsed and checked first (-32602 for a malformed or undeclared one).
        (Task-augmented requests never get here: ``quick`` takes them.)
        """
        if method == "ping":
            return {}
        if method == "sampling/createMessage" and self.sampling is not None:
            run = self._prepare_sample(params)
        elif method == "elicitation/create" and self.elicitation is not None:
            run = self._prepare_elicit(params)
        elif method == "roots/list" and self.roots is not None:
            roots = self.roots  # read once: set_roots() may swap it meanwhile
            return {"roots": roots_to_wire(roots() if callable(roots) else roots)}
        else:
            raise MethodNotFound(-32601, f"this client does not handle {method}")
        return run()

    def _prepare_sample(self, params: Dict[str, Any]) -> Callable[[], Raw]:
        request = _parsed(CreateMessageRequest, params, "sampling/createMessage")
        if (request.tools is not None or request.tool_choice is not None) and \
                not isinstance((self.capabilities().get("sampling") or {}).get("tools"), dict):
            raise InvalidParams(-32602, "this client did not declare sampling.tools; tools are not allowed")
        handler = self.sampling

        def run() -> Raw:
            result = _checked(handler(request), CreateMessageResult, "sampling_handler")  # type: ignore[misc]
            if not isinstance(result.get("content"), (dict, list)) or not isinstance(result.get("model"), str):
                raise ProtocolError("sampling_handler returned a result without 'content' and 'model'")
            return result
        return run

    def _prepare_elicit(self, params: Dict[str, Any]) -> Callable[[], Raw]:
        request = _parsed(ElicitationRequest, params, "elicitation/create")
        if request.mode not in self.elicitation_modes:
            raise InvalidParams(-32602, f"this client did not declare {request.mode} elicitation")
        handler = self.elicitation

        def run() -> Raw:
            result = _checked(handler(request), ElicitationResult, "elicitation_handler")  # type: ignore[misc]
            return _checked_answer(request, result)
        return run


def _merged(base: Dict[str, Any], extra: Dict[str, Any]) -> Dict[str, Any]:
    """``base`` with ``extra`` merged in, recursively for nested dicts."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def _parsed(kind: Any, params: Dict[str, Any], method: str) -> Any:
    """Parse a server request's params; anything malformed is the server's error (-32602)."""
    try:
        return kind.from_wire(params)
    except InvalidParams:
        raise
    except (ProtocolError, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InvalidParams(-32602, f"malformed {method} request: {exc}") from None


_PRIMITIVES = (str, int, float, bool)


def _checked_answer(request: ElicitationRequest, result: Raw) -> Raw:
    """An elicitation answer as the spec allows it: a valid action; for a form, only the schema's
    fields, each a string, number, boolean or list of strings; for a URL, no content at all."""
    action = result.get("action")
    if action not in ("accept", "decline", "cancel"):
        raise ProtocolError("elicitation_handler returned no valid 'action'")
    content = result.get("content")
    if action != "accept" or request.mode == "url" or content is None:
        return {k: v for k, v in result.items() if k != "content"}
    if not isinstance(content, dict):
        raise ProtocolError("elicitation_handler returned 'content' that is not a dict")
    fields = (request.requested_schema or {}).get("properties") or {}
    unknown = sorted(k for k in content if k not in fields)
    if unknown:
        log.warning("elicitation answer: dropped fields the form did not ask for: %s", ", ".join(unknown)[:200])
    kept = {k: v for k, v in content.items() if k in fields}
    for key, value in kept.items():
        if not (isinstance(value, _PRIMITIVES) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            raise ProtocolError(f"elicitation answer field {key!r} is not a string, number, boolean or list of strings")
    return dict(result, content=kept)


def _checked(value: Any, kind: type, who: str) -> Raw:
    """A handler's return value as a wire dict (typed results are converted, dicts passed through)."""
    if isinstance(value, kind):
        return value.to_wire()  # type: ignore[attr-defined]
    if isinstance(value, dict):
        return value
    raise TypeError(f"{who} must return {kind.__name__} or a dict, not {type(value).__name__}")
