"""``JSONValue`` and ``JSONObject``: what a JSON document holds, as the types of the wire dicts
the library returns (``.raw``, ``Client.request``'s result, capabilities). Inputs a user passes
(tool arguments, params, ``_meta``) take ``Mapping[str, object]``, so any dict type-checks."""
from __future__ import annotations

from typing import Dict, ForwardRef, List, Union, get_args

__all__ = ["JSONObject", "JSONValue", "Raw"]

#: Any JSON value: ``null``, a boolean, a number, a string, an array or an object.
JSONValue = Union[None, bool, int, float, str, List["JSONValue"], Dict[str, "JSONValue"]]
#: A JSON object: what MCP's results, params and capabilities are on the wire.
JSONObject = Dict[str, JSONValue]
#: A wire dict as it came: what ``.raw`` holds.
Raw = JSONObject


def _bind_to_this_module(alias: object) -> None:
    """Make the alias's inner ``"JSONValue"`` resolve here, wherever ``typing.get_type_hints``
    meets it (Python 3.9.7+; earlier ones resolve it in the annotating module)."""
    for container in get_args(alias):
        for arg in get_args(container):
            if isinstance(arg, ForwardRef):
                try:
                    arg.__forward_module__ = __name__  # type: ignore[attr-defined,unused-ignore]
                except AttributeError:
                    pass


_bind_to_this_module(JSONValue)
