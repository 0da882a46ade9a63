"""The commands prb's fix hints name run as printed (issue 63 item 4).

The hints said ``huggingface-cli download``; the pinned huggingface-hub (2.x) installs only
``hf``, so a user pasting the hint got "command not found". Every Hugging Face command a hint
or a docs page names is run here (offline: it must parse and get as far as the hub), with its
placeholders filled in.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.runner import REPO, run_cli

COMMAND = re.compile(r"\b((?:hf|huggingface-cli) (?:download|upload|auth|cache)\b[^`\n;)]*)")


def _strings(path: Path) -> list[str]:
    """Every string literal of a module, f-strings with their fields as ``{}``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            found.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts:
            found.append(node.value)
    return found


def hinted_commands() -> list[tuple[str, str]]:
    """(where, command) for each Hugging Face command in prb's messages and docs pages."""
    found: list[tuple[str, str]] = []
    for path in sorted((REPO / "prb_tasks").rglob("*.py")):
        for text in _strings(path):
            found += [(str(path.relative_to(REPO)), m.strip()) for m in COMMAND.findall(text)]
    for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for line in path.read_text(encoding="utf-8").splitlines():
            found += [(str(path.relative_to(REPO)), m.split("#")[0].strip()) for m in COMMAND.findall(line)]
    return sorted(set(found))


HINTS = hinted_commands()


def test_hints_were_found() -> None:
    places = {where for where, _ in HINTS}
    assert {"prb_tasks/rm/scorers/hf.py", "prb_tasks/text/contriever.py", "prb_tasks/train/backbone.py",
            "prb_tasks/rl/lamp_qa.py", "docs/reproducing.md", "docs/tasks.md"} <= places, places


@pytest.mark.parametrize(("where", "command"), HINTS, ids=[f"{w}: {c}" for w, c in HINTS])
def test_the_hinted_command_runs(where: str, command: str, tmp_path: Path) -> None:
    words = shlex.split(command)
    program = shutil.which(words[0], path=os.pathsep.join([str(Path(sys.executable).parent),
                                                           os.environ.get("PATH", "")]))
    assert program is not None, f"{where}: `{command}`: no {words[0]} command in this environment"
    if words[1:2] == ["download"] and len(words) == 2:
        return  # named without its arguments, in prose ("the line names the `hf download` to run")
    # A placeholder (NAME, DIR, an f-string's or .format's field) in the repository's place is a
    # repository id, anywhere else a folder.
    filled = [w if not (w in ("NAME", "DIR") or re.fullmatch(r"\{\w*\}", w))
              else "someorg/some-model" if i == 2 else str(tmp_path / "d") for i, w in enumerate(words)]
    proc = run_cli(filled[1:], cwd=tmp_path, program=[program],
                   env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")})
    output = proc.stdout + proc.stderr
    # Parsed (a usage error exits 2) and went for the hub, which offline mode refuses.
    assert proc.returncode != 2 and "No such option" not in output, f"{where}: `{command}`:\n{output[-2000:]}"
    assert "offline mode is enabled" in output, f"{where}: `{command}`:\n{output[-2000:]}"
