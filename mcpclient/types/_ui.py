"""MCP Apps typing (extension ``io.modelcontextprotocol/ui``, stable 2026-01-26): the ``_meta.ui``
of a tool (``ToolUI``) and of a UI resource (``UIResourceMeta`` with its ``UICsp`` and
``UIPermissions``), and the Content-Security-Policy a host must enforce for it.

Bottom layer, loaded on first use (``Tool.ui``, ``ResourceContents.ui``, ``mcpclient.apps``): a
program that never looks at apps does not pay for it at ``import mcpclient``. Parsing never
fails a listing: a malformed ``_meta.ui`` gives ``None`` with a DEBUG log on the ``mcpclient``
logger (the wire dict stays in ``.raw``). Domain entries that are no plain origin are dropped,
so a server cannot inject CSP directives (``;``, quotes, spaces) through them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Tuple

from ._base import Raw, log

__all__ = [
    "APP_MIME_TYPE",
    "CSP_KINDS",
    "DEFAULT_CSP",
    "ToolUI",
    "UICsp",
    "UIPermissions",
    "UIResourceMeta",
    "csp_header",
    "is_app_mime",
    "parse_resource_meta",
    "parse_tool_ui",
]

#: The MIME type of an MCP App's HTML resource (what a client declares under ``mimeTypes``; also
#: ``mcpclient.extensions.APP_MIME_TYPE``, imported from here).
APP_MIME_TYPE = "text/html;profile=mcp-app"

#: The policy for a UI resource without ``_meta.ui.csp`` (spec: exactly this, nothing looser).
DEFAULT_CSP = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data:; media-src 'self' data:; connect-src 'none';")

#: The wire keys of ``_meta.ui.csp``, in the order of ``UICsp``'s fields; the first argument of
#: the ``allow(kind, origin)`` callback of ``csp_header``.
CSP_KINDS: Tuple[str, ...] = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")

#: An origin a CSP may name: scheme http(s)/ws(s), an optional ``*.`` wildcard, a host, an optional
#: port. Nothing else (no path, ``;``, quote or space): anything more could inject directives.
_ORIGIN = re.compile(r"(https?|wss?)://(\*\.)?[A-Za-z0-9.-]+(:\d+)?")

#: ``_meta.ui.permissions`` key, ``UIPermissions`` field, the iframe ``allow`` feature it grants.
_PERMISSIONS: Tuple[Tuple[str, str, str], ...] = (
    ("camera", "camera", "camera"), ("microphone", "microphone", "microphone"),
    ("geolocation", "geolocation", "geolocation"), ("clipboardWrite", "clipboard_write", "clipboard-write"))

_VISIBILITY = ("model", "app")


class _Malformed(ValueError):
    """A ``_meta.ui`` that cannot be read (internal: turned into ``None`` + a DEBUG log)."""


def _strings(value: Any, what: str) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(type(v) is str for v in value):
        raise _Malformed(f"{what} must be a list of strings")
    return tuple(value)


@dataclass(frozen=True)
class ToolUI:
    """A tool's ``_meta.ui``: the UI resource it renders in (``resource_uri``, a ``ui://`` URI) and
    who may call it (``visibility``: ``"model"`` = the agent, ``"app"`` = its UI; both by default).
    A host keeps tools without ``"model"`` out of the agent's list and refuses an app's call to a
    tool without ``"app"``."""

    resource_uri: Optional[str] = None
    visibility: Tuple[str, ...] = _VISIBILITY

    @property
    def model_visible(self) -> bool:
        """Whether the model (agent) may see and call the tool."""
        return "model" in self.visibility

    @property
    def app_visible(self) -> bool:
        """Whether an app (its UI) may call the tool."""
        return "app" in self.visibility


@dataclass(frozen=True)
class UICsp:
    """``_meta.ui.csp``: the origins a UI may reach beyond itself, per directive group. Only plain
    origins are kept (see the module doc); the wire lists stay in ``UIResourceMeta.raw``."""

    connect_domains: Tuple[str, ...] = ()
    resource_domains: Tuple[str, ...] = ()
    frame_domains: Tuple[str, ...] = ()
    base_uri_domains: Tuple[str, ...] = ()


@dataclass(frozen=True)
class UIPermissions:
    """``_meta.ui.permissions``: the browser features a UI asks for (granted via iframe ``allow``)."""

    camera: bool = False
    microphone: bool = False
    geolocation: bool = False
    clipboard_write: bool = False


@dataclass(frozen=True)
class UIResourceMeta:
    """A UI resource's ``_meta.ui``: CSP origins (``None`` = the strict default policy), requested
    permissions, an optional dedicated ``domain`` and the ``prefers_border`` hint."""

    csp: Optional[UICsp] = None
    permissions: UIPermissions = field(default_factory=UIPermissions)
    domain: Optional[str] = None
    prefers_border: Optional[bool] = None
    raw: Raw = field(default_factory=dict, repr=False, compare=False, hash=False)

    def csp_header(self, allow: Optional[Callable[[str, str], bool]] = None) -> str:
        """The Content-Security-Policy to enforce for this UI (see ``csp_header``)."""
        return csp_header(self.csp, allow)

    def allow_attribute(self) -> str:
        """The iframe ``allow`` attribute for the requested permissions (``""`` for none)."""
        return "; ".join(feature for _, name, feature in _PERMISSIONS if getattr(self.permissions, name))


def csp_header(csp: Optional[UICsp], allow: Optional[Callable[[str, str], bool]] = None) -> str:
    """The Content-Security-Policy for a UI with ``csp`` (the spec's rules, never looser): the
    exact ``DEFAULT_CSP`` when ``csp`` is ``None``; otherwise the declared origins added to a
    ``'self'``-only policy. ``allow(kind, origin)`` (``kind`` one of ``CSP_KINDS``) may veto origins
    a host does not trust; origins that are no plain origin never get this far."""
    if csp is None:
        return DEFAULT_CSP

    def src(kind: str, domains: Tuple[str, ...]) -> str:
        kept = [d for d in domains if _ORIGIN.fullmatch(d) and (allow is None or allow(kind, d))]
        return " ".join(kept)

    def directive(name: str, base: str, extra: str) -> str:
        return f"{name} {' '.join(p for p in (base, extra) if p)}"

    connect, resource = src("connectDomains", csp.connect_domains), src("resourceDomains", csp.resource_domains)
    frame, base_uri = src("frameDomains", csp.frame_domains), src("baseUriDomains", csp.base_uri_domains)
    return "; ".join((
        "default-src 'none'",
        directive("script-src", "'self' 'unsafe-inline'", resource),
        directive("style-src", "'self' 'unsafe-inline'", resource),
        directive("connect-src", "'self'", connect),
        directive("img-src", "'self' data:", resource),
        directive("font-src", "'self'", resource),
        directive("media-src", "'self' data:", resource),
        directive("frame-src", "" if frame else "'none'", frame),
        "object-src 'none'",
        directive("base-uri", "" if base_uri else "'self'", base_uri),
    ))


def is_app_mime(mime_type: Optional[str]) -> bool:
    """Whether ``mime_type`` is ``APP_MIME_TYPE``: the type compared case-insensitively, parameters
    normalised (spaces, quotes, case, order, extra ones such as ``charset``)."""
    if not isinstance(mime_type, str):
        return False
    head, *params = mime_type.split(";")
    if head.strip().lower() != "text/html":
        return False
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "profile" and value.strip().strip('"').strip().lower() == "mcp-app":
            return True
    return False


def _ui_of(meta: Any) -> Any:
    return meta.get("ui") if isinstance(meta, dict) else None


def parse_tool_ui(meta: Any, what: str = "tool") -> Optional[ToolUI]:
    """A tool's ``ToolUI`` from its ``_meta`` (``ui``, or the deprecated flat ``ui/resourceUri``);
    ``None`` when it has none or it is malformed (DEBUG log). A bad part never widens who sees the
    tool: a bad ``resourceUri`` beside a ``visibility`` is dropped (the visibility holds), and a
    malformed ``visibility`` is ``()`` (neither the model nor the app)."""
    ui = _ui_of(meta)
    flat = meta.get("ui/resourceUri") if isinstance(meta, dict) else None
    if ui is None and flat is None:
        return None
    if ui is not None and not isinstance(ui, dict):
        log.debug("%s: ignored its _meta.ui: _meta.ui must be an object", what)
        return None
    ui = ui or {}
    visibility: Optional[Tuple[str, ...]] = None
    if ui.get("visibility") is not None:
        try:
            visibility = _strings(ui["visibility"], "visibility")
        except _Malformed as exc:  # fail closed: shown to neither the model nor the app
            log.debug("%s: ignored its _meta.ui visibility (the tool is shown to neither): %s", what, exc)
            visibility = ()
    uri = ui.get("resourceUri", flat)
    if uri is None:
        uri = flat
    if uri is not None and (type(uri) is not str or not uri.startswith("ui://")):
        if visibility is None:
            log.debug("%s: ignored its _meta.ui: resourceUri must be a ui:// URI", what)
            return None
        log.debug("%s: ignored its _meta.ui resourceUri (kept its visibility): must be a ui:// URI", what)
        uri = None
    return ToolUI(uri, _VISIBILITY if visibility is None else visibility)


def _domains(csp: Dict[str, Any], key: str) -> Tuple[str, ...]:
    value = csp.get(key)
    if value is None:
        return ()
    domains = _strings(value, f"csp.{key}")
    kept = tuple(d for d in domains if _ORIGIN.fullmatch(d))
    if len(kept) != len(domains):
        log.debug("ui resource: dropped %d csp.%s entries that are no plain origin", len(domains) - len(kept), key)
    return kept


def _permission(permissions: Dict[str, Any], key: str) -> bool:
    value = permissions.get(key)
    if value is None or value is False:
        return False
    if isinstance(value, dict) or value is True:
        return True
    raise _Malformed(f"permissions.{key} must be an object")


def parse_resource_meta(meta: Any, what: str = "ui resource") -> Optional[UIResourceMeta]:
    """A UI resource's ``UIResourceMeta`` from its ``_meta``; ``None`` when it has no ``ui`` or it
    is malformed (DEBUG log). Domain entries that are no plain origin are dropped (DEBUG log)."""
    ui = _ui_of(meta)
    if ui is None:
        return None
    try:
        if not isinstance(ui, dict):
            raise _Malformed("_meta.ui must be an object")
        csp, permissions = ui.get("csp"), ui.get("permissions")
        if csp is not None and not isinstance(csp, dict):
            raise _Malformed("csp must be an object")
        if permissions is not None and not isinstance(permissions, dict):
            raise _Malformed("permissions must be an object")
        domain, border = ui.get("domain"), ui.get("prefersBorder")
        if domain is not None and type(domain) is not str:
            raise _Malformed("domain must be a string")
        if border is not None and type(border) is not bool:
            raise _Malformed("prefersBorder must be a boolean")
        parsed_csp = None if csp is None else UICsp(*(_domains(csp, key) for key in CSP_KINDS))
        parsed_permissions = UIPermissions(*(_permission(permissions or {}, key) for key, _, _ in _PERMISSIONS))
        return UIResourceMeta(parsed_csp, parsed_permissions, domain, border, ui)
    except _Malformed as exc:
        log.debug("%s: ignored its _meta.ui: %s", what, exc)
        return None
