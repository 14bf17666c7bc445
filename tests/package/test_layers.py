"""The package's folders are its layers: imports point down and form no circle.

Each folder of ``mcpclient`` (and each module directly in it) has a rank; a module may import
modules of its own folder and of lower ranks, never of a higher one or of another folder of
the same rank. Every import counts: at module level, inside a function (a lazy import still
runs), and under ``TYPE_CHECKING`` (a circle through annotations is still one for a reader).
The graph is ``tools/layout.py``'s, which prints the package's figures.
"""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

import mcpclient

_spec = importlib.util.spec_from_file_location("layout", Path(__file__).resolve().parents[2] / "tools" / "layout.py")
layout = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(layout)  # type: ignore[union-attr]

PACKAGE = Path(mcpclient.__file__).parent

#: Top to bottom; a folder may import only its own modules and the folders of lower ranks.
RANKS: List[Tuple[str, ...]] = [
    ("", "__main__"),            # the package's face: re-exports, ``python -m mcpclient``
    ("contrib",),                # framework integrations (their commands print as the command line does)
    ("cli",),                    # the command line
    ("testing",),                # the demo server, record and replay, the pytest plugin (TESTING_ROOMS)
    ("adapters", "group"),       # LLM SDK adapters; many servers behind one tool list
    ("client",),                 # the Client façade
    ("_client",),                # what the façade is made of
    ("tracing", "extensions"),   # OpenTelemetry; protocol extensions (each plugs into the engine's hooks)
    ("protocol",),               # revisions, negotiation, eras, params, validation, cache, MCP's rules over JSON-RPC
    ("_engine",),                # JSON-RPC: session, reader, futures, timer, server requests, hooks, rules
    ("transports",),             # stdio, Streamable HTTP, HTTP+SSE, memory
    ("auth",),                   # credentials for HTTP
    ("policies",),               # Retry, Redirects, Reconnect, Keepalive, Tracing
    ("types",),                  # what the wire carries
    ("_util",),                  # threads, wire logging, fork, lazy imports, files
    ("errors", "_version"),      # imports nothing of the package
]

#: What the façade may run of the extensions: only the registry's interface (its signatures may
#: still name an extension's types, under ``TYPE_CHECKING``).
FACADE_EXTENSIONS = {"extensions.registry"}

#: ``testing``'s rooms and the other rooms each may import: the demo server and record/replay
#: stand alone, the pytest plugin uses record/replay, and the package's face (``""``, with
#: ``__main__``, which runs the demo server) re-exports the names users import.
TESTING_ROOMS: Dict[str, Set[str]] = {
    "server": set(),
    "cassettes": set(),
    "pytest_plugin": {"cassettes"},
    "__main__": {"server"},
    "": {"server", "cassettes"},
}

Imports = Dict[str, List["layout.Import"]]


@pytest.fixture(scope="module")
def imports() -> Imports:
    """What each module imports (read once, by the worker that runs these tests, not at collection)."""
    known = layout.modules(PACKAGE)
    return {m: layout.imports(m, p, known) for m, p in known.items()}


def _folder(module: str) -> str:
    return module.split(".")[0]


def _rank(module: str) -> int:
    return next(i for i, names in enumerate(RANKS) if _folder(module) in names)


def test_every_module_is_in_a_ranked_folder(imports: Imports):
    ranked = {name for names in RANKS for name in names}
    assert sorted(m for m in imports if _folder(m) not in ranked) == []


def test_imports_point_down(imports: Imports):
    wrong = [f"{layout.name(m)}:{i.line} imports {layout.name(i.target)}" for m, found in sorted(imports.items())
             for i in found if _folder(i.target) != _folder(m) and _rank(i.target) <= _rank(m)]
    assert wrong == []


def test_the_facade_knows_extensions_only_through_the_registry(imports: Imports):
    wrong = [f"client:{i.line} imports {layout.name(i.target)}" for i in imports["client"]
             if _folder(i.target) == "extensions" and i.target not in FACADE_EXTENSIONS and not i.typing_only]
    assert wrong == []


def _testing_room(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


def test_testing_is_three_rooms(imports: Imports):
    testing = {m for m in imports if _folder(m) == "testing"}
    assert {_testing_room(m) for m in testing} == set(TESTING_ROOMS)
    wrong = [f"{layout.name(m)}:{i.line} imports {layout.name(i.target)}" for m in sorted(testing) for i in imports[m]
             if _folder(i.target) == "testing" and _testing_room(i.target) != _testing_room(m)
             and _testing_room(i.target) not in TESTING_ROOMS[_testing_room(m)]]
    assert wrong == []


def test_no_import_cycles_even_through_annotations(imports: Imports):
    edges = {m: {i.target for i in found} for m, found in imports.items()}  # TYPE_CHECKING ones too
    assert [[layout.name(m) for m in c] for c in layout.cycles(edges)] == []


def test_lazy_imports_say_why(imports: Imports):
    assert [f"{layout.name(m)}:{i.line}: {i.text}" for m, found in sorted(imports.items())
            for i in found if i.lazy and not i.commented] == []


def test_every_lazy_load_names_a_module_that_exists():
    """``load("mcpclient....")`` names its module in a string: a misspelt one would fail only when
    its rare path first runs. Each names a module of the package (the layering tests see it)."""
    known = layout.modules(PACKAGE)
    wrong = []
    for module, path in sorted(known.items()):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) and node.args:
                called = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
                name = node.args[0].value if isinstance(node.args[0], ast.Constant) else None
                if called == "load" and isinstance(name, str) and name.startswith("mcpclient") \
                        and name[len("mcpclient."):] not in known:
                    wrong.append(f"{layout.name(module)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert wrong == []
