"""The package layout holds (issue 27): no import circles among ``prb_tasks.judge``
modules, and runtime code never imports the test doubles in ``prb_tasks.testing``; and
(issue 47) the layers of ``tools/import_layers.py`` hold across ``prb_tasks``: no package
circle, no module circle, no import running back up a layer beyond its allow-list.

Both are read from the source with :mod:`ast`, so an import inside a function or under
``TYPE_CHECKING`` counts too: a circle there still ties two modules together.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import prb_tasks

PKG = Path(prb_tasks.__file__).resolve().parent
ROOT = Path(__file__).resolve().parents[1]


def _load_tool():
    """``tools/import_layers.py``, which draws the layers from the same reading of the source."""
    spec = importlib.util.spec_from_file_location("import_layers", ROOT / "tools" / "import_layers.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


layers = _load_tool()
_module_name = layers.module_name
_imports = layers.imports
_cycles = layers.cycles


def _graph(folder: Path) -> dict[str, set[str]]:
    files = {_module_name(p): p for p in sorted(folder.rglob("*.py"))}
    known = set(files)
    return {name: _imports(path, known) - {name} for name, path in files.items()}


def test_cycle_finder_sees_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_judge_modules_import_no_circle() -> None:
    graph = _graph(PKG / "judge")
    assert len(graph) > 20 and "prb_tasks.judge.model" in graph
    # A package's __init__ re-exporting its own submodules is the usual pattern, not a circle.
    for name in graph:
        graph[name] = {other for other in graph[name] if not name.startswith(other + ".")}
    assert _cycles(graph) == []


def test_runtime_never_imports_test_doubles() -> None:
    offenders = []
    for path in sorted(PKG.rglob("*.py")):
        if path.is_relative_to(PKG / "testing"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) else [])
            if any(n == "prb_tasks.testing" or n.startswith("prb_tasks.testing.") for n in names):
                offenders.append(f"{path.relative_to(PKG.parent)}:{node.lineno}")
    assert offenders == []


def test_library_code_does_not_import_the_command_line() -> None:
    """Data flows down: the commands in ``prb_tasks/cli`` call the library, never the reverse
    (the package's ``__main__``, the plugin's command entry and the start-up hook that hands
    plain ``lm_eval`` to ``prb_tasks.cli.lm_eval_hook`` are the only doors in)."""
    files = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}
    known = set(files)
    offenders = sorted(
        f"{name} imports {target}"
        for name, path in files.items()
        if not (name.startswith("prb_tasks.cli")
                or name in ("prb_tasks.__main__", "prb_tasks._startup._prb_lm_eval_hook"))
        for target in _imports(path, known)
        if target == "prb_tasks.cli" or target.startswith("prb_tasks.cli.")
    )
    assert offenders == []


def test_layers_hold_across_the_library() -> None:
    """Every package placed, no circle, every upward import allowed with a reason (at most 3)."""
    graph = layers.module_graph()
    assert len(graph) > 250 and "prb_tasks.replies.verdict" in graph
    assert layers.problems(graph) == []
    assert len(layers.ALLOWED_UPWARD) <= 3
    assert all(reason.strip() for reason in layers.ALLOWED_UPWARD.values())
    # An allowed import that is gone is a stale entry: drop it from the list.
    assert set(layers.ALLOWED_UPWARD) <= set(layers.upward(graph))


def test_layer_check_names_each_breach() -> None:
    """The check sees a new circle or a new upward import (a graph made up for the test)."""
    graph = {"prb_tasks.common.a": set(), "prb_tasks.data.b": {"prb_tasks.common.a"},
             "prb_tasks.scoring.c": {"prb_tasks.data.b"}}
    assert layers.problems(graph) == []
    graph["prb_tasks.data.b"].add("prb_tasks.scoring.c")
    assert layers.problems(graph) == [
        "import runs back up a layer: prb_tasks.data.b -> prb_tasks.scoring.c",
        "package circle: data -> scoring -> data",
        "module circle: prb_tasks.data.b -> prb_tasks.scoring.c -> prb_tasks.data.b",
    ]
    graph["prb_tasks.attic.d"] = set()
    assert layers.problems(graph)[0] == "unplaced package attic (add it to LAYERS)"
