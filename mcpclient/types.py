"""Result types: frozen dataclasses with snake_case fields, built from wire dicts.

Each class carries the fields of every protocol revision (absent ones are ``None``) and keeps the
wire dict untouched in ``.raw``, so fields this version does not know stay reachable. Parsing is
lenient about extras and strict only where a missing field would make the object meaningless.
The declared types always hold, whatever the server sent: a required field that is missing or of
the wrong type (a tool's ``name``, a resource's ``uri``, a list that is not a list) raises
``ProtocolError`` for the call; an optional field of the wrong type (a ``title`` that is a number,
``annotations`` that are a list) is dropped to ``None`` (or its default) with a DEBUG log on the
``mcpclient`` logger, and stays in ``.raw``. No pydantic: construction is a handful of ``dict.get``
calls.

Every class is a standard ``@dataclass(frozen=True)`` (``slots=True`` too on Python 3.10+):
``dataclasses.fields``/``asdict``/``replace`` work, and assigning to a field raises
``dataclasses.FrozenInstanceError``. ``==`` compares every field but ``raw``; ``hash()`` leaves
out the fields holding dicts, lists or arbitrary values too, so it works on every object and
equal objects hash alike. Those two and ``repr()`` come from ``_Value``, written once, rather than
generated per class (``eq=False, repr=False``): the same behaviour, and building the classes at
``import mcpclient`` costs a third less. ``Resource``, ``ResourceTemplate``, ``PromptArgument``,
``Prompt`` and ``Completion`` are defined in ``mcpclient._catalog`` and load on first use (PEP 562):
``mcpclient.types.Prompt`` (and ``from mcpclient.types import Prompt``) work as for the others.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, List, Mapping, Optional, Type, TypeVar, Union

from ._lazy import lazy_names
from ._values import _SLOTS, Raw, _opt, _opt_str, _require, _str, _Value, log
from .errors import ProtocolError, ToolError

if TYPE_CHECKING:
    from ._catalog import Completion, Prompt, PromptArgument, Resource, ResourceTemplate
    from ._ui import ToolUI, UIResourceMeta

__all__ = [
    "AudioContent",
    "Completion",
    "Content",
    "EmbeddedResource",
    "ImageContent",
    "Implementation",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptResult",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "TextContent",
    "Tool",
    "ToolResult",
    "UnknownContent",
    "parse_content",
]

def _b64decode(data: Any, what: str) -> bytes:
    if not isinstance(data, str):
        raise ProtocolError(f"{what}: base64 data must be a string")
    import base64  # deferred: import time

    try:  # line breaks (as base64.encodebytes writes them) are tolerated; other junk is not
        return base64.b64decode("".join(data.split()), validate=True)
    except ValueError as exc:  # binascii.Error is a ValueError (binascii not imported: import cost)
        raise ProtocolError(f"{what}: invalid base64 data") from exc


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Implementation(_Value):
    """Name and version of a client or server (``serverInfo``)."""

    name: str
    version: str
    title: Optional[str] = None
    description: Optional[str] = None
    website_url: Optional[str] = None
    icons: Optional[List[Raw]] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw) -> "Implementation":
        """Build an ``Implementation`` from ``serverInfo`` (lenient: a malformed one gives empty fields; never raises)."""
        raw = raw if isinstance(raw, dict) else {}
        what = "serverInfo"
        return cls(_opt_str(raw, "name", what), _opt_str(raw, "version", what), _opt(raw, "title", str, what),
                   _opt(raw, "description", str, what), _opt(raw, "websiteUrl", str, what),
                   _opt(raw, "icons", list, what), raw)


# --- content ------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class TextContent(_Value):
    """Text (``text``)."""

    text: str
    annotations: Optional[Raw] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)
    type: str = field(default="text", init=False)


_Media = TypeVar("_Media", bound="_MediaContent")


class _MediaContent(_Value):
    """What image and audio content share: ``from_wire``. Not a dataclass itself (each one costs
    import time): both declare the same fields, ``data, mime_type, annotations, meta, raw``."""

    __slots__ = ()

    @classmethod
    def from_wire(cls: Type[_Media], raw: Raw) -> _Media:
        """Build image or audio content from its wire dict.

        Raises ``ProtocolError`` if ``data`` is missing or not valid base64.
        """
        what = f"{raw.get('type')} content"
        return cls(_b64decode(raw.get("data"), what), _opt_str(raw, "mimeType", what),
                   _opt(raw, "annotations", dict, what), _opt(raw, "_meta", dict, what), raw)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ImageContent(_MediaContent):
    """An image; ``data`` is the decoded bytes (the wire carries base64)."""

    data: bytes = field(repr=False)
    mime_type: str
    annotations: Optional[Raw] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)
    type: str = field(default="image", init=False)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class AudioContent(_MediaContent):
    """Audio; ``data`` is the decoded bytes (the wire carries base64)."""

    data: bytes = field(repr=False)
    mime_type: str
    annotations: Optional[Raw] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)
    type: str = field(default="audio", init=False)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ResourceContents(_Value):
    """The contents of a resource: ``text`` for text, ``blob`` (decoded bytes) for binary."""

    uri: str
    mime_type: Optional[str] = None
    text: Optional[str] = None
    blob: Optional[bytes] = field(default=None, repr=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw) -> "ResourceContents":
        """Build a ``ResourceContents`` from its wire dict (kept as ``.raw``).

        Raises ``ProtocolError`` if a required field is missing or mistyped.
        """
        what = "resource contents"
        uri = _str(raw, "uri", what)
        blob = raw.get("blob")
        return cls(uri, _opt(raw, "mimeType", str, what), _opt(raw, "text", str, what),
                   None if blob is None else _b64decode(blob, f"resource {uri}"), _opt(raw, "_meta", dict, what), raw)

    @property
    def ui(self) -> Optional["UIResourceMeta"]:
        """The MCP Apps ``_meta.ui`` of a UI resource (CSP, permissions...); ``None`` without one or
        when it is malformed (DEBUG log)."""
        from ._ui import parse_resource_meta  # deferred: import cost (MCP Apps only)

        return parse_resource_meta(self.meta, f"resource {self.uri}")

    @property
    def is_app(self) -> bool:
        """Whether this is an MCP App's HTML (``mime_type`` is ``text/html;profile=mcp-app``,
        compared case-insensitively with its parameters normalised)."""
        from ._ui import is_app_mime  # deferred: import cost (MCP Apps only)

        return is_app_mime(self.mime_type)

    @property
    def html(self) -> Optional[str]:
        """The contents as text: ``text``, or ``blob`` decoded as UTF-8; ``None`` when there is
        neither or the blob is no UTF-8 (DEBUG log)."""
        if self.text is not None or self.blob is None:
            return self.text
        try:
            return self.blob.decode("utf-8")
        except UnicodeDecodeError:
            log.debug("resource %s: its blob is no UTF-8 text", self.uri)
            return None


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ResourceLink(_Value):
    """A link to a resource the server can serve (``resource_link``)."""

    uri: str
    name: str
    title: Optional[str] = None
    description: Optional[str] = None
    mime_type: Optional[str] = None
    size: Optional[int] = None
    annotations: Optional[Raw] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)
    type: str = field(default="resource_link", init=False)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class EmbeddedResource(_Value):
    """Resource contents embedded in a message (``resource``)."""

    resource: ResourceContents
    annotations: Optional[Raw] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)
    type: str = field(default="resource", init=False)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class UnknownContent(_Value):
    """A content block of a type this version does not know; kept, never an error."""

    type: str
    raw: Raw = field(default_factory=dict, repr=False, compare=False)


Content = Union[TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource, UnknownContent]


def _text(raw: Raw) -> Content:
    text = raw.get("text")
    if not isinstance(text, str):
        raise ProtocolError("text content: 'text' must be a string")
    annotations, meta = raw.get("annotations"), raw.get("_meta")  # (inline: the call_tool hot path)
    if annotations is not None and type(annotations) is not dict:
        annotations = _opt(raw, "annotations", dict, "text content")
    if meta is not None and type(meta) is not dict:
        meta = _opt(raw, "_meta", dict, "text content")
    return TextContent(text, annotations, meta, raw)


def _link(raw: Raw) -> Content:
    what = "resource_link"
    return ResourceLink(_str(raw, "uri", what), _opt_str(raw, "name", what), _opt(raw, "title", str, what),
                        _opt(raw, "description", str, what), _opt(raw, "mimeType", str, what),
                        _opt(raw, "size", int, what), _opt(raw, "annotations", dict, what),
                        _opt(raw, "_meta", dict, what), raw)


def _embedded(raw: Raw) -> Content:
    what = "embedded resource"
    return EmbeddedResource(ResourceContents.from_wire(_require(raw, "resource", what)),
                            _opt(raw, "annotations", dict, what), _opt(raw, "_meta", dict, what), raw)


_CONTENT_PARSERS: Mapping[str, Callable[[Raw], Content]] = {
    "text": _text, "image": ImageContent.from_wire, "audio": AudioContent.from_wire, "resource_link": _link, "resource": _embedded,
}


def parse_content(raw: Any) -> Content:
    """Parse one content block; an unknown ``type`` becomes ``UnknownContent``."""
    if not isinstance(raw, dict):
        raise ProtocolError(f"content block: expected an object, got {type(raw).__name__}")
    kind = raw.get("type")
    parser = _CONTENT_PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:  # (a type that is no string is named by its JSON kind, never str()'d whole)
        return UnknownContent(kind if type(kind) is str else _json_kind(kind), raw)
    return parser(raw)


def _json_kind(value: Any) -> str:
    return "None" if value is None else str(value) if type(value) in (int, float, bool) else type(value).__name__


def _parse_content_list(raw: Any, what: str) -> List[Content]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ProtocolError(f"{what}: 'content' must be a list")
    return [parse_content(item) for item in raw]


def _joined_text(content: List[Content]) -> str:
    return "".join(c.text for c in content if isinstance(c, TextContent))


# --- tools --------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Tool(_Value):
    """A tool the server offers. Schemas are kept exactly as received."""

    name: str
    title: Optional[str] = None
    description: Optional[str] = None
    input_schema: Raw = field(default_factory=dict, hash=False)
    output_schema: Optional[Raw] = field(default=None, hash=False)
    annotations: Optional[Raw] = field(default=None, hash=False)
    icons: Optional[List[Raw]] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw) -> "Tool":
        """Build a ``Tool`` from its wire dict (kept as ``.raw``).

        Raises ``ProtocolError`` if a required field is missing or mistyped.
        """
        what = "tool"
        return cls(_str(raw, "name", what), _opt(raw, "title", str, what), _opt(raw, "description", str, what),
                   _opt(raw, "inputSchema", dict, what) or {}, _opt(raw, "outputSchema", dict, what),
                   _opt(raw, "annotations", dict, what), _opt(raw, "icons", list, what), _opt(raw, "_meta", dict, what),
                   raw)

    @property
    def task_support(self) -> str:
        """``execution.taskSupport`` (2025-11-25): ``forbidden`` (the default), ``optional`` or ``required``."""
        execution = self.raw.get("execution")
        value = execution.get("taskSupport") if isinstance(execution, dict) else None
        return value if value in ("optional", "required") else "forbidden"

    @property
    def ui(self) -> Optional["ToolUI"]:
        """The MCP Apps ``_meta.ui`` (or the deprecated flat ``_meta["ui/resourceUri"]``): the UI
        resource the tool renders in and its ``visibility``; ``None`` without one or when it is
        malformed (DEBUG log)."""
        from ._ui import parse_tool_ui  # deferred: import cost (MCP Apps only)

        return parse_tool_ui(self.meta, f"tool {self.name}")

    @property
    def model_visible(self) -> bool:
        """Whether the model may see and call this tool: ``True`` unless its ``ui.visibility``
        leaves out ``"model"`` (an app-only tool, which hosts keep out of the agent's list)."""
        ui = self.ui
        return ui is None or ui.model_visible

    @property
    def display_name(self) -> str:
        """``title``, then ``annotations.title``, then ``name`` (the spec's precedence)."""
        title = (self.annotations or {}).get("title")
        return self.title or (title if type(title) is str else None) or self.name


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ToolResult(_Value):
    """The result of ``tools/call``. ``is_error`` is data: call ``raise_for_error()`` to raise."""

    content: List[Content] = field(hash=False)
    structured_content: Any = field(default=None, hash=False)
    is_error: bool = False
    meta: Optional[Raw] = field(default=None, hash=False)
    tool: Optional[str] = None
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw, tool: Optional[str] = None) -> "ToolResult":
        """Build a ``ToolResult`` from its wire dict (kept as ``.raw``).

        Raises ``ProtocolError`` if a required field is missing or mistyped.
        """
        if not isinstance(raw, dict):
            raise ProtocolError("tools/call result: expected an object")
        meta = raw.get("_meta")
        return cls(_parse_content_list(raw.get("content"), "tools/call result"),
                   raw.get("structuredContent"), raw.get("isError") is True,
                   meta if meta is None or type(meta) is dict else _opt(raw, "_meta", dict, "tools/call result"),
                   tool, raw)

    @property
    def text(self) -> str:
        """The text parts of ``content`` joined in order (``""`` when there are none)."""
        return _joined_text(self.content)

    def raise_for_error(self) -> "ToolResult":
        """Raise ``ToolError`` if the tool reported an error; otherwise return self."""
        if self.is_error:
            raise ToolError(self, self.tool)
        return self


