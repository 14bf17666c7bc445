"""Protocol facts as data: revisions, the capability each method needs, and handshake payloads.

Pure functions and tables, no I/O and no threads, so they can be tested with plain tables.
"""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, Optional, Tuple

from ..errors import ProtocolError
from .stateless import LATEST_MODERN_VERSION, MODERN_VERSIONS

__all__ = [
    "ELICITATION_MODES",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "LOG_LEVELS",
    "SAFE_METHODS",
    "choose_offer",
    "check_server_version",
    "era_setting",
    "initialize_params",
    "listen_capabilities",
    "missing_capabilities",
    "repeat_safety",
    "required_capability",
    "server_has",
]

#: Handshake-era revisions this client speaks, newest first.
HANDSHAKE_VERSIONS: Tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[0]

#: The modes of ``elicitation/create`` a client may declare (``types.elicitation.ELICITATION_MODES``
#: too: that module parses requests; this one lets ``Client(...)`` check its settings without
#: building the elicitation types).
ELICITATION_MODES: Tuple[str, ...] = ("form", "url")

#: RFC 5424 levels used by MCP logging, lowest first.
LOG_LEVELS: Tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

#: Methods whose repetition cannot change anything on the server (the client sends them with
#: ``idempotent=True``, so a transport may repeat them after a failure that may have reached it).
SAFE_METHODS: FrozenSet[str] = frozenset({
    "initialize", "ping", "tools/list", "resources/list", "resources/templates/list", "resources/read",
    "resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get", "completion/complete",
    "logging/setLevel", "server/discover",
})


def repeat_safety(method: str) -> Optional[bool]:
    """Whether a transport may send ``method`` again after a failure that may have reached the
    server: True (safe), None (a tool call: only if its retry policy allows tool calls), False."""
    if method in SAFE_METHODS:
        return True
    return None if method == "tools/call" else False

#: method -> the server capability it needs (dotted path into ``capabilities``).
_REQUIRED = {
    "tools/list": "tools",
    "tools/call": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "resources/subscribe": "resources.subscribe",
    "resources/unsubscribe": "resources.subscribe",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "completion/complete": "completions",
    "logging/setLevel": "logging",
    "tasks/list": "tasks.list",
    "tasks/cancel": "tasks.cancel",
}


def choose_offer(protocol: str) -> str:
    """The version to offer in ``initialize`` for the ``protocol=`` setting of ``Client``."""
    if protocol in ("auto", "legacy"):
        return LATEST_HANDSHAKE_VERSION
    if protocol in HANDSHAKE_VERSIONS:
        return protocol
    raise ValueError(f"protocol must be 'auto', 'legacy' or one of {', '.join(HANDSHAKE_VERSIONS)}; "
                     f"got {protocol!r}")


def check_server_version(offered: str, answered: Any, protocol: str) -> str:
    """Accept the server's ``protocolVersion`` or raise ``ProtocolError`` naming both versions."""
    acceptable = HANDSHAKE_VERSIONS if protocol in ("auto", "legacy") else (offered,)
    if isinstance(answered, str) and answered in acceptable:
        return answered
    raise ProtocolError(f"protocol version mismatch: offered {offered}, server answered {answered!r} "
                        f"(this client accepts {', '.join(acceptable)})")


def initialize_params(version: str, client_info: Dict[str, Any], capabilities: Dict[str, Any]) -> Dict[str, Any]:
    return {"protocolVersion": version, "capabilities": capabilities, "clientInfo": client_info}


def server_has(capabilities: Optional[Dict[str, Any]], path: str) -> bool:
    """True if the dotted capability ``path`` is declared (present and not false/null)."""
    node: Any = capabilities or {}
    for part in path.split("."):
        if not isinstance(node, dict) or node.get(part) in (None, False):
            return False
        node = node[part]
    return True


def required_capability(method: str, version: Optional[str]) -> Optional[str]:
    """The capability ``method`` needs at ``version``, or None (2024-11-05 had no ``completions`` flag)."""
    needed = _REQUIRED.get(method)
    if needed == "completions" and version == "2024-11-05":
        return None
    return needed


#: ``subscriptions/listen`` filter key -> the server capability that makes it mean anything (the
#: same flags gate the handshake era's unsolicited notifications and ``resources/subscribe``).
LISTEN_FILTERS = {
    "toolsListChanged": "tools.listChanged",
    "promptsListChanged": "prompts.listChanged",
    "resourcesListChanged": "resources.listChanged",
    "resourceSubscriptions": "resources.subscribe",
}


def listen_capabilities(wanted: Dict[str, Any], capabilities: Optional[Dict[str, Any]]
                        ) -> Tuple[Dict[str, Any], Dict[str, str]]:
    """Split a listen filter into the part the server declared and, for the rest, filter key ->
    the capability it lacks. Keys with no capability of their own (``taskIds``) are kept."""
    kept: Dict[str, Any] = {}
    missing: Dict[str, str] = {}
    for key, value in wanted.items():
        needed = LISTEN_FILTERS.get(key)
        if needed is None or server_has(capabilities, needed):
            kept[key] = value
        else:
            missing[key] = needed
    return kept, missing


def missing_capabilities(capabilities: Optional[Dict[str, Any]], version: Optional[str]) -> Dict[str, str]:
    """method -> the capability it needs that the server did not declare (checked before each call)."""
    missing = {}
    for method in _REQUIRED:
        needed = required_capability(method, version)
        if needed is not None and not server_has(capabilities, needed):
            missing[method] = needed
    return missing


def era_setting(protocol: str) -> "tuple[str, Optional[str], Optional[str]]":
    """``Client(protocol=)`` as (mode, modern revision to offer, handshake revision to offer)."""
    if protocol == "auto":
        return "auto", LATEST_MODERN_VERSION, LATEST_HANDSHAKE_VERSION
    if protocol == "legacy":
        return "legacy", None, LATEST_HANDSHAKE_VERSION
    if protocol == "modern":
        return "modern", LATEST_MODERN_VERSION, None
    if protocol in MODERN_VERSIONS:
        return "modern", protocol, None
    if protocol in HANDSHAKE_VERSIONS:
        return "legacy", None, protocol
    raise ValueError(f"protocol must be 'auto', 'legacy', 'modern' or one of "
                     f"{', '.join(MODERN_VERSIONS + HANDSHAKE_VERSIONS)}; got {protocol!r}")
