"""The public Python API is declared: every package's ``__init__`` lists in ``__all__``
what a plug-in author may import (issue 38), each name imports and carries a docstring
(the API pages render them), and declaring it keeps the packages as cheap to import as
before (lazy re-exports, :mod:`prb_tasks.common.exports`).

Docstrings are read from the source with :mod:`ast`, following the ``__init__``'s
imports to the module that defines each name: a constant or type alias is documented
by the string that follows its assignment (what mkdocstrings renders).
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

import prb_tasks
from prb_tasks.common.exports import lazy_exports
from tests.watchdog import run_watched

PKG = Path(prb_tasks.__file__).resolve().parent
ROOT = PKG.parent
PACKAGES = sorted(".".join(p.parent.relative_to(ROOT).parts) for p in PKG.rglob("__init__.py"))


def _source(module: str) -> Path:
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _top_level(tree: ast.Module) -> list[ast.stmt]:
    """The module's statements, with those under a top-level ``if`` (``TYPE_CHECKING``) inlined."""
    out: list[ast.stmt] = []
    for node in tree.body:
        out.extend([node, *node.body] if isinstance(node, ast.If) else [node])
    return out


def _declared_all(module: str) -> list[str] | None:
    for node in ast.parse(_source(module).read_text(encoding="utf-8")).body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return list(ast.literal_eval(node.value))  # type: ignore[arg-type]
    return None


def _docstring(module: str, name: str, seen: int = 0) -> str | None:
    """The docstring of ``name`` where ``module`` defines it, following re-exports."""
    assert seen < 10, f"{module}.{name}: re-exported in a circle"
    body = _top_level(ast.parse(_source(module).read_text(encoding="utf-8")))
    for i, node in enumerate(body):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return ast.get_docstring(node)
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            after = body[i + 1] if i + 1 < len(body) else None
            if (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                return after.value.value
            return None
        if isinstance(node, ast.ImportFrom) and node.module and any(a.name == name for a in node.names):
            return _docstring(node.module, name, seen + 1)
    raise AssertionError(f"{module} neither defines nor imports {name}")


def test_every_package_declares_its_public_names() -> None:
    assert len(PACKAGES) > 20 and "prb_tasks.judge" in PACKAGES
    assert [p for p in PACKAGES if _declared_all(p) is None] == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_imports_and_has_a_docstring(package: str) -> None:
    module = importlib.import_module(package)
    names = _declared_all(package) or []
    assert list(module.__all__) == names
    assert len(set(names)) == len(names), "a name listed twice"
    missing = [n for n in names if not hasattr(module, n)]
    assert missing == []
    undocumented = [n for n in names if not (_docstring(package, n) or "").strip()]
    assert undocumented == []


def test_the_public_api_covers_the_extension_points() -> None:
    """The names docs/api/ describes, importable from their packages."""
    from prb_tasks.fewshot import Method, User, build, resolve
    from prb_tasks.judge import JudgeSettings, load_config, resolve_settings
    from prb_tasks.prompts import LimitedSandbox, TemplateRef, render
    from prb_tasks.rm import RMInput, Scorer
    from prb_tasks.scoring import process_judge_both

    assert Method.__module__ == "prb_tasks.fewshot.method" and User.__module__ == Method.__module__
    assert callable(build) and callable(resolve) and callable(render) and callable(process_judge_both)
    assert JudgeSettings.__module__ == "prb_tasks.judge.options"
    assert load_config.__module__ == resolve_settings.__module__ == "prb_tasks.judge.configs"
    assert LimitedSandbox.__module__ == "prb_tasks.prompts.sandbox"
    assert TemplateRef.__module__ == "prb_tasks.prompts.templates"
    assert RMInput.__module__ == "prb_tasks.rm.inputs" and Scorer.__module__ == "prb_tasks.rm.scorers.base"


def test_lazy_exports_import_on_first_use_and_refuse_unknown_names() -> None:
    getattr_ = lazy_exports("prb_tasks.stats", {"prb_tasks.stats.pairs": ("holm",)})
    from prb_tasks.stats.pairs import holm

    assert getattr_("holm") is holm
    with pytest.raises(AttributeError, match="'prb_tasks.stats' has no attribute 'nope'"):
        getattr_("nope")
    with pytest.raises(AttributeError, match="'prb_tasks.judge' has no attribute 'no_such_name'"):
        getattr(importlib.import_module("prb_tasks.judge"), "no_such_name")


def test_importing_every_package_stays_light() -> None:
    """Declaring the API imports nothing heavy: lm-eval start-up and ``prb --help`` import these."""
    probe = ("import sys\n"
             f"for name in {PACKAGES!r}:\n"
             "    if name != 'prb_tasks.testing': __import__(name)\n"
             "print(sorted(m for m in ('litellm', 'torch', 'transformers', 'lm_eval', 'matplotlib', 'scipy')"
             " if m in sys.modules))\n")
    proc = run_watched([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                            "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"


def test_docstring_rules_cover_the_public_modules_and_mypy_every_module() -> None:
    """ruff's docstring rules (pyproject.toml) name the modules behind every ``__all__``, so a
    name made public is checked the day it is listed; mypy's ``files`` take in every module of
    the package (a new one is type-checked the day it is added), and no override of ours
    switches its findings off."""
    import tomllib

    behind: set[str] = set()
    for package in PACKAGES:
        for node in _top_level(ast.parse(_source(package).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("prb_tasks."):
                names = {a.name for a in node.names}
                if names & set(_declared_all(package) or []):
                    behind.add(str(_source(node.module).relative_to(ROOT)))
    behind.add("prb_tasks/common/exports.py")  # the helper every __init__ imports; its own __all__ lists it
    inits = {str(_source(p).relative_to(ROOT)) for p in PACKAGES}
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    files = [f.rstrip("/") for f in tool["mypy"]["files"]]
    modules = sorted(str(p.relative_to(ROOT)) for p in PKG.rglob("*.py"))
    assert len(modules) > 200 and behind | inits <= set(modules)
    assert [m for m in modules if not any(m == f or m.startswith(f + "/") for f in files)] == []
    for override in tool["mypy"].get("overrides", []):
        names = [override["module"]] if isinstance(override["module"], str) else override["module"]
        assert not override.get("ignore_errors"), override
        assert [n for n in names if n.split(".")[0] in ("prb_tasks", "tools", "tests")] == [], override
    (pattern,) = [key for key, codes in tool["ruff"]["lint"]["per-file-ignores"].items() if key.startswith("!")]
    assert tool["ruff"]["lint"]["per-file-ignores"][pattern] == ["D"]
    assert set(pattern.removeprefix("!{").removesuffix("}").split(",")) == behind | {"prb_tasks/**/__init__.py"}
