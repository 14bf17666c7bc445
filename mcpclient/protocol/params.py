"""Argument checks, request params and result transforms of the public request methods.

Pure functions: each builds a request's params from what the user passed (``TypeError`` /
``ValueError`` for a mistake, before anything is sent) or turns a raw result into the typed
value (``ProtocolError`` for a malformed one). Transforms run on the caller's or a worker's
thread, never the reader's. ``pages`` walks a paginated list as one call of several rounds.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Tuple

from .validation import validate_structured
from ..errors import ProtocolError, SchemaValidationError, TooManyPages
from .._util.sentinel import DEFAULT_MAX_PAGES
from .._engine.replies import NextRound
from .spec import LOG_LEVELS
from .. import types as _types  # (its classes load with the first result: see there)

if TYPE_CHECKING:
    from ..types import ResourceContents, Tool, ToolResult

__all__ = ["complete_params", "contents", "level", "listen_filter", "none", "one_page", "page_items", "pages",
           "prompt_params", "tool_call", "uri"]

log = logging.getLogger("mcpclient")


def none(raw: Any) -> None:
    """The transform of an empty result (``ping``, ``logging/setLevel``, subscriptions). A result
    of another kind (``resultType: "task"``) cannot answer these: the spec makes it invalid."""
    if type(raw) is dict and raw.get("resultType", "complete") != "complete":
        raise ProtocolError(f"a result of type {raw['resultType']!r:.50} answered a request that cannot "
                            "create a task or ask for input")


def uri(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError("uri must be a non-empty string")
    return value


def level(value: str) -> str:
    if value not in LOG_LEVELS:
        raise ValueError(f"level must be one of {', '.join(LOG_LEVELS)}; got {value!r}")
    return value


def contents(raw: Any) -> List[ResourceContents]:
    if not isinstance(raw, dict) or not isinstance(raw.get("contents"), list):
        raise ProtocolError("resources/read result has no 'contents' list")
    parse = _types.ResourceContents.from_wire
    return [parse(c) for c in raw["contents"]]


def prompt_params(name: str, arguments: Optional[Dict[str, str]]) -> Dict[str, Any]:
    if not isinstance(name, str):
        raise TypeError("prompt name must be a string")
    params: Dict[str, Any] = {"name": name}
    if arguments:
        params["arguments"] = {str(k): str(v) for k, v in arguments.items()}
    return params


def complete_params(ref: Dict[str, Any], name: str, value: str, context: Optional[Dict[str, str]]) -> Dict[str, Any]:
    """``completion/complete`` params for the wire ``ref`` (``Completion.wire_ref``)."""
    params: Dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if context:
        params["context"] = {"arguments": dict(context)}
    return params


def listen_filter(tools: bool, prompts: bool, resources: bool, resource_uris: List[str]) -> Dict[str, Any]:
    """What ``listen()`` asks for, as the wire's filter (``subscriptions/listen`` in 2026; the
    handshake era routes its notifications by it)."""
    wanted: Dict[str, Any] = {}
    if tools:
        wanted["toolsListChanged"] = True
    if prompts:
        wanted["promptsListChanged"] = True
    if resources:
        wanted["resourcesListChanged"] = True
    if resource_uris:
        wanted["resourceSubscriptions"] = list(resource_uris)
    return wanted


def tool_call(name: str, arguments: Optional[Mapping[str, object]], raise_on_error: bool,
              meta: Optional[Mapping[str, object]],
              known: Optional[Tool], learn: Optional[Callable[[], Optional[Tool]]] = None,
              ) -> Tuple[Dict[str, Any], Callable[[Any], ToolResult]]:
    """``tools/call`` params and the transform that parses, validates (against ``known``'s
    ``outputSchema``, when given; else against that of the tool ``learn()`` returns, if given:
    the tools are listed then, by whoever runs the transform) and optionally raises ``ToolError``."""
    if not isinstance(name, str):
        raise TypeError("tool name must be a string")
    if arguments is not None and type(arguments) is not dict and not isinstance(arguments, Mapping):
        raise TypeError("tool arguments must be a dict")
    given = arguments if isinstance(arguments, dict) or arguments is None else dict(arguments)
    params: Dict[str, Any] = {"name": name, "arguments": given if given is not None else {}}
    if meta:
        params["_meta"] = dict(meta)
    schema = known.output_schema if known is not None else None
    parse = _types.ToolResult.from_wire

    def transform(raw: Any) -> ToolResult:
        kind = raw.get("resultType", "complete") if type(raw) is dict else "complete"
        if kind != "complete":  # (a kind a declared extension claims was resolved before this)
            raise ProtocolError(f"tools/call {name!r}: unexpected resultType {kind!r:.50}")
        result = parse(raw, name)
        checked = schema
        if checked is None and learn is not None and not result.is_error:
            learned = learn()
            checked = learned.output_schema if learned is not None else None
        if checked is not None and not result.is_error:
            if result.structured_content is None:
                raise SchemaValidationError(f"tool {name!r} declares an outputSchema but returned no "
                                            "structuredContent", tool=name)
            validate_structured(result.structured_content, checked, name)
        if raise_on_error:
            result.raise_for_error()
        return result
    return params, transform


def _utf8(text: str) -> bool:
    """Whether ``text`` can be sent back (a lone surrogate, from JSON's ``\\ud800``, cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def page_items(result: Any, key: str, method: str) -> Tuple[list, Any]:
    """One page of a list result: its items and the next cursor (or None)."""
    if not isinstance(result, dict) or not isinstance(result.get(key), list):
        raise ProtocolError(f"{method} result has no {key!r} list")
    cursor = result.get("nextCursor")
    if cursor is not None and (not isinstance(cursor, str) or not cursor.isascii() and not _utf8(cursor)):
        raise ProtocolError(f"{method} result has a nextCursor that is not a string of Unicode text")
    return result[key], cursor




class pages:  # noqa: N801 - used like a function: pages(method, key, parse)
    """The transform of a whole listing: parse each page's items (``parse`` may return None to
    drop one) into ``items``, ask for the next page (``NextRound``) until there is none, return them
    all. A cursor the server repeats ends the walk with a warning (a server paging in circles);
    a next page past ``max_pages`` (``Limits(pages=)``) raises ``TooManyPages``."""

    def __init__(self, method: str, key: str, parse: Callable[[Any], Any], max_pages: int = DEFAULT_MAX_PAGES) -> None:
        self.method, self.key, self.parse = method, key, parse
        self.max_pages = max_pages
        self.items: List[Any] = []
        self._seen: set = set()

    def __call__(self, raw: Any) -> Any:
        found, cursor = page_items(raw, self.key, self.method)
        for entry in found:
            item = self.parse(entry)
            if item is not None:
                self.items.append(item)
        if cursor is None:
            return self.items
        if cursor in self._seen:
            log.warning("%s: server repeated cursor %.80r; stopping pagination", self.method, cursor)
            return self.items
        if len(self._seen) + 1 >= self.max_pages:  # (the pages read so far: one per cursor seen, and this one)
            raise TooManyPages(f"{self.method}: the server offered more than Limits(pages={self.max_pages}) pages",
                               method=self.method, pages=self.max_pages)
        self._seen.add(cursor)
        return NextRound({"cursor": cursor})


def one_page(method: str, key: str, parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The transform of one page of a listing: its parsed items (``parse`` may return None to
    drop one) and the next cursor, as a ``Page``."""
    def transform(raw: Any) -> Any:
        found, cursor = page_items(raw, key, method)
        return _types.Page([item for item in map(parse, found) if item is not None], cursor)
    return transform

