"""Imports between the package's modules form no cycle (read from the sources, every import
statement counted, and every ``load("mcpclient....")`` of the lazy-import helper).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List


ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path, module: str, modules: Dict[str, Path]) -> List[str]:
    """The mcpclient modules ``module`` imports: top-level, lazy and TYPE_CHECKING ones alike.
    ``from pkg import a, b`` where both are submodules imports those, not ``pkg`` itself."""
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = module.split(".") if is_package else module.split(".")[:-1]
            target = ".".join(base[:len(base) - node.level + 1] + [node.module or ""]).strip(".") if node.level \
                else node.module or ""
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
            found += subs if len(subs) == len(node.names) else [target] + subs
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if called == "load" and isinstance(node.args[0].value, str):
                found.append(node.args[0].value)
    return [m for m in found if m in modules and m != module]


def test_no_module_of_the_package_takes_part_in_an_import_cycle():
    modules: Dict[str, Path] = {}
    for path in (ROOT / "mcpclient").rglob("*.py"):
        dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        modules[dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    graph = {m: set(_imports(p, m, modules)) for m, p in modules.items()}
    assert graph["mcpclient.types.elicitation"] <= {"mcpclient.types._json"}, \
        "elicitation must import nothing from mcpclient but the JSON type aliases"
    assert not graph["mcpclient.types._json"], "the JSON type aliases import nothing from mcpclient"
    assert "mcpclient._client.responder" not in graph["mcpclient.types.handlers"]

    on_path: List[str] = []
    done: set = set()

    def visit(m: str) -> None:
        assert m not in on_path, "import cycle: " + " -> ".join(on_path[on_path.index(m):] + [m])
        if m in done:
            return
        on_path.append(m)
        for t in sorted(graph[m]):
            visit(t)
        on_path.pop()
        done.add(m)

    for m in sorted(graph):
        visit(m)