# --- prompts and completion ---------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class PromptMessage(_Value):
    """One message of a rendered prompt."""

    role: str
    content: Content
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw) -> "PromptMessage":
        """Build a ``PromptMessage`` from its wire dict (kept as ``.raw``).

        Raises ``ProtocolError`` if a required field is missing or mistyped.
        """
        return cls(_str(raw, "role", "prompt message"), parse_content(_require(raw, "content", "prompt message")), raw)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class PromptResult(_Value):
    """The result of ``prompts/get``."""

    messages: List[PromptMessage] = field(hash=False)
    description: Optional[str] = None
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw) -> "PromptResult":
        """Build a ``PromptResult`` from its wire dict (kept as ``.raw``).

        Raises ``ProtocolError`` if a required field is missing or mistyped.
        """
        messages = _require(raw, "messages", "prompts/get result")
        if not isinstance(messages, list):
            raise ProtocolError("prompts/get result: 'messages' must be a list")
        what = "prompts/get result"
        return cls([PromptMessage.from_wire(m) for m in messages], _opt(raw, "description", str, what),
                   _opt(raw, "_meta", dict, what), raw)


#: The result types of resources/, prompts/ and completion/ requests: defined in ``_catalog``,
#: loaded on first use (PEP 562) so that ``import mcpclient`` does not build them.
_CATALOG = frozenset(("Completion", "Prompt", "PromptArgument", "Resource", "ResourceTemplate"))


#: The MCP Apps types (``Tool.ui``, ``ResourceContents.ui``): defined in ``_ui``, loaded on first use.
_UI = frozenset(("ToolUI", "UICsp", "UIPermissions", "UIResourceMeta"))


__getattr__ = lazy_names(__name__, {**dict.fromkeys(_CATALOG, "_catalog"), **dict.fromkeys(_UI, "_ui")}, globals(),
                         package="mcpclient")


def __dir__() -> List[str]:
    return sorted(set(globals()) | _CATALOG | _UI)
