"""Tool names a model can use: ``<server><separator><tool>`` within the rule OpenAI and Anthropic
share (``^[a-zA-Z0-9_-]{1,64}$``), unique, and the same whatever order servers and tools come in."""
from __future__ import annotations

import hashlib
import re
from typing import Dict, List, Sequence, Tuple

__all__ = ["MAX_NAME", "namespaced_names", "sanitize"]

#: The longest tool name OpenAI and Anthropic accept.
MAX_NAME = 64
_BAD = re.compile(r"[^a-zA-Z0-9_-]+")


def sanitize(text: str) -> str:
    """``text`` with every run of characters outside ``[a-zA-Z0-9_-]`` made one ``_``."""
    return _BAD.sub("_", text) or "_"


def _hashed(text: str, key: str) -> str:
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
    return f"{text[:MAX_NAME - 9]}_{digest}"


def namespaced_names(pairs: Sequence[Tuple[str, str]], separator: str = "_") -> List[str]:
    """The exposed name of each ``(server, tool)``: ``<server><separator><tool>`` with characters
    outside ``[a-zA-Z0-9_-]`` made ``_``; longer than 64, cut and given ``_`` and 8 hex digits of
    the SHA-256 of the pair. Names two pairs would share are all given that suffix, so no name
    depends on the order of the servers or tools."""
    names = []
    for server, tool in pairs:
        base = f"{sanitize(server)}{separator}{sanitize(tool)}"
        names.append(base if len(base) <= MAX_NAME else _hashed(base, f"{server}\0{tool}"))
    claims: Dict[str, int] = {}
    for name in names:
        claims[name] = claims.get(name, 0) + 1
    return [_hashed(name, f"{server}\0{tool}") if claims[name] > 1 else name
            for name, (server, tool) in zip(names, pairs)]
