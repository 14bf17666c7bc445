"""``DEFAULT``: the "use the client's setting" marker for ``timeout=`` (``None`` means wait forever);
``DEFAULT_MAX_PAGES``, the default a ``Client`` signature shows and the protocol layer applies."""
from typing import Any

__all__ = ["DEFAULT", "DEFAULT_MAX_PAGES"]


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _Default()
"""What ``timeout=`` is when it is left out: the client's default (``Client(timeout=)``);
``None`` instead means no limit."""

#: Pages one listing may take (``Limits(pages=)``): a server handing out new cursors for ever
#: must not drive requests and memory without end (each page is bounded by ``max_message_size``).
DEFAULT_MAX_PAGES = 1000
