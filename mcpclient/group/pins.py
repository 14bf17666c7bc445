"""Pinned tool definitions: notice when a server's tools change under you (a "rug pull").

A tool's description and schemas are instructions to a model; a server that changes them after
you reviewed them can change what the model does. ``ToolPins`` keeps, like ``known_hosts``, the
fingerprint of each tool you trusted, and ``check()`` reports what differs, with a readable diff.

The file is JSON, kept sorted and indented so it reviews well in version control::

    {"version": 1,
     "servers": {"<server>": {"<tool>": {"fingerprint": "<sha256 hex>",
                                         "definition": {<canonical definition>}}}}}

``definition`` is what the fingerprint covers (name, title, description, inputSchema,
outputSchema, annotations; absent ones left out), kept so a change can be shown, not just noticed.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Union

from .._util.files import write_json
from ..types._base import _SLOTS, _Value
from ..types import Tool

__all__ = ["ToolChange", "ToolPins", "tool_definition", "tool_fingerprint"]

_FIELDS = (("name", "name"), ("title", "title"), ("description", "description"), ("inputSchema", "input_schema"),
           ("outputSchema", "output_schema"), ("annotations", "annotations"))

ToolLike = Union[Tool, Mapping[str, object]]


def tool_definition(tool: ToolLike) -> Dict[str, Any]:
    """The parts of a tool (a ``Tool`` or its wire dict) a model sees, as wire keys; absent ones left out."""
    if isinstance(tool, Tool):
        values = {wire: getattr(tool, attr) for wire, attr in _FIELDS}
    elif isinstance(tool, Mapping):
        values = {wire: tool.get(wire) for wire, _ in _FIELDS}
    else:
        raise TypeError(f"expected a Tool or a tool dict, not {type(tool).__name__}")
    return {k: v for k, v in values.items() if v is not None}


def _canonical(definition: Mapping[str, Any]) -> str:
    return json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tool_fingerprint(tool: ToolLike) -> str:
    """SHA-256 (hex) of the tool's canonical JSON: name, title, description, inputSchema,
    outputSchema and annotations, keys sorted, no spaces, UTF-8."""
    return hashlib.sha256(_canonical(tool_definition(tool)).encode("utf-8")).hexdigest()


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ToolChange(_Value):
    """One difference between a server's tools and the pinned ones. ``kind`` is ``"changed"``,
    ``"added"`` (not pinned yet) or ``"removed"`` (pinned, no longer offered); ``diff`` is readable:
    ``description: 'a' -> 'b'`` for one-line text fields, a unified diff for schemas and
    multi-line text."""

    server: str
    tool: str
    kind: str
    diff: str = ""


def _diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    lines: List[str] = []
    for key, _ in _FIELDS:
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if isinstance(before, (str, type(None))) and isinstance(after, (str, type(None))):
            if "\n" not in (before or "") + (after or ""):
                lines.append(f"{key}: {before!r} -> {after!r}")
                continue
            text = [(v or "").splitlines() for v in (before, after)]  # long text: line by line
            lines.extend(difflib.unified_diff(text[0], text[1], f"{key} (pinned)", f"{key} (now)", lineterm=""))
            continue
        pretty = [json.dumps(v, sort_keys=True, indent=2, ensure_ascii=False).splitlines() if v is not None else []
                  for v in (before, after)]
        lines.extend(difflib.unified_diff(pretty[0], pretty[1], f"{key} (pinned)", f"{key} (now)", lineterm=""))
    return "\n".join(lines)


class ToolPins:
    """A file of trusted tool definitions per server. Thread-safe; every change is written at
    once, atomically (a temporary file in the same directory, then ``os.replace``)."""

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self.path = os.path.expanduser(os.fspath(path))
        self._lock = threading.Lock()
        self._servers: Dict[str, Dict[str, Dict[str, Any]]] = self._load()

    def __repr__(self) -> str:
        return f"ToolPins({self.path!r})"

    def _load(self) -> Dict[str, Dict[str, Dict[str, Any]]]:
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return {}
        except OSError as exc:  # a folder in the path is a file, no permission...
            raise ValueError(f"{self.path}: cannot read the tool pins file ({exc.strerror or exc})") from None
        except ValueError as exc:
            raise ValueError(f"{self.path}: not a tool pins file ({exc})") from None
        servers = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(servers, dict) or not all(isinstance(v, dict) for v in servers.values()):
            raise ValueError(f"{self.path}: not a tool pins file (no \"servers\" object)")
        return servers

    def pinned(self, server: str) -> Dict[str, str]:
        """``{tool: fingerprint}`` pinned for ``server``."""
        with self._lock:
            return {name: entry.get("fingerprint", "") for name, entry in self._servers.get(server, {}).items()}

    def check(self, server: str, tools: Iterable[ToolLike]) -> List[ToolChange]:
        """How ``tools`` (the server's whole list) differ from the pins, sorted by tool name.
        Nothing is written. A server never pinned reports every tool as ``added``."""
        with self._lock:
            known = dict(self._servers.get(server, {}))
        changes: List[ToolChange] = []
        seen = set()
        for tool in tools:
            definition = tool_definition(tool)
            name = definition.get("name", "")
            seen.add(name)
            entry = known.get(name)
            if entry is None:
                changes.append(ToolChange(server, name, "added"))
            elif entry.get("fingerprint") != tool_fingerprint(definition):
                changes.append(ToolChange(server, name, "changed", _diff(entry.get("definition") or {}, definition)))
        changes.extend(ToolChange(server, name, "removed") for name in known if name not in seen)
        return sorted(changes, key=lambda c: (c.tool, c.kind))

    def review(self, server: str, tools: Iterable[ToolLike]) -> List[ToolChange]:
        """``check()``, then pin the ``added`` tools (trust on first use); the other changes."""
        tools = list(tools)
        changes = self.check(server, tools)
        added = {c.tool for c in changes if c.kind == "added"}
        if added:
            self.pin(server, [t for t in tools if tool_definition(t).get("name") in added])
        return [c for c in changes if c.kind != "added"]

    def pin(self, server: str, tools: Iterable[ToolLike]) -> None:
        """Trust these tools' current definitions (others of the server stay as pinned)."""
        entries = {d["name"]: {"fingerprint": tool_fingerprint(d), "definition": d}
                   for d in (tool_definition(t) for t in tools)}
        with self._lock:
            self._servers.setdefault(server, {}).update(entries)
            self._write()

    def update(self, server: str, tools: Iterable[ToolLike]) -> None:
        """Trust exactly these tools for ``server``: pin their definitions, forget the rest."""
        with self._lock:
            self._servers[server] = {}
        self.pin(server, tools)

    def forget(self, server: str) -> None:
        """Remove every pin of ``server``."""
        with self._lock:
            if self._servers.pop(server, None) is not None:
                self._write()

    def _write(self) -> None:
        # (0644: pins are no secret; a team may keep the file in its repository)
        write_json(self.path, {"version": 1, "servers": self._servers}, mode=0o644, sort_keys=True, indent=2,
                   ensure_ascii=False)
