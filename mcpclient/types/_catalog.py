"""The result types of the resources, prompts and completion requests: ``Resource``,
``ResourceTemplate``, ``PromptArgument``, ``Prompt``, ``PromptMessage``, ``PromptResult``, ``Completion``.

Part of ``mcpclient.types`` (import them from there, or from ``mcpclient``): a module of their own
so that they load on first use (PEP 562), and a program that never lists resources or prompts
does not pay for building them at ``import mcpclient``. They follow ``types``' rules exactly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, List, Mapping, Optional, Union, cast

from .._util.lazy import load
from ._base import _SLOTS, Raw, _opt, _opt_str, _require, _str, _Value, log
from ._tools import parse_content
from ..errors import ProtocolError

if TYPE_CHECKING:
    from ._tools import Content
    from ._ui import UIResourceMeta

__all__ = ["Completion", "Prompt", "PromptArgument", "PromptMessage", "PromptResult", "Resource", "ResourceTemplate"]


#: What ``completion/complete`` completes for: a prompt, a resource template or resource, a wire
#: ``ref`` dict, a prompt's name or a template's URI.
CompletionRef = Union["Prompt", "ResourceTemplate", "Resource", Mapping[str, object], str]


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Resource(_Value):
    """A resource the server lists (``resources/list``)."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    uri: str
    name: str
    title: Optional[str] = None
    description: Optional[str] = None
    mime_type: Optional[str] = None
    size: Optional[int] = None
    annotations: Optional[Raw] = field(default=None, hash=False)
    icons: Optional[List[Raw]] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw) -> "Resource":
        """Build a ``Resource`` from its wire dict (kept as ``.raw``).

        Raises ``ProtocolError`` if a required field is missing or mistyped.
        """
        what = "resource"
        return cls(_str(raw, "uri", what), _opt_str(raw, "name", what), _opt(raw, "title", str, what),
                   _opt(raw, "description", str, what), _opt(raw, "mimeType", str, what), _opt(raw, "size", int, what),
                   _opt(raw, "annotations", dict, what), _opt(raw, "icons", list, what), _opt(raw, "_meta", dict, what),
                   raw)

    @property
    def ui(self) -> Optional["UIResourceMeta"]:
        """The MCP Apps ``_meta.ui`` a listing entry may carry (CSP, permissions...); ``None``
        without one or when it is malformed (DEBUG log). ``resources/read`` has the binding one."""
        ui = load("mcpclient.types._ui")  # MCP Apps: an extension
        return ui.parse_resource_meta(self.meta, f"resource {self.uri}")


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ResourceTemplate(_Value):
    """A parameterised resource URI (RFC 6570 ``uriTemplate``)."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    uri_template: str
    name: str
    title: Optional[str] = None
    description: Optional[str] = None
    mime_type: Optional[str] = None
    annotations: Optional[Raw] = field(default=None, hash=False)
    icons: Optional[List[Raw]] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw) -> "ResourceTemplate":
        """Build a ``ResourceTemplate`` from its wire dict (kept as ``.raw``).

        Raises ``ProtocolError`` if a required field is missing or mistyped.
        """
        what = "resource template"
        return cls(_str(raw, "uriTemplate", what), _opt_str(raw, "name", what), _opt(raw, "title", str, what),
                   _opt(raw, "description", str, what), _opt(raw, "mimeType", str, what),
                   _opt(raw, "annotations", dict, what), _opt(raw, "icons", list, what), _opt(raw, "_meta", dict, what),
                   raw)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class PromptArgument(_Value):
    """One argument a prompt takes."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    name: str
    title: Optional[str] = None
    description: Optional[str] = None
    required: bool = False
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw) -> "PromptArgument":
        """Build a ``PromptArgument`` from its wire dict (kept as ``.raw``).

        Raises ``ProtocolError`` if a required field is missing or mistyped.
        """
        what = "prompt argument"
        return cls(_str(raw, "name", what), _opt(raw, "title", str, what), _opt(raw, "description", str, what),
                   raw.get("required") is True, raw)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Prompt(_Value):
    """A prompt template the server offers (``prompts/list``)."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    name: str
    title: Optional[str] = None
    description: Optional[str] = None
    arguments: List[PromptArgument] = field(default_factory=list, hash=False)
    icons: Optional[List[Raw]] = field(default=None, hash=False)
    meta: Optional[Raw] = field(default=None, hash=False)
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw) -> "Prompt":
        """Build a ``Prompt`` from its wire dict (kept as ``.raw``).

        Raises ``ProtocolError`` if a required field is missing or mistyped.
        """
        what = "prompt"
        name = _str(raw, "name", what)
        args = [PromptArgument.from_wire(a) for a in (_opt(raw, "arguments", list, what) or ())]
        return cls(name, _opt(raw, "title", str, what), _opt(raw, "description", str, what), args,
                   _opt(raw, "icons", list, what), _opt(raw, "_meta", dict, what), raw)


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class PromptMessage(_Value):
    """One message of a rendered prompt."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

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

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

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


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Completion(_Value):
    """Suggested values for an argument (``completion/complete``)."""

    __module__ = "mcpclient.types"  # its public home: reprs, pickles and the docs name it there

    values: List[str] = field(hash=False)
    total: Optional[int] = None
    has_more: bool = False
    raw: Raw = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: Raw) -> "Completion":
        """Build a ``Completion`` from its wire dict (kept as ``.raw``).

        Raises ``ProtocolError`` if a required field is missing or mistyped.
        """
        what = "completion/complete result"
        comp = _require(raw, "completion", what)
        values = comp.get("values") if isinstance(comp, dict) else None
        if not isinstance(values, list):
            raise ProtocolError(f"{what}: 'completion.values' must be a list")
        kept = [v for v in values if type(v) is str]
        if len(kept) != len(values):
            log.debug("%s: dropped %d values that are not strings", what, len(values) - len(kept))
        return cls(kept, _opt(comp, "total", int, what), comp.get("hasMore") is True, raw)

    @staticmethod
    def wire_ref(ref: "CompletionRef") -> Raw:
        """What a ``completion/complete`` request is about, on the wire: ``ref`` is a ``Prompt``,
        a ``ResourceTemplate``/``Resource``, a wire dict, a prompt name, or a URI (template).
        ``TypeError`` for anything else."""
        if isinstance(ref, Prompt):
            return {"type": "ref/prompt", "name": ref.name}
        if isinstance(ref, ResourceTemplate):
            return {"type": "ref/resource", "uri": ref.uri_template}
        if isinstance(ref, Resource):
            return {"type": "ref/resource", "uri": ref.uri}
        if isinstance(ref, Mapping):
            return cast(Raw, dict(ref))
        if isinstance(ref, str):
            return {"type": "ref/resource", "uri": ref} if ("://" in ref or "{" in ref) else \
                {"type": "ref/prompt", "name": ref}
        raise TypeError("ref must be a Prompt, ResourceTemplate, Resource, dict or str")
