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
# class (``eq=False, repr=False``): the same behaviour, and building the classes at
# ``import mcpclient`` costs a third less. What every program meets (tools, tool results, text and
# resource content, ``Implementation``, the elicitation requests) is built at import; the resources,
# prompts and completion types and the content rarer than text load on first use (a few ms each of
# a one-shot call that never meets them), the MCP Apps metadata and ``Task`` with their extensions,
# through ``_util.lazy`` (PEP 562): ``mcpclient.types.Prompt`` (and ``from mcpclient.types import
# Prompt``) work as for the others.
#
# Imports: ``_util`` and ``errors`` only.
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union, cast  # noqa: F401 (the annotations of the
# classes whose public home is here resolve in this namespace: typing.get_type_hints)

from .._util.lazy import lazy_names
from ..errors import URLElicitationRequired
from ._base import Raw
from ._implementation import Implementation, Page, ServerInfo
from ._json import JSONObject, JSONValue
from ._tools import Content, EmbeddedResource, ResourceContents, TextContent, Tool, ToolResult, parse_content
from . import elicitation

if TYPE_CHECKING:
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




#: The result types of resources/, prompts/ and completion/ requests: defined in ``_catalog``,
#: loaded on first use (PEP 562) so that ``import mcpclient`` does not build them.
_CATALOG = frozenset(("Completion", "Prompt", "PromptArgument", "PromptMessage", "PromptResult", "Resource",
                      "ResourceTemplate"))


#: The content blocks other than text: defined in ``_content``, loaded on first use (``parse_content``
#: loads them when such a block arrives).
_CONTENT = frozenset(("AudioContent", "ImageContent", "ResourceLink", "UnknownContent"))


#: The MCP Apps types (``Tool.ui``, ``ResourceContents.ui``): defined in ``_ui``, loaded on first use.
_UI = frozenset(("ToolUI", "UICsp", "UIPermissions", "UIResourceMeta"))


def _url_elicitation(raw: Dict[str, object]) -> "ElicitationRequest":
    """One entry of ``URLElicitationRequired.elicitations`` (``errors`` imports nothing of the
    package, so the types decode it): an ``ElicitationRequest``."""
    return elicitation.ElicitationRequest.from_wire(cast(Raw, raw))  # (a decoded JSON object)


URLElicitationRequired.decode = staticmethod(_url_elicitation)

__getattr__ = lazy_names(__name__, {**dict.fromkeys(_CATALOG, "_catalog"), **dict.fromkeys(_CONTENT, "_content"),
                                    **dict.fromkeys(_UI, "_ui"), "Task": "_tasks"}, globals())


def __dir__() -> List[str]:
    return sorted(set(globals()) | _CATALOG | _CONTENT | _UI | {"Task"})
