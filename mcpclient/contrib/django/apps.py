"""The app config: ``INSTALLED_APPS = [..., "mcpclient.contrib.django"]`` (label ``mcpclient``); it
registers the settings' system check."""
from django.apps import AppConfig
from django.core import checks

from . import check_settings  # the package: its settings and the process's group


class MCPClientConfig(AppConfig):
    name = "mcpclient.contrib.django"
    label = "mcpclient"
    verbose_name = "MCP client"

    def ready(self) -> None:
        checks.register(check_settings, "mcpclient")
