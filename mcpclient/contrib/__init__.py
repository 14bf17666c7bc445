"""Framework integrations: one ``ServerGroup`` per process for Django, Flask and Celery apps.

``PerProcessGroup`` is the shared part: the process's group, made from settings on first use
(after any fork: gunicorn ``--preload``, Celery's prefork pool), shared by its threads, closed at
exit. ``mcpclient.contrib.django`` (an app for ``INSTALLED_APPS``, ``settings.MCP_SERVERS``, a
system check, ``manage.py mcp``, a health view), ``.flask`` (``MCP(app)``, ``flask mcp``, a health
blueprint) and ``.celery`` (``init_app``: a group per pool process) build on it; each names its
extra in a ``MissingExtraError`` when its framework is not installed. Nothing here imports a
framework until one of those modules is imported.
"""
# Imports: ``cli`` (the commands' output), ``group``, ``client`` and below; nothing imports it.
from .process import PerProcessGroup, settings_problems

__all__ = ["PerProcessGroup", "settings_problems"]
