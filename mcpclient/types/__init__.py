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
``import mcpclient`` costs a third less. ``TextContent``, ``ResourceContents``, ``EmbeddedResource``,
``Content`` and ``parse_content`` are defined in ``mcpclient._blocks``. ``Resource``, ``ResourceTemplate``,
``PromptArgument``, ``Prompt``, ``PromptMessage``, ``PromptResult`` and ``Completion`` are defined in
``mcpclient._catalog``, ``ImageContent``, ``AudioContent``, ``ResourceLink`` and ``UnknownContent``
(content rarer than text) in ``mcpclient._content``; those load on first use (PEP 562):
``mcpclient.types.Prompt`` (and ``from mcpclient.types import Prompt``) work as for the others.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, List, Optional

from ._blocks import Content, EmbeddedResource, ResourceContents, TextContent, _joined_text, _parse_content_list, parse_content
from .._util.lazy import lazy_names
from ._base import _SLOTS, Raw, _opt, _opt_str, _str, _Value
from ..errors import ProtocolError, ToolError, URLElicitationRequired

if TYPE_CHECKING:
    from ._catalog import Completion, Prompt, PromptArgument, PromptMessage, PromptResult, Resource, ResourceTemplate
    from ._content import AudioContent, ImageContent, ResourceLink, UnknownContent
    from ._tasks import Task
    from ._ui import ToolUI

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
    "Task",
    "TextContent",
    "Tool",
    "ToolResult",
    "UnknownContent",
    "parse_content",
]


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


#: The result types of resources/, prompts/ and completion/ requests: defined in ``_catalog``,
#: loaded on first use (PEP 562) so that ``import mcpclient`` does not build them.
_CATALOG = frozenset(("Completion", "Prompt", "PromptArgument", "PromptMessage", "PromptResult", "Resource",
                      "ResourceTemplate"))


#: The content blocks other than text: defined in ``_content``, loaded on first use (``parse_content``
#: loads them when such a block arrives).
_CONTENT = frozenset(("AudioContent", "ImageContent", "ResourceLink", "UnknownContent"))


#: The MCP Apps types (``Tool.ui``, ``ResourceContents.ui``): defined in ``_ui``, loaded on first use.
_UI = frozenset(("ToolUI", "UICsp", "UIPermissions", "UIResourceMeta"))


def _url_elicitation(raw: Raw) -> Any:
    """One entry of ``URLElicitationRequired.elicitations`` (``errors`` imports nothing of the
    package, so the types decode it): an ``ElicitationRequest``, loaded on first use."""
    from .elicitation import ElicitationRequest  # deferred: import cost (only this error needs it)

    return ElicitationRequest.from_wire(raw)


URLElicitationRequired.decode = staticmethod(_url_elicitation)  # type: ignore[assignment]

__getattr__ = lazy_names(__name__, {**dict.fromkeys(_CATALOG, "_catalog"), **dict.fromkeys(_CONTENT, "_content"),
                                    **dict.fromkeys(_UI, "_ui"), "Task": "_tasks"}, globals())


def __dir__() -> List[str]:
    return sorted(set(globals()) | _CATALOG | _CONTENT | _UI | {"Task"})
