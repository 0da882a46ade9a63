"""Which of ``prb rl``'s checkpoints are whole: a seal written last, checked before a resume.

transformers' Trainer writes ``checkpoint-N/`` in place (weights, optimizer, scheduler, RNG
and trainer state, one file after another) and resumes from the folder with the highest N
(``get_last_checkpoint``) whatever it holds: a kill -9 during a save left a folder that
every later run tried and failed to resume from. :class:`SealCheckpoints` writes
``prb-complete.json`` into each checkpoint after the Trainer has written it (the
``on_save`` callback runs after the whole save), with the sha256 of every file, once the
files are on disk; :func:`resume_point` resumes from the newest sealed checkpoint whose files
match and sets newer ones aside with one line each. ``final/`` (the trained policy) is
written under a temporary name and renamed into place with the same seal inside
(:func:`seal`, :mod:`prb_tasks.common.atomic`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Optional

from transformers import TrainerCallback

from prb_tasks.common.atomic import check_digests, digests, fsync_dir, fsync_tree

SEAL = "prb-complete.json"
FORMAT = "prb-rl-folder/1"
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")  # the Trainer's own names (trainer_utils._re_checkpoint)


def _contents(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != SEAL)


def seal(folder: Path, extra: Optional[dict[str, Any]] = None) -> None:
    """Flush ``folder`` to disk, then write its seal (digests of every file, ``extra``) last.

    Args:
        folder: a whole checkpoint or policy folder.
        extra: more facts to record in the seal (the settings that produced it).
    """
    fsync_tree(folder)
    record = {"format": FORMAT, **(extra or {}), "files": digests(folder, _contents(folder))}
    tmp = folder / f".{SEAL}.tmp"
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps(record, indent=1) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, folder / SEAL)
    fsync_dir(folder)


def read_seal(folder: Path) -> Optional[dict[str, Any]]:
    """The seal of ``folder`` (None when it has none or it is unreadable).

    Args:
        folder: a checkpoint or policy folder.
    """
    try:
        record = json.loads((folder / SEAL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT or not isinstance(record.get("files"), dict):
        return None
    return record


def problem(folder: Path) -> Optional[str]:
    """Why ``folder`` is not whole (None: sealed, and every file matches its digest).

    Args:
        folder: a checkpoint or policy folder.
    """
    record = read_seal(folder)
    if record is None:
        return "incomplete: a run was stopped while writing it"
    wrong = check_digests(folder, {str(k): str(v) for k, v in record["files"].items()}, _contents(folder))
    return f"damaged: {wrong}" if wrong else None


def set_aside(folder: Path, why: str, then: str) -> Path:
    """Rename ``folder`` out of the way (``<name>.damaged``) and say so in one line on stderr.

    Args:
        folder: the folder.
        why: what :func:`problem` said.
        then: what happens next (for the line).
    """
    target = folder.with_name(f"{folder.name}.damaged")
    n = 1
    while target.exists():
        n += 1
        target = folder.with_name(f"{folder.name}.damaged-{n}")
    os.rename(folder, target)
    print(f"prb rl: {folder} is {why}; set aside as {target.name}, {then}", file=sys.stderr)
    return target


def resume_point(folder: Path) -> Optional[Path]:
    """The newest whole checkpoint under ``folder`` (None: start from the beginning).

    Newer checkpoints that are not whole are set aside (one line each), so the Trainer never
    writes a new save into a half-written folder of the same name.

    Args:
        folder: the policy's run folder (``output_dir``).
    """
    if not folder.is_dir():
        return None
    found = sorted(((int(m.group(1)), p) for p in folder.iterdir()
                    if p.is_dir() and (m := _CHECKPOINT.match(p.name))), reverse=True)
    for index, (_, path) in enumerate(found):
        why = problem(path)
        if why is None:
            return path
        earlier = found[index + 1][1].name if index + 1 < len(found) else None
        set_aside(path, why, f"resuming from {earlier}" if earlier else "no earlier checkpoint: training from "
                  "the start")
    return None


class SealCheckpoints(TrainerCallback):
    """Seals each ``checkpoint-N`` once the Trainer has saved it (``on_save`` follows the save)."""

    def on_save(self, args, state, control, **kwargs):
        """Seal the checkpoint just written (the main process only: it wrote the files)."""
        if state.is_world_process_zero:
            path = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if path.is_dir():
                seal(path, {"step": state.global_step})
