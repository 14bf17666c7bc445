"""Which server(s) a command talks to, and the ``Client`` for each: TARGET or ``--config`` entries,
with ``--header``/``--auth``/``--auth-env`` and ``--protocol`` applied.

A URL's transport is named after its ``host:port``, so errors and server logs say which server
failed (``could not connect to 127.0.0.1:9``). Credentials never appear in a message.
"""
from __future__ import annotations

import argparse
import os
from typing import Any, Dict, List, NamedTuple, Optional, Union
from urllib.parse import urlsplit

from mcpclient import Client, StdioTransport

from .args import UsageError, config_entries, target_from_config


class Server(NamedTuple):
    """One server to talk to: ``target`` is a URL or a command (string or ``StdioTransport``);
    ``kind`` is ``"http"``, ``"sse"`` or None (a URL: Streamable HTTP, falling back to HTTP+SSE)."""
    name: Optional[str]
    target: Union[str, StdioTransport]
    headers: Dict[str, str]
    kind: Optional[str] = None


def is_url(target: Any) -> bool:
    return isinstance(target, str) and target.lower().startswith(("http://", "https://"))


def host_port(url: str) -> str:
    """``https://user:pw@example.com/mcp`` -> ``example.com:443`` (never the userinfo)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or "?"
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{port or (443 if parts.scheme.lower() == 'https' else 80)}"


def bearer_token(ns: argparse.Namespace) -> Optional[str]:
    """``--auth TOKEN`` or the value of ``--auth-env VAR`` (None when neither is given)."""
    if ns.auth is not None and ns.auth_env is not None:
        raise UsageError("give --auth or --auth-env, not both")
    if ns.auth_env is not None:
        token = os.environ.get(ns.auth_env)
        if not token:
            raise UsageError(f"--auth-env {ns.auth_env}: the environment variable is not set or empty")
        return token
    if ns.auth is not None and not ns.auth.strip():
        raise UsageError("--auth: the token is empty")
    return ns.auth


def servers(ns: argparse.Namespace, *, every: bool = False) -> List[Server]:
    """The servers the command line names: TARGET, the ``--config`` entry chosen with ``--server``
    (or its only one), or, with ``every``, each entry of ``--config`` when no ``--server`` is given."""
    if not ns.config:
        return [Server(None, ns.target, {})]
    if every and ns.server is None:
        return [Server(name, *spec) for name, spec in config_entries(ns.config).items()]
    name, spec = target_from_config(ns.config, ns.server)
    return [Server(name, *spec)]


def open_client(ns: argparse.Namespace, server: Server) -> Client:
    """A ``Client`` for ``server`` (not yet connected: use it in a ``with``)."""
    headers = dict(server.headers)
    headers.update(ns.header or [])
    token = bearer_token(ns)
    if not is_url(server.target):
        if ns.header or token is not None:
            raise UsageError("--header and --auth apply to URL targets only"
                             + (f" (server {server.name!r} is a command)" if server.name else ""))
        if headers:
            raise UsageError(f"server {server.name!r}: \"headers\" apply to \"url\" servers only")
        return Client(server.target, timeout=ns.timeout, protocol=ns.protocol)
    url = server.target
    assert isinstance(url, str)
    name = host_port(url)
    if server.kind == "sse":
        from mcpclient import SSETransport

        transport: Any = SSETransport(url, headers=headers or None, auth=token, name=name)
    else:
        from mcpclient import HTTPTransport

        transport = HTTPTransport(url, headers=headers or None, auth=token, name=name,
                                  sse_fallback=server.kind is None)
    return Client(transport, timeout=ns.timeout, protocol=ns.protocol)
