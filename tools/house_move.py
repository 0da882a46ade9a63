"""Issue 47's module moves, mechanical and repeatable: ``git mv`` each module (and its mirrored
test file), then rewrite every reference to its old name in the checkout.

Run in a checkout (the one of the current folder, wherever the script lies):
``python tools/house_move.py`` moves what is still at its old place and rewrites every
tracked text file; ``python tools/house_move.py --rewrite-only [PATH ...]`` only rewrites
(the whole checkout, or the files given), for code written against the old names on another
branch. A reference is a dotted name (``prb_tasks.scoring.verdict``, in imports,
``mock.patch`` strings, YAML ``!function`` paths, docs' ``:::`` lines, entry points),
``from prb_tasks.scoring import verdict``, or a path (``prb_tasks/scoring/verdict.py``,
``tests/scoring/test_verdict.py``).
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

# The checkout the command runs in (not this file's), so a copy of the script rewrites another branch.
ROOT = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                           check=False).stdout.strip() or ".").resolve()

#: old module -> new module (below ``prb_tasks``).
MOVES: dict[str, str] = {
    "scoring.verdict": "replies.verdict",
    "scoring.boxed_verdict": "replies.boxed_verdict",
    "scoring.pointwise": "replies.pointwise",
    "scoring.order": "replies.order",
    "scoring.bon_official": "replies.bon_official",
    "scoring.plans": "replies.plans",
    "scoring.run_table": "report.run_table",
}

#: The docstring of a package the moves create.
PACKAGE_DOCS = {
    "replies": (
        '"""Reading a model\'s reply: verdicts, boxed verdicts, pointwise scores, ratings, grades, plans.\n\n'
        "Each parser takes a judge's or grader's text and says what it read, or why it read nothing\n"
        "(the error and skip markers a failed or skipped request leaves are here too). They sit on a\n"
        "floor of their own, above ``common`` and ``text`` and below ``data``, ``documents`` and\n"
        "``judge``, which read replies while loading files, building documents and running judges;\n"
        "``scoring`` turns what they read into metrics. Named for what they take in, a reply.\n"
        '"""\n'
    ),
}

#: Text files whose references are rewritten (by suffix); everything else is left alone.
SUFFIXES = {".py", ".pyi", ".md", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".ini", ".jinja", ".j2", ".sh", ".html",
            ".json"}


def _path(module: str, prefix: str = "prb_tasks") -> Path:
    return Path(prefix, *module.split(".")).with_suffix(".py")


def _test_files(module: str) -> list[Path]:
    """The mirrored test files of ``module``: ``tests/<pkg>/test_<name>.py`` and ``test_<name>_*.py``."""
    pkg, name = module.rsplit(".", 1)
    folder = ROOT / "tests" / pkg.replace(".", "/")
    return sorted(p.relative_to(ROOT) for p in folder.glob(f"test_{name}*.py")
                  if p.stem == f"test_{name}" or p.stem.startswith(f"test_{name}_"))


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def _ensure_package(folder: Path, doc: str) -> None:
    """A new package folder (and, for tests, its ``__init__.py``)."""
    init = ROOT / folder / "__init__.py"
    if not init.exists():
        init.parent.mkdir(parents=True, exist_ok=True)
        init.write_text(doc, encoding="utf-8")
        _git("add", str(init.relative_to(ROOT)))


def move() -> list[str]:
    """``git mv`` every module of :data:`MOVES` still at its old place, with its test files."""
    done = []
    for old, new in MOVES.items():
        src, dst = _path(old), _path(new)
        if not (ROOT / src).exists():
            continue
        _ensure_package(dst.parent, PACKAGE_DOCS.get(new.split(".")[0], ""))
        _git("mv", str(src), str(dst))
        done.append(f"{src} -> {dst}")
        for test in _test_files(old):
            target = Path("tests", *new.split(".")[:-1], test.name.replace(f"test_{old.rsplit('.', 1)[1]}",
                                                                        f"test_{new.rsplit('.', 1)[1]}"))
            _ensure_package(target.parent, "")
            _git("mv", str(test), str(target))
            done.append(f"{test} -> {target}")
    return done


def _rules() -> list[tuple[re.Pattern[str], str]]:
    rules: list[tuple[re.Pattern[str], str]] = []
    for old, new in MOVES.items():
        old_pkg, old_name = old.rsplit(".", 1)
        new_pkg, new_name = new.rsplit(".", 1)
        # Dotted names: imports, patch targets, !function paths, ::: lines, entry points.
        rules.append((re.compile(rf"\bprb_tasks\.{re.escape(old)}(?![\w])"), f"prb_tasks.{new}"))
        # from prb_tasks.<pkg> import <name> (alone on its import line, with or without "as").
        rules.append((re.compile(rf"\bfrom prb_tasks\.{re.escape(old_pkg)} import {old_name}\b(?!\s*,)"),
                      f"from prb_tasks.{new_pkg} import {new_name}"))
        # Paths: the module and its mirrored tests (with or without prb_tasks/ or tests/ before).
        old_dir, new_dir = old_pkg.replace(".", "/"), new_pkg.replace(".", "/")
        rules.append((re.compile(rf"(?<![\w]){re.escape(old_dir)}/{old_name}\.py\b"), f"{new_dir}/{new_name}.py"))
        rules.append((re.compile(rf"(?<![\w]){re.escape(old_dir)}/test_{old_name}((?:_\w+)?)\.py\b"),
                      rf"{new_dir}/test_{new_name}\1.py"))
    return rules


def rewrite(paths: list[Path]) -> list[str]:
    """Rewrite old names to new in ``paths``; return the files changed."""
    rules = _rules()
    changed = []
    for path in paths:
        if path.suffix not in SUFFIXES or not path.is_file() or path.name == "house_move.py":
            continue
        text = path.read_text(encoding="utf-8")
        new = text
        for pattern, replacement in rules:
            new = pattern.sub(replacement, new)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(str(path.relative_to(ROOT)))
    return changed


def main(argv: list[str] | None = None) -> int:
    """Move (unless ``--rewrite-only``), then rewrite; print what changed; return 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rewrite-only", action="store_true", help="do not move; only rewrite references")
    parser.add_argument("paths", nargs="*", type=Path, help="files to rewrite (default: every tracked file)")
    args = parser.parse_args(argv)
    if not args.rewrite_only:
        for line in move():
            print(f"moved {line}")
    paths = ([p.resolve() for p in args.paths] if args.paths
             else [ROOT / name for name in _git("ls-files").splitlines()])
    changed = rewrite(paths)
    for name in changed:
        print(f"rewrote {name}")
    # A renamed import can fall out of the sorted order ruff keeps (I001): put it back.
    python = [name for name in changed if name.endswith(".py")]
    if python:
        subprocess.run(["ruff", "check", "--fix", "--select", "I001", "--quiet", *python], cwd=ROOT, check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
