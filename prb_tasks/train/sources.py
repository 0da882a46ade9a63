"""Each family's training users, named by its registered declaration (``train`` of
:class:`~prb_tasks.data.families.BenchmarkFamily`).

Every source takes ``(location, metadata)`` (the DATA argument resolved, ``--metadata``)
and gives the seen users with their labelled pairs, and the few-shot split they came from
(None where the family has no split).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prb_tasks.fewshot.method import Pair, User
from prb_tasks.fewshot.sources import FewshotData
from prb_tasks.train.options import TrainError

if TYPE_CHECKING:
    from prb_tasks.documents.fewshot import FewshotOptions

People = list[tuple[User, list[Pair]]]


def _options(location: str, metadata: dict, key: str, family: str) -> FewshotOptions:
    """The ``*_fewshot`` tasks' options for ``location``.

    Args:
        location: the data's folder or file.
        metadata: ``--metadata`` (an unknown key is one line).
        key: the option that names the data (``data_dir`` or ``data_path``).
        family: the family read (a ``split`` it has no use for is one line).
    """
    from prb_tasks.common.suggest import did_you_mean
    from prb_tasks.documents.fewshot import METADATA, FewshotOptions, check_split
    from prb_tasks.documents.options import parse_options

    for unknown in sorted(set(metadata) - set(METADATA.keys)):
        raise TrainError(f"prb train: unknown --metadata key '{unknown}'{did_you_mean(unknown, METADATA.keys)}; "
                         f"accepted: {METADATA.accepted()}")
    options = parse_options(FewshotOptions, {**metadata, key: location})
    check_split(family, options)
    return options


def _seen(data: FewshotData) -> tuple[People, FewshotData]:
    return [(s.user, list(s.pairs)) for s in data.seen_users()], data


def personalllm(location: str, metadata: dict) -> tuple[People, FewshotData]:
    """PersonalLLM's seen users (the few-shot split of its test prompts)."""
    from prb_tasks.documents.fewshot import personalllm_data

    return _seen(personalllm_data(_options(location, metadata, "data_dir", "personalllm"), featured=False)[0])


def custom(location: str, metadata: dict) -> tuple[People, FewshotData]:
    """The seen users of your own preference file (the few-shot split)."""
    from prb_tasks.documents.fewshot import custom_data

    return _seen(custom_data(_options(location, metadata, "data_path", "custom"), None, featured=False)[0])


def from_fewshot(family: str, location: str, metadata: dict) -> tuple[People, FewshotData]:
    """The seen users of ``family``'s few-shot split (a family declaring ``train="fewshot"``).

    Args:
        family: the registered family's name.
        location: its data's folder.
        metadata: ``--metadata``.
    """
    from prb_tasks.data import families

    return _seen(families.fewshot_source(family)(_options(location, metadata, "data_dir", family), featured=False)[0])


def personalized_rb(location: str, metadata: dict) -> tuple[People, None]:
    """Every row of every Personalized RewardBench subset in ``location``, each row its own
    user whose profile is the asker's posts (the data has no user ids); :func:`prb_tasks.train.data.load`
    holds some out."""
    from prb_tasks.data.errors import DataError
    from prb_tasks.data.personalized_rb.sources import load_rows
    from prb_tasks.data.personalized_rb.subsets import SUBSETS
    from prb_tasks.fewshot.method import Response
    from prb_tasks.fewshot.sources import personalized_rb_user

    if metadata:
        raise TrainError(f"prb train: --metadata {', '.join(sorted(metadata))}: Personalized "
                         "RewardBench training takes no --metadata (every row of DATA is trained on)")
    users = []
    for subset in SUBSETS:
        try:
            rows = load_rows(subset, location)
        except DataError:
            continue
        for index, row in enumerate(rows):
            user = personalized_rb_user(row)
            # The key every Personalized RewardBench task gives the row (its pair_key), so the rows
            # held out are named as --metadata rows reads them.
            users.append((user, [Pair(f"{subset.short}/{index}", row.question, Response(row.chosen),
                                      Response(row.rejected))]))
    if not users:
        from prb_tasks.data import families

        raise TrainError(f"prb train: '{location}' holds no Personalized RewardBench subset; "
                         f"{families.what_to_give('train')}")
    return users, None
