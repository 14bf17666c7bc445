"""Which transport a ``Client(target)`` gets: a command line or argv list runs over stdio, an
``http(s)://`` URL speaks Streamable HTTP (falling back to HTTP+SSE), a ``Transport`` is used as
it is, and a ``Configured`` target (an ``mcpServers`` entry: ``ServerConfig``) makes its own and
carries the client settings it wins on. Each transport module loads only when its kind of target
is given (``_kinds``: a stdio-only program never loads ``requests``).
"""
from __future__ import annotations

import re
from typing import Any, Dict, Optional, Protocol, Sequence, Tuple, Union, runtime_checkable

from .._util.lazy import lazy_names
from .base import Transport

__all__ = ["Configured", "Target", "make_transport", "transport_and_options"]


@runtime_checkable
class Configured(Protocol):
    """A target that describes a server: it makes the transport, and names the client settings
    it decides (an ``mcpServers`` entry's ``timeout`` and ``protocol``: more specific than the
    keyword arguments given with it, so they win)."""

    def transport(self) -> Transport:
        """A new, unstarted transport to the server."""

    def client_settings(self) -> Dict[str, Any]:
        """``Client`` keyword arguments this target decides."""


#: The transports' names, each loaded with its module on first use.
_loaded: Dict[str, Any] = {}
_kinds = lazy_names(__name__, {"HTTPTransport": "http.streamable", "StdioTransport": "stdio.transport",
                               "split_command": "stdio._cmdline"}, _loaded, package=__package__)

#: What ``Client(target)`` takes: a command line, an argv list, an http(s) URL, a ``Transport``,
#: or a ``Configured`` target.
Target = Union[str, Sequence[str], Transport, Configured]


def make_transport(target: Target, headers: Optional[Dict[str, str]], auth: Any) -> Transport:
    """The transport for a ``Client(target, headers=, auth=)``."""
    if isinstance(target, Transport):
        if headers or auth:
            raise ValueError("headers= and auth= go to the transport when you pass one")
        return target
    if isinstance(target, Configured):
        if headers or auth:
            raise ValueError("headers= and auth= come from the server's entry when you pass one")
        return target.transport()
    if isinstance(target, str):
        if re.match(r"^https?://", target, re.I):
            # Built from a URL: an old HTTP+SSE server may be tried when Streamable HTTP is refused.
            return _kinds("HTTPTransport")(target, headers=headers, auth=auth, sse_fallback=True)  # type: ignore[no-any-return]
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", target):
            raise ValueError(f"{target!r}: only http(s) URLs and commands are supported targets")
        if headers or auth:
            raise ValueError("headers= and auth= apply to HTTP targets only")
        argv = _kinds("split_command")(target)  # the Windows rules on Windows: C:\dir\srv.exe keeps its backslashes
        if not argv:
            raise ValueError("empty command")
        return _kinds("StdioTransport")(argv)  # type: ignore[no-any-return]
    if isinstance(target, (list, tuple)) and all(isinstance(a, str) for a in target):
        if headers or auth:
            raise ValueError("headers= and auth= apply to HTTP targets only")
        return _kinds("StdioTransport")(list(target))  # type: ignore[no-any-return]
    raise TypeError("target must be a command string, an argv list, a Transport or a ServerConfig, "
                    f"not {type(target).__name__}")


def transport_and_options(target: Target, headers: Optional[Dict[str, str]], auth: Any,
                          options: Dict[str, Any]) -> Tuple[Transport, Dict[str, Any]]:
    """What ``Client(target, headers=, auth=, **options)`` runs on: the target's transport, and the
    options with a ``Configured`` target's own settings (an entry's timeout, protocol) winning."""
    if isinstance(target, Configured):
        options = dict(options, **target.client_settings())
    return make_transport(target, headers, auth), options
