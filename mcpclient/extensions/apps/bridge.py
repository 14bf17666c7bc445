"""MCP Apps host bridge (extension ``io.modelcontextprotocol/ui``): what a web back end needs to
embed an app in a page and to relay the app's JSON-RPC requests to its MCP server.

``AppBridge(client, "ui://counter/app.html")`` (or ``tool="counter"``: the tool's
``ui.resourceUri``) reads the UI resource into an ``AppView``: the HTML, the Content-Security-Policy
to enforce (as a header, or as a ``<meta>`` in ``srcdoc()``), the iframe ``allow`` and ``sandbox``
attributes, and the ``ui/notifications/sandbox-resource-ready`` message for a sandbox proxy. The
page posts what the app sends to the back end, which answers with ``bridge.handle_json(body)``:
only the methods the extension lets an app use, only tools the server marked visible to apps, and
nothing else reaches the server (refusals are JSON-RPC errors, nothing is sent). Framework
neutral (no web framework imported), thread-safe, cheap: one bridge per page or view.

Top layer (beside ``adapters``): the client is only duck-typed, so this imports no façade module.
"""
from __future__ import annotations

import html as _html
import json
import logging
import re
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from ..._util.sentinel import DEFAULT
from ...types._ui import CSP_KINDS, UIResourceMeta
from ..._version import __version__
from ..._util.wire import format_message
from ...errors import CapabilityError, MCPError, ProtocolError, RequestTimeout, RPCError
from ..base import APPS
from ..._engine.server_requests import error_response
from ...types import Tool

__all__ = ["APP_PROTOCOL_VERSION", "AppBridge", "AppView"]

log = logging.getLogger("mcpclient.app")

#: The MCP Apps protocol version this host speaks (``ui/initialize``).
APP_PROTOCOL_VERSION = "2026-01-26"

#: JSON-RPC error codes of the answers the bridge makes itself.
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR, DENIED = \
    -32700, -32600, -32601, -32602, -32603, -32000

#: ``_meta.ui.permissions`` keys, in ``UIPermissions`` field order (for ``hostCapabilities.sandbox``).
_PERMISSION_KEYS: Tuple[Tuple[str, str], ...] = (
    ("camera", "camera"), ("microphone", "microphone"), ("geolocation", "geolocation"),
    ("clipboardWrite", "clipboard_write"))

#: The directive of the policy each ``CSP_KINDS`` list goes into (resource domains: several, same list).
_CSP_DIRECTIVES = ("connect-src", "script-src", "frame-src", "base-uri")

#: A leading doctype: only HTML whitespace before it (anything else starts a body), ended by the
#: first ``>`` (as the HTML tokenizer ends it).
_DOCTYPE = re.compile(r"[ \t\n\f\r]*<!doctype[^>]*>", re.IGNORECASE)
_LEVELS = {"debug": logging.DEBUG, "warning": logging.WARNING, "error": logging.ERROR, "critical": logging.ERROR,
           "alert": logging.ERROR, "emergency": logging.ERROR}  # info, notice, anything else: INFO


