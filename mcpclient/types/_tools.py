"""The wire types every program meets, built at ``import mcpclient``: ``Tool`` and ``ToolResult``,
the content blocks they carry (``TextContent``, ``ResourceContents``, ``EmbeddedResource``), the
``Content`` union and ``parse_content``.

Part of ``mcpclient.types`` (import them from there, or from ``mcpclient``); they follow that
package's rules exactly. The content blocks rarer than text are in ``_content`` and load when
the first one arrives (a program whose tools answer with text never builds them: a few ms of a
one-shot call); a tool's MCP Apps metadata (``_ui``, an extension) when first read. Both load
through ``_util.lazy.load``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, List, Optional, Union

from .._util.lazy import load
from ._base import _SLOTS, Raw, _b64decode, _opt, _require, _str, _Value, log
from ._json import JSONValue
from ..errors import ProtocolError, ToolError

if TYPE_CHECKING:
    from ._content import AudioContent, ImageContent, ResourceLink, UnknownContent
    from ._ui import ToolUI, UIResourceMeta

__all__ = ["Content", "EmbeddedResource", "ResourceContents", "TextContent", "Tool", "ToolResult", "parse_content"]


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class TextContent(_Value):
    """Text (``text``)."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    text: str
    annotations: Optional[Raw] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)
    type: str = field(default="text", init=False)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ResourceContents(_Value):
    """The contents of a resource: ``text`` for text, ``blob`` (decoded bytes) for binary."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

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
        ui = load("mcpclient.types._ui")  # MCP Apps: an extension
        return ui.parse_resource_meta(self.meta, f"resource {self.uri}")

    @property
    def is_app(self) -> bool:
        """Whether this is an MCP App's HTML (``mime_type`` is ``text/html;profile=mcp-app``,
        compared case-insensitively with its parameters normalised)."""
        ui = load("mcpclient.types._ui")  # MCP Apps: an extension
        return ui.is_app_mime(self.mime_type)

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
class EmbeddedResource(_Value):
    """Resource contents embedded in a message (``resource``)."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    resource: ResourceContents
    annotations: Optional[Raw] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)
    type: str = field(default="resource", init=False)


#: One content block. ``ImageContent``, ``AudioContent``, ``ResourceLink`` and ``UnknownContent`` are
#: defined in ``_content`` and load on first use, so they are named by string here (``typing.get_type_hints``
#: resolves them in ``mcpclient.types`` once one was looked up there, e.g. ``mcpclient.types.ImageContent``).
Content = Union[TextContent, "ImageContent", "AudioContent", "ResourceLink", EmbeddedResource, "UnknownContent"]


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


def _embedded(raw: Raw) -> Content:
    what = "embedded resource"
    return EmbeddedResource(ResourceContents.from_wire(_require(raw, "resource", what)),
                            _opt(raw, "annotations", dict, what), _opt(raw, "_meta", dict, what), raw)


def parse_content(raw: Any) -> Content:
    """Parse one content block; an unknown ``type`` becomes ``UnknownContent``."""
    if not isinstance(raw, dict):
        raise ProtocolError(f"content block: expected an object, got {type(raw).__name__}")
    kind = raw.get("type")
    if kind == "text":  # (the call_tool hot path: no other module needed)
        return _text(raw)
    if kind == "resource":
        return _embedded(raw)
    rare = load("mcpclient.types._content")  # content other than text: see the docstring
    return rare.parse_other(raw, kind)


def _parse_content_list(raw: Any, what: str) -> List[Content]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ProtocolError(f"{what}: 'content' must be a list")
    return [parse_content(item) for item in raw]


def _joined_text(content: List[Content]) -> str:
    return "\n".join(c.text for c in content if isinstance(c, TextContent))


# --- tools --------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Tool(_Value):
    """A tool the server offers. Schemas are kept exactly as received."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

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
        ui = load("mcpclient.types._ui")  # MCP Apps: an extension
        return ui.parse_tool_ui(self.meta, f"tool {self.name}")

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

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    content: List[Content] = field(hash=False)
    structured_content: JSONValue = field(default=None, hash=False)
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
        """The text parts of ``content`` in order, one per line (``""`` when there are none)."""
        return _joined_text(self.content)

    def raise_for_error(self) -> "ToolResult":
        """Raise ``ToolError`` if the tool reported an error; otherwise return self."""
        if self.is_error:
            raise ToolError(self, self.tool, self.text)
        return self
