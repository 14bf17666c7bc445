"""Server configuration files: the ``mcpServers`` JSON of Claude Desktop, Cursor and others, and
VS Code's ``servers`` form, read into frozen ``ServerConfig`` values.

    servers = load_config("~/.cursor/mcp.json")
    with Client(servers["files"]) as client:  # its timeout and protocol apply
        print(client.list_tools())

``${VAR}``, ``${env:VAR}`` and ``${VAR:-default}`` are expanded from the environment in
``command``, ``args``, ``env``, ``cwd``, ``url`` and ``headers``; a missing variable is a
``ValueError`` naming it and the server (never its value), except in a disabled entry, where it
stays as written. ``~`` is expanded in ``command``,
``cwd`` and arguments that start with it. Keys this module does not know are kept in ``extra``.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from .._util.lazy import load
from ..transports.base import Transport
from ..transports.stdio.transport import StdioTransport
from ..types._base import _SLOTS, _Value

__all__ = ["ServerConfig", "load_config"]

Source = Union[str, "os.PathLike[str]", Mapping[str, object]]

_KNOWN = {"command", "args", "env", "cwd", "url", "type", "transport", "headers", "timeout", "protocol",
          "enabled", "disabled", "include", "exclude"}
_TYPES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http",
          "streamable_http": "http", "sse": "sse"}
_VAR = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_OTHER = re.compile(r"\$\{[^}]*:[^}]*\}")


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class ServerConfig(_Value):
    """One server of a configuration file. ``env``, ``headers``, the command's arguments and the
    URL's query and credentials may hold secrets: ``repr()`` leaves them out. ``type`` is ``"stdio"``, ``"http"`` (Streamable HTTP) or ``"sse"``."""

    name: str
    command: Optional[str] = None
    args: Tuple[str, ...] = ()
    env: Dict[str, str] = field(default_factory=dict, repr=False, hash=False)
    cwd: Optional[str] = None
    url: Optional[str] = None
    type: str = "stdio"
    headers: Dict[str, str] = field(default_factory=dict, repr=False, hash=False)
    timeout: Optional[float] = None
    protocol: str = "auto"
    enabled: bool = True
    include: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()
    extra: Dict[str, object] = field(default_factory=dict, repr=False, hash=False)

    def __repr__(self) -> str:
        """Where the server is, without what may be a secret: ``env``, ``headers``, the URL's
        credentials and query (``?api_key=...``), the command's arguments (``--token ...``)."""
        if self.type == "stdio":
            where = f"command={self.command!r} args={len(self.args)}"
        else:
            url = re.sub(r"//[^/@]*@", "//…@", self.url or "")
            where = f"url={url.split('?', 1)[0] + ('?…' if '?' in url else '')!r}"
        return f"<ServerConfig {self.name!r} {self.type} {where}{'' if self.enabled else ' disabled'}>"

    @classmethod
    def from_dict(cls, name: str, entry: Mapping[str, object],
                  environ: Optional[Mapping[str, str]] = None) -> "ServerConfig":
        """Parse one entry (the value under its name); ``ValueError`` names the server and the key."""
        return _parse(name, entry, os.environ if environ is None else environ)

    def transport(self) -> Transport:
        """A new, unstarted transport for this server (an HTTP one loads ``requests``: only a
        remote server needs it)."""
        if self.type == "stdio":
            return StdioTransport([self.command or "", *self.args], env=self.env, cwd=self.cwd, name=self.name)
        if self.type == "sse":
            sse = load("mcpclient.transports.http.sse")  # requests: only a remote server needs it
            return sse.SSETransport(self.url or "", headers=dict(self.headers), name=self.name)
        streamable = load("mcpclient.transports.http.streamable")  # requests: only a remote server needs it
        return streamable.HTTPTransport(self.url or "", headers=dict(self.headers), name=self.name)

    def client_settings(self) -> Dict[str, object]:
        """What ``Client(config)`` takes from the entry: its ``timeout`` and its ``protocol``
        (unless ``"auto"``); they win over the keyword arguments given with it, being the more
        specific setting."""
        settings: Dict[str, Any] = {}
        if self.timeout is not None:
            settings["timeout"] = self.timeout
        if self.protocol != "auto":
            settings["protocol"] = self.protocol
        return settings


def load_config(source: Source, *, environ: Optional[Mapping[str, str]] = None) -> Dict[str, ServerConfig]:
    """Read a configuration (a JSON file path, or the already-parsed dict) into ``{name: ServerConfig}``,
    in file order. Accepts ``{"mcpServers": {...}}``, VS Code's ``{"servers": {...}}``, or the bare
    ``{name: entry}`` mapping of a dict. ``ValueError`` for anything malformed."""
    result: Dict[str, ServerConfig] = {}
    for name, config in load_each(source, environ=environ).items():
        if isinstance(config, ValueError):
            raise config
        result[name] = config
    return result


