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
equal objects hash alike.
"""
# ``==``, ``hash()`` and ``repr()`` come from ``_Value``, written once, rather than generated per
# class (``eq=False, repr=False``): the same behaviour, and building the classes costs a third
# less. Every class loads on first use, through ``_util.lazy`` (PEP 562): ``mcpclient.types.Tool``
# and ``from mcpclient.types import Tool`` work as for any module, and the first lookup of a
# name builds its whole family (tools and their content; ``Implementation`` and the server's
# description; resources, prompts and completions; the rarer content; the MCP Apps metadata;
# ``Task``). Building them (``dataclasses`` with them) waits until a program meets its first
# result: for a stdio server, ``Client(...)`` and ``import`` load none of it, and the first
# ``connect()`` loads it while the server boots (benchmarks/cold.py, one-shot).
#
# Imports: ``_util`` and ``errors`` only.
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union, cast  # noqa: F401 (the annotations of the
# classes whose public home is here resolve in this namespace: typing.get_type_hints)

from .._util.lazy import lazy_names, load
from ..errors import URLElicitationRequired

if TYPE_CHECKING:
    from ._json import JSONObject, JSONValue, Raw  # noqa: F401
    from . import elicitation, handlers  # noqa: F401 (submodules, loaded on first use)
    from ._implementation import Implementation
    from ._page import Page
    from ._server import ServerInfo
    from ._tools import Content, EmbeddedResource, ResourceContents, TextContent, Tool, ToolResult, parse_content
    from ._catalog import Completion, Prompt, PromptArgument, PromptMessage, PromptResult, Resource, ResourceTemplate
    from ._content import AudioContent, ImageContent, ResourceLink, UnknownContent
    from ._tasks import Task
    from ._ui import ToolUI, UICsp, UIPermissions, UIResourceMeta  # noqa: F401 (type checkers, the reference)
    from .elicitation import ElicitationRequest

__all__ = [
    "AudioContent",
    "Completion",
    "Content",
    "EmbeddedResource",
    "ImageContent",
    "Implementation",
    "JSONObject",
    "JSONValue",
    "Page",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptResult",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "ServerInfo",
    "Task",
    "TextContent",
    "Tool",
    "ToolResult",
    "UnknownContent",
    "parse_content",
]




#: Each family of classes, in the submodule that defines it (its first name looked up loads it all).
_FAMILIES = {
    "_json": ("JSONObject", "JSONValue", "Raw"),  # (the aliases: every family's annotations name them)
    "_implementation": ("Implementation",),
    "_server": ("ServerInfo",),  # (Client.server)
    "_page": ("Page",),  # (Client.page)
    "_tools": ("Content", "EmbeddedResource", "ResourceContents", "TextContent", "Tool", "ToolResult", "parse_content"),
    # resources/, prompts/ and completion/ results
    "_catalog": ("Completion", "Prompt", "PromptArgument", "PromptMessage", "PromptResult", "Resource",
                 "ResourceTemplate"),
    "_content": ("AudioContent", "ImageContent", "ResourceLink", "UnknownContent"),  # content other than text
    "_ui": ("ToolUI", "UICsp", "UIPermissions", "UIResourceMeta"),  # MCP Apps (Tool.ui, ResourceContents.ui)
    "_tasks": ("Task",),
}
#: The public submodules (``mcpclient.types.elicitation``), loaded on first use too.
_SUBMODULES = frozenset(("elicitation", "handlers"))


def _url_elicitation(raw: Dict[str, object]) -> "ElicitationRequest":
    """One entry of ``URLElicitationRequired.elicitations`` (``errors`` imports nothing of the
    package, so the types decode it): an ``ElicitationRequest``."""
    return load(f"{__name__}.elicitation").ElicitationRequest.from_wire(raw)  # type: ignore[no-any-return]


URLElicitationRequired.decode = staticmethod(_url_elicitation)

_lazy_name = lazy_names(__name__, {name: sub for sub, names in _FAMILIES.items() for name in names}, globals())


def __getattr__(name: str) -> "Any":
    if name in _SUBMODULES:
        return load(f"{__name__}.{name}")
    found = _lazy_name(name)
    _lazy_name("Raw")  # (typing.get_type_hints resolves a class's annotations here: the aliases come along)
    return found


def __dir__() -> List[str]:
    return sorted(set(globals()) | {name for names in _FAMILIES.values() for name in names} | _SUBMODULES)
