"""The JSON-RPC engine: ids, the pending table, the reader thread, dispatch (``session``), the one
future type (``futures``), the deadline timer, the lanes for the server's requests, and the hook
protocols that tracing and extensions plug into (``hooks``).

Imports: ``transports``, ``auth``, ``policies``, ``types``, ``_util``, ``errors``. It knows no MCP
method, no era, no extension and no feature: those plug in through ``hooks``.
"""
