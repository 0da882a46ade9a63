"""Each trained architecture beats the non-personalized model on unseen users through the field it
reads, and shuffling that field removes the gain (issue 50's closing paragraph).

The data (prb_tasks/testing/taste_groups.py): 36 users in three taste groups, 20 pairs each, no
label noise; a third show their group through demographics (an occupation), a third through
profile posts, a third through their choices alone. The seeded split (``SPLIT``) leaves 18 unseen
users, 6 whose demographics show their group, 5 whose profile does and 7 whose choices alone do
(the test asserts the counts), each with 8 fixed query pairs: 48, 40 and 56 queries. Every model
is trained once per file on a tiny random GPT-2 (module-scoped): ``context`` reading only
demographics, judged at k = 0 on the unseen users whose demographics show their group; ``context``
reading only the profile, judged at k = 0 on those whose profile does; ``mixture`` and ``latent``,
which learn from choices, judged at k = 8 on the unseen users whose group shows only in their
choices. The baseline is the ``plain`` architecture: the non-personalized model of the same
backbone, trained on the same users (``method=nonpersonalized`` needs feature-bearing data that
``prb train`` does not load).

Why the margins cannot come from chance. A model that ignores the user ranks the three styles
once for everyone, and every pair puts a user's style against another, so it is right on all
queries of the users of one group, half of the next and none of the third: about 50% over
balanced groups. The unit of chance is the user, not the query (a model that guessed a user's
group is right or wrong on all 8 of that user's queries together): a model guessing each user's
group at random gets it right with probability 1/3 (and at most half the queries of the others),
so 85% of the queries needs at least 5 of 6 users (probability 0.018), 4 of 5 (0.045) or 5 of 7
(0.045, binomial); the per-query binomial sd at 0.5 is 0.07 (48 queries), and 0.85 is 5 sd above
0.5. The 0.25 margin over ``plain`` is on the same users' queries. In a shuffled file the field
follows a group drawn at random for each user, so a model that reads it is right about a third of
the users plus half of the others (about 0.5 expected), and the asserted drop of 0.25 from the
unshuffled accuracy cannot happen if the model still found the true group in the field.

``latent`` gets lower bars, as the data allows: it reached 0.804 (4 epochs) and 0.839 (8 epochs;
0.839 at 4 with one torch thread) against plain's 0.464, and 0.321 on the shuffled file. It must
reach 0.75, beat plain by 0.20 and lose 0.20 when the choices are shuffled. On these 7 users (2, 3
and 2 of the three groups) the best user-blind ranking is right on 4/7 = 0.57 of the queries in
expectation, and 0.75 is 2.7 per-query sd (0.066 at 56 queries) above it. Against a per-user
random guess the bar alone is weak (4 of 7 users, p = 0.17); with the 0.20 drop, which takes 3
more users right in the unshuffled run than in the shuffled one, both together have p = 0.06.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from prb_tasks.fewshot.evaluate import Outcome, run
from prb_tasks.testing.taste_groups import user_field, write_taste_users
from prb_tasks.testing.tiny_rm import build_tiny_base_lm
from prb_tasks.train.command import train
from prb_tasks.train.data import load
from prb_tasks.train.method import TrainedMethod
from prb_tasks.train.options import parse

#: case -> (architecture, the field it reads, the k it is judged at, least accuracy, least gain over
#: plain (and least drop when the field is shuffled), extra options); the docstring argues each bar.
CASES = {"context": ("context", "demographics", 0, 0.85, 0.25, {"context_parts": "demographics", "epochs": 8}),
         "context-profile": ("context", "profile", 0, 0.85, 0.25, {"context_parts": "profile", "epochs": 8}),
         "mixture": ("mixture", "choices", 8, 0.85, 0.25, {}),
         "latent": ("latent", "choices", 8, 0.75, 0.20, {})}
#: the cases beyond the first two: skipped unless pytest is given --heavy (each trains two more models,
#: minutes on 2 cores, which would push the default run past CI's budget).
HEAVY = ("context-profile", "latent")
QUERIES = 8
#: the seeded split: 18 unseen users, 6 of them show their group through demographics, 5 through
#: their profile and 7 only through their choices; each of the 6 occupations (2 users each) has one
#: seen and one unseen user, so every unseen occupation was in training (split_seed 0 puts 10 of 12
#: occupation users unseen, 8 of them with an occupation no training user has). Every group's
#: profile posts are the same two, and each group has seen profile users.
SPLIT = {"queries": QUERIES, "split_seed": 6}
UNSEEN = {"demographics": 6, "profile": 5, "choices": 7}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    import torch

    torch.set_num_threads(2)
    folder = tmp_path_factory.mktemp("taste")
    build_tiny_base_lm(folder / "bb", "gpt2")
    for shuffle in (None, "demographics", "profile", "choices"):
        write_taste_users(folder / f"{shuffle}.jsonl", users=36, pairs=20, queries=QUERIES, shuffle=shuffle)
    return folder


def _accuracy(outcomes: list[Outcome], field: str, k: int) -> float:
    """Share of correct queries at ``k`` of the unseen users whose group shows through ``field``."""
    hits = [o.correct for o in outcomes if o.k == k and user_field(int(o.user_id[1:])) == field]
    users = {o.user_id for o in outcomes if o.k == k and user_field(int(o.user_id[1:])) == field}
    # The split is random per user (seeded): the docstring's chance argument counts these users.
    assert len(users) == UNSEEN[field] and len(hits) == QUERIES * len(users), (field, sorted(users), len(hits))
    return float(np.mean(hits))


def _outcomes(root: Path, case: str, shuffle: str | None) -> list[Outcome]:
    """The model of ``case`` trained on the file with ``shuffle`` shuffled, judged at the k its case reads
    (plain: at every k a case reads; the other k's would only cost adaptations)."""
    arch, extra = (CASES[case][0], CASES[case][5]) if case in CASES else (case, {})
    ks = [CASES[case][2]] if case in CASES else sorted({c[2] for c in CASES.values()})
    options = parse({"data": str(root / f"{shuffle}.jsonl"), "architecture": arch, "backbone": str(root / "bb"),
                     "out": str(root / f"{case}-{shuffle}"), "epochs": 4, "learning_rate": 3e-3, "batch_size": 8,
                     "support_max": 4, "max_length": 64, **extra}, json.dumps(SPLIT))
    train(options, progress=False)
    data = load(options).few_shot
    assert data is not None
    return run(TrainedMethod(options.out), data, ks=ks)


@pytest.fixture(scope="module")
def plain(root) -> list[Outcome]:
    return _outcomes(root, "plain", None)


def _verdict(root: Path, plain: list[Outcome], case: str) -> str | None:
    """Why ``case`` fails its bars (None: it passes); its accuracies are printed (shown with -s)."""
    _, field, k, least, gain, _ = CASES[case]
    trained = _accuracy(_outcomes(root, case, None), field, k)
    baseline = _accuracy(plain, field, k)
    if trained < least or trained < baseline + gain:
        return f"{case}: {trained:.3f} on unseen users, plain {baseline:.3f}: needs >= {least} and +{gain}"
    shuffled = _accuracy(_outcomes(root, case, field), field, k)
    print(f"{case}: {trained:.3f}, plain {baseline:.3f}, shuffled {field} {shuffled:.3f}")
    if shuffled > trained - gain:
        return f"{case}: {trained:.3f}, but {shuffled:.3f} with {field} shuffled: the drop must be >= {gain}"
    return None


@pytest.mark.slow
@pytest.mark.training
def test_context_and_mixture_beat_the_plain_rm_on_unseen_users_and_shuffling_removes_the_gain(root, plain):
    # The default run's cases in one test: as two, the scheduler could hand the second to another
    # worker late in the suite, which then trained the shared plain model a second time.
    failures = [verdict for case in CASES if case not in HEAVY and (verdict := _verdict(root, plain, case))]
    assert not failures, failures


@pytest.mark.slow
@pytest.mark.training
@pytest.mark.heavy
@pytest.mark.parametrize("case", HEAVY)
def test_heavy_cases_beat_the_plain_rm_on_unseen_users_and_shuffling_removes_the_gain(root, plain, case):
    verdict = _verdict(root, plain, case)
    assert verdict is None, verdict
