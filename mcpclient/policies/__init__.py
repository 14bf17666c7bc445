"""The values a user passes in to say how the client behaves: ``Retry``, ``Redirects``,
``Reconnect``/``Keepalive``, ``Tracing``. Immutable, compared by value, no I/O.

Imports: ``types``, ``_util``, ``errors``.
"""
