"""The JSON-RPC engine: ids and the pending table (``session``), the reader thread and dispatch
(``incoming``, the session's reader side), the requests given up on and their late replies
(``abandoned``), the one future type (``futures``), the deadline timer, the lanes for the
server's requests, and the protocols that tracing, extensions and features plug into
(``hooks``, ``requester``).

Imports: ``transports``, ``auth``, ``policies``, ``types``, ``_util``, ``errors``. It knows no MCP
method, no era, no extension and no feature: those plug in through ``hooks``.
"""
