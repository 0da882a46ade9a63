"""The settings that produced each of ``prb rl``'s artefacts, so a re-run never reuses one made otherwise.

``prb rl`` resumes by reusing what ``--out`` holds: the starting policy's answers, each
trained policy, each trained policy's answers. Run again with another ``--policy`` or
``--seed``, it reused the old ones under the new label. Each artefact now has a small
settings file beside it (``answers/base.settings.json``, ``policies/<rm>/settings.json``,
...), written before the artefact is made; before any work :func:`check` compares every
existing artefact's settings with this run's and refuses in one line, naming the settings
that differ, when any does (recomputing would overwrite what the earlier run's results were
made from). ``--out`` itself carries ``prb-rl.json``: a non-empty folder without it is not
ours and is refused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prb_tasks.common.errors import PRBError
from prb_tasks.common.redact import redact_data
from prb_tasks.rl.presets import RLPreset
from prb_tasks.rl.prompts import RLPrompt

MARKER = "prb-rl.json"
FORMAT = "prb-rl/1"
SAMPLING = ("test_temperature", "test_top_p", "test_max_new_tokens")
#: How a setting that is not a flag is named in the refusal.
LABELS = {
    "sampling": "the preset's sampling settings",
    "training": "the preset's training settings (--preset, --max-steps)",
    "held-out questions": "the held-out questions (--data-dir, --templates, --preset, --test-limit)",
    "training questions": "the training questions (--data-dir, --templates, --preset, --train-limit)",
}


@dataclasses.dataclass(frozen=True)
class Artefact:
    """One thing ``prb rl`` keeps under ``--out`` and the settings that make it.

    Attributes:
        path: the artefact (a file or a folder).
        record: its settings file.
        settings: what this run would make it with (flag -> value, or a label of :data:`LABELS`).
    """

    path: Path
    record: Path
    settings: dict[str, Any]

    def exists(self) -> bool:
        """Whether an earlier run made (some of) it."""
        if self.path.is_dir():
            return any(p != self.record for p in self.path.iterdir())
        return self.path.exists()


def questions(prompts: Sequence[RLPrompt]) -> str:
    """A digest of the questions and what the policy and the RM see of them.

    Args:
        prompts: the prompts in their order.
    """
    text = json.dumps([[p.pair_key, p.messages, p.rm_prompt, p.profile_key] for p in prompts], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def base_answers(out: Path, policy: str, seed: int, preset: RLPreset, test: Sequence[RLPrompt]) -> Artefact:
    """The starting policy's answers (``answers/base.jsonl``).

    Args:
        out: ``--out``.
        policy: ``--policy``.
        seed: ``--seed``.
        preset: the resolved preset.
        test: the held-out prompts.
    """
    settings = {"--policy": policy, "--seed": seed,
                "sampling": {name: getattr(preset, name) for name in SAMPLING},
                "held-out questions": questions(test)}
    return Artefact(out / "answers" / "base.jsonl", out / "answers" / "base.settings.json", settings)


def trained_policy(folder: Path, policy: str, seed: int, preset: RLPreset, train: Sequence[RLPrompt], rm: str,
                   reward_url: str | None) -> Artefact:
    """A policy trained against one RM (``policies/<rm>/``: checkpoints and ``final``).

    Args:
        folder: its folder.
        policy: ``--policy``.
        seed: ``--seed``.
        preset: the resolved preset (``--max-steps`` applied).
        train: the training prompts.
        rm: the ``--rm`` it is trained against.
        reward_url: ``--reward-url``.
    """
    training = {k: v for k, v in dataclasses.asdict(preset).items() if k not in SAMPLING and k != "name"}
    settings = {"--policy": policy, "--seed": seed, "--rm": rm, "--reward-url": reward_url, "training": training,
                "training questions": questions(train)}
    return Artefact(folder, folder / "settings.json", settings)


def trained_answers(path: Path, trained: Artefact, base: Artefact) -> Artefact:
    """A trained policy's answers (``answers/<rm>.jsonl``): its policy's settings and the sampling's.

    Args:
        path: the answers file.
        trained: the policy's artefact.
        base: the starting policy's answers (for the sampling and the questions).
    """
    settings = {**trained.settings, "sampling": base.settings["sampling"],
                "held-out questions": base.settings["held-out questions"]}
    return Artefact(path, path.with_suffix(".settings.json"), settings)


def check_out(out: Path) -> None:
    """One line when ``--out`` is a file or a non-empty folder ``prb rl`` did not make.

    Args:
        out: ``--out``.
    """
    if out.exists() and not out.is_dir():
        raise PRBError(f"prb rl: --out '{out}' is a file; give a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise PRBError(f"prb rl: --out '{out}' is a folder with other files in it (no {MARKER}: not a prb rl "
                       "folder, or one an older prb made); give a new or empty folder")


def _difference(key: str, old: Any, new: Any) -> str:
    if key.startswith("--"):
        return f"{key} {old} (now {new})"
    return LABELS.get(key, key)


def check(out: Path, artefacts: Sequence[Artefact]) -> None:
    """Refuse in one line when an existing artefact was made with other settings; record the rest.

    Args:
        out: ``--out`` (gets its :data:`MARKER`).
        artefacts: everything this run would reuse or make.
    """
    for artefact in artefacts:
        if not artefact.exists():
            continue
        wanted = json.loads(json.dumps(redact_data(artefact.settings)))  # as the file holds it (lists)
        try:
            recorded = json.loads(artefact.record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            recorded = None
        if not isinstance(recorded, dict):
            raise PRBError(f"prb rl: {artefact.path} has no readable settings file ({artefact.record.name}: an "
                           f"older prb made it, or it was damaged); delete {artefact.path} to make it again, or "
                           "give a new --out")
        differ = [_difference(k, recorded.get(k), wanted.get(k)) for k in wanted if recorded.get(k) != wanted[k]]
        if differ:
            raise PRBError(f"prb rl: {artefact.path} was made with other settings: {'; '.join(differ)}; give a new "
                           f"--out, or delete {artefact.path} to make it again with these")
    out.mkdir(parents=True, exist_ok=True)
    _write(out / MARKER, {"format": FORMAT})
    for artefact in artefacts:
        if not artefact.exists():
            artefact.record.parent.mkdir(parents=True, exist_ok=True)
            _write(artefact.record, redact_data(artefact.settings))


def _write(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
