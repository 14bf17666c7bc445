"""``DEFAULT``: the "use the client's setting" marker for ``timeout=`` (``None`` means wait forever)."""
from typing import Any

__all__ = ["DEFAULT"]


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT"


#: Sentinel for ``timeout=``: use the client's default. ``None`` means wait forever.
DEFAULT: Any = _Default()
