"""The evaluation command ``prb train`` prints when it has written a checkpoint.

The hint is a whole command that scores only data the model never saw: the few-shot task of
the data's family with the data and the split's ``--metadata`` (its unseen users), and a
``queries`` the data can meet; for data without user ids (Personalized RewardBench), the
scalar task on the rows training held out (``--metadata rows``, the checkpoint's
``heldout_rows.txt``). (Before, it said "the *_fewshot task with the same --metadata", and on a
small file that evaluation stopped with "no user has 8 query pairs" until ``queries`` was
guessed; issue 49, item 2.)
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from prb_tasks.common.resources import tasks_dir
from prb_tasks.common.terminal import WIDTH
from prb_tasks.fewshot.sources import FewshotData
from prb_tasks.train.provenance import HELDOUT_ROWS

#: How a continued line of the printed command starts (under ``prb train: ``'s text).
_CONTINUED = " \\\n    "
#: The columns a line's arguments may take: the line is printed indented (2 columns, 4 when
#: continued) and, unless last, ends in `` \``.
_ROOM = WIDTH - len("    ") - len(" \\")


def shell_lines(groups: list[list[str]]) -> str:
    """A command as lines joined by backslash continuations, each fitting a 120-column terminal.

    Each group starts a line of its own (the same layout whatever the paths' lengths); a group
    too long for one line is broken between its arguments, never inside one (a path longer
    than a line stays whole), so the lines still paste into a shell as one command.

    Args:
        groups: the command's arguments (a flag and its quoted value as one item), one list per line.
    """
    lines: list[str] = []
    for group in groups:
        line = ""
        for part in group:
            if line and len(line) + 1 + len(part) > _ROOM:
                lines.append(line)
                line = part
            else:
                line = f"{line} {part}" if line else part
        lines.append(line)
    return _CONTINUED.join(lines)


def fewshot_task(family: str) -> str:
    """The ``prb-method`` few-shot task of ``family`` (its YAML says ``data_family: <family>``).

    Args:
        family: a family name with few-shot tasks (``custom``, ``personalllm``, ``prism``...).
    """
    for path in sorted((tasks_dir() / "fewshot").glob("*_fewshot.yaml")):
        text = path.read_text(encoding="utf-8")
        if re.search(rf"^\s*data_family:\s*{re.escape(family)}\s*$", text, re.M):
            return path.stem
    return f"{family}_fewshot"


def fitting_queries(few_shot: FewshotData) -> int | None:
    """A ``queries`` the unseen users can meet, or None when the split's own leaves someone to evaluate.

    Half the pairs of the unseen user with the most (at least 1), so that user is scored at
    k = 0 and keeps support pairs for the next k points.

    Args:
        few_shot: the split the model was trained on.
    """
    split = few_shot.split
    if split.evaluated(0) or not split.unseen:
        return None
    most = max(len(u.pool) + len(u.queries) for u in split.unseen)
    return max(1, most // 2)


def evaluation_command(out: str, family: str, location: str, is_file: bool, metadata: dict[str, Any],
                       few_shot: FewshotData | None) -> str:
    """The ``prb eval`` command that evaluates the checkpoint in ``out``, lines joined by ``\\``.

    Args:
        out: the checkpoint folder, as the user gave it.
        family: the training data's family.
        location: the training data as resolved (a path, or a bundled name such as ``example``).
        is_file: the family's data is a file (``data_path``) rather than a folder (``data_dir``).
        metadata: the training's ``--metadata`` (the split's settings are repeated in the evaluation).
        few_shot: the training's split (None: Personalized RewardBench, no split).
    """
    if few_shot is None:
        # The rows training held out, and only those: a family without user ids has no unseen users.
        model = ["prb eval", "--model prb-rm", f"--model_args {shlex.quote(f'pretrained={out}')}"]
        rows = {"rows": f"{out.rstrip('/')}/{HELDOUT_ROWS}"}
        if location == "sample":
            return shell_lines([model, ["--tasks personalized_rb_sample_scalar",
                                        f"--metadata {shlex.quote(json.dumps(rows))}"]])
        return shell_lines([model, ["--tasks personalized_rb_scalar",
                                    f"--metadata {shlex.quote(json.dumps({'data_dir': location, **rows}))}"]])
    meta = {"data_path" if is_file else "data_dir": location, **metadata}
    queries = fitting_queries(few_shot)
    if queries is not None and "queries" not in metadata:
        meta["queries"] = queries
    return shell_lines([["prb eval", "--model prb-method",
                         f"--model_args {shlex.quote(f'method=trained,checkpoint={out}')}"],
                        [f"--tasks {fewshot_task(family)}", f"--metadata {shlex.quote(json.dumps(meta))}"]])
