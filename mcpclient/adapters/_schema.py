"""JSON Schema conversion shared by the LLM adapters (plain dicts in, plain dicts out).

MCP tools declare full JSON Schema; providers accept less. ``inline_refs`` resolves local
``$ref``s (keeping only recursive ones, under ``$defs``); ``normalize`` makes the shape every
provider takes as a tool's parameters (an object at the top, no top-level combinators, no
``$schema``); ``to_strict_schema`` makes OpenAI's strict-mode subset, or raises
``StrictSchemaError`` saying why it cannot; ``prune_nulls`` maps the ``null``s strict mode makes
a model send for omitted optional arguments back to omitted ones before the tool is called.
"""
from __future__ import annotations

import copy
import json
from typing import Any, Dict, FrozenSet, List, Optional

Schema = Dict[str, Any]

__all__ = ["StrictSchemaError", "inline_refs", "normalize", "to_strict_schema", "prune_nulls", "allows_null"]


class StrictSchemaError(ValueError):
    """A schema OpenAI's strict mode cannot express; the message says where and why.

    Retrying fails the same way: send that tool non-strict (``to_openai_tools`` does so
    itself) or fix its schema.
    """


#: Keywords whose value is one schema, a list of schemas, or a name -> schema map.
_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
        "additionalItems", "unevaluatedItems", "unevaluatedProperties")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAP = ("properties", "patternProperties", "dependentSchemas")

#: Annotations: they never change which values are valid, so strict mode may drop them.
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$anchor", "default", "examples", "readOnly",
                          "writeOnly", "deprecated", "contentMediaType", "contentEncoding"})
#: What strict mode accepts besides the structural keywords handled one by one below.
_STRICT_KEEP = frozenset({"type", "description", "title", "enum", "pattern", "multipleOf", "maximum",
                          "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems"})
_STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
#: OpenAI's documented limits for one strict schema.
MAX_DEPTH, MAX_PROPERTIES, MAX_ENUM_VALUES = 10, 5000, 1000


def _pointer(root: Any, ref: str) -> Any:
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        raise StrictSchemaError(f"$ref {ref!r} is not a local reference")
    node = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise StrictSchemaError(f"$ref {ref!r} points at nothing") from None
    return node


def _def_name(ref: str) -> Optional[str]:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix) and "/" not in ref[len(prefix):]:
            return ref[len(prefix):]
    return None


def inline_refs(schema: Schema) -> Schema:
    """``schema`` with every local ``$ref`` replaced by what it points at (its sibling keywords
    win); a recursive one stays, as ``#`` or ``#/$defs/<name>`` (``definitions`` are moved to
    ``$defs``). Raises ``StrictSchemaError`` for a remote or dangling ``$ref``."""
    root = schema
    emitted: Dict[str, Any] = {}

    def walk(node: Any, stack: FrozenSet[str]) -> Any:
        if isinstance(node, bool) or not isinstance(node, dict):
            return copy.deepcopy(node)
        ref = node.get("$ref")
        if isinstance(ref, str):
            siblings = walk({k: v for k, v in node.items() if k != "$ref"}, stack)
            if ref in stack:  # a cycle: keep a reference
                if ref == "#":
                    return {"$ref": "#", **siblings}
                name = _def_name(ref)
                if name is None:
                    raise StrictSchemaError(f"recursive $ref {ref!r} outside $defs")
                if name not in emitted:
                    emitted[name] = None
                    emitted[name] = walk(_pointer(root, ref), stack)
                return {"$ref": f"#/$defs/{name}", **siblings}
            target = walk(_pointer(root, ref), stack | {ref})
            if not isinstance(target, dict):
                return target if not siblings else {**siblings}
            return {**target, **siblings}
        out: Schema = {}
        for key, value in node.items():
            if node is root and key in ("$defs", "definitions"):
                continue
            if key in _ONE:
                out[key] = walk(value, stack)
            elif key in _MANY and isinstance(value, list):
                out[key] = [walk(v, stack) for v in value]
            elif key in _MAP and isinstance(value, dict):
                out[key] = {name: walk(v, stack) for name, v in value.items()}
            else:
                out[key] = copy.deepcopy(value)
        return out

    result: Schema = walk(schema if isinstance(schema, dict) else {}, frozenset({"#"}))
    if emitted:
        result["$defs"] = emitted
    return result


