"""``Page``: one page of a listing (``Client.page``). Part of ``mcpclient.types``; it follows
that package's rules (a module of its own: a program that lists whole never loads it, about
1 ms of a one-shot call, benchmarks/cold.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, List, Optional, TypeVar

from ._base import _SLOTS, _Value

__all__ = ["Page"]

T = TypeVar("T")


@dataclass(frozen=True, eq=False, repr=False, **_SLOTS)
class Page(_Value, Generic[T]):
    """One page of a listing (``Client.page``): its ``items``, and the cursor of the next page
    (``None`` on the last)."""

    __module__ = "mcpclient.types"

    items: List[T] = field(hash=False)
    next_cursor: Optional[str]