@dataclass(frozen=True)
class AppView:
    """What a page needs to embed one MCP App: its ``html``, the ``csp`` to enforce (also in
    ``headers``, with ``nosniff`` and ``no-referrer``), the iframe ``allow`` and ``sandbox``
    attributes, and ``initial_messages`` (``tool-input``/``tool-result``, set by ``open()``) to
    post to the app once it sent ``ui/notifications/initialized``."""

    uri: str
    html: str
    meta: UIResourceMeta
    csp: str
    allow: str
    sandbox: str = "allow-scripts"
    headers: Dict[str, str] = field(default_factory=dict)
    initial_messages: List[Dict[str, Any]] = field(default_factory=list)

    def srcdoc(self) -> str:
        """The HTML with ``<meta http-equiv="Content-Security-Policy">`` as its first element (after
        a leading doctype), for an iframe's ``srcdoc`` (where no response header can carry the
        policy). A CSP ``<meta>`` binds only in ``<head>`` and only what is parsed after it, so it
        goes before anything the app wrote: the parser opens ``<head>`` for it, and the app's own
        ``<html>``/``<head>`` tags merge into that (a script or body before the app's ``<head>``,
        or a ``<head>`` inside a comment, cannot get ahead of the policy)."""
        meta = f'<meta http-equiv="Content-Security-Policy" content="{_html.escape(self.csp, quote=True)}">'
        doctype = _DOCTYPE.match(self.html)
        at = 0 if doctype is None else doctype.end()
        return self.html[:at] + meta + self.html[at:]

    def sandbox_resource_ready(self) -> Dict[str, Any]:
        """The ``ui/notifications/sandbox-resource-ready`` message a host sends a sandbox proxy
        (after its ``sandbox-proxy-ready``): the HTML (``srcdoc()``), sandbox, CSP and permissions."""
        params: Dict[str, Any] = {"html": self.srcdoc(), "sandbox": self.sandbox}
        csp = _applied_csp(self.meta, self.csp)
        if csp is not None:
            params["csp"] = csp
        permissions = _permissions(self.meta)
        if permissions:
            params["permissions"] = permissions
        return {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-resource-ready", "params": params}


def _applied_csp(meta: UIResourceMeta, header: str) -> Optional[Dict[str, List[str]]]:
    """``_meta.ui.csp`` as applied: the origins that made it into the policy ``header``."""
    if meta.csp is None:
        return None
    directives = {name: set(sources) for name, *sources in (part.split() for part in header.split(";")) if name}
    lists = (meta.csp.connect_domains, meta.csp.resource_domains, meta.csp.frame_domains, meta.csp.base_uri_domains)
    return {kind: [d for d in domains if d in directives.get(directive, ())]
            for kind, directive, domains in zip(CSP_KINDS, _CSP_DIRECTIVES, lists)}


def _permissions(meta: UIResourceMeta) -> Dict[str, Dict[str, Any]]:
    return {key: {} for key, name in _PERMISSION_KEYS if getattr(meta.permissions, name)}


def _size(message: Union[str, bytes], limit: int) -> int:
    """The size of ``message`` in bytes (a ``str`` as UTF-8; encoded only when that may pass ``limit``)."""
    if isinstance(message, bytes) or len(message) > limit or 4 * len(message) <= limit:
        return len(message)
    return len(message.encode("utf-8", "surrogatepass"))


def _request_id(body: Union[str, bytes]) -> Tuple[bool, Any]:
    """Whether ``body`` is a message with an ``id``, and that id when valid (else None)."""
    try:
        message = json.loads(body)
    except Exception:  # (already answered as malformed, or nested too deep)
        return True, None
    if not isinstance(message, dict):
        return True, None
    rid = message.get("id")
    return "id" in message, rid if type(rid) in (str, int) else None


class _Refused(Exception):
    """An app request answered with a JSON-RPC error (internal)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class AppBridge:
    """Embed one MCP App and relay its requests to the client's server (one bridge per view).

    Args:
        client: a connected ``mcpclient.Client`` (only ``read_resource``, ``call_tool``,
            ``list_tools`` and the client's latest tools listing are used).
        resource_uri: the app's ``ui://`` resource; or leave it out and name ``tool``.
        tool: the tool the app belongs to: its ``ui.resourceUri`` is the resource, ``open()``
            calls it, and ``ui/initialize`` tells the app about it (``hostContext.toolInfo``).
        host_info: ``(name, version)`` sent as ``hostInfo``.
        host_context: extra ``hostContext`` for ``ui/initialize`` (theme, locale, display mode...).
        on_open_link: ``(url) -> bool``: open it for the user (True) or refuse; without it every
            ``ui/open-link`` is denied.
        on_message: ``(params) -> bool`` for ``ui/message`` (add to the conversation); denied without.
        on_model_context: ``(params) -> bool`` for ``ui/update-model-context``; denied without.
        on_log: ``(params)`` for the app's ``notifications/message``; default: the
            ``mcpclient.app`` logger (redacted).
        allow_plain_tools: also relay calls to tools without ``_meta.ui`` (refused by default:
            the extension lets an app call only tools whose ``visibility`` includes ``"app"``).
        allow_domain: ``(kind, origin) -> bool`` veto over the CSP origins the resource asks for
            (``kind`` one of ``connectDomains``, ``resourceDomains``, ``frameDomains``, ``baseUriDomains``).
        timeout: for the requests relayed to the server (omitted: the client's default).
        max_message_bytes: a bigger app message is refused (``-32600``) unparsed.

    Raises:
        ValueError: neither ``resource_uri`` nor ``tool``, or a ``resource_uri`` that is not ``ui://``.
    """

    def __init__(self, client: Any, resource_uri: Optional[str] = None, *, tool: Optional[str] = None,
                 host_info: Tuple[str, str] = ("mcpclient", __version__), host_context: Optional[Dict[str, Any]] = None,
                 on_open_link: Optional[Callable[[str], bool]] = None,
                 on_message: Optional[Callable[[Dict[str, Any]], bool]] = None,
                 on_model_context: Optional[Callable[[Dict[str, Any]], bool]] = None,
                 on_log: Optional[Callable[[Dict[str, Any]], None]] = None, allow_plain_tools: bool = False,
                 allow_domain: Optional[Callable[[str, str], bool]] = None, timeout: Any = DEFAULT,
                 max_message_bytes: int = 1 << 20) -> None:
        if resource_uri is None and tool is None:
            raise ValueError("AppBridge needs resource_uri= (a ui:// URI) or tool= (a tool with a UI)")
        if resource_uri is not None and (not isinstance(resource_uri, str) or not resource_uri.startswith("ui://")):
            raise ValueError(f"resource_uri must be a ui:// URI, not {resource_uri!r:.100}")
        self._client = client
        self._resource_uri = resource_uri
        self._tool = tool
        self._host_info = {"name": host_info[0], "version": host_info[1]}
        self._host_context = dict(host_context or {})
        self._on_open_link = on_open_link
        self._on_message = on_message
        self._on_model_context = on_model_context
        self._on_log = on_log
        self._allow_plain_tools = allow_plain_tools
        self._allow_domain = allow_domain
        self._timeout = timeout
        self._max_bytes = max_message_bytes
        self._lock = threading.Lock()
        self._view: Optional[AppView] = None  # the last view made: what ui/initialize reports
        self._listed = False  # view() made sure the client has a tools listing
        self._probe: Optional[str] = None  # a tool of that listing: gone from the client = listing forgotten
        self._relisting = threading.Lock()  # one listing again at a time
        self._initialized = threading.Event()

    @property
    def initialized(self) -> bool:
        """Whether the app sent ``ui/notifications/initialized`` (a host messages it only after)."""
        return self._initialized.is_set()

    # --- the view ---------------------------------------------------------------------------

    def _declares_apps(self) -> bool:
        try:
            self._client.extension(APPS)
        except LookupError:
            return False
        return True

    def _known_tool(self, name: str) -> Optional[Tool]:
        return self._client._known_tool(name)  # type: ignore[no-any-return]

    def _ensure_listing(self, timeout: Any) -> None:
        """List the tools once per bridge unless the client's latest listing already has the
        bridge's tool: the app's ``tools/call`` checks read that listing and never send anything
        for a name it lacks. Later views list again only if the client forgot that listing (the
        server's tools changed). A server without tools leaves nothing to list (or to call)."""
        with self._lock:
            first, self._listed = not self._listed, True
        if not first:
            self._refresh(timeout)
        elif self._tool is not None and self._known_tool(self._tool) is not None:
            with self._lock:
                self._probe = self._tool
        else:
            self._list(timeout)

    def _list(self, timeout: Any) -> None:
        try:
            tools = self._client.list_tools(timeout=timeout)
        except CapabilityError:
            return
        with self._lock:
            self._probe = tools[0].name if tools else None

    def _refresh(self, timeout: Any) -> None:
        """List again if the client forgot the listing the bridge relied on (its tools changed:
        ``notifications/tools/list_changed``, or a reconnect); otherwise send nothing."""
        with self._relisting:
            with self._lock:
                probe = self._probe
            if probe is not None and self._known_tool(probe) is None:
                self._list(timeout)

    def _uri(self, timeout: Any) -> str:
        self._ensure_listing(timeout)
        if self._resource_uri is not None:
            return self._resource_uri
        tool = self._known_tool(str(self._tool))
        uri = None if tool is None or tool.ui is None else tool.ui.resource_uri
        if uri is None:
            what = "is not in" if tool is None else "has no UI resource (_meta.ui.resourceUri) in"
            hint = "" if self._declares_apps() else \
                " (this client does not declare MCP Apps: Client(extensions={APPS: {}}))"
            raise ValueError(f"tool {self._tool!r} {what} the server's listing{hint}")
        return uri

    def view(self, *, timeout: Any = DEFAULT) -> AppView:
        """Read the app's UI resource (``resources/read``) into an ``AppView``. The bridge's first
        view also lists the tools, unless the client's latest listing has the bridge's ``tool``:
        the app's tool calls are checked against that listing (the client's latest).

        Raises:
            ProtocolError: the resource is not an MCP App (``ui://``, ``text/html;profile=mcp-app``, HTML).
            MCPError: what ``read_resource`` raises.
            ValueError: ``tool=`` names no tool with a UI resource.
        """
        timeout = self._timeout if timeout is DEFAULT else timeout
        uri = self._uri(timeout)
        contents = self._client.read_resource(uri, timeout=timeout)
        app = next((c for c in contents if c.is_app and c.html is not None), None)
        if app is None or not app.uri.startswith("ui://"):
            raise ProtocolError(f"resources/read {uri}: no MCP App HTML (a ui:// resource of type "
                                f"text/html;profile=mcp-app) in the answer")
        meta = app.ui or UIResourceMeta()
        csp = meta.csp_header(self._allow_domain)
        headers = {"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
        view = AppView(app.uri, str(app.html), meta, csp, meta.allow_attribute(), headers=headers)
        with self._lock:
            self._view = view
        return view

    def open(self, arguments: Optional[Dict[str, Any]] = None, *, timeout: Any = DEFAULT) -> AppView:
        """The view of ``tool`` run with ``arguments``: ``view()``, then the host's own call to
        the tool, whose input and result become the view's ``initial_messages``
        (``ui/notifications/tool-input``, ``ui/notifications/tool-result``).

        Raises:
            ValueError: the bridge was made without ``tool=``.
            MCPError: what ``view()`` and ``call_tool`` raise.
        """
        if self._tool is None:
            raise ValueError("open() needs AppBridge(..., tool=...): the tool whose result the app shows")
        view = self.view(timeout=timeout)
        args = dict(arguments or {})
        result = self._client.call_tool(self._tool, args, timeout=self._timeout if timeout is DEFAULT else timeout)
        messages = [{"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": args}},
                    {"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": result.raw}]
        view = replace(view, initial_messages=messages)
        with self._lock:
            self._view = view
        return view

    # --- the app's messages -----------------------------------------------------------------

    def handle_json(self, body: Union[str, bytes]) -> str:
        """``handle`` for a request body: the JSON answer, ``""`` for a notification. Never raises."""
        try:
            answer = self.handle(body)
        except Exception:  # a bug or a callback that raised: the app still gets an answer (to its id)
            log.exception("app message: the bridge failed")
            has_id, rid = _request_id(body)
            if not has_id:
                return ""  # a notification: never answered
            answer = error_response(rid, INTERNAL_ERROR, "internal error")
        return "" if answer is None else json.dumps(answer)

    def handle(self, message: Union[str, bytes, Dict[str, Any]]) -> Optional[Dict[str, Any]]:
        """Answer one JSON-RPC message from the app: a JSON-RPC response dict, or ``None`` for a
        notification (or a response). Relays ``tools/call`` (app-visible tools only) and
        ``resources/read`` to the server; answers ``ui/initialize``, ``ping`` and the ``ui/``
        requests itself; refuses everything else with ``-32601`` without sending anything.

        Raises:
            Exception: only what a callback (``on_open_link``...) raises; ``handle_json`` never does.
        """
        if isinstance(message, (str, bytes)):
            if _size(message, self._max_bytes) > self._max_bytes:
                return error_response(None, INVALID_REQUEST, f"message larger than {self._max_bytes} bytes")
            try:
                message = json.loads(message)
            except (ValueError, UnicodeDecodeError, RecursionError):  # (nested too deep to parse)
                return error_response(None, PARSE_ERROR, "parse error")
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return error_response(None, INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 object")
        has_id, rid = "id" in message, message.get("id")
        if has_id and (type(rid) not in (str, int)):
            return error_response(None, INVALID_REQUEST, "invalid request: id must be a string or an integer")
        method = message.get("method")
        if method is None and has_id:
            return None  # a response: the bridge sends the app no requests that expect one
        params = message.get("params", {})
        if not isinstance(method, str) or (params is not None and not isinstance(params, dict)):
            return error_response(rid if has_id else None, INVALID_REQUEST, "invalid request: bad method or params")
        params = params or {}
        if not has_id:
            self._notification(method, params)
            return None
        try:
            return {"jsonrpc": "2.0", "id": rid, "result": self._request(method, params)}
        except _Refused as exc:
            return error_response(rid, exc.code, exc.message, exc.data)

    def _notification(self, method: str, params: Dict[str, Any]) -> None:
        if method == "ui/notifications/initialized":
            self._initialized.set()
        elif method == "notifications/message":
            if self._on_log is not None:
                self._on_log(params)
            else:
                level = params.get("level")
                log.log(_LEVELS.get(level, logging.INFO) if isinstance(level, str) else logging.INFO,
                        "app %s: %s", self._resource_uri or self._tool, format_message(params.get("data")))
        # size-changed, sandbox-*, and anything else: nothing to do for a back end

    def _request(self, method: str, params: Dict[str, Any]) -> Any:
        if method == "ui/initialize":
            return self._initialize()
        if method == "ping":
            return {}
        if method == "tools/call":
            return self._tool_call(params)
        if method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str):
                raise _Refused(INVALID_PARAMS, "resources/read needs params.uri (a string)")
            contents = self._relay(lambda: self._client.read_resource(uri, timeout=self._timeout))
            return {"contents": [c.raw for c in contents]}
        if method == "ui/request-display-mode":
            return {"mode": "inline"}
        if method == "ui/open-link":
            url = params.get("url")
            if not isinstance(url, str):
                raise _Refused(INVALID_PARAMS, "ui/open-link needs params.url (a string)")
            return self._ask(self._on_open_link, url, method)
        if method == "ui/message":
            return self._ask(self._on_message, params, method)
        if method == "ui/update-model-context":
            return self._ask(self._on_model_context, params, method)
        raise _Refused(METHOD_NOT_FOUND, f"method not available to this app: {method[:100]}")

    @staticmethod
    def _ask(callback: Optional[Callable[[Any], bool]], argument: Any, method: str) -> Dict[str, Any]:
        if callback is None or not callback(argument):
            raise _Refused(DENIED, f"{method}: denied")
        return {}

    def _initialize(self) -> Dict[str, Any]:
        with self._lock:
            view = self._view
        sandbox: Dict[str, Any] = {}
        if view is not None:
            csp = _applied_csp(view.meta, view.csp)
            sandbox = {"permissions": _permissions(view.meta), **({"csp": csp} if csp is not None else {})}
        capabilities: Dict[str, Any] = {"serverTools": {}, "serverResources": {}, "logging": {}, "sandbox": sandbox}
        if self._on_open_link is not None:
            capabilities["openLinks"] = {}
        context = dict(self._host_context)
        tool = None if self._tool is None else self._known_tool(self._tool)
        if tool is not None:
            context["toolInfo"] = {"tool": tool.raw}
        return {"protocolVersion": APP_PROTOCOL_VERSION, "hostInfo": dict(self._host_info),
                "hostCapabilities": capabilities, "hostContext": context}

    def _tool_call(self, params: Dict[str, Any]) -> Any:
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            raise _Refused(INVALID_PARAMS, "tools/call needs params.name (a string) and params.arguments (an object)")
        tool = self._known_tool(name)  # the latest listing: nothing is sent for a name it lacks,
        if tool is None:  # unless that listing was forgotten (listed again), or this bridge never
            # made sure of one (a back end whose page was viewed in another process): listed once
            self._relay(lambda: self._ensure_listing(self._timeout))
            tool = self._known_tool(name)
        ui = None if tool is None else tool.ui
        if tool is None or not (ui.app_visible if ui is not None else self._allow_plain_tools):
            raise _Refused(INVALID_PARAMS, f"tool {name[:100]!r} is not available to this app")
        # the app's _meta is not forwarded: the host decides what goes to the server
        result = self._relay(lambda: self._client.call_tool(name, arguments, timeout=self._timeout))
        return result.raw

    def _relay(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except RPCError as exc:
            raise _Refused(exc.code, exc.message, exc.data) from None
        except RequestTimeout:
            raise _Refused(INTERNAL_ERROR, "the MCP server did not answer in time") from None
        except MCPError as exc:
            log.debug("app request failed: %s", type(exc).__name__)
            raise _Refused(INTERNAL_ERROR, "the MCP server request failed") from None
