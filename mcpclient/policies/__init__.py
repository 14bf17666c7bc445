"""The values a user passes in to say how the client behaves: ``Timeout``, ``Limits``,
``Handlers``, ``Retry``, ``Redirects``, ``Reconnect``/``Keepalive``, ``Tracing``. Immutable,
compared by value, no I/O.
"""
# Each loads on first use (``_util.lazy``): a stdio program needs ``Timeout``, ``Limits`` and
# ``Handlers`` only, and the others would add about 15 ms to its one-shot call (``Retry`` reads
# HTTP dates with ``email.utils``, which ``requests`` loads anyway).
#
# Imports: ``types``, ``_util``, ``errors``.
from typing import TYPE_CHECKING

from .._util.lazy import lazy_names as _lazy_names

if TYPE_CHECKING:
    from .reconnect import Keepalive, Reconnect
    from .redirects import Redirects
    from .retry import Retry
    from .tracing import Tracing
    from .handlers import Handlers
    from .timeout import Limits, Timeout

__all__ = ["Handlers", "Keepalive", "Limits", "Reconnect", "Redirects", "Retry", "Timeout", "Tracing"]

__getattr__ = _lazy_names(__name__, {"Keepalive": "reconnect", "Reconnect": "reconnect", "Redirects": "redirects",
                                     "Retry": "retry", "Tracing": "tracing", "Handlers": "handlers",
                                     "Limits": "timeout", "Timeout": "timeout"}, globals())
