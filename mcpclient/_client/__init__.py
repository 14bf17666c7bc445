"""What the ``Client`` façade is made of: the connection (set-up, relaunch, reconnect, keepalive),
the responder (sampling, elicitation, roots), notification routing, subscriptions and change
events, and the registry of listed tools.

Imports: ``extensions``, ``protocol``, ``_engine`` and everything below them; never ``client``.
"""
