"""The JSON-RPC engine: ids and the pending table (``session``), the reader thread and where what
it reads goes (``reader``, a part the session owns), the requests given up on and their late
replies (``abandoned``), the one future type (``futures``), the deadline timer, the server's
requests (``server_requests``), and the protocols that the protocol's rules (``rules``),
tracing, extensions and features (``hooks``, ``requester``) plug into.

Imports: ``transports``, ``auth``, ``policies``, ``types``, ``_util``, ``errors``. It knows no MCP
method, no era, no extension and no feature: those plug in through ``hooks``.
"""
