"""Turn participants' journals into the per-user JSON ``personalized_custom`` reads.

One user object per participant with a profile and at least one A/B answer::

    {"user_id": NAME, "demographics": {profile},
     "preferences": [{"prompt", "response_A", "response_B", "chosen_response",
                      "reason", "value_alignment", "pair_id", "shown_left"}, ...],
     "no_preference": [{"prompt", "response_A", "response_B", "reason", ...}]}

``response_A``/``response_B`` are the file's answers whichever side the participant saw
them on (``shown_left`` records that). "No preference" answers are kept under
``no_preference``, a key the loader ignores, so they are recorded but not evaluated.
Preferences follow the PAIRS file's order. The file is replaced atomically and is
readable by its owner only (0600), like the journals.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prb_tasks.collect.journal import NO_PREFERENCE, ParticipantState
from prb_tasks.collect.pairs import Pair
from prb_tasks.common.atomic import fsync_dir
from prb_tasks.data.custom.schema import UserRecord


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote.

    Attributes:
        users: participants written.
        preferences: A/B answers written.
        no_preference: "no preference" answers recorded (not evaluated).
        skipped: participants left out, with why.
    """

    users: int
    preferences: int
    no_preference: int
    skipped: tuple[str, ...]


def user_object(name: str, state: ParticipantState, pairs: list[Pair]) -> dict[str, Any] | None:
    """The export object of one participant, or None while they have no A/B answer.

    Args:
        name: the participant (exported as ``user_id``).
        state: their replayed journal.
        pairs: the collection's pairs, in file order.
    """
    preferences: list[dict[str, Any]] = []
    undecided: list[dict[str, Any]] = []
    for pair in pairs:
        answer = state.answers.get(pair.pair_id)
        if answer is None:
            continue
        item = {"prompt": pair.prompt, "response_A": pair.response_A, "response_B": pair.response_B}
        extra = {"reason": answer.reason, "value_alignment": list(answer.tags),
                 "pair_id": pair.pair_id, "shown_left": answer.left}
        if answer.choice == NO_PREFERENCE:
            undecided.append({**item, **extra})
        else:
            preferences.append({**item, "chosen_response": answer.choice, **extra})
    if not preferences:
        return None
    record = {"user_id": name, "demographics": dict(state.profile or {}), "preferences": preferences}
    if undecided:
        record["no_preference"] = undecided
    UserRecord.model_validate(record)  # the loader's own check: never write what it would refuse
    return record


def build_export(states: dict[str, ParticipantState], pairs: list[Pair]) -> tuple[list[dict[str, Any]], ExportSummary]:
    """The user objects of every participant, and a summary.

    Args:
        states: replayed journals by participant, in participant order.
        pairs: the collection's pairs, in file order.
    """
    users: list[dict[str, Any]] = []
    skipped: list[str] = []
    undecided = 0
    for name, state in states.items():
        record = user_object(name, state, pairs)
        if record is None:
            skipped.append(f"{name} (no A/B answer yet)" if state.answers else f"{name} (not started)")
            undecided += sum(a.choice == NO_PREFERENCE for a in state.answers.values())
            continue
        users.append(record)
        undecided += len(record.get("no_preference", []))
    summary = ExportSummary(len(users), sum(len(u["preferences"]) for u in users), undecided, tuple(skipped))
    return users, summary


def write_atomic(out: Path, users: list[dict[str, Any]]) -> None:
    """Replace ``out`` with the users (a JSON array for ``.json``, one per line for ``.jsonl``).

    Written to a temporary file in the same folder, fsync'd, then renamed over ``out``,
    so a reader (or a crash) only ever sees the old or the new complete file.

    Args:
        out: the export file.
        users: user objects from :func:`build_export`.
    """
    if out.suffix == ".jsonl":
        text = "".join(json.dumps(u, ensure_ascii=False) + "\n" for u in users)
    else:
        text = json.dumps(users, ensure_ascii=False, indent=1) + "\n"
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    # Owner-only, like the journals: it holds every reason and profile answer.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600)  # O_CREAT's mode does not apply to a leftover temporary file
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk must not also leave a half-written copy behind
        raise
    fsync_dir(out.parent)
