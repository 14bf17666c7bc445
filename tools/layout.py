"""The package's shape in figures: modules at the top, the longest import chain, cycles, sizes.

    python tools/layout.py            # the figures, one per line
    python tools/layout.py --chain    # and the longest chain itself

An import is any ``import``/``from`` statement of one package module by another, at module level
or inside a function (a lazy import still runs), and any ``load("mcpclient....")`` call (the one
lazy-import helper, ``mcpclient._util.lazy``: it always waits); ``TYPE_CHECKING`` imports never run, so they are
left out of the chain but counted for cycles (a circle through annotations is still a circle for
a reader). ``tests/package/test_layers.py`` checks the package against the same graph.
"""
from __future__ import annotations

import argparse
import ast
import sys
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

#: The package beside this script (a checkout); pass another (an installed wheel's) to the functions.
PACKAGE = Path(__file__).resolve().parent.parent / "mcpclient"


def modules(package: Path = PACKAGE) -> Dict[str, Path]:
    """Every module of the package by dotted name below it ("" is the package itself)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        name = node.module or ""
        if name == "mcpclient":
            return ""
        return name[len("mcpclient."):] if name.startswith("mcpclient.") else "?"
    base = module.split(".") if module else []
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking_lines(tree: ast.AST) -> Set[int]:
    lines: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                for sub in node.body:
                    lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def _loaded(node: ast.AST) -> Optional[str]:
    """The package module a ``load("mcpclient....")`` call names (below the package), else None."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
        return None
    func = node.func
    called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    name = node.args[0].value
    if called != "load" or not isinstance(name, str) or not name.startswith("mcpclient."):
        return None
    return name[len("mcpclient."):]


class Import:
    """One import of a package module by another."""

    def __init__(self, target: str, line: int, text: str, lazy: bool, typing_only: bool, commented: bool):
        self.target, self.line, self.text = target, line, text
        self.lazy, self.typing_only, self.commented = lazy, typing_only, commented


def imports(module: str, path: Path, known: Dict[str, Path]) -> List[Import]:
    """What ``module`` imports of the package, each with where and how."""
    source = path.read_text()
    tree = ast.parse(source)
    typing_only = _type_checking_lines(tree)
    lines = source.splitlines()
    nested: Set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nested.update(id(n) for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom)))
    found: List[Import] = []
    for node in ast.walk(tree):
        loaded = _loaded(node)
        if loaded is not None:
            text = lines[node.lineno - 1]
            if loaded in known and loaded != module:
                found.append(Import(loaded, node.lineno, text.strip(), True, False, "#" in text))
            continue
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Import):
            targets = [a.name[len("mcpclient."):] for a in node.names if a.name.startswith("mcpclient.")]
        else:
            base = _resolve(module, path.name == "__init__.py", node)
            if base == "?":
                continue
            targets = []
            for alias in node.names:
                sub = f"{base}.{alias.name}".lstrip(".")
                targets.append(sub if sub in known else base)
        text = lines[node.lineno - 1]
        above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
        commented = "#" in text or above.startswith(("import ", "from ", "#"))
        for target in dict.fromkeys(targets):
            if target in known and target != module:
                found.append(Import(target, node.lineno, text.strip(), id(node) in nested,
                                    node.lineno in typing_only, commented))
    return found


def graph(package: Path = PACKAGE, typing: bool = False) -> Dict[str, Set[str]]:
    """module -> the modules it imports (``typing``: ``TYPE_CHECKING`` imports too)."""
    known = modules(package)
    return {m: {i.target for i in imports(m, p, known) if typing or not i.typing_only}
            for m, p in known.items()}


def cycles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
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
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def longest_chain(edges: Dict[str, Set[str]]) -> List[str]:
    """The longest path of imports, in modules (the graph must have no cycle)."""

    @lru_cache(maxsize=None)
    def from_(module: str) -> Tuple[str, ...]:
        best: Tuple[str, ...] = ()
        for target in sorted(edges[module]):
            chain = from_(target)
            if len(chain) > len(best):
                best = chain
        return (module,) + best

    return list(max((from_(m) for m in sorted(edges)), key=len))


def name(module: str) -> str:
    return f"mcpclient.{module}" if module else "mcpclient"


def figures(package: Path = PACKAGE) -> Dict[str, object]:
    known = modules(package)
    runtime = graph(package)
    sizes = {m: len(p.read_text().splitlines()) for m, p in known.items()}
    top = sorted(p.name for p in package.glob("*.py"))
    runtime_cycles = cycles(runtime)
    return {
        "modules": len(known),
        "top_level": top,
        "cycles_with_type_checking": cycles(graph(package, typing=True)),
        "runtime_cycles": runtime_cycles,
        "longest_chain": [] if runtime_cycles else longest_chain(runtime),
        "client_lines": sizes.get("client", 0),
        "largest": sorted(sizes.items(), key=lambda kv: -kv[1])[:5],
        "package_lines": sum(sizes.values()),
    }


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chain", action="store_true", help="print the longest chain itself")
    args = parser.parse_args(argv)
    f = figures()
    top = f["top_level"]
    chain = f["longest_chain"]
    largest = f["largest"]
    print(f"modules in the package:          {f['modules']} ({f['package_lines']} lines)")
    print(f"modules directly in mcpclient/:  {len(top)} ({', '.join(top)})")
    print(f"longest import chain:            {len(chain)} modules" if chain
          else "longest import chain:            undefined (runtime import cycle)")
    if args.chain and chain:
        print("    " + " -> ".join(name(m) for m in chain))
    cyc = f["cycles_with_type_checking"]
    print(f"cycles (TYPE_CHECKING counted):  {len(cyc)}")
    for c in cyc:
        print("    " + ", ".join(name(m) for m in c))
    print(f"client.py:                       {f['client_lines']} lines")
    print("largest modules:                 " + ", ".join(f"{name(m)} {n}" for m, n in largest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
