"""What the client answers when the server asks: sampling, elicitation, roots.

A server (handshake era) sends ``sampling/createMessage``, ``elicitation/create`` and
``roots/list`` requests mid-call (2026 era: as ``input_required`` results). Handlers run on the
connection's handler threads (``mcpclient-<n>-handler-<k>``, at most ``Limits(workers=)`` at
once); they may block and may call back into the client. They are given as ``Handlers(sampling=,
elicitation=, roots=)``. This module holds the typed requests and results handlers see and
return (frozen dataclasses, like ``mcpclient.types``; the elicitation ones live in
``mcpclient.types.elicitation`` and are re-exported here).
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union, cast
from urllib.parse import quote, unquote, urlsplit

from .elicitation import ElicitationRequest, ElicitationResult, accept_defaults
from ..errors import InvalidParams
from ._base import _SLOTS, Raw, _Value
from ._tools import Content, TextContent, parse_content
# Content's members built on first use (types._CONTENT), imported so that typing.get_type_hints resolves
# SamplingMessage.content here (this module is loaded only when a server request first needs it).
from ._content import AudioContent, ImageContent, ResourceLink, UnknownContent  # noqa: F401


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

#: What ``CreateMessageResult.content`` takes: a string (one text block), a content object, a
#: wire dict, or a list of those.
SamplingBlock = Union[str, Content, Mapping[str, object]]
SamplingContent = Union[SamplingBlock, Sequence[SamplingBlock]]

@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class SamplingMessage(_Value):
    """One message of a sampling conversation; ``content`` is always a list (the wire may send one block)."""

    role: str
    content: List[Content] = field(hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The message's text parts, one per line (``""`` if it has none)."""
        return "\n".join(c.text for c in self.content if isinstance(c, TextContent))

    @classmethod
    def from_wire(cls, raw: object) -> "SamplingMessage":
        """Build a ``SamplingMessage`` from the request's wire dict.

        Raises ``InvalidParams`` if it is malformed (the server is answered with -32602).
        """
        if not isinstance(raw, dict):
            raise InvalidParams(-32602, "sampling message: expected an object")
        content = raw.get("content")
        blocks = content if isinstance(content, list) else [content]
        return cls(str(raw.get("role", "")), [parse_content(b) for b in blocks], raw)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class CreateMessageRequest(_Value):
    """``sampling/createMessage``: the server asks the client's LLM for a completion.

    ``tools``/``tool_choice`` (2025-11-25) are passed through as received; they are only sent to a
    client that declared ``sampling.tools`` (``Client(capabilities={"sampling": {"tools": {}}})``).
    """

    messages: List[SamplingMessage] = field(hash=False)
    max_tokens: int
    system_prompt: Optional[str] = None
    model_preferences: Optional[Raw] = field(default=None, hash=False)
    include_context: Optional[str] = None
    temperature: Optional[float] = None
    stop_sequences: Optional[List[str]] = field(default=None, hash=False)
    metadata: Optional[Raw] = field(default=None, hash=False)
    tools: Optional[List[Raw]] = field(default=None, hash=False)
    tool_choice: Optional[Raw] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @property
    def model_hints(self) -> List[str]:
        """The server's model name hints, in order of preference (advisory only)."""
        hints = (self.model_preferences or {}).get("hints")
        if not isinstance(hints, list):
            return []
        return [name for name in (h.get("name") for h in hints if isinstance(h, dict)) if isinstance(name, str)]

    @classmethod
    def from_wire(cls, raw: Raw) -> "CreateMessageRequest":
        """Build a ``CreateMessageRequest`` from ``sampling/createMessage`` params.

        Raises ``InvalidParams`` if they are malformed (the server is answered with -32602).
        """
        messages = raw.get("messages")
        max_tokens = raw.get("maxTokens")
        if not isinstance(messages, list) or not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            raise InvalidParams(-32602, "sampling/createMessage needs 'messages' (a list) and 'maxTokens' (an integer)")
        loose: Dict[str, Any] = raw  # the optional fields pass through as received
        return cls([SamplingMessage.from_wire(m) for m in messages], max_tokens, loose.get("systemPrompt"),
                   loose.get("modelPreferences"), loose.get("includeContext"), loose.get("temperature"),
                   loose.get("stopSequences"), loose.get("metadata"), loose.get("tools"), loose.get("toolChoice"),
                   loose.get("_meta"), raw)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class CreateMessageResult(_Value):
    """What a sampling handler returns: the model's message.

    ``content`` may be a string (sent as one text block), a content object, a wire dict, or a
    list of those (2025-11-25 allows several blocks, e.g. ``tool_use``).
    """

    content: SamplingContent = field(hash=False)
    model: str
    role: str = "assistant"
    stop_reason: Optional[str] = "endTurn"
    meta: Optional[Mapping[str, object]] = field(default=None, hash=False)

    def to_wire(self) -> Raw:
        """The ``CreateMessageResult`` wire dict sent to the server. Raises ``TypeError`` for content it cannot encode."""
        wire: Raw = {"role": self.role, "content": _content_to_wire(self.content), "model": self.model}
        if self.stop_reason is not None:
            wire["stopReason"] = self.stop_reason
        if self.meta:
            wire["_meta"] = cast(Raw, self.meta)  # sent as JSON: the encoder checks it
        return wire


