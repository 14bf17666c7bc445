"""Which server(s) a command talks to, and the ``Client`` for each: TARGET or ``--config`` entries
(read with ``mcpclient.load_config``: ``type``, ``headers``, ``${VAR}`` expansion, ``timeout``,
``protocol``), with ``--header``/``--auth``/``--auth-env``, ``--timeout`` and ``--protocol`` applied.

A URL's transport is named after its ``host:port``, so errors and server logs say which server
failed (``could not connect to 127.0.0.1:9``). Credentials never appear in a message.
"""
from __future__ import annotations

import argparse
import os
from typing import Any, Dict, List, Optional, Union

from .._util.lazy import load
from ..client import Client
from ..group.config import load_config
from ..transports.stdio import StdioTransport

from .args import DEFAULT_TIMEOUT, Server, UsageError, config_entries, config_entry, host_port, is_url


class EntryError(ValueError):
    """A ``--config`` entry that cannot be used (``name``: which)."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(message)


def config_server(path: str, name: str, entry: Any) -> Server:
    """One ``--config`` entry, parsed by ``load_config`` (``${VAR}`` expanded; an unset one is an
    error naming it, never a value)."""
    try:
        config = load_config({"mcpServers": {name: entry}})[name]
    except ValueError as exc:
        raise EntryError(name, f"{path}: {exc}") from None
    explicit = isinstance(entry, dict) and ("type" in entry or "transport" in entry)
    if config.type == "stdio":
        target: Union[str, StdioTransport] = config.transport()  # type: ignore[assignment]
    else:
        target = config.url or ""
    return Server(name, target, dict(config.headers), config.type if explicit else None, config.timeout,
                  config.protocol, config.enabled, tuple(config.include), tuple(config.exclude))


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
    return None if ns.auth is None else str(ns.auth)


def servers(ns: argparse.Namespace, *, every: bool = False) -> List[Union[Server, EntryError]]:
    """The servers the command line names: TARGET, the ``--config`` entry chosen with ``--server``
    (or its only one), or, with ``every``, each entry of ``--config`` when no ``--server`` is given
    (then an entry that cannot be parsed is its error, in its place)."""
    if not ns.config:
        return [Server(None, ns.target, {})]
    if every and ns.server is None:
        found: List[Union[Server, EntryError]] = []
        for name, entry in config_entries(ns.config).items():
            try:
                found.append(config_server(ns.config, name, entry))
            except EntryError as exc:
                found.append(exc)
        return found
    return [config_server(ns.config, *config_entry(ns.config, ns.server))]


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
        return Client(server.target, **_options(ns, server))
    url = server.target
    assert isinstance(url, str)
    name = host_port(url)
    if server.kind == "sse":
        sse = load("mcpclient.transports.http.sse")  # requests: only a URL target needs it
        transport: Any = sse.SSETransport(url, headers=headers or None, auth=token, name=name)
    else:
        streamable = load("mcpclient.transports.http.streamable")  # requests: only a URL target needs it
        transport = streamable.HTTPTransport(url, headers=headers or None, auth=token, name=name,
                                  sse_fallback=server.kind is None)
    return Client(transport, **_options(ns, server))


def _options(ns: argparse.Namespace, server: Server) -> Dict[str, Any]:
    """``timeout`` and ``protocol``: the command line's when given, else the entry's, else the defaults."""
    timeout = ns.timeout
    if timeout is DEFAULT_TIMEOUT:
        timeout = server.timeout if server.timeout is not None else float(DEFAULT_TIMEOUT)
    return {"timeout": timeout, "protocol": ns.protocol if ns.protocol != "auto" else server.protocol}
