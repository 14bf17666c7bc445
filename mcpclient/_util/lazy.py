"""The one way mcpclient loads a module later than the module that uses it.

Everything else imports at the top of its module. A load waits only at an optional boundary:
an extra a program may not have asked for (``requests`` for a stdio-only program,
``jsonschema`` before a first validation, ``cryptography``, OpenTelemetry, a framework or an
LLM SDK), an extension, the protocol era a connection did not negotiate; or where the one-shot
benchmark (start, import, connect, one call, exit) shows the wait still pays, which the module
that waits says. ``load`` is that wait, named; ``lazy_names`` builds a package's
``__getattr__`` (PEP 562) from it. ``tools/layout.py`` reads ``load("mcpclient....")`` as an
import, so the layering checks see it (and tests/package that it names a module).
"""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any, Callable, Dict, Optional

__all__ = ["lazy_names", "load"]


def load(module: str) -> ModuleType:
    """Import ``module`` (an absolute name) and return it: ``ImportError`` if it is not
    installed. Call it where the optional feature is first used, with a comment saying which
    boundary it is."""
    __import__(module)  # (not importlib.import_module: no module to load for it)
    return sys.modules[module]


def lazy_names(module: str, table: Dict[str, str], namespace: Dict[str, Any],
               package: Optional[str] = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module``: ``table`` maps each lazy name to the submodule of
    ``package`` (default: ``module`` itself) that defines it. The first lookup loads that
    submodule and keeps, in ``namespace`` (the module's globals), every name of ``table`` it
    defines: later lookups never come here again, and names that refer to each other (in
    annotations that ``typing.get_type_hints`` resolves there) are all present at once."""
    base = module if package is None else package

    def __getattr__(name: str) -> Any:
        sub = table.get(name)
        if sub is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        loaded = load(f"{base}.{sub}")
        for each, where in table.items():
            if where == sub:
                namespace[each] = getattr(loaded, each)
        return namespace[name]

    return __getattr__

