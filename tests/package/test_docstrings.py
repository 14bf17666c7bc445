"""Every public name has a docstring, and the errors page draws the real exception tree.

The API reference (``docs/``, built with mkdocstrings) is made from these docstrings, so a public
callable without one is a hole in the documentation: this walks the ``__all__`` of every public
module and fails listing each class, function, method and property that has none. ``Client``'s
request methods must also say what they return (``Returns:``), the contract they share (what they
raise) is written once in the class docstring, and every exception class must say whether
retrying is safe.
"""
from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest

import mcpclient
from mcpclient import errors

ROOT = Path(__file__).resolve().parents[2]
ERRORS_PAGE = ROOT / "docs" / "pages" / "errors.md"

#: The modules whose ``__all__`` is public API (what the reference documents). The provider
#: adapters are listed by their package's ``__all__``; their modules import no SDK at load time
#: except ``langchain`` (``langchain-core``), which is skipped when it is not installed.
PUBLIC_MODULES = [
    "mcpclient", "mcpclient.errors", "mcpclient.types", "mcpclient.transports", "mcpclient.auth",
    "mcpclient.adapters", "mcpclient.testing", "mcpclient.group.config", "mcpclient.group.server_group", "mcpclient.group.pins",
    "mcpclient.group.search", "mcpclient.extensions.skills", "mcpclient.types.elicitation", "mcpclient.policies.reconnect", "mcpclient.policies.retry",
    "mcpclient.policies.redirects", "mcpclient.auth.jwt", "mcpclient.adapters.openai", "mcpclient.adapters.anthropic",
]
OPTIONAL = {"to_langchain_tools": "langchain_core"}


def _public_objects() -> Iterator[Tuple[str, Any]]:
    """``(qualified name, object)`` for each public module-level name (classes, functions)."""
    seen = set()
    for modname in PUBLIC_MODULES:
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", ()):
            if name in OPTIONAL and importlib.util.find_spec(OPTIONAL[name]) is None:
                continue
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isroutine(obj)) or id(obj) in seen:
                continue  # constants (DEFAULT, __version__, SUPPORTED_VERSIONS) are documented where defined
            seen.add(id(obj))
            yield f"{modname}.{name}", obj


def _own_members(cls: type) -> Iterator[Tuple[str, Any]]:
    """The public methods and properties a class of this package defines (not ``object``'s or a
    builtin exception's), each once, by the class in the MRO that defines it."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        for klass in cls.__mro__:
            if name in vars(klass):
                if not klass.__module__.startswith("mcpclient"):
                    break
                member = vars(klass)[name]
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if isinstance(member, property) or inspect.isfunction(member):
                    yield name, member
                break


def _doc(member: Any) -> str:
    target = member.fget if isinstance(member, property) else member
    return (getattr(target, "__doc__", None) or "").strip()


def _undocumented() -> List[str]:
    missing, done = [], set()
    for qualname, obj in _public_objects():
        if not _doc(obj):
            missing.append(qualname)
        if inspect.isclass(obj):
            for name, member in _own_members(obj):
                key = (id(member), name)
                if key in done:
                    continue
                done.add(key)
                if not _doc(member) and not _inherited_doc(obj, name):
                    missing.append(f"{qualname}.{name}")
    return missing


def _inherited_doc(cls: type, name: str) -> bool:
    """An override documented by the base class it overrides (``Transport.send``) counts."""
    return bool(inspect.getdoc(getattr(cls, name, None)))


def test_every_public_name_has_a_docstring() -> None:
    missing = _undocumented()
    assert not missing, f"{len(missing)} public names have no docstring:\n  " + "\n  ".join(missing)


def test_the_walk_finds_the_public_api() -> None:
    """The walk is not vacuous: it reaches Client's methods and the lazily loaded names."""
    names = dict(_public_objects())
    assert {"mcpclient.Client", "mcpclient.HTTPTransport", "mcpclient.auth.OAuth",
            "mcpclient.adapters.to_openai_tools"} <= set(names)
    members = dict(_own_members(mcpclient.Client))
    assert {"call_tool", "call_tool_future", "page", "unsubscribe_resource", "server"} <= set(members)


def _client_request_methods() -> Iterator[Tuple[str, Any]]:
    for name, member in _own_members(mcpclient.Client):
        if inspect.isfunction(member) and name not in ("close",):
            yield name, member


def test_the_contract_every_client_method_shares_is_written_once_in_the_class_docstring() -> None:
    """What every request method raises, what ``timeout=`` means and what a ``_future`` twin is:
    in ``Client``'s docstring, so each method documents only what is its own."""
    doc = _doc(mcpclient.Client)
    shared = doc.split("Raises:", 1)[1].split("Args:", 1)[0] if "Raises:" in doc else ""
    assert [e for e in ("RequestTimeout", "CapabilityError", "ClientClosedError", "MCPError") if e not in shared] == []
    assert "timeout=" in doc and "_future" in doc and "deadline" in doc