def _content_to_wire(content: object) -> Any:
    if isinstance(content, list):
        return [_content_to_wire(c) for c in content]
    if isinstance(content, str):
        return {"type": "text", "text": content}
    if isinstance(content, Mapping):
        return content if isinstance(content, dict) else dict(content)
    raw = content.raw if isinstance(content, _Value) else None
    if isinstance(content, TextContent) and not raw:
        return {"type": "text", "text": content.text}
    if isinstance(raw, dict) and raw:
        return raw
    raise TypeError(f"cannot send {type(content).__name__} as sampling content; use a str or a wire dict")


# --- roots --------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Root(_Value):
    """A directory or file the server may work in (``file://`` URI), with an optional name."""

    uri: str
    name: Optional[str] = None
    meta: Optional[Mapping[str, object]] = field(default=None, hash=False)

    def to_wire(self) -> Raw:
        """The ``Root`` wire dict (``uri``, and ``name`` and ``_meta`` when set)."""
        wire: Raw = {"uri": self.uri}
        if self.name is not None:
            wire["name"] = self.name
        if self.meta:
            wire["_meta"] = cast(Raw, self.meta)
        return wire


#: One root as ``Handlers(roots=)`` and ``Client.set_roots`` take it: a ``Root``, a URI, or a wire dict.
RootEntry = Union[Root, str, Mapping[str, object]]
RootsSetting = Union[Sequence[RootEntry], Callable[[], Sequence[RootEntry]]]
#: A sampling handler: the request in, the model's message (or its wire dict) out.
SamplingHandler = Callable[[CreateMessageRequest], Union[CreateMessageResult, Mapping[str, object]]]
#: An elicitation handler: the request in, the user's answer (or its wire dict) out.
ElicitationHandler = Callable[[ElicitationRequest], Union[ElicitationResult, Mapping[str, object]]]


def normalized_root(uri: str) -> str:
    """``uri`` as a root is sent: a local ``file://`` URI of an absolute path, its percent-encoding
    decoded and re-encoded and its ``.``/``..`` segments resolved (``file:///srv/app/../../etc``
    is sent as ``file:///etc``: what it really exposes), ``localhost`` dropped. ``ValueError`` for
    anything else: another scheme, a host (``file://dir/x``: a missing slash), a relative path, a
    query or fragment, a NUL or control character, percent-encoding that is not UTF-8. The file
    system is not looked at (the server may see another one); symbolic links are not resolved."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        raise ValueError(f"a root must be a file:// URI, not {uri!r:.200}")
    if parts.netloc.lower() not in ("", "localhost"):
        raise ValueError(f"a root must be a local file:///absolute/path URI, not one naming host "
                         f"{parts.netloc!r:.100} ({uri!r:.200})")
    if parts.query or parts.fragment or "?" in uri or "#" in uri:
        raise ValueError(f"a root URI may not have a query or fragment: {uri!r:.200}")
    try:
        path = unquote(parts.path, errors="strict")
    except UnicodeDecodeError:
        raise ValueError(f"a root URI's percent-encoding is not UTF-8: {uri!r:.200}") from None
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise ValueError(f"a root URI may not hold NUL or control characters: {uri!r:.200}")
    if not path.startswith("/"):
        raise ValueError(f"a root must name an absolute path: {uri!r:.200}")
    trailing = path.endswith("/")
    path = posixpath.normpath(path)
    if path.startswith("//"):  # (normpath keeps a leading '//')
        path = "/" + path.lstrip("/")
    if trailing and path != "/":  # a directory written with its slash keeps it
        path += "/"
    return "file://" + quote(path, safe="/:@!$&'()*+,;=~")


def roots_to_wire(roots: Sequence[object]) -> List[Raw]:
    """Check and convert a roots list (``Root``, URI string, or wire dict per entry); each URI
    as ``normalized_root`` makes it (``ValueError`` if it cannot be)."""
    if isinstance(roots, (str, bytes)) or not isinstance(roots, Sequence):
        raise TypeError("roots must be a list of Root objects, URI strings or dicts")
    wire = []
    for root in roots:
        if isinstance(root, str):
            root = Root(root)
        if isinstance(root, Root):
            entry = root.to_wire()
        elif isinstance(root, Mapping) and isinstance(root.get("uri"), str):
            entry = cast(Raw, root if isinstance(root, dict) else dict(root))
        else:
            raise TypeError(f"not a root: {root!r:.100}")
        given = cast(str, entry["uri"])
        uri = normalized_root(given)
        wire.append(entry if uri == given else dict(entry, uri=uri))
    return wire
