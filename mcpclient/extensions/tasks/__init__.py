"""Tasks: the 2025-11-25 tasks of the core protocol (``core``: ``Tasks.call_tool``, the
server's task-augmented requests) and the Tasks extension (``extension``: tool calls the server
answers with a task, followed by the ``poller`` and each ``wait``).

Imports: as ``extensions``: ``protocol``, ``_engine`` and below.
"""
