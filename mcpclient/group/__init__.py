"""Many servers behind one tool list: ``ServerGroup`` and its members, tool naming, the
``mcpServers`` configuration format, tool pins and tool search.
"""
# Imports: ``client`` and everything below it.
from .server_group import ServerGroup, ServerStatus

__all__ = ["ServerGroup", "ServerStatus"]