def _types(schema: Any) -> List[str]:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []


def allows_null(schema: Any) -> bool:
    """Whether ``null`` is (structurally) a valid value of ``schema``."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, dict):
        return False
    if "null" in _types(schema) or (isinstance(schema.get("enum"), list) and None in schema["enum"]):
        return True
    if "const" in schema:
        return schema["const"] is None
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        return any(allows_null(b) for b in branches)
    return "type" not in schema and "enum" not in schema and "$ref" not in schema and not schema.get("allOf")


def _merge_combinators(schema: Schema) -> Schema:
    """Fold top-level ``allOf``/``anyOf``/``oneOf`` object branches into the object itself:
    every branch's properties; required are the union for ``allOf``, those every branch shares
    otherwise (a looser schema: the server still validates)."""
    properties = dict(schema.get("properties") or {})
    required = list(schema.get("required") or [])
    for key in ("allOf", "anyOf", "oneOf"):
        branches = [b for b in schema.pop(key, None) or [] if isinstance(b, dict)]
        if not branches:
            continue
        for branch in branches:
            for name, sub in (branch.get("properties") or {}).items():
                properties.setdefault(name, sub)
        sets = [set(b.get("required") or []) for b in branches]
        shared = set.union(*sets) if key == "allOf" else set.intersection(*sets)
        required += [name for name in sorted(shared) if name not in required]
    schema["properties"] = properties
    if required:
        schema["required"] = [name for name in required if name in properties]
    return schema


#: Besides the combinators, what OpenAI refuses at the top of a function's parameters ("schema
#: must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level").
_TOP_REFUSED = ("not", "enum", "const")


def normalize(schema: Optional[Schema]) -> Schema:
    """The parameters schema every provider takes: local ``$ref``s inlined (recursive ones kept
    under ``$defs``), no ``$schema``, ``type: object`` with ``properties`` at the top and no
    top-level ``allOf``/``anyOf``/``oneOf``/``not``/``enum``/``const``."""
    try:
        result = inline_refs(schema or {})
    except StrictSchemaError:  # a remote $ref: keep the schema as it is, minus its $defs
        result = {k: copy.deepcopy(v) for k, v in (schema or {}).items() if k not in ("$defs", "definitions")}
    result.pop("$schema", None)
    if any(key in result for key in ("allOf", "anyOf", "oneOf")):
        result = _merge_combinators(result)
    for key in _TOP_REFUSED:  # OpenAI refuses them at the top (a looser schema: the server still validates)
        result.pop(key, None)
    if result.get("type") != "object":
        result["type"] = "object"
    result.setdefault("properties", {})
    return result


def _nullable(schema: Schema) -> Schema:
    """``schema`` or ``null``."""
    if allows_null(schema):
        return schema
    if "$ref" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    if "anyOf" in schema:
        return {**schema, "anyOf": schema["anyOf"] + [{"type": "null"}]}
    out = dict(schema)
    types = _types(schema)
    if types:
        out["type"] = types + ["null"]
    if "enum" in out:
        out["enum"] = list(out["enum"]) + [None]
    return out


def _disjoint(branches: List[Any]) -> bool:
    """Whether no value can match two of ``branches`` (so ``oneOf`` may become ``anyOf``): each
    has one distinct, non-overlapping type, or all are objects told apart by one property's
    ``const``/``enum`` values, or all are ``const``/``enum`` with distinct values."""
    if not all(isinstance(b, dict) for b in branches):
        return False
    kinds = [_types(b) for b in branches]
    if all(len(k) == 1 for k in kinds):
        flat = [k[0] for k in kinds]
        numeric = [k for k in flat if k in ("number", "integer")]
        if len(set(flat)) == len(flat) and len(numeric) <= 1:
            return True

    def values(schema: Any) -> Optional[List[Any]]:
        if not isinstance(schema, dict):
            return None
        if "const" in schema:
            return [schema["const"]]
        return list(schema["enum"]) if isinstance(schema.get("enum"), list) else None

    def apart(sets: List[Optional[List[Any]]]) -> bool:
        seen: List[Any] = []
        for found in sets:
            if found is None or any(v in seen for v in found):
                return False
            seen += found
        return True

    if apart([values(b) for b in branches]):
        return True
    if all(kind == ["object"] for kind in kinds):
        common = set.intersection(*[set(b.get("required") or []) & set(b.get("properties") or {}) for b in branches])
        return any(apart([values(b["properties"][name]) for b in branches]) for name in sorted(common))
    return False


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


class _Strict:
    def __init__(self) -> None:
        self.properties = 0
        self.enum_values = 0

    def convert(self, node: Any, path: str, depth: int, root: bool = False) -> Schema:
        if not isinstance(node, dict) or node == {}:
            raise StrictSchemaError(f"{path}: an unconstrained value (strict mode needs a type)")
        if depth > MAX_DEPTH:
            raise StrictSchemaError(f"{path}: nested deeper than {MAX_DEPTH} levels")
        node = dict(node)
        if "allOf" in node:
            parts = node.pop("allOf")
            if not isinstance(parts, list) or len(parts) != 1 or not isinstance(parts[0], dict):
                raise StrictSchemaError(f"{path}: 'allOf' is not supported in strict mode")
            node = {**parts[0], **node}
        if "oneOf" in node:
            branches = node.pop("oneOf")
            if not isinstance(branches, list) or not _disjoint(branches) or "anyOf" in node:
                raise StrictSchemaError(f"{path}: 'oneOf' whose branches may overlap is not supported in strict mode")
            node["anyOf"] = branches
        if "const" in node:
            node["enum"] = [node.pop("const")]
        out: Schema = {}
        for key, value in node.items():
            if key in _ANNOTATIONS:
                continue
            if key == "format":
                if value in _STRICT_FORMATS:
                    out[key] = value
            elif key in _STRICT_KEEP:
                out[key] = copy.deepcopy(value)
            elif key not in ("properties", "required", "additionalProperties", "items", "anyOf", "$ref", "$defs"):
                raise StrictSchemaError(f"{path}: {key!r} is not supported in strict mode")
        default = node.get("default")
        if "default" in node and isinstance(out.get("description", ""), str):
            note = f"Default: {json.dumps(default)}."
            out["description"] = f"{out['description']} {note}" if out.get("description") else note
        if "enum" in out:
            if not isinstance(out["enum"], list) or not out["enum"]:
                raise StrictSchemaError(f"{path}: 'enum' must be a non-empty list")
            self.enum_values += len(out["enum"])
            if self.enum_values > MAX_ENUM_VALUES:
                raise StrictSchemaError(f"{path}: more than {MAX_ENUM_VALUES} enum values in all")
        if "$ref" in node:
            if len([k for k in node if k not in _ANNOTATIONS and k not in ("description", "title")]) > 1:
                raise StrictSchemaError(f"{path}: a recursive $ref beside other keywords")
            return {"$ref": node["$ref"]}  # strict mode allows no keyword beside a $ref
        if "anyOf" in node:
            branches = node["anyOf"]
            if root:
                raise StrictSchemaError("the top level may not be 'anyOf' in strict mode")
            if not isinstance(branches, list) or not branches:
                raise StrictSchemaError(f"{path}: 'anyOf' must be a non-empty list")
            # keywords beside anyOf go into each branch ((A or B) and C is (A and C) or (B and C))
            extra = {k: node[k] for k in node if k not in ("anyOf", "description", "title") and k not in _ANNOTATIONS}
            if "enum" in out:
                extra["enum"] = out["enum"]
            for key in extra:
                out.pop(key, None)
            if extra:
                if any(isinstance(b, dict) and any(k in b and b[k] != v for k, v in extra.items()) for b in branches):
                    raise StrictSchemaError(f"{path}: keywords both beside 'anyOf' and in its branches")
                branches = [{**b, **extra} if isinstance(b, dict) else b for b in branches]
            out["anyOf"] = [self.convert(b, f"{path}.anyOf[{i}]", depth + 1) for i, b in enumerate(branches)]
            return out
        types = _types(node)
        if not types and "enum" in out:  # strict mode wants a type beside an enum
            inferred = sorted({_json_type(v) for v in out["enum"]})
            out["type"] = inferred[0] if len(inferred) == 1 else inferred
        elif not types:
            if root or "properties" in node:
                types = ["object"]
                out["type"] = "object"
            else:
                raise StrictSchemaError(f"{path}: no 'type' (strict mode needs one)")
        if "object" in types:
            self._object(node, out, path, depth, root)
        elif any(k in node for k in ("properties", "required", "additionalProperties")):
            raise StrictSchemaError(f"{path}: object keywords without type 'object'")
        if "array" in types:
            items = node.get("items")
            if not isinstance(items, dict):
                raise StrictSchemaError(f"{path}: an array needs one 'items' schema in strict mode")
            out["items"] = self.convert(items, f"{path}[]", depth + 1)
        elif "items" in node:
            raise StrictSchemaError(f"{path}: 'items' without type 'array'")
        return out

    def _object(self, node: Schema, out: Schema, path: str, depth: int, root: bool) -> None:
        properties = node.get("properties")
        extra = node.get("additionalProperties")
        if extra not in (None, False):
            raise StrictSchemaError(f"{path}: open additionalProperties (a map with free keys) is not supported in strict mode")
        if properties is None:
            if not root and extra is not False:
                raise StrictSchemaError(f"{path}: an object without 'properties' (free-form) is not supported in strict mode")
            properties = {}
        if not isinstance(properties, dict):
            raise StrictSchemaError(f"{path}: 'properties' must be an object")
        required = node.get("required") or []
        missing = [name for name in required if name not in properties]
        if missing:
            raise StrictSchemaError(f"{path}: required {missing} not among the properties")
        self.properties += len(properties)
        if self.properties > MAX_PROPERTIES:
            raise StrictSchemaError(f"more than {MAX_PROPERTIES} properties in all")
        converted = {}
        for name, sub in properties.items():
            strict = self.convert(sub, f"{path}.{name}", depth + 1)
            converted[name] = strict if name in required else _nullable(strict)
        out["properties"] = converted
        out["required"] = list(properties)
        out["additionalProperties"] = False


def to_strict_schema(schema: Optional[Schema]) -> Schema:
    """``schema`` in OpenAI's strict-mode subset: every object closed (``additionalProperties:
    false``) with all its properties required, the optional ones made nullable; local ``$ref``s
    inlined (recursive ones under ``$defs``); annotations dropped (a ``default`` is said in the
    description). Raises ``StrictSchemaError`` for what strict mode cannot express (open maps,
    ``patternProperties``, ``minLength``, overlapping ``oneOf``, ...)."""
    inlined = inline_refs(schema or {})
    inlined.pop("$schema", None)
    for key in ("allOf", "anyOf", "oneOf"):
        if key in inlined:
            raise StrictSchemaError(f"the top level may not be {key!r} in strict mode")
    if inlined.setdefault("type", "object") != "object":  # a tool's arguments are an object
        raise StrictSchemaError("the top level must be an object")
    defs = inlined.pop("$defs", None) or {}
    state = _Strict()
    result = state.convert(inlined, "$", 0, root=True)
    if defs:
        result["$defs"] = {name: state.convert(sub, f"$defs.{name}", 1) for name, sub in defs.items()}
    return result


def prune_nulls(schema: Optional[Schema], arguments: Any) -> Any:
    """``arguments`` without the ``null`` values of optional properties whose own schema does
    not take ``null`` (what a strict-mode model sends for "omitted"), at any depth."""
    if not isinstance(schema, dict):
        return arguments
    if "$ref" in schema or "$defs" in schema or "definitions" in schema:
        try:
            schema = inline_refs(schema)
        except StrictSchemaError:
            return arguments
    return _prune(schema, arguments, schema.get("$defs") or {})


def _prune(schema: Any, value: Any, defs: Dict[str, Any]) -> Any:
    if not isinstance(schema, dict):
        return value
    ref = schema.get("$ref")
    name = _def_name(ref) if isinstance(ref, str) else None
    if name is not None and name in defs:
        schema = {**defs[name], **{k: v for k, v in schema.items() if k != "$ref"}}
    if isinstance(value, dict):
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            for key in ("anyOf", "oneOf", "allOf"):
                for branch in schema.get(key) or []:
                    if isinstance(branch, dict) and isinstance(branch.get("properties"), dict) and set(value) <= set(branch["properties"]):
                        return _prune(branch, value, defs)
            return value
        required = set(schema.get("required") or [])
        out = {}
        for name, item in value.items():
            sub = properties.get(name)
            if item is None and name not in required and sub is not None and not allows_null(sub):
                continue
            out[name] = _prune(sub, item, defs) if sub is not None else item
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_prune(schema["items"], item, defs) for item in value]
    return value
