"""The app config: ``INSTALLED_APPS = [..., "mcpclient.contrib.django"]`` (label ``mcpclient``); it
registers the settings' system check."""
from django.apps import AppConfig


class MCPClientConfig(AppConfig):
    name = "mcpclient.contrib.django"
    label = "mcpclient"
    verbose_name = "MCP client"

    def ready(self) -> None:
        from django.core import checks

        from . import check_settings  # (the package: its settings and the process's group)

        checks.register(check_settings, "mcpclient")
