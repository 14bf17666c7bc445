"""Django: the MCP servers of ``settings.MCP_SERVERS``, one group per process.

    # settings.py: the mcpServers format of mcp.json files
    INSTALLED_APPS = [..., "mcpclient.contrib.django"]
    MCP_SERVERS = {
        "files": {"command": "npx", "args": ["-y", "server-filesystem", "/srv"]},
        "search": {"url": "https://search.example/mcp"},
    }
    MCP_OPTIONS = {"client_options": {"timeout": 30}}  # optional

    # anywhere (a view, a task)
    from mcpclient.contrib.django import mcp
    result = mcp.call_tool("files_read_text_file", {"path": "/srv/a.txt"})
    tools = to_openai_tools(mcp)     # the adapters take it as a group
    mcp["files"].list_resources()    # one server's Client

``mcp`` is a ``PerProcessGroup``: the group is made on first use in each process, after any fork
(gunicorn ``--preload``, Celery's prefork pool), shared by the process's threads, closed at exit.
``MCP_SERVERS`` may also be a path to an ``mcp.json`` file; ``${VAR}`` is expanded from the
environment. The app adds a system check (``manage.py check``: ``mcpclient.E001`` for
``MCP_SERVERS``, ``mcpclient.E002`` for ``MCP_OPTIONS``, ``mcpclient.W001`` for a variable this
environment lacks), ``manage.py mcp status|tools|call``, and ``mcpclient.contrib.django.views.health``.
mcpclient logs through the standard ``logging`` module: configure the ``mcpclient`` logger in
``LOGGING``. Celery workers that use these settings: ``mcpclient.contrib.celery.init_app(app, mcp)``.
"""
from __future__ import annotations

from typing import Any, Dict, List

from ...errors import MissingExtraError

try:
    import django  # noqa: F401
except ImportError as exc:
    raise MissingExtraError("mcpclient.contrib.django needs Django: pip install 'mcpclient[django]'",
                            extra="django", name="django") from exc

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from ..process import PerProcessGroup, Problem, Settings, settings_problems

__all__ = ["check_settings", "mcp", "problems"]


def problems() -> List[Problem]:
    """What is wrong with ``settings.MCP_SERVERS`` and ``settings.MCP_OPTIONS`` (nothing started)."""
    return settings_problems(getattr(settings, "MCP_SERVERS", None), getattr(settings, "MCP_OPTIONS", None))


def _settings() -> Settings:
    errors = [f"{p.setting} {p.message}" for p in problems() if p.error]
    if errors:
        raise ImproperlyConfigured("; ".join(errors))
    options: Any = getattr(settings, "MCP_OPTIONS", None) or {}
    return settings.MCP_SERVERS, options


#: This process's ``ServerGroup`` of ``settings.MCP_SERVERS`` (made on first use).
mcp = PerProcessGroup(_settings, name="settings.MCP_SERVERS")
"""The group of ``settings.MCP_SERVERS`` (with ``settings.MCP_OPTIONS``): a ``PerProcessGroup``."""


#: The hint each check id gives (``manage.py check``).
HINTS: Dict[str, str] = {
    "mcpclient.E001": "MCP_SERVERS takes the mcpServers object of an mcp.json file ({\"files\": {\"command\": "
                      "\"npx\", \"args\": [...]}, \"search\": {\"url\": \"https://...\"}}) or a path to one.",
    "mcpclient.E002": "MCP_OPTIONS takes ServerGroup's keyword arguments (separator, include, exclude, "
                      "client_options, connect_timeout, pins, on_pin_change).",
    "mcpclient.W001": "Set the variable where the servers run, or give the entry a default: ${VAR:-default}.",
}


def check_settings(app_configs: Any = None, **kwargs: Any) -> List[Any]:
    """The system check (registered by the app, tag ``mcpclient``; every management command runs
    it): ``mcpclient.E001`` ``MCP_SERVERS`` is not set or malformed, ``mcpclient.E002``
    ``MCP_OPTIONS`` is, ``mcpclient.W001`` an entry needs an environment variable this process
    lacks (the server would fail to start here; build steps often run without the secrets)."""
    found: List[Any] = []
    for problem in problems():
        if problem.error:
            check_id = "mcpclient.E001" if problem.setting == "MCP_SERVERS" else "mcpclient.E002"
            found.append(checks.Error(f"settings.{problem.setting} {problem.message}", hint=HINTS[check_id],
                                      id=check_id))
        else:
            found.append(checks.Warning(f"settings.{problem.setting} {problem.message}",
                                        hint=HINTS["mcpclient.W001"], id="mcpclient.W001"))
    return found
