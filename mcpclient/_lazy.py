"""Names a package loads on first use (PEP 562), so that ``import mcpclient`` stays cheap."""
from __future__ import annotations

from typing import Any, Callable, Dict


def lazy_names(package: str, table: Dict[str, str], namespace: Dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``table`` maps each lazy name to the submodule
    (relative to ``package``) that defines it; the first lookup imports it and keeps the value in
    ``namespace`` (the package's globals), so later lookups never come here again."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib  # deferred: only the first use of a lazy name needs it

        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
