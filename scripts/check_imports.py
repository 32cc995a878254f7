#!/usr/bin/env python3
"""Check the import graph of ``src/neurongraph``: no import cycle, and the documented layer order.

Reads every module with ``ast`` (nothing is imported or run).  An edge ``a -> b`` is an import of the
project's own module ``b`` at ``a``'s top level (module body, including ``try``/``if`` blocks but not
``if TYPE_CHECKING:``); imports inside functions are the CLI's deliberate lazy imports and are listed
with ``--lazy``, not counted.  ``from .x import name`` is an edge to ``x`` (or to ``x.name`` when that
is a module).

Cycles: strongly connected components of that graph (Tarjan); any component of two or more modules is
a cycle.  Layers (docs/architecture.md): a module may import its own layer and the layers listed before
it, never a later one.  Exit status 1 on a cycle or a layer violation.

    python scripts/check_imports.py [--lazy]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "neurongraph"

# layer order, first = lowest; a module may import its own layer and earlier ones
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("records", ("errors", "checks", "times", "model", "channels", "config", "strict_json")),
    ("store", ("store",)),
    ("indexes", ("index",)),
    ("graph algorithms", ("graph",)),
    ("graph construction", ("link",)),
    ("retrieval", ("retrieval",)),
    ("learning", ("learning",)),
    ("relation schema", ("schema",)),
    ("cypher projection", ("graphdb",)),
    ("ask", ("ask",)),
    ("ingest", ("ingest",)),
    ("engine", ("query_linker", "snapshot", "engine_snapshot", "engine")),
    ("request model", ("service",)),
    ("interfaces", ("cli", "mcp", "bench", "http", "__init__", "__main__")),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level_imports(body: list[ast.stmt]):
    """Import statements executed when the module is imported (not in functions or TYPE_CHECKING)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _top_level_imports(node.body)
            yield from _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _top_level_imports(block)
        elif isinstance(node, (ast.With, ast.ClassDef)):
            yield from _top_level_imports(node.body)


def _lazy_imports(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    yield sub


def _targets(node: ast.Import | ast.ImportFrom, me: str, pkg: bool, modules: set[str]) -> list[str]:
    """The project's modules an import statement loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == PACKAGE]
    if node.level:
        base = me.split(".") if pkg else me.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    if mod.split(".")[0] != PACKAGE:
        return []
    out = []
    for a in node.names:
        sub = f"{mod}.{a.name}"
        out.append(sub if sub in modules else mod)
    return out


def layer_of(mod: str) -> int:
    parts = mod.split(".")
    key = parts[1] if len(parts) > 1 else "__init__"
    for i, (_, names) in enumerate(LAYERS):
        if key in names:
            return i
    raise SystemExit(f"{mod}: not in any layer of scripts/check_imports.py; add it to LAYERS")


def build_graph() -> tuple[dict[str, set[str]], dict[str, list[tuple[int, str]]], dict[str, list[tuple[int, str]]]]:
    files = {module_name(p): p for p in (ROOT / PACKAGE).rglob("*.py")}
    modules = set(files)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    lines: dict[str, list[tuple[int, str]]] = {m: [] for m in modules}
    lazy: dict[str, list[tuple[int, str]]] = {m: [] for m in modules}
    for mod, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _top_level_imports(tree.body):
            for t in _targets(node, mod, is_package(path), modules):
                if t != mod:
                    graph[mod].add(t)
                    lines[mod].append((node.lineno, t))
        for node in _lazy_imports(tree):
            for t in _targets(node, mod, is_package(path), modules):
                lazy[mod].append((node.lineno, t))
    return graph, lines, lazy


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main(argv: list[str]) -> int:
    graph, lines, lazy = build_graph()
    bad = 0
    for comp in cycles(graph):
        bad += 1
        print("import cycle: " + " <-> ".join(comp))
    for mod in sorted(graph):
        mine = layer_of(mod)
        for lineno, t in sorted(lines[mod]):
            if layer_of(t) > mine:
                bad += 1
                print(f"layer: {mod}:{lineno} imports {t} ({LAYERS[mine][0]} may not import {LAYERS[layer_of(t)][0]})")
    if "--lazy" in argv:
        for mod in sorted(lazy):
            for lineno, t in sorted(lazy[mod]):
                print(f"lazy: {mod}:{lineno} -> {t}")
    n_edges = sum(len(v) for v in graph.values())
    print(f"{len(graph)} modules, {n_edges} top-level imports: " + ("OK" if not bad else f"{bad} problem(s)"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
