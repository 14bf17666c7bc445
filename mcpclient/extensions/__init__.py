"""Protocol extensions: the ``Extension`` base a client extension subclasses, the ids of the
built-in ones, skills, tasks (the 2025-11-25 tasks and the Tasks extension) and MCP Apps.
"""
# The registry a ``Client`` keeps is ``registry``; the tasks live in ``tasks/``, MCP Apps in
# ``apps/``.
#
# Imports: ``protocol``, ``_engine`` and everything below them; never ``_client`` or ``client``:
# the façade reaches extensions only through the registry's interface.
from ..protocol.eras import AsIs
from .base import (
    APP_MIME_TYPE, APPS, SKILLS, TASKS, Extension, ExtensionContext, Feature, check_id, require, server_settings,
)
from .skills import Skills
from .tasks.feature import Tasks

__all__ = ["APPS", "APP_MIME_TYPE", "AsIs", "Extension", "ExtensionContext", "Feature", "SKILLS", "Skills", "TASKS",
           "Tasks", "check_id", "require", "server_settings"]
