"""Every docs page that tells a user to run commands has one offline example, and it runs word for word.

A page marks its example with ``<!-- offline-example -->`` on the line before a ```bash block.
The whole block runs as one ``bash -e`` script (as a user pastes it) at the top of a fresh copy of
the checkout's files (as a fresh clone), with the venv's ``prb`` on PATH and that copy importable
(as ``pip install -e .`` in the clone gives). An optional ``<!-- offline-example prints -->`` block after it lists
lines that must appear in what the example prints (stdout and stderr; whitespace runs count as
one space, since prb wraps long lines by words). Whatever the example adds to the clone must be
ignored by its ``.gitignore``: a walkthrough followed in a checkout leaves no untracked paths
(issue 49, items 2 and 6).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.runner import REPO, flat
from tests.watchdog import run_watched

EXAMPLE = re.compile(r"<!-- offline-example -->\n```bash\n(.*?)```\n"
                     r"(?:\s*<!-- offline-example prints -->\n```\w*\n(.*?)```)?", re.S)

#: The pages that tell a user to run commands: each needs its offline example.
PAGES = ("getting-started", "your-data", "personalization", "general-benchmarks", "comparing", "judges",
         "reward-models", "personalllm", "real-people", "rl-downstream", "reproducing", "tasks",
         "personal-reward-bench")


@dataclass
class Example:
    """One marked example.

    Attributes:
        page: the page's name (``docs/<page>.md``).
        line: the line of its marker.
        script: the bash block, as written.
        prints: lines the page says it prints.
    """

    page: str
    line: int
    script: str
    prints: list[str] = field(default_factory=list)


def examples() -> list[Example]:
    """Every marked example of docs/*.md."""
    found: list[Example] = []
    for path in sorted((REPO / "docs").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for match in EXAMPLE.finditer(text):
            prints = [line for line in (match.group(2) or "").splitlines() if line.strip()]
            found.append(Example(path.stem, text[:match.start()].count("\n") + 1, match.group(1), prints))
    return found


EXAMPLES = examples()


def test_each_page_that_runs_commands_has_one_marked_example() -> None:
    for path in sorted((REPO / "docs").glob("*.md")):
        markers = path.read_text(encoding="utf-8").count("<!-- offline-example -->")
        matched = sum(1 for e in EXAMPLES if e.page == path.stem)
        assert markers == matched, f"docs/{path.name}: a marker not followed by a ```bash block"
    pages = [e.page for e in EXAMPLES]
    for page in PAGES:
        assert pages.count(page) == 1, f"docs/{page}.md needs exactly one <!-- offline-example --> block"


def _checkout_files() -> list[str]:
    """The checkout's files a clone has: tracked ones and new ones not ignored (this branch's work)."""
    proc = subprocess.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard"],
                          capture_output=True, text=True, check=True)
    return [name for name in proc.stdout.splitlines() if (REPO / name).is_file()]


def _clone(target: Path) -> set[str]:
    """Copy the checkout's files to ``target`` (a fresh clone's tree); returns their names."""
    names = _checkout_files()
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target / name)
    return set(names)


def _untracked(clone: Path, cloned: set[str]) -> list[str]:
    """What the example added to ``clone`` that the checkout's .gitignore does not ignore."""
    added = sorted(str(p.relative_to(clone)) for p in clone.rglob("*")
                   if p.is_file() and str(p.relative_to(clone)) not in cloned
                   and not str(p.relative_to(clone)).startswith(".home/") and "__pycache__" not in p.parts)
    if not added:
        return []
    # Paths need not exist in the checkout: --no-index matches the names against its patterns.
    proc = subprocess.run(["git", "-C", str(REPO), "check-ignore", "--no-index", "--stdin"],
                          input="\n".join(added), capture_output=True, text=True, check=False)
    ignored = {line.strip() for line in proc.stdout.splitlines()}
    return sorted({name.split("/")[0] for name in added if name not in ignored})


def with_free_ports(script: str) -> str:
    """``script`` with each fixed fake-server port (``--port N`` and the ``127.0.0.1:N`` that reach it)
    replaced by a port free now."""
    import socket

    for port in sorted(set(re.findall(r"--port (\d{4,5})\b", script))):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            free = sock.getsockname()[1]
        script = re.sub(rf"(--port |127\.0\.0\.1:){port}\b", rf"\g<1>{free}", script)
    return script


def test_examples_get_free_ports_and_a_taken_port_is_one_line(tmp_path: Path) -> None:
    """Every fixed port of the examples is replaced; a fake server on a taken port says so in one line and
    the page's wait loop ends (it waited for READY forever)."""
    import socket

    fixed = [e for e in EXAMPLES if "--port 87" in e.script]
    assert fixed
    for example in fixed:
        assert not re.search(r"(--port |127\.0\.0\.1:)876\d", with_free_ports(example.script)), example.page
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        script = (f"{sys.executable} -m prb_tasks.testing.fake_server --port {port} > fake.log &\n"
                  "until grep -qs READY fake.log; do kill -0 $! 2>/dev/null || break; sleep 1; done\n")
        proc = run_watched(["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"fake_server: cannot listen on 127.0.0.1:{port}: Address already in use" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e.page}:{e.line}" for e in EXAMPLES])
def test_offline_example_runs_as_written(example: Example, tmp_path: Path) -> None:
    work = tmp_path / "clone"
    work.mkdir()
    cloned = _clone(work)
    home = work / ".home"  # caches of prb and Hugging Face stay in the test's folder
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(work), "PRB_CACHE_DIR": str(home / "prb"), "HF_HOME": str(home / "hf"),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("OPENAI_API_KEY", None)
    # A page's fake server listens on a fixed port (8765-8767): two examples at once (xdist) or a server a
    # user left running would meet there. The test gives each run a free port of its own instead.
    proc = run_watched(["bash", "-e", "-c", with_free_ports(example.script)], cwd=work, env=env,
                       capture_output=True, text=True)
    where = f"docs/{example.page}.md:{example.line}"
    printed = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{where}: the example exits {proc.returncode}\n{printed[-4000:]}"
    assert "Traceback" not in printed, f"{where}\n{printed[-4000:]}"
    # transformers' LOAD REPORT came with bold codes on a piped stderr (issue 49, item 6).
    assert not [line for line in printed.splitlines() if "LOAD REPORT" in line and "\x1b[" in line], where
    for line in example.prints:
        assert flat(line) in flat(printed), f"{where}: the page says it prints {line!r}\n{printed[-4000:]}"
    left = _untracked(work, cloned)
    assert not left, f"{where}: leaves paths a checkout does not ignore: {left}"
