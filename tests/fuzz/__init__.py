"""Fuzzing of server->client traffic.

A long-lived scripted server per transport (``stdio_server.py``, a process the client starts;
``http_server.py``, a process on 127.0.0.1) is told over a control socket which raw bytes to send
back for the client's next request of a given method; ``gen.py`` makes those scripts (mutated
JSON-RPC messages, raw byte mutations, SSE framing mutations, server requests and notifications
with garbage params); ``harness.py`` runs them through a real ``Client`` and checks, for every
exchange, the invariants listed in ``harness.py``. ``python -m tests.fuzz --help`` runs it;
``test_fuzz.py`` runs a small fixed budget (and hypothesis-generated cases) in the normal suite.
"""
