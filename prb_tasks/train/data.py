"""The training pairs of a family's seen users, each with what the model may know about its user.

PersonalLLM and your own file go through the few-shot protocol's split
(:mod:`prb_tasks.fewshot.split`, the same ``--metadata`` keys as the ``*_fewshot`` tasks):
only the **seen** users' pairs are trained on, so the checkpoint is evaluated on users it
never saw with ``prb-method``. Personalized RewardBench has no user ids and one pair per
row: every row is a user whose profile is its posts (``personalized_rb_user``), and every
row of the folder given is trained on (evaluate on another folder or subset).

Each training pair carries up to ``support_max`` other pairs of the same user (a seeded
random number of them, 0 included, drawn from the user's pairs other than this one): the
latent model's support set, and the context model's history.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from prb_tasks.fewshot.method import Pair, User
from prb_tasks.fewshot.sources import FewshotData
from prb_tasks.train.options import TrainError, TrainOptions

WHAT_TO_GIVE = ("give a PersonalLLM folder (<dir>/data/test-*.parquet), a preference file (.json/.jsonl) or "
                "'example', or a Personalized RewardBench folder or 'sample'")


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
    """

    examples: list[Example]
    users: list[str]
    family: str
    few_shot: FewshotData | None


def resolve_family(data: str, family: str | None) -> tuple[str, str]:
    """(family, location) of the DATA argument; a wrong path is one line.

    Args:
        data: a folder, a file, ``sample`` or ``example``.
        family: ``--family`` (None: guessed).
    """
    from prb_tasks.data import families

    owner = families.bundled(data)
    if owner is not None and not Path(data).exists():
        return family or owner.name, data
    path = Path(data).expanduser()
    if not path.exists():
        raise TrainError(f"prb train: '{data}' does not exist; {WHAT_TO_GIVE}")
    found = families.get(family or families.detect(path))
    if "train" not in found.commands:
        raise TrainError(f"prb train: '{data}' holds {found.name} data, which has no users; {WHAT_TO_GIVE}")
    if found.data_is_file != path.is_file():
        raise TrainError(f"prb train: '{data}' is a {'file' if path.is_file() else 'folder'}; family {found.name} "
                         f"needs {'a preference file (.json or .jsonl)' if found.data_is_file else 'the data folder'}")
    return found.name, str(path)


def _few_shot(family: str, location: str, metadata: dict) -> FewshotData:
    from prb_tasks.common.suggest import did_you_mean
    from prb_tasks.documents.fewshot import METADATA, FewshotOptions, custom_data, personalllm_data
    from prb_tasks.documents.options import parse_options

    for key in sorted(set(metadata) - set(METADATA.keys)):
        raise TrainError(f"prb train: unknown --metadata key '{key}'{did_you_mean(key, METADATA.keys)}; "
                         f"accepted: {METADATA.accepted()}")
    key = "data_dir" if family == "personalllm" else "data_path"
    opts = parse_options(FewshotOptions, {**metadata, key: location})
    if family == "personalllm":
        return personalllm_data(opts, featured=False)[0]
    return custom_data(opts, None, featured=False)[0]


def _personalized_rb(location: str) -> list[tuple[User, list[Pair]]]:
    from prb_tasks.data.errors import DataError
    from prb_tasks.data.personalized_rb.sources import load_rows
    from prb_tasks.data.personalized_rb.subsets import SUBSETS
    from prb_tasks.fewshot.method import Response
    from prb_tasks.fewshot.sources import personalized_rb_user

    users = []
    for subset in SUBSETS:
        try:
            rows = load_rows(subset, location)
        except DataError:
            continue
        for row in rows:
            user = personalized_rb_user(row)
            users.append((user, [Pair(f"{subset.config}/{row.id}", row.question, Response(row.chosen),
                                      Response(row.rejected))]))
    if not users:
        raise TrainError(f"prb train: '{location}' holds no Personalized RewardBench subset; {WHAT_TO_GIVE}")
    return users


def load(options: TrainOptions) -> TrainingData:
    """The training pairs ``options`` name.

    Args:
        options: validated options (``data``, ``family``, ``metadata``, ``support_max``, ``seed``).
    """
    family, location = resolve_family(options.data, options.family)
    if family == "personalized_rb":
        if options.architecture in ("latent", "mixture"):
            raise TrainError(f"prb train: --architecture {options.architecture} learns from each user's several "
                             "labelled pairs, and Personalized RewardBench has one pair per user; use context "
                             "(the row's profile in the input) or plain, or train on PersonalLLM or your own file")
        if options.metadata:
            raise TrainError(f"prb train: --metadata {', '.join(sorted(options.metadata))}: Personalized "
                             "RewardBench training takes no --metadata (every row of DATA is trained on)")
        people, few_shot = _personalized_rb(location), None
    else:
        few_shot = _few_shot(family, location, options.metadata)
        people = [(s.user, list(s.pairs)) for s in few_shot.seen_users()]
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
    return TrainingData(examples, [u.user_id for u, _ in people], family, few_shot)
