"""Names a module loads on first use (PEP 562), so that ``import mcpclient`` stays cheap."""
from __future__ import annotations

from types import ModuleType
from typing import Any, Callable, Dict, Optional


def lazy_names(module: str, table: Dict[str, str], namespace: Dict[str, Any],
               package: Optional[str] = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module``: ``table`` maps each lazy name to the submodule of
    ``package`` (default: ``module`` itself) that defines it. The first lookup imports that
    submodule and keeps, in ``namespace`` (the module's globals), every name of ``table`` it
    defines: later lookups never come here again, and names that refer to each other (in
    annotations that ``typing.get_type_hints`` resolves there) are all present at once."""
    base = module if package is None else package

    def __getattr__(name: str) -> Any:
        sub = table.get(name)
        if sub is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        import importlib  # deferred: only the first use of a lazy name needs it

        loaded = importlib.import_module(f"{base}.{sub}")
        for each, where in table.items():
            if where == sub:
                namespace[each] = getattr(loaded, each)
        return namespace[name]

    return __getattr__


class LazyModule:
    """A module imported on its first attribute lookup: ``load()`` imports and returns it (an
    ``import`` statement inside a function, so the layering checks see the import). The façade
    keeps the protocol layer behind these: ``import mcpclient`` loads no engine, and the first
    ``connect()`` loads it (benchmarks/README.md, import time)."""

    def __init__(self, load: Callable[[], ModuleType]) -> None:
        self._load = load
        self._module: Optional[ModuleType] = None

    def __getattr__(self, name: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = self._load()
        return getattr(module, name)

    def __repr__(self) -> str:
        return f"<lazy module {self._module or self._load.__name__}>"
