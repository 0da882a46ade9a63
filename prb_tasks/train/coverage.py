"""Demographic values that only unseen users have: a model reading demographics never saw them
in training, so what it learned about the others cannot carry over (issue 50).

With few users per value the seeded split can put every user of a value among the unseen
(split seed 0 of a 36-user taste-group file does so for 10 of its 12 occupation users);
``prb train`` then says so in one line rather than letting a flat k = 0 curve look like a
model that learned nothing. The split itself is left alone: checkpoints record it.
"""

from __future__ import annotations

from prb_tasks.fewshot.demographics import categories, flatten
from prb_tasks.fewshot.method import User
from prb_tasks.fewshot.sources import FewshotData
from prb_tasks.fewshot.split import name_a_few


def _values(user: User) -> set[str]:
    """The user's categorical demographic values as ``name=value`` (numbers are left out: a
    model can place an unseen age between seen ones, not an unseen occupation)."""
    return {f"{name}={category}" for name, value in flatten(user.demographics).items()
            for category in categories(value) or []}


def unseen_only(data: FewshotData) -> dict[str, set[str]]:
    """Unseen user id -> its demographic values that no seen user has (users with none left out).

    Args:
        data: the few-shot split the training users came from.
    """
    seen = set().union(*(_values(data.users[u]) for u in data.split.seen))
    found = {u.user_id: _values(data.users[u.user_id]) - seen for u in data.split.unseen}
    return {user: values for user, values in found.items() if values}


def coverage_line(data: FewshotData) -> str | None:
    """One line for ``prb train`` when some unseen users have a demographic value no seen user
    has; None when every value of theirs is in training.

    Args:
        data: the few-shot split the training users came from.
    """
    found = unseen_only(data)
    if not found:
        return None
    named = name_a_few(sorted(set().union(*found.values())))
    return (f"prb train: {len(found)} of {len(data.split.unseen)} unseen users have a demographic value no "
            f"training user has ({named}), so the model cannot have learned it; more users per value or another "
            "--metadata split_seed puts some in training")
