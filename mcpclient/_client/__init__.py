"""What the ``Client`` façade is made of: the channel it holds (``channel``: the one object its
collaborators reach it through), the connection (set-up, relaunch, reconnect, keepalive),
the responder (sampling, elicitation, roots), notification routing, subscriptions and change
events, the registry of listed tools and the tool requests (``tools``), and the bound on the
text a server writes (server_text).

Imports: ``extensions``, ``protocol``, ``_engine`` and everything below them; never ``client``.
"""
