"""Validation of ``structuredContent`` against a tool's ``outputSchema``.

jsonschema costs tens of milliseconds to import, so it loads with the first validation (an
optional boundary: a program whose tools have no ``outputSchema`` never pays for it). Remote ``$ref``
is never fetched: validators get an empty ``referencing.Registry``, so an external reference fails
validation instead of reaching the network. Validators are cached per schema object.
"""
from __future__ import annotations

import threading
from typing import Any, Dict, Optional

from .._util import fork as _fork
from .._util.lazy import load
from ..errors import SchemaValidationError

__all__ = ["validate_structured"]

_cache: Dict[int, Any] = {}  # id(schema) -> (schema, validator); the schema ref keeps the id valid
_lock = threading.Lock()


def _new_lock() -> None:
    """In a forked child: a thread of the parent (validating a result) may have held it."""
    global _lock
    _lock = threading.Lock()


_fork.in_child(_new_lock)


def _validator(schema: Dict[str, Any], tool: Optional[str]) -> Any:
    key = id(schema)
    entry = _cache.get(key)
    if entry is not None and entry[0] is schema:
        return entry[1]
    with _fork.importing:  # (a fork waits for it: a half-done import would hang the child)
        jsonschema = load("jsonschema")  # the first validation (see the docstring)
        validator_for = load("jsonschema.validators").validator_for
        Registry = load("referencing").Registry

    try:
        cls = validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        validator = cls(schema, registry=Registry())
    except jsonschema.SchemaError as exc:
        raise SchemaValidationError(f"tool {tool!r} has an unusable outputSchema: {exc.message}", tool=tool) from None
    except Exception as exc:  # e.g. "$schema" a number or a list: validator_for raises TypeError/AttributeError
        raise SchemaValidationError(f"tool {tool!r} has an unusable outputSchema: {type(exc).__name__}",
                                    tool=tool) from None
    with _lock:
        if len(_cache) > 1024:
            _cache.clear()
        _cache[key] = (schema, validator)
    return validator


def validate_structured(value: Any, schema: Any, tool: Optional[str] = None) -> None:
    """Raise ``SchemaValidationError`` unless ``value`` matches ``schema``."""
    if not isinstance(schema, dict):
        raise SchemaValidationError(f"tool {tool!r} has an outputSchema that is not an object", tool=tool)
    validator = _validator(schema, tool)
    try:
        error = next(iter(validator.iter_errors(value)), None)
    except Exception as exc:  # e.g. referencing.exceptions.Unresolvable for an external $ref
        raise SchemaValidationError(f"could not validate the output of tool {tool!r}: {exc}", tool=tool) from None
    if error is not None:
        path = "/".join(str(p) for p in error.absolute_path)
        where = f" at /{path}" if path else ""
        raise SchemaValidationError(
            f"structured output of tool {tool!r} does not match its outputSchema{where}: {error.message}",
            tool=tool, path=path)