def load_each(source: Source, *, environ: Optional[Mapping[str, str]] = None) -> Dict[str, Union[ServerConfig, ValueError]]:
    """As ``load_config``, but an entry that cannot be used is its ``ValueError``, in its place (a
    ``ServerGroup`` reports it as that server's failure; the others still run). A file that is
    not a configuration at all still raises."""
    where = "config"
    if isinstance(source, Mapping):
        data: Any = source
    elif isinstance(source, (str, os.PathLike)):
        where = os.fspath(source)
        try:
            with open(os.path.expanduser(where), encoding="utf-8") as f:
                data = json.load(f)
        except ValueError as exc:
            raise ValueError(f"{where}: not valid JSON ({exc})") from None
    else:
        raise TypeError(f"load_config() takes a path or a dict, not {type(source).__name__}")
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a JSON object")
    servers = data.get("mcpServers", data.get("servers"))
    if servers is None and isinstance(source, Mapping) and all(isinstance(v, Mapping) for v in data.values()):
        servers = data  # a bare {name: entry} mapping
    if not isinstance(servers, Mapping):
        raise ValueError(f"{where}: no \"mcpServers\" (or \"servers\") object")
    env = os.environ if environ is None else environ
    result: Dict[str, Union[ServerConfig, ValueError]] = {}
    for name, entry in servers.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}: server names must be non-empty strings")
        try:
            if not isinstance(entry, Mapping):
                raise ValueError(f"{where}: server {name!r}: expected an object")
            result[name] = _parse(name, entry, env)
        except ValueError as exc:
            result[name] = exc
    return result


# --- parsing ------------------------------------------------------------------------------------

class _Disabled(dict):  # type: ignore[type-arg]
    """The environment of a disabled entry: a variable not set stays ``${VAR}``, not an error
    (a server switched off often is because its token is not set here)."""


def _expand(value: str, server: str, key: str, environ: Mapping[str, str]) -> str:
    def one(match: "re.Match[str]") -> str:
        var, default = match.group(1), match.group(2)
        if var in environ:
            return environ[var]
        if default is not None:
            return default
        if isinstance(environ, _Disabled):
            return match.group(0)
        raise ValueError(f"server {server!r}: {key} uses ${{{var}}}, but the environment variable {var} is not set")

    expanded = _VAR.sub(one, value)
    left = _OTHER.search(_VAR.sub("", value))
    if left and not isinstance(environ, _Disabled):  # VS Code's ${input:...}, ${workspaceFolder} and the like need the editor
        raise ValueError(f"server {server!r}: {key} uses {left.group(0)}, which only the editor that wrote "
                         "the file can fill in")
    return expanded


def _string(entry: Mapping[str, Any], key: str, server: str, environ: Mapping[str, str]) -> Optional[str]:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"server {server!r}: {key!r} must be a string")
    return _expand(value, server, key, environ)


def _strings(entry: Mapping[str, Any], key: str, server: str, environ: Optional[Mapping[str, str]]) -> Tuple[str, ...]:
    value = entry.get(key) or []
    if isinstance(value, str) and key in ("include", "exclude"):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (str, int, float)) for v in value):
        raise ValueError(f"server {server!r}: {key!r} must be a list of strings")
    items = [str(v) for v in value]
    return tuple(_expand(v, server, key, environ) if environ is not None else v for v in items)


def _mapping(entry: Mapping[str, Any], key: str, server: str, environ: Mapping[str, str]) -> Dict[str, str]:
    value = entry.get(key) or {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"server {server!r}: {key!r} must be an object of strings")
    out = {}
    for k, v in value.items():
        if not isinstance(v, (str, int, float, bool)):
            raise ValueError(f"server {server!r}: {key}[{k!r}] must be a string")
        out[k] = _expand(v if isinstance(v, str) else json.dumps(v), server, f"{key}[{k!r}]", environ)
    return out


def _home(path: str) -> str:
    return os.path.expanduser(path) if path.startswith("~") else path


def _parse(name: str, entry: Mapping[str, Any], environ: Mapping[str, str]) -> ServerConfig:
    if entry.get("enabled", True) is False or entry.get("disabled", False) is True:
        environ = _Disabled(environ)
    command = _string(entry, "command", name, environ)
    url = _string(entry, "url", name, environ)
    given = entry.get("type", entry.get("transport"))
    if given is not None and given not in _TYPES:
        raise ValueError(f"server {name!r}: 'type' must be one of stdio, http, sse (got {given!r})")
    kind = _TYPES[given] if given is not None else ("http" if url and not command else "stdio")
    if kind == "stdio" and not command:
        raise ValueError(f"server {name!r}: needs a 'command' (or a 'url')")
    if kind != "stdio" and not url:
        raise ValueError(f"server {name!r}: 'url' is required for type {kind!r}")
    if url and kind != "stdio" and not re.match(r"https?://", url, re.I):
        raise ValueError(f"server {name!r}: 'url' must be an http(s) URL")
    timeout = entry.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ValueError(f"server {name!r}: 'timeout' must be a positive number of seconds")
    protocol = entry.get("protocol", "auto")
    if not isinstance(protocol, str):
        raise ValueError(f"server {name!r}: 'protocol' must be a string")
    enabled = entry.get("enabled", True)
    disabled = entry.get("disabled", False)
    if not isinstance(enabled, bool) or not isinstance(disabled, bool):
        raise ValueError(f"server {name!r}: 'enabled' and 'disabled' must be true or false")
    cwd = _string(entry, "cwd", name, environ)
    return ServerConfig(
        name=name, command=_home(command) if command else None,
        args=tuple(_home(a) for a in _strings(entry, "args", name, environ)),
        env=_mapping(entry, "env", name, environ), cwd=_home(cwd) if cwd else None, url=url, type=kind,
        headers=_mapping(entry, "headers", name, environ), timeout=float(timeout) if timeout is not None else None,
        protocol=protocol, enabled=enabled and not disabled, include=_strings(entry, "include", name, None),
        exclude=_strings(entry, "exclude", name, None), extra={k: v for k, v in entry.items() if k not in _KNOWN})
