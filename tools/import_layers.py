"""Draw prb_tasks' layers: the package import graph, imports that run back up a layer, circles.

Run from a checkout: ``python tools/import_layers.py`` (``--edges`` also lists every
module-level import that runs back up). Imports are read from the source with :mod:`ast`,
so one inside a function or under ``TYPE_CHECKING`` counts too; ``prb_tasks.testing``
(the test doubles) is left out. The layers are the data flow of docs/development.md, from
the ground floor up; a package may import its own layer and the ones below.
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "prb_tasks"

# Ground floor first. A name missing here is reported as "unplaced".
LAYERS: tuple[tuple[str, ...], ...] = (
    ("common", "stats"),
    ("text", "replies"),
    ("data",),
    ("prompts", "fewshot"),
    ("documents",),
    ("judge", "rm", "train"),
    ("scoring",),
    ("report", "audit", "collect", "rl"),
    ("cli", "tasks", "plugin", "__main__", "_startup", "__init__"),
)
LAYER_OF = {pkg: i for i, names in enumerate(LAYERS) for pkg in names}

#: Module imports allowed to run back up a layer, each with its one-line reason (issue 47: at
#: most 3). Empty: every import runs down or sideways.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> str:
    """Dotted name of the module in ``path`` (a file under :data:`PKG`)."""
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(module: str) -> str:
    """The ``prb_tasks`` sub-package (or top-level module) that ``module`` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports(path: Path, known: set[str]) -> set[str]:
    """Modules of ``known`` that the file ``path`` imports (``from a.b import c`` counts as
    ``a.b.c`` when that is a module, else as ``a.b``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name in known}


def module_graph() -> dict[str, set[str]]:
    """Every library module and the library modules it imports (itself and a package's
    own ``__init__`` re-exports left out)."""
    files = {module_name(p): p for p in sorted(PKG.rglob("*.py"))
             if not p.is_relative_to(PKG / "testing")}
    known = set(files)
    return {name: {t for t in imports(path, known) - {name} if not name.startswith(t + ".")}
            for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each node that lies on one (depth-first search)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Module imports whose target sits in a higher layer than the importer."""
    return sorted((src, dst) for src, dsts in graph.items() for dst in dsts
                  if LAYER_OF.get(package_of(dst), -1) > LAYER_OF.get(package_of(src), 99))


def package_counts(graph: dict[str, set[str]]) -> dict[str, Counter[str]]:
    """For each package, the packages its modules import, with how many module imports."""
    packages: dict[str, Counter[str]] = {}
    for src, dsts in graph.items():
        for dst in dsts:
            if package_of(src) != package_of(dst):
                packages.setdefault(package_of(src), Counter())[package_of(dst)] += 1
    return packages


def problems(graph: dict[str, set[str]]) -> list[str]:
    """One line per breach of the layout in ``graph`` (module -> modules it imports): a package
    missing from :data:`LAYERS`, an upward import not in :data:`ALLOWED_UPWARD`, a package
    circle, a module circle; empty when the layout holds."""
    found = [f"unplaced package {pkg} (add it to LAYERS)"
             for pkg in sorted({package_of(m) for m in graph} - set(LAYER_OF))]
    found += [f"import runs back up a layer: {src} -> {dst}"
              for src, dst in upward(graph) if (src, dst) not in ALLOWED_UPWARD]
    package_graph = {p: set(c) for p, c in package_counts(graph).items()}
    found += ["package circle: " + " -> ".join(c) for c in cycles(package_graph)]
    found += ["module circle: " + " -> ".join(c) for c in cycles(graph)]
    return found


def main(argv: list[str] | None = None) -> int:
    """Print the package graph, the upward imports and the circles; return 0 (``--check``: 1
    when :func:`problems` finds any)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help="list every upward module import")
    parser.add_argument("--check", action="store_true", help="exit 1 when the layout is breached")
    args = parser.parse_args(argv)
    graph = module_graph()
    packages = package_counts(graph)
    print("package import graph (layer: package -> packages it imports, with module imports):")
    for pkg in sorted({package_of(m) for m in graph}, key=lambda p: (LAYER_OF.get(p, 99), p)):
        layer = LAYER_OF.get(pkg)
        targets = ", ".join(f"{t} {n}" for t, n in sorted(packages.get(pkg, Counter()).items()))
        print(f"  {'?' if layer is None else layer}: {pkg} -> {targets or '-'}")
    up = upward(graph)
    unplaced = sorted({package_of(m) for m in graph} - set(LAYER_OF))
    print(f"modules: {len(graph)}; imports between modules: {sum(map(len, graph.values()))}")
    print(f"imports that run back up a layer: {len(up)}")
    if args.edges:
        for src, dst in up:
            reason = ALLOWED_UPWARD.get((src, dst))
            print(f"  {src} -> {dst}" + (f"  (allowed: {reason})" if reason else ""))
    package_graph = {p: set(c) for p, c in packages.items()}
    print(f"package circles: {len(cycles(package_graph))}")
    for circle in cycles(package_graph):
        print("  " + " -> ".join(circle))
    module_circles = cycles(graph)
    print(f"module circles: {len(module_circles)}")
    for circle in module_circles:
        print("  " + " -> ".join(circle))
    if unplaced:
        print("unplaced packages (add them to LAYERS): " + ", ".join(unplaced))
    return 1 if args.check and problems(graph) else 0


if __name__ == "__main__":
    raise SystemExit(main())