def test_client_methods_say_what_they_return() -> None:
    """Each public ``Client`` method has a ``Returns:`` (or, for an iterator, ``Yields:``) section
    unless it returns nothing; each ``<name>_future`` twin is one line naming ``<name>``."""
    lacking = []
    for name, method in _client_request_methods():
        doc = _doc(method)
        if name.endswith("_future"):
            twin = name[:-len("_future")]
            if len(doc.splitlines()) != 1 or f"``{twin}``" not in doc:
                lacking.append(f"Client.{name}: not one line naming ``{twin}``")
            continue
        returns_none = inspect.signature(method).return_annotation in (None, "None")
        if not returns_none and "Returns:" not in doc and "Yields:" not in doc:
            lacking.append(f"Client.{name}: no Returns:")
    assert not lacking, "\n".join(lacking)


def _exception_classes() -> List[type]:
    found = {obj for _, obj in _public_objects() if inspect.isclass(obj) and issubclass(obj, BaseException)}
    return sorted(found, key=lambda c: c.__name__)


def test_every_exception_says_whether_retrying_is_safe() -> None:
    silent = [c.__name__ for c in _exception_classes() if not re.search(r"\bretr(y|ying|ied)\b", _doc(c), re.I)]
    assert not silent, f"exception docstrings that do not say whether retrying is safe: {silent}"


# --- the errors page's tree -------------------------------------------------------------------------

def _first_base(cls: type) -> Any:
    """The nearest mcpclient exception base (``SendTimeout(TransportError, TimeoutError)`` hangs
    under ``TransportError``)."""
    for base in cls.__bases__:
        if base.__module__.startswith("mcpclient"):
            return base
    return None


def draw_tree() -> str:
    """The ``MCPError`` hierarchy drawn as the errors page shows it: children sorted by name, each
    with its JSON-RPC code (``RPCError`` subclasses) and the builtins it also is."""
    classes = [c for c in _exception_classes() if issubclass(c, errors.MCPError)]
    lines: List[str] = []

    def label(cls: type) -> str:
        notes = []
        if "code_value" in vars(cls) and cls.code_value is not None:
            notes.append(str(cls.code_value))
        others = [b.__name__ for b in cls.__bases__ if not b.__module__.startswith("mcpclient") and b is not Exception]
        if others:
            notes.append("also " + ", ".join(others))
        return cls.__name__ + (f"  ({'; '.join(notes)})" if notes else "")

    def walk(cls: type, prefix: str, last: bool, root: bool) -> None:
        lines.append(label(cls) if root else prefix + ("└── " if last else "├── ") + label(cls))
        children = sorted((c for c in classes if _first_base(c) is cls), key=lambda c: c.__name__)
        inner = "" if root else prefix + ("    " if last else "│   ")
        for i, child in enumerate(children):
            walk(child, inner, i == len(children) - 1, False)

    walk(errors.MCPError, "", True, True)
    return "\n".join(lines) + "\n"


def _drawn_tree() -> str:
    text = ERRORS_PAGE.read_text(encoding="utf-8")
    block = re.search(r"<!-- tree -->\s*```text\n(.*?)```", text, re.S)
    assert block, "the errors page has no ```text block after <!-- tree -->"
    return block.group(1)


def test_errors_page_draws_the_real_exception_tree() -> None:
    """The drawing on the errors page is the real hierarchy (regenerate it with
    ``python tests/package/test_docstrings.py`` after adding or moving an exception class)."""
    assert _drawn_tree() == draw_tree(), "the errors page's tree is out of date; it should read:\n" + draw_tree()


def test_tree_covers_every_exception_class() -> None:
    """Every class of ``mcpclient.errors`` and every public ``MCPError`` elsewhere is drawn, once;
    the drawing is not vacuous (``ConnectError`` hangs under ``TransportError``)."""
    drawn = re.findall(r"(\w+)(?:  \(.*\))?$", draw_tree(), re.M)
    assert sorted(drawn) == sorted(set(drawn))
    assert set(errors.__all__) | {"CassetteMismatch", "SkillVerificationError"} == set(drawn)
    lines = draw_tree().splitlines()
    transport = next(i for i, line in enumerate(lines) if line.endswith("TransportError"))
    assert lines[transport + 1].endswith("── ConnectError")


def test_pages_exist() -> None:
    for page in ("index.md", "threads.md", "transports.md", "auth.md", "errors.md", "deployment.md", "adapters.md",
                 "testing.md", "tracing.md", "reference.md"):
        assert (ROOT / "docs" / "pages" / page).is_file(), page


if __name__ == "__main__":
    print(draw_tree(), end="")
