"""Every name exported from ``mcpclient`` has precise types in its signatures: no ``Any`` in the
resolved hints of a function, a public method or a property (``__init__`` included), so a user's
type checker learns what a timeout, a handler or a result is. Names a module imports only for
type checkers (under ``if TYPE_CHECKING:``) are imported here too, so every hint resolves.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import sys
import typing

import mcpclient
from mcpclient import types


def _type_checking_names(module, namespace):
    """Add to ``namespace`` (``module``'s names) those it imports under ``if TYPE_CHECKING:``,
    imported for real (a type alias another module defines may name an exported class: the
    exported names come too)."""
    source = inspect.getsource(module)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            for statement in node.body:
                if not _imported_from_the_package(statement, module, namespace):
                    block = ast.Module(body=[statement], type_ignores=[])
                    exec(compile(block, module.__file__, "exec"), namespace)  # noqa: S102 - the module's own imports


def _imported_from_the_package(statement, module, namespace):
    """``from <a module of the package> import names``: the names as that module's type checker
    sees them (an alias it defines under ``if TYPE_CHECKING:`` too). False for other statements."""
    if not isinstance(statement, ast.ImportFrom):
        return False
    package = module.__name__ if hasattr(module, "__path__") else module.__name__.rpartition(".")[0]
    source = importlib.util.resolve_name("." * statement.level + (statement.module or ""), package)
    if not source.startswith("mcpclient"):
        return False
    imported = importlib.import_module(source)
    found = _namespace(imported)  # (partial while that module's own block runs: modules that name each other)
    for alias in statement.names:
        name = alias.name
        if name in found:
            namespace[alias.asname or name] = found[name]
        elif hasattr(imported, name):
            namespace[alias.asname or name] = getattr(imported, name)
        else:
            namespace[alias.asname or name] = importlib.import_module(f"{source}.{name}")
    return True


_NAMESPACES = {}


def _namespace(module):
    if module.__name__ not in _NAMESPACES:
        _NAMESPACES[module.__name__] = namespace = dict(vars(module))
        _type_checking_names(module, namespace)
    return _NAMESPACES[module.__name__]


def _module_of_file(filename):
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == filename:
            return module
    return None


def _hints(function, home=None):
    """``function``'s resolved hints, in its module's namespace; ``home`` is the module that
    defines its class (a dataclass's generated ``__init__`` has no source file of its own)."""
    namespace = {name: getattr(mcpclient, name) for name in mcpclient.__all__}
    namespace.update(JSONObject=types.JSONObject, JSONValue=types.JSONValue)  # (aliases name them as strings)
    for module in (home, sys.modules[function.__module__], _module_of_file(function.__code__.co_filename)):
        if module is not None:
            namespace.update(_namespace(module))
    return typing.get_type_hints(function, namespace)


def _home(cls):
    """The module whose file defines ``cls`` (its ``__module__`` may name its public home)."""
    for value in vars(cls).values():
        value = getattr(value, "fget", value)
        value = getattr(value, "__func__", value)
        code = getattr(value, "__code__", None)
        module = _module_of_file(code.co_filename) if code is not None else None
        if module is not None and module.__name__.startswith("mcpclient"):
            return module
    for module in list(sys.modules.values()):  # no method of its own: the module that says "class Name"
        if module.__name__.startswith("mcpclient") and vars(module).get(cls.__name__) is cls:
            if f"class {cls.__name__}" in inspect.getsource(module):
                return module
    return None


def _signatures():
    """(label, function, home module) for every function, public method and property of the
    exported names."""
    for name in mcpclient.__all__:
        exported = getattr(mcpclient, name)
        if inspect.isfunction(exported):
            yield name, exported, None
        elif inspect.isclass(exported):
            home = _home(exported)
            for attr, value in vars(exported).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if isinstance(value, property):
                    value = value.fget
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                if inspect.isfunction(value):
                    yield f"{name}.{attr}", value, home


def _mentions_any(hint):
    if hint is typing.Any:
        return True
    return any(_mentions_any(arg) for arg in typing.get_args(hint) if not isinstance(arg, (str, int, type(...))))


def _any_hints():
    found = []
    for label, function, home in _signatures():
        for parameter, hint in _hints(function, home).items():
            if _mentions_any(hint):
                found.append(f"{label}({parameter}): {hint!r}")
    return found


def test_every_exported_signature_resolves():
    unresolved = []
    for label, function, home in _signatures():
        try:
            _hints(function, home)
        except Exception as error:  # noqa: BLE001 - reported by name below
            unresolved.append(f"{label}: {error!r}")
    assert unresolved == []


def test_no_exported_signature_says_any():
    assert _any_hints() == []


def test_the_check_sees_an_any():
    def takes_anything(value: typing.Dict[str, typing.Any]) -> typing.Optional[typing.Callable[[], typing.Any]]:
        return None

    hints = typing.get_type_hints(takes_anything)
    assert _mentions_any(hints["value"]) and _mentions_any(hints["return"])
    assert not _mentions_any(typing.Dict[str, typing.List[int]])
