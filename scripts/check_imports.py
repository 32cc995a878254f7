#!/usr/bin/env python3
"""Check the import graph of ``src/neurongraph``: no import cycle, and the documented layer order.

Reads every module with ``ast`` (nothing is imported or run).  Every import of the project's own module
``b`` in ``a`` is an edge ``a -> b``, of one of three kinds: ``top`` (module body, including ``try``/``if``
blocks), ``lazy`` (inside a function: the CLI's deliberate lazy imports, and first-use imports) and
``typing`` (under ``if TYPE_CHECKING:``).  All three count: a cycle hidden behind a lazy or type-only import
is still two modules that cannot be read, tested or moved apart.  ``from .x import name`` is an edge to
``x`` (or to ``x.name`` when that is a module).  The CLI's ``COMMANDS`` table, which names each command's module
as a string for ``import_module``, gives ``lazy`` edges too (``cli.main -> cli.search_cmd``, ...).

Cycles: strongly connected components of that graph (Tarjan); any component of two or more modules is
a cycle, reported with the edges that close it.  ``KNOWN_CYCLES`` lists the ones not yet removed, each
with why; they are reported but do not fail (a new cycle, or a known one that grew, fails).  Layers
(docs/architecture.md): a module may import its own layer and the layers listed before it, never a later
one, whatever the kind of import.  Exit status 1 on a new cycle or a layer violation.

    python scripts/check_imports.py [--lazy]     # --lazy: every lazy and type-only import, known cycles in full
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


# cycles not removed yet (issue 44): the modules of each, and why it stays for now
KNOWN_CYCLES: dict[frozenset[str], str] = {}


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


def _imports(body: list[ast.stmt], kind: str = "top"):
    """(kind, import statement) of a module body: ``top`` where the module runs it on import, ``typing``
    under ``if TYPE_CHECKING:``, ``lazy`` inside a function (whatever it is nested in)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield kind, node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from ((k if k == "typing" else "lazy", n) for k, n in _imports(node.body, "lazy"))
        elif isinstance(node, ast.If):
            yield from _imports(node.body, "typing" if _is_type_checking(node.test) else kind)
            yield from _imports(node.orelse, kind)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _imports(block, kind)
        elif isinstance(node, (ast.With, ast.AsyncWith, ast.ClassDef, ast.For, ast.While)):
            yield from _imports(node.body, kind)


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


Edges = dict[str, list[tuple[int, str, str]]]  # module -> (line, imported module, kind)


def build_graph() -> tuple[dict[str, set[str]], Edges]:
    """The import graph (every kind of import) and each module's imports with their line and kind."""
    files = {module_name(p): p for p in (ROOT / PACKAGE).rglob("*.py")}
    modules = set(files)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    edges: Edges = {m: [] for m in modules}
    for mod, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for kind, node in _imports(tree.body):
            for t in _targets(node, mod, is_package(path), modules):
                if t != mod:
                    graph[mod].add(t)
                    edges[mod].append((node.lineno, t, kind))
        for line, t in _named_modules(tree, mod, modules):
            graph[mod].add(t)
            edges[mod].append((line, t, "lazy"))
    return graph, edges


def _named_modules(tree: ast.Module, mod: str, modules: set[str]):
    """``(line, module)`` of the modules a table names as strings for ``import_module`` (the CLI's ``COMMANDS``:
    ``{"search": ("search_cmd", "search"), ...}``, imported relative to the package when the command runs)."""
    package = mod.rsplit(".", 1)[0]
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = getattr(node, "value", None)
        if not (isinstance(target, ast.Name) and target.id == "COMMANDS" and isinstance(value, ast.Dict)):
            continue
        for v in value.values:
            first = v.elts[0] if isinstance(v, ast.Tuple) and v.elts else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                if (name := f"{package}.{first.value}") in modules:
                    yield v.lineno, name


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
    graph, edges = build_graph()
    bad = 0
    comps = cycles(graph)
    for comp in comps:
        members = set(comp)
        closing = sorted(f"{m}:{ln} -> {t} ({k})" for m in comp for ln, t, k in set(edges[m]) if t in members)
        why = KNOWN_CYCLES.get(frozenset(comp))
        if why is None:
            bad += 1
        print(("known import cycle: " if why else "import cycle: ") + " <-> ".join(comp))
        if why is None or "--lazy" in argv:  # a known one in full only when asked
            print("".join(f"    {line}\n" for line in closing), end="")
        if why and "--lazy" in argv:
            print(f"    (not removed yet: {why})")
    found = {frozenset(c) for c in comps}
    for gone in sorted(sorted(k) for k in KNOWN_CYCLES if k not in found):
        bad += 1
        print("known import cycle no longer there: remove it from KNOWN_CYCLES: " + " <-> ".join(gone))
    for mod in sorted(graph):
        mine = layer_of(mod)
        for lineno, t, kind in sorted(set(edges[mod])):
            if layer_of(t) > mine:
                bad += 1
                theirs = LAYERS[layer_of(t)][0]
                print(f"layer: {mod}:{lineno} imports {t} ({kind}; {LAYERS[mine][0]} may not import {theirs})")
    if "--lazy" in argv:
        for mod in sorted(edges):
            for lineno, t, kind in sorted(set(edges[mod])):
                if kind != "top":
                    print(f"{kind}: {mod}:{lineno} -> {t}")
    counts = {k: sum(1 for m in edges for e in set(edges[m]) if e[2] == k) for k in ("top", "lazy", "typing")}
    print(
        f"{len(graph)} modules, {sum(len(v) for v in graph.values())} import edges "
        f"({counts['top']} top-level, {counts['lazy']} lazy, {counts['typing']} type-only imports): "
        + ("OK" if not bad else f"{bad} problem(s)")
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
