"""The stdio transport: the server is a child process speaking newline-delimited JSON-RPC.

``StdioTransport`` lives in ``transport``; ``_cmdline`` splits command lines, ``_pipes`` reads the
child's output, ``_stdin`` writes to its input, ``_windows`` holds what differs on Windows.

Imports: as ``transports``.
"""
from .transport import DEFAULT_ENV_KEYS, StdioTransport

__all__ = ["DEFAULT_ENV_KEYS", "StdioTransport"]
