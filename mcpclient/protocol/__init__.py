"""MCP as rules: the revisions and what each method needs (``spec``), what MCP adds to the engine's
JSON-RPC (``rpc_rules``: progress tokens, cancellation, ping, trace context), the 2026 era's
``_meta`` and routing headers (``stateless``), negotiation, the handshake and stateless eras with
their input rounds (``eras``, ``rounds``), request params and result transforms (``params``),
output validation and the result cache.

Imports: ``_engine`` and everything below it.
"""
