"""A griffe extension for the API reference: what a reader sees of a class is what a user calls.

griffe reads the package as it is written, so a class shows every base it has and a signature shows
every parameter. Four of those parts are the package's own business, and this extension drops them
from the reference (never from the package):

- a base that is not public: a private class of the package (``_Value``), a class of one of its
  private modules (the HTTP transport's parts), ``abc.ABC``, or ``typing.Generic`` (a generic
  class says so in its signature: ``items: List[T]``; another library's class keeps the name it
  is shown by: ``Future``, not ``concurrent.futures._base``);
- a parameter whose name starts with ``_`` and that has a default (a keyword the package passes to
  itself, never a user);
- a default that names a private constant: the constant's value is shown instead, or ``...`` when
  that value is itself private (a sentinel such as ``_Unset()``: the docstring says what leaving
  the argument out means);
- a special method that no syntax of the user's calls (``__reduce__``, ``__repr__``): it is there for
  ``pickle`` or ``repr()``, which the class docstring describes where it matters.

mkdocs.yml loads it (``extensions:`` of the python handler); griffe runs it once per package.
"""
from __future__ import annotations

import re
from typing import Any, Iterator, Union

from griffe import Attribute, Class, Expr, ExprName, Extension, Function, Object

NOT_SHOWN = {"abc.ABC", "object", "typing.Generic"}
#: A private name in an expression (``_Unset()``), as ``_private`` sees a dotted path.
PRIVATE_NAME = re.compile(r"(?<![\w.])_[A-Za-z]\w*")
#: The special methods a user calls with syntax: ``client["name"]``, ``fixture(target)``, ``with``...
CALLED_BY_SYNTAX = {
    "__init__", "__call__", "__getitem__", "__contains__", "__iter__", "__next__", "__len__",
    "__enter__", "__exit__",
}


def _private(path: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in path.split("."))


def _special(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _objects(obj: Object) -> Iterator[Object]:
    for member in obj.members.values():
        if member.is_alias:
            continue
        yield member
        yield from _objects(member)


def _public_base(base: Union[str, Expr], package: str) -> bool:
    path = base.canonical_path if isinstance(base, Expr) else base
    ours = path.startswith(package + ".")
    return path not in NOT_SHOWN and not (ours and _private(path))


def _shown_default(default: Union[str, Expr, None], where: Object) -> Union[str, Expr, None]:
    """A private constant's value in place of its name (``_VISIBILITY`` -> ``("model", "app")``),
    or ``...`` for a private sentinel (``_UNSET`` -> ``_Unset()`` -> ``...``)."""
    if not isinstance(default, ExprName) or not _private(default.name):
        return default
    try:
        target = where.modules_collection.get_member(default.canonical_path)
    except (KeyError, ValueError):
        return default
    if isinstance(target, Attribute) and target.value is not None:
        return "..." if PRIVATE_NAME.search(str(target.value)) else target.value
    return default


class HidePrivate(Extension):
    """Drop private bases, parameters and special methods; show private constants' values."""

    def on_package(self, *, pkg: Any, **kwargs: Any) -> None:
        for obj in _objects(pkg):
            if _special(obj.name) and obj.name not in CALLED_BY_SYNTAX:
                obj.public = False  # what mkdocstrings' "public" filter asks
            if isinstance(obj, Class):
                obj.bases = [base for base in obj.bases if _public_base(base, pkg.path)]
            elif isinstance(obj, Function):
                for parameter in list(obj.parameters):
                    if parameter.name.startswith("_") and parameter.default is not None:
                        del obj.parameters[parameter.name]
                    else:
                        parameter.default = _shown_default(parameter.default, obj)
