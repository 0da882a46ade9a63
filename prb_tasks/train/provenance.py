"""Whether a run may score data with a ``prb train`` checkpoint: the one check every path makes.

``prb-method`` (method=trained), ``prb-rm`` (scorer=trained; ``prb eval`` on the scalar and
Best-of-N tasks), ``prb rl`` and so ``prb bon`` load a checkpoint and score data with it. Each
describes what it is about to score as a :class:`Scope` and calls :func:`check`, which refuses
in one line a run that would score a user or a row the checkpoint was trained on, or (where a
split decides who is unseen) a split, data file or family other than the training's.

The manifest says what the model saw:

- ``family``: the data's family; ``split``: the settings that decided the split, with the
  data's digest (families with user ids);
- ``users``: the seen users' ids it trained on;
- ``rows``: for a family without user ids (Personalized RewardBench), a short digest of the
  question of every row it trained on (:func:`row_digest`); the rows it held out are named in
  ``OUT/heldout_rows.txt`` (:data:`HELDOUT_ROWS`), which the evaluation hint passes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from prb_tasks.train.options import TrainError

#: The file of a checkpoint naming the rows held out of training (one pair key a line).
HELDOUT_ROWS = "heldout_rows.txt"


#: Few-shot ``evaluate`` values that score the seen users (prb_tasks.fewshot.split.EVALUATE).
SEEN_SPLITS = ("seen_users_unseen_prompts", "seen_users_seen_prompts")


def row_digest(question: str) -> str:
    """A row's identity for the leak check: the first 16 hex digits of its question's sha256.

    Content, not position: the same question under another row number (a copy of the data in
    another order, a subset of it) is still the row the model saw.

    Args:
        question: the row's bare question.
    """
    return hashlib.sha256(question.strip().encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Scope:
    """What a run is about to score with a checkpoint.

    Attributes:
        family: the family of the data scored ("" when the data is no family's own, e.g. a
            task another package defines).
        users: the ids of the users whose pairs are scored.
        questions: the bare questions scored (compared with the manifest's ``rows``).
        settings: the split's settings (``split_seed``, ``unseen_share``, ``data_digest`` ...)
            when a split decides who is unseen (prb-method); empty otherwise.
        split: whether a split decides who is unseen: the family, the settings and the data
            must then be the training's (prb-method); else only users and rows are compared.
        instead: what to run instead when users or rows leak (the end of the refusal).
    """

    family: str
    users: Collection[str] = ()
    questions: Collection[str] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    split: bool = False
    instead: str = ""


def check(manifest: Mapping[str, Any], folder: str, scope: Scope, who: str) -> None:
    """Refuse in one line (:class:`TrainError`) a run that scores what the checkpoint saw.

    Args:
        manifest: the checkpoint's manifest.
        folder: the checkpoint folder, as given (for messages).
        scope: what the run scores.
        who: the command or model asking, for messages.
    """
    trained_family = str(manifest.get("family") or "")
    head = f"{who}: checkpoint '{folder}'"
    if scope.split and scope.family and trained_family and scope.family != trained_family:
        # Before the split's keys: another family's keys all differ, and naming them misleads.
        raise TrainError(f"{head} was trained on another family's data ({trained_family}; this run: {scope.family}); "
                         f"evaluate it on {trained_family} data (the DATA it was trained on: {manifest.get('data')}), "
                         f"or train a model on this data with prb train")
    same_family = not scope.family or not trained_family or scope.family == trained_family
    trained = set(manifest.get("users") or ()) if same_family else set()
    leaked = sorted(u for u in set(scope.users) if u in trained)
    fixes = _split_fixes(manifest, scope) if scope.split else []
    if leaked and scope.split and not fixes and (manifest.get("split") or {}).get("evaluate") in SEEN_SPLITS:
        # The split the checkpoint was trained for evaluates its seen users by name: on their
        # held-out latest pairs (never trained on), or on trained pairs as a named sanity row.
        leaked = []
    if leaked or fixes:
        what = (f"was trained on {len(leaked)} of the {len(set(scope.users))} users this run scores "
                f"({', '.join(leaked[:3])}{', ...' if len(leaked) > 3 else ''})" if leaked
                else "was trained on another split")
        fix = (f"{' and '.join(fixes)}, or train again with this run's" if fixes
               else scope.instead or "score users it never saw")
        raise TrainError(f"{head} {what}; {fix}")
    if scope.questions and same_family and manifest.get("split") is None and "rows" not in manifest:
        raise TrainError(f"{head} records no rows it held out (an older prb trained on every row of "
                         f"{manifest.get('data')}), so any row may be one it saw; train it again with this prb")
    rows = set(manifest.get("rows") or ())
    seen = sorted({q for q in scope.questions if row_digest(q) in rows})
    if seen:
        held = f"{folder.rstrip('/')}/{HELDOUT_ROWS}"
        fix = scope.instead or f"score the rows it held out: add \"rows\": \"{held}\" to --metadata"
        raise TrainError(f"{head} was trained on {len(seen)} of the {len(set(scope.questions))} rows this run scores "
                         f"(by their questions); {fix}")


def _split_fixes(manifest: Mapping[str, Any], scope: Scope) -> list[str]:
    """What to change when the split is decided by other settings or data than the training's."""
    theirs = manifest.get("split") or {}
    # A checkpoint from before the split was recorded is checked on its users alone.
    differ = [k for k in sorted(set(theirs) | set(scope.settings)) if theirs and
              theirs.get(k) != scope.settings.get(k)]
    # A checkpoint of the default split records no evaluate: the fix leaves the key out (null is no value).
    absent = [k for k in differ if k == "evaluate" and k not in theirs]
    keys = {k: theirs.get(k) for k in differ if k != "data_digest" and k not in absent}
    fixes = [f"evaluate without --metadata {', '.join(absent)} (as it was trained)"] if absent else []
    if keys:
        fixes.append(f"evaluate with the training's --metadata {json.dumps(keys)} (this run: "
                     f"{json.dumps({k: scope.settings.get(k) for k in keys})})")
    if "data_digest" in differ:
        fixes.append(f"evaluate on the data it was trained on ({manifest.get('data')}; this data differs)")
    return fixes


def family_of_task(task: str | None) -> str:
    """The family whose task folder holds ``task`` ("" for a task of no family, or None).

    Args:
        task: an lm-eval task name (an :class:`~prb_tasks.rm.inputs.RMInput`'s ``group``).
    """
    if not task:
        return ""
    from prb_tasks.common.taskindex import task_info
    from prb_tasks.data import families

    info = task_info().get(task)
    if info is None:
        return ""
    for family in families.families():
        if info.family in family.task_folders:
            return family.name
    return ""
