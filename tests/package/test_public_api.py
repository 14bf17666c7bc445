"""The public surface: what the API returns or raises is importable (``Subscription``, ``Event``,
``SubscriptionLost`` and the futures' type included); ``Client`` stays within its budget (25
public names, 14 constructor keywords) with ``_future`` twins only where many calls are started
at once, each with its blocking method's parameters. The package's public names are sorted and
importable.
"""
from __future__ import annotations

import inspect
import typing
from concurrent.futures import Future

import mcpclient

from mcpclient import Client, errors, types


#: The request methods that have a ``_future`` twin: those users start many of at once.
TWINNED = {"call_tool", "request"}


def _public_methods():
    return {name: member for name, member in inspect.getmembers(Client, inspect.isfunction)
            if not name.startswith("_")}


def test_all_is_sorted_and_every_name_resolves():
    assert mcpclient.__all__ == sorted(mcpclient.__all__)
    for name in mcpclient.__all__:
        assert getattr(mcpclient, name) is not None, name
    assert sorted(dir(mcpclient)) == sorted(mcpclient.__all__)


def test_every_error_and_result_type_is_exported():
    missing = [n for n in errors.__all__ + types.__all__ if n not in mcpclient.__all__]
    assert missing == ["Content", "JSONObject", "JSONValue", "parse_content"]  # typing aliases and a parser, not API types


def test_everything_the_client_returns_or_yields_is_exported():
    namespace = {name: getattr(mcpclient, name) for name in mcpclient.__all__}
    namespace.update(vars(typing), F=typing.TypeVar("F"))  # (extension(kind) returns what kind is)
    from mcpclient.extensions.skills import LoadedSkill, Skill  # noqa: F401 - resolved by get_type_hints
    from mcpclient.extensions.tasks.core import Task, ToolTask  # noqa: F401
    from mcpclient.types import JSONObject, JSONValue  # noqa: F401 - the JSON aliases, resolved too

    exported = {id(getattr(mcpclient, n)) for n in mcpclient.__all__}
    unexported = set()
    for name, method in _public_methods().items():
        returns = eval(inspect.signature(method).return_annotation, dict(namespace, **locals()))  # noqa: S307
        for arg in _classes(returns):
            if arg.__module__.startswith("mcpclient") and id(arg) not in exported:
                unexported.add(f"{name} -> {arg.__qualname__}")
    assert unexported == set()


def _classes(annotation):
    origin = typing.get_origin(annotation)
    if origin is None:
        if isinstance(annotation, type):
            yield annotation
        return
    if isinstance(origin, type):
        yield origin
    for arg in typing.get_args(annotation):
        yield from _classes(arg)


def test_the_client_stays_within_its_budget_of_names_and_keywords():
    names = [name for name in dir(Client) if not name.startswith("_")]
    keywords = [p for p in inspect.signature(Client.__init__).parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert "call_tool" in names and "timeout" in [p.name for p in keywords]  # the walk finds them
    assert len(names) <= 25, names
    assert len(keywords) <= 14, [p.name for p in keywords]


def test_only_the_calls_started_many_at_once_have_a_future_twin_with_the_same_parameters():
    methods = _public_methods()
    futures = {n[:-len("_future")] for n in methods if n.endswith("_future")}
    assert futures == TWINNED
    for name in sorted(futures):
        blocking = inspect.signature(methods[name]).parameters
        twin = inspect.signature(methods[f"{name}_future"]).parameters
        assert list(twin) == list(blocking), name
        for key in twin:
            assert (twin[key].kind, twin[key].default) == (blocking[key].kind, blocking[key].default), (name, key)


def test_every_future_twin_returns_a_call_future():
    twins = {name: method for name, method in _public_methods().items() if name.endswith("_future")}
    assert "call_tool_future" in twins
    for name, method in twins.items():
        assert inspect.signature(method).return_annotation.startswith("CallFuture["), name
    assert issubclass(mcpclient.CallFuture, Future)


def test_the_tasks_extension_types_are_exported_and_load_lazily():
    import subprocess
    import sys

    assert issubclass(mcpclient.ToolCallFuture, mcpclient.CallFuture)  # call_tool_future's type stays
    assert issubclass(mcpclient.TasksExtension, mcpclient.Extension)
    assert mcpclient.TasksExtension.id == mcpclient.TASKS
    loaded = subprocess.run([sys.executable, "-c", "import sys, mcpclient; print(sorted(m for m in sys.modules "
                             "if m.startswith('mcpclient.extensions')))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def test_public_names_are_sorted_and_importable():
    names = [n for n in mcpclient.__all__ if n not in ("DEFAULT", "__version__")]
    assert names == sorted(names)
    for name in mcpclient.__all__:
        assert hasattr(mcpclient, name)
