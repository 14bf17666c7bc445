"""The package's imports point down and form no circle (issue 9).

Every module of ``mcpclient`` is given a layer; a module may import its own layer and the ones
below, never one above, and the imports between modules (lazy ones inside functions included;
``TYPE_CHECKING`` blocks excluded, they never run) may not form a cycle. A lazy import exists
only to keep ``import mcpclient`` cheap, and says so: it has a comment on its line, or on the line
above a group of them. A new module must be placed in a layer here, so the map stays complete.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

import mcpclient

PACKAGE = Path(mcpclient.__file__).parent

#: Bottom to top. A module name matches its entry or the longest dotted prefix listed.
LAYERS: List[Tuple[str, List[str]]] = [
    ("bottom: data, errors, small utilities", [
        "_version", "_sentinel", "_lazy", "_wire", "_fork", "_files", "_threads", "errors", "_values", "elicitation", "_blocks", "types", "_catalog", "_content", "handlers",
        "retry", "redirects", "reconnect", "protocol", "modern", "cache", "_validation", "pins", "search", "_naming", "_tracing", "tracing",
        "extensions", "_ui"]),
    ("transports and auth", ["auth", "transports"]),
    ("engine", ["futures", "_timer", "_keepalive", "serving", "session"]),
    ("features", ["_params", "_tools", "_responder", "rounds", "eras", "negotiation", "connection",
                  "events", "subscriptions", "notifications", "tasks", "skills", "_tooltable", "_otel", "_taskpoll", "_taskwait", "_taskext"]),
    ("facade", ["_extensions", "_lifecycle", "client", "config", "_members", "group", ""]),  # "" is the package itself (mcpclient/__init__.py)
    ("top", ["cli", "testing", "adapters", "apps", "__main__"]),
]


def _modules() -> Dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _layer(module: str) -> int:
    best, best_len = -1, -1
    for index, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best_len:
                best, best_len = index, len(name)
    return best


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        name = node.module or ""
        return name[len("mcpclient."):] if name.startswith("mcpclient.") else ("" if name == "mcpclient" else "?")
    base = module.split(".") if module else []
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking_only(tree: ast.AST) -> Set[int]:
    lines: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def _imports(module: str, path: Path) -> Tuple[Set[str], List[str]]:
    """(the package's modules ``module`` imports, function-level imports without a comment)."""
    source = path.read_text()
    tree = ast.parse(source)
    skip = _type_checking_only(tree)
    lines = source.splitlines()
    found: Set[str] = set()
    uncommented: List[str] = []
    nested: Set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nested.update(id(n) for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom)))
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or node.lineno in skip:
            continue
        if id(node) in nested:
            text, above = lines[node.lineno - 1], lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            grouped = above.startswith(("import ", "from ")) or above.startswith("#")
            if "#" not in text and not grouped:
                uncommented.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {text.strip()}")
        if isinstance(node, ast.Import):
            targets = [a.name[len("mcpclient."):] for a in node.names if a.name.startswith("mcpclient.")]
        else:
            base = _resolve(module, path.name == "__init__.py", node)
            if base == "?":
                continue
            targets = [f"{base}.{a.name}".lstrip(".") if f"{base}.{a.name}".lstrip(".") in MODULES else base
                       for a in node.names]
        found.update(t for t in targets if t in MODULES and t != module)
    return found, uncommented


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def test_every_module_has_a_layer():
    assert [m or "mcpclient" for m in MODULES if _layer(m) < 0] == []


def test_imports_point_down():
    upward = [f"{m or 'mcpclient'} ({LAYERS[_layer(m)][0]}) imports {t} ({LAYERS[_layer(t)][0]})"
              for m, (targets, _) in GRAPH.items() for t in sorted(targets) if _layer(t) > _layer(m)]
    assert upward == []


def test_no_import_cycles():
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    cycles: List[List[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v][0]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w or "mcpclient")
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in GRAPH:
        if module not in index:
            visit(module)
    assert cycles == []


def test_lazy_imports_say_why():
    assert [line for _, (_, lazy) in sorted(GRAPH.items()) for line in lazy] == []
