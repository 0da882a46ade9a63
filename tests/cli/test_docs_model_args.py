"""Every ``--model_args`` a docs recipe passes to prb's own models is one prb accepts.

Recipes that need a GPU, a key or a server are never run by the docs test; a refused
argument in one (``api_key=none``, which prb-judge refuses so a key never reaches
results) would only be found by a reader. Here every ``--model prb-judge`` and
``--model prb-rm`` command in README.md and docs/*.md code blocks is parsed and its
arguments validated by the same code the model runs (nothing is loaded or sent);
shell variables set in the block are expanded, others (``$MODEL``) left out.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.runner import REPO

BLOCK = re.compile(r"```(?:bash|sh|shell|console|text)?\n(.*?)```", re.S)
ASSIGN = re.compile(r"^(?:export\s+)?((?:[A-Z_][A-Z0-9_]*=\S+\s*)+)$")
MODELS = ("prb-judge", "prb-rm")


def _commands(text: str) -> list[str]:
    """The block's commands, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [line.split(" #")[0].strip() for line in joined.splitlines() if line.strip() and
            not line.lstrip().startswith("#")]


def recipes() -> list[tuple[str, str, dict[str, str]]]:
    """(where, model, model_args) for every prb model command in the docs."""
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for block in BLOCK.finditer(text):
            line_no = text[:block.start()].count("\n") + 1
            names: dict[str, str] = {}
            for command in _commands(block.group(1)):
                if (assign := ASSIGN.match(command)) is not None:
                    for pair in assign.group(1).split():
                        key, _, value = pair.partition("=")
                        names[key] = value.strip("'\"")
                    continue
                try:
                    words = shlex.split(command)
                except ValueError:
                    continue
                if "--model" not in words or "--model_args" not in words:
                    continue
                model = words[words.index("--model") + 1] if words.index("--model") + 1 < len(words) else ""
                raw = words[words.index("--model_args") + 1] if words.index("--model_args") + 1 < len(words) else ""
                if model not in MODELS or raw.startswith(("{", "<")):
                    continue
                expanded = re.sub(r"\$\{?([A-Z_][A-Z0-9_]*)\}?", lambda m: names.get(m.group(1), m.group(0)), raw)
                args = dict(part.split("=", 1) for part in expanded.split(",")
                            if "=" in part and "$" not in part and "..." not in part)
                # A placeholder (model=<judge>) stands for a value the reader picks: a plausible one.
                args = {k: (("openai/placeholder" if k.endswith("model") else "placeholder") if v.startswith("<")
                            else v) for k, v in args.items()}
                found.append((f"{path.name}:{line_no}", model, args))
    return found


FOUND = recipes()


def test_the_docs_have_recipes_to_check() -> None:
    assert len(FOUND) >= 20 and {m for _, m, _ in FOUND} == set(MODELS)


@pytest.mark.parametrize("where, model, args", FOUND, ids=[f"{w}-{m}" for w, m, _ in FOUND])
def test_a_docs_recipe_passes_only_arguments_prb_accepts(where: str, model: str, args: dict[str, str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from prb_tasks.common.errors import PRBError
    from prb_tasks.common.keyargs import KEY_SOURCE, refuse_key_arguments

    try:
        refuse_key_arguments(args, f"{where}: {model} model_args", KEY_SOURCE[model], PRBError)
        if model == "prb-judge":
            from prb_tasks.judge.configs import resolve_settings

            if "api_key_env" in args:  # the recipe tells the reader to set it
                monkeypatch.setenv(args["api_key_env"], "sk-docs-test-0000")
            from prb_tasks.cli.planner_cli import split_model_args

            # prb eval's planner takes planner_<key> for its own judge (docs/tasks.md): both checked.
            for own in split_model_args(args) if any(k.startswith("planner_") for k in args) else (args,):
                resolve_settings(own)
        else:
            from prb_tasks.rm.options import parse_options

            parse_options(args)
    except PRBError as exc:
        pytest.fail(f"{where}: --model {model} --model_args {args}: {exc}")


def test_a_refused_argument_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The check itself: the recipe issue 32 found (api_key=none) fails it.
    bad = tmp_path / "docs"
    bad.mkdir()
    (bad / "x.md").write_text("```bash\nprb eval --model prb-judge --model_args "
                              "model=openai/m,api_base=http://localhost:8000/v1,api_key=none --tasks t\n```\n")
    monkeypatch.setattr("tests.cli.test_docs_model_args.REPO", tmp_path)
    (tmp_path / "README.md").write_text("")
    ((where, model, args),) = recipes()
    with pytest.raises(pytest.fail.Exception, match="api_key"):
        test_a_docs_recipe_passes_only_arguments_prb_accepts(where, model, args, monkeypatch)
