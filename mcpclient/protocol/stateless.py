"""The 2026-07-28 ("modern", stateless) era as data and pure functions.

No handshake: every request carries the protocol version, the client's capabilities and identity
in ``params._meta``; ``server/discover`` replaces ``initialize``; results carry ``resultType``;
a server that needs input answers ``input_required`` and the client repeats the request with
the answers (multi-round-trip requests, MRTR). Over HTTP every request also carries routing
headers (``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``). This module holds those rules; the
client and the HTTP transport apply them. No I/O here.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .._util.lazy import load
from ..errors import ProtocolError

__all__ = [
    "LATEST_MODERN_VERSION",
    "MODERN_VERSIONS",
    "MRTR_METHODS",
    "encode_header_value",
    "header_params",
    "mutual_version",
    "param_headers",
    "request_meta",
    "result_type",
    "routing_headers",
]

#: tool name -> its ``x-mcp-header`` arguments (``header_params``), filled while listing tools.
ToolHeaders = Dict[str, List[Tuple[Tuple[str, ...], str]]]

#: Modern revisions this client speaks, newest first.
MODERN_VERSIONS: Tuple[str, ...] = ("2026-07-28",)
LATEST_MODERN_VERSION = MODERN_VERSIONS[0]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"

#: The only methods whose result may be ``input_required``.
MRTR_METHODS = frozenset(("tools/call", "prompts/get", "resources/read"))
#: Methods whose ``Mcp-Name`` header names their target, and the param that holds it.
NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
                 "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
#: The Tasks extension's methods: sent with ``Mcp-Name: <taskId>`` over HTTP in both eras.
TASK_EXTENSION_METHODS = frozenset(("tasks/get", "tasks/update", "tasks/cancel"))


def request_meta(version: str, capabilities: Dict[str, Any], client_info: Dict[str, Any],
                 log_level: Optional[str] = None) -> Dict[str, Any]:
    """The ``_meta`` every modern request carries."""
    meta = {META_VERSION: version, META_CAPABILITIES: capabilities, META_CLIENT_INFO: client_info}
    if log_level is not None:
        meta[META_LOG_LEVEL] = log_level
    return meta


def with_meta(params: Optional[Dict[str, Any]], meta: Dict[str, Any]) -> Dict[str, Any]:
    """``params`` plus the modern ``_meta`` (keys the caller put in ``_meta`` are kept)."""
    if not params:
        return {"_meta": meta}
    own = params.get("_meta")
    merged = dict(params)
    merged["_meta"] = {**own, **meta} if isinstance(own, dict) else meta
    return merged


def result_type(raw: Any) -> str:
    """``complete`` (also when absent: legacy servers), ``input_required``, or another value."""
    if not isinstance(raw, dict):
        raise ProtocolError("result is not an object")
    kind = raw.get("resultType", "complete")
    if not isinstance(kind, str):
        raise ProtocolError(f"resultType is not a string: {kind!r:.50}")
    return kind


def mutual_version(supported: Any) -> Optional[str]:
    """The newest modern revision both sides speak, from a server's list (or None)."""
    if not isinstance(supported, list):
        return None
    return next((v for v in MODERN_VERSIONS if v in supported), None)


# --- HTTP routing headers (Mcp-Name, Mcp-Param-*) ---------------------------------------------------

#: RFC 9110 tchar (a set, not a compiled pattern: no regex compiled at import)
_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_MAX_SAFE_INTEGER = 2 ** 53 - 1


def encode_header_value(value: Any) -> str:
    """A header value as the spec encodes it: booleans ``true``/``false``, integers in decimal,
    strings as they are unless they are not plain visible ASCII, have surrounding whitespace or
    look like the sentinel — those go as ``=?base64?<base64 of UTF-8>?=``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    text = str(value)
    if text.isascii() and text.isprintable() and text == text.strip() and not (text.startswith("=?base64?") and text.endswith("?=")):
        return text
    base64 = load("base64")  # (only a value that is not plain ASCII needs it: it loads then)
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def header_params(schema: Any) -> List[Tuple[Tuple[str, ...], str]]:
    """The ``x-mcp-header`` annotations of a tool's ``inputSchema``: ``[(property path, header
    name)]``. Raises ``ValueError`` naming the broken rule (the tool must then be dropped)."""
    found: List[Tuple[Tuple[str, ...], str]] = []
    _collect(schema, (), found, reachable=True)
    seen: Dict[str, str] = {}
    for _, name in found:
        if name.lower() in seen:
            raise ValueError(f"x-mcp-header {name!r} is used twice (case-insensitively)")
        seen[name.lower()] = name
    return found


def _collect(node: Any, path: Tuple[str, ...], found: List[Tuple[Tuple[str, ...], str]], reachable: bool) -> None:
    if isinstance(node, list):
        for item in node:
            _collect(item, path, found, reachable=False)
        return
    if not isinstance(node, dict):
        return
    if "x-mcp-header" in node and path:
        name = node["x-mcp-header"]
        if not reachable:
            raise ValueError(f"x-mcp-header on {'.'.join(path)} is not reachable through 'properties' alone")
        if not isinstance(name, str) or not name:
            raise ValueError(f"x-mcp-header on {'.'.join(path)} is empty or not a string")
        if not _TCHAR.issuperset(name):
            raise ValueError(f"x-mcp-header {name!r} is not an HTTP token (letters, digits, !#$%&'*+-.^_`|~)")
        kind = node.get("type")
        if kind not in ("string", "integer", "boolean"):
            raise ValueError(f"x-mcp-header {name!r} is on a {kind!r} property (only string, integer, boolean)")
        found.append((path, name))
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            for prop, sub in value.items():
                _collect(sub, path + (prop,), found, reachable)
        elif isinstance(value, (dict, list)) and key not in ("x-mcp-header", "const", "enum", "default", "examples"):
            _collect(value, path + (f"<{key}>",), found, reachable=False)


def param_headers(arguments: Any, spec: Sequence[Tuple[Tuple[str, ...], str]]) -> Dict[str, str]:
    """``Mcp-Param-<Name>`` headers for one ``tools/call`` (absent or null arguments get none)."""
    headers: Dict[str, str] = {}
    for path, name in spec:
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is None or isinstance(value, (dict, list)):
            continue
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_SAFE_INTEGER:
            continue
        headers[f"Mcp-Param-{name}"] = encode_header_value(value)
    return headers


def routing_headers(method: str, params: Optional[Dict[str, Any]], version: str,
                    tool_specs: Mapping[str, Sequence[Tuple[Tuple[str, ...], str]]]) -> Dict[str, str]:
    """The HTTP headers a 2026-07-28 request carries besides its body: ``MCP-Protocol-Version``,
    ``Mcp-Method``, ``Mcp-Name`` for methods that name a target, and for ``tools/call`` the
    ``Mcp-Param-*`` headers of the tool's ``x-mcp-header`` arguments.

    Args:
        method: the request's method.
        params: its params (``name``/``uri``/``arguments`` are read from them).
        version: the negotiated protocol version.
        tool_specs: tool name -> its ``header_params`` (from the tools the client listed).
    """
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    name_key = NAMED_METHODS.get(method)
    name = params.get(name_key) if name_key and isinstance(params, dict) else None
    if isinstance(name, str):
        headers["Mcp-Name"] = encode_header_value(name)
        spec = tool_specs.get(name) if method == "tools/call" else None
        if spec:
            headers.update(param_headers(params.get("arguments"), spec))  # type: ignore[union-attr]
    return headers
