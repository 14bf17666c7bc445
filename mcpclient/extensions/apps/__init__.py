"""MCP Apps (extension ``io.modelcontextprotocol/ui``): the host bridge a web back end puts between
an app's iframe and the server. The typed ``_meta.ui`` lives in ``mcpclient.types``.
"""
# The bridge is ``bridge``.
#
# Imports: as ``extensions``: ``protocol``, ``_engine`` and below.
from .bridge import APP_PROTOCOL_VERSION, AppBridge, AppView

__all__ = ["APP_PROTOCOL_VERSION", "AppBridge", "AppView"]
