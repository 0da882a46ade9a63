"""The training pairs of a family's seen users, each with what the model may know about its user.

PersonalLLM and your own file go through the few-shot protocol's split
(:mod:`prb_tasks.fewshot.split`, the same ``--metadata`` keys as the ``*_fewshot`` tasks):
only the **seen** users' pairs are trained on, so the checkpoint is evaluated on users it
never saw with ``prb-method``. Personalized RewardBench has no user ids and one pair per
row: every row is a user whose profile is its posts (``personalized_rb_user``), and every
row is a user. A family without a split holds out ``holdout_share`` of its rows (at least one
per subset, picked by a seeded hash of the question), never trained on; the checkpoint names them
(``heldout_rows.txt``) and records a digest of every question it trained on, so no path scores a
row the model saw (:mod:`prb_tasks.train.provenance`).

Each training pair carries up to ``support_max`` other pairs of the same user (a seeded
random number of them, 0 included, drawn from the user's pairs other than this one): the
latent model's support set, and the context model's history.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from prb_tasks.data.families import BenchmarkFamily
from prb_tasks.fewshot.method import Pair, User
from prb_tasks.fewshot.sources import FewshotData
from prb_tasks.train.options import TrainError, TrainOptions
from prb_tasks.train.provenance import row_digest


@dataclass(frozen=True)
class Example:
    """One training pair.

    Attributes:
        pair: the labelled pair.
        user: its user.
        user_index: the user's row in the seen-user table (the mixture's weights).
        support: other pairs of the same user, oldest first.
    """

    pair: Pair
    user: User
    user_index: int
    support: tuple[Pair, ...]


@dataclass(frozen=True)
class TrainingData:
    """Training pairs and where they came from.

    Attributes:
        examples: the pairs, user by user.
        users: the seen users' ids, in table order.
        family: ``personalllm``, ``custom`` or ``personalized_rb``.
        few_shot: the split (None for Personalized RewardBench).
        heldout: the keys of the rows held out of training (families without a split).
        rows: the digests of the questions trained on (families without a split;
            :func:`prb_tasks.train.provenance.row_digest`).
    """

    examples: list[Example]
    users: list[str]
    family: str
    few_shot: FewshotData | None
    heldout: tuple[str, ...] = ()
    rows: tuple[str, ...] = ()


def resolve_family(data: str, family: str | None) -> tuple[BenchmarkFamily, str]:
    """(family, location) of the DATA argument; a wrong path is one line.

    Args:
        data: a folder, a file, ``sample`` or ``example``.
        family: ``--family`` (None: guessed).
    """
    from prb_tasks.data import families

    owner = families.bundled(data)
    path = Path(data).expanduser()
    bundled = owner is not None and not Path(data).exists()
    if not bundled and not path.exists():
        raise TrainError(f"prb train: '{data}' does not exist; {families.what_to_give('train')}")
    found = families.get(family or (owner.name if owner is not None and bundled else families.detect(path)))
    if "train" not in found.commands:
        raise TrainError(f"prb train: '{data}' holds {found.name} data, which has no users; "
                         f"{families.what_to_give('train')}")
    if bundled:
        if owner is not None and found.name != owner.name:
            raise TrainError(f"prb train: '{data}' is the data shipped for family {owner.name}, not {found.name}; "
                             f"drop --family, or give {found.describe}")
        return found, data
    if found.data_is_file != path.is_file():
        raise TrainError(f"prb train: '{data}' is a {'file' if path.is_file() else 'folder'}; family {found.name} "
                         f"needs {'a preference file (.json or .jsonl)' if found.data_is_file else 'the data folder'}")
    return found, str(path)


def load(options: TrainOptions) -> TrainingData:
    """The training pairs ``options`` name.

    Args:
        options: validated options (``data``, ``family``, ``metadata``, ``support_max``, ``seed``).
    """
    from prb_tasks.data import families

    family, location = resolve_family(options.data, options.family)
    if family.one_pair_per_user and options.architecture in ("latent", "mixture"):
        several = families.either(f.describe for f in families.families("train") if not f.one_pair_per_user)
        raise TrainError(f"prb train: --architecture {options.architecture} learns from each user's several "
                         f"labelled pairs, and {family.name} data has one pair per user; use context "
                         f"(the user's text in the input) or plain, or train on {several}")
    assert family.train is not None  # resolve_family admits only families that train
    people, few_shot = families.train_source(family)(location, dict(options.metadata))
    heldout: tuple[str, ...] = ()
    if few_shot is None:
        people, heldout = hold_out(people, options.holdout_share,
                                   options.seed if options.holdout_seed is None else options.holdout_seed)
    rng = np.random.default_rng(options.seed)
    examples = []
    for index, (user, pairs) in enumerate(people):
        for n, pair in enumerate(pairs):
            others = [p for m, p in enumerate(pairs) if m != n]
            size = int(rng.integers(0, min(options.support_max, len(others)) + 1)) if others else 0
            picked = sorted(rng.choice(len(others), size=size, replace=False).tolist()) if size else []
            examples.append(Example(pair, user, index, tuple(others[i] for i in picked)))
    if not examples:
        raise TrainError(f"prb train: '{options.data}' gives no seen user with a labelled pair; add users or "
                         "lower --metadata unseen_share")
    rows = tuple(sorted({row_digest(e.pair.prompt) for e in examples})) if few_shot is None else ()
    return TrainingData(examples, [u.user_id for u, _ in people], family.name, few_shot, heldout, rows)


def hold_out(people: list[tuple[User, list[Pair]]], share: float,
             seed: int) -> tuple[list[tuple[User, list[Pair]]], tuple[str, ...]]:
    """(the people kept for training, the keys of the rows held out) of data without a split.

    Rows are grouped by the part of their key before ``/`` (a subset) and each group gives
    ``share`` of its rows, at least one; the rows are picked by a seeded hash of the question,
    and rows with the same question go together (a question seen in training is never an
    evaluation row).

    Args:
        people: one (user, [pair]) per row.
        share: the share of each group's rows held out.
        seed: the training's seed.
    """
    import hashlib

    def rank(question: str) -> str:
        return hashlib.sha256(f"prb-train-holdout:{seed}:{row_digest(question)}".encode()).hexdigest()

    groups: dict[str, list[str]] = {}
    for _, pairs in people:
        for pair in pairs:
            groups.setdefault(pair.key.split("/", 1)[0], []).append(pair.prompt)
    out: set[str] = set()
    for questions in groups.values():
        ordered = sorted(set(questions), key=rank)
        out.update(ordered[:max(1, round(share * len(ordered)))])
    kept = [(user, [p for p in pairs if p.prompt not in out]) for user, pairs in people]
    keys = tuple(p.key for _, pairs in people for p in pairs if p.prompt in out)
    return [(user, pairs) for user, pairs in kept if pairs], keys
