"""xlnel's modules import one way: no import cycle, and lower layers never import upper ones.

The module graph is read from the source with :mod:`ast`, so imports inside functions count
as much as those at the top of a file (they only postpone a cycle to run time). Imports under
``if TYPE_CHECKING:`` are left out: they never run.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

import xlnel

ROOT = Path(xlnel.__file__).resolve().parent

#: Modules (and packages) each group must not import, directly or through others.
LAYERS = {
    "stages": (["xlnel.dictionary", "xlnel.candidates", "xlnel.ner", "xlnel.filtering",
                "xlnel.linkers", "xlnel.evaluation", "xlnel.io", "xlnel.config",
                "xlnel.models", "xlnel.types"],
               ["xlnel.training", "xlnel.corpus", "xlnel.pipeline", "xlnel.experiments",
                "xlnel.cli", "xlnel.serve", "xlnel.spacy_component", "xlnel.defaults",
                "xlnel.analysis", "xlnel.runtime"]),
    "runtime": (["xlnel.runtime"],
                ["xlnel.training", "xlnel.corpus", "xlnel.pipeline", "xlnel.experiments",
                 "xlnel.cli", "xlnel.serve", "xlnel.defaults"]),
    "training": (["xlnel.training"],
                 ["xlnel.corpus", "xlnel.pipeline", "xlnel.experiments", "xlnel.cli"]),
    "corpus": (["xlnel.corpus"], ["xlnel.training", "xlnel.pipeline", "xlnel.experiments",
                                  "xlnel.cli"]),
}


def module_files(root: Path = ROOT) -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (file, is a package ``__init__``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child):
            for sub in child.orelse:
                yield from _import_nodes(sub)
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        yield from _import_nodes(child)


def imported_modules(name: str, path: Path, is_package: bool,
                     modules: set[str]) -> set[str]:
    """The package's modules that ``name`` imports (at any depth of its code)."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            package = name.split(".") if is_package else name.split(".")[:-1]
            anchor = package[:len(package) - node.level + 1]
            base = ".".join(anchor + ([node.module] if node.module else []))
        found.add(base)  # ``from a.b import c`` runs ``a/b/__init__.py`` first
        found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m in modules and m != name}


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    files = module_files()
    names = set(files)
    return {name: imported_modules(name, path, is_package, names)
            for name, (path, is_package) in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a closed path of module names) per strongly connected group of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan; the package's graph is shallow enough to recurse
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_in(graph, group) for group in groups]


def _cycle_in(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """The shortest cycle through the first module of ``group`` (breadth-first)."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & group):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover


def reachable(graph: dict[str, set[str]], start: str) -> dict[str, list[str]]:
    """Every module ``start`` imports directly or not, with one import chain to it."""
    chains = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w not in chains:
                    chains[w] = [*chains[v], w]
                    nxt.append(w)
        frontier = nxt
    return chains


def _within(module: str, prefixes: list[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_the_package_has_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph between xlnel's sub-packages and top-level modules (``xlnel.X``)."""
    def top(module: str) -> str:
        return ".".join(module.split(".")[:2])

    packages: dict[str, set[str]] = {top(m): set() for m in graph if m != "xlnel"}
    for module, targets in graph.items():
        if module == "xlnel":
            continue
        packages[top(module)].update(top(t) for t in targets
                                     if t != "xlnel" and top(t) != top(module))
    return packages


def test_the_packages_have_no_import_cycle():
    found = cycles(package_graph(import_graph()))
    assert not found, "package cycles:\n" + "\n".join(" -> ".join(c) for c in found)


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_a_layer_never_imports_the_layers_above_it(layer):
    members, forbidden = LAYERS[layer]
    graph = import_graph()
    bad = []
    for module in sorted(m for m in graph if _within(m, members)):
        for target, chain in reachable(graph, module).items():
            if _within(target, forbidden):
                bad.append(" -> ".join(chain))
                break
    assert not bad, f"{layer} imports a layer above it:\n" + "\n".join(bad)


def test_the_checker_finds_a_function_level_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import g\n\ndef f():\n    return g()\n")
    (pkg / "b.py").write_text("def g():\n    from pkg import a\n    return a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from pkg.a import f\n")
    files = module_files(pkg)
    graph = {name: imported_modules(name, path, is_pkg, set(files))
             for name, (path, is_pkg) in files.items()}
    assert graph["pkg.c"] == set()  # type-only imports never run
    assert graph["pkg.b"] == {"pkg", "pkg.a"}  # ``from pkg import a`` runs pkg/__init__ too
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.a"]]


def test_the_package_graph_finds_a_cycle_between_packages():
    graph = {"xlnel": set(), "xlnel.a.x": {"xlnel.b.y"}, "xlnel.b.y": set(),
             "xlnel.b.z": {"xlnel.a"}, "xlnel.a": set()}
    assert package_graph(graph) == {"xlnel.a": {"xlnel.b"}, "xlnel.b": {"xlnel.a"}}
    assert cycles(package_graph(graph)) == [["xlnel.a", "xlnel.b", "xlnel.a"]]
