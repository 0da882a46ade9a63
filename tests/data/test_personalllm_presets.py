"""PersonalLLM presets rebuild the authors' interaction database draw for draw.

``authors_database`` below is a reference implementation written for this test from
the sampling logic of the authors' ``data/gen_pref_interaction_database.py``
(namkoong-lab/PersonalLLM @2b32f2a; the version kept with the paper's source in
namkoong-lab/Private_PersonalLLM @0fd9a3c): personas from
``scipy.stats.dirichlet.rvs`` with ``random_state=seed``; then one ``np.random.seed(seed)``
and, person after person, a history length ``np.random.randint(lo, high=hi)`` and per
entry a prompt ``np.random.randint(0, high=len(ds))`` followed by two answers
``np.random.choice(np.arange(1, 8), size=2, replace=False)``; each answer's reward is
the dot product of the persona with the z-scores over the *sorted* reward-model names;
the label is ``a`` if reward 1 > reward 2 else ``b``. It deliberately uses numpy's global
stream and scipy, as they do, and shares no code with the package.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.data.personalllm.items import simulate
from prb_tasks.data.personalllm.sources import load_prompts
from prb_tasks.documents import personalllm as docs_module
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm

# The published constants as typed out independently of the package (see there).
from tests.data.test_personalllm import PUBLISHED


def authors_database(ds: list[dict], n_persons: int, alpha: float, seed: int, lo: int, hi: int) -> list[list[tuple]]:
    """Per person, the (prompt, response_a, response_b, chosen) entries the authors' script writes."""
    from scipy.stats import dirichlet

    names = sorted(PUBLISHED)
    persons = dirichlet.rvs(np.array([alpha] * len(names)), size=n_persons, random_state=seed)
    np.random.seed(seed)
    index = []
    for _ in range(n_persons):
        length = np.random.randint(lo, high=hi)
        draws = []
        for _ in range(length):
            prompt_n = np.random.randint(0, high=len(ds))
            pair = np.random.choice(np.arange(1, 8), size=2, replace=False)
            draws.append((prompt_n, pair))
        index.append(draws)
    out = []
    for person, draws in zip(persons, index):
        entries = []
        for prompt_n, (r1, r2) in draws:
            rewards = []
            for r in (r1, r2):
                z = [(ds[prompt_n][f"response_{r}_{m}"] - PUBLISHED[m][0]) / PUBLISHED[m][1] for m in names]
                rewards.append(np.dot(person, z))
            entries.append((ds[prompt_n]["prompt"], ds[prompt_n][f"response_{r1}"], ds[prompt_n][f"response_{r2}"],
                            "a" if rewards[0] > rewards[1] else "b"))
        out.append(entries)
    return out


def with_ties(rows: list[dict]) -> list[dict]:
    """Make answers 2 and 3 score identically everywhere, so every (2, 3) pair is an exact tie."""
    for row in rows:
        for m in PUBLISHED:
            row[f"response_3_{m}"] = row[f"response_2_{m}"]
    return rows


def prb_database(sim) -> list[list[tuple]]:
    """The same entries as prb's preset simulation holds them (one item per user)."""
    out = []
    for item in sim.items:
        entries = []
        for c in item.history:
            row = sim.history_prompt(c)
            entries.append((row.prompt, row.responses[c.first], row.responses[c.second],
                            "a" if c.chosen == c.first else "b"))
        out.append(entries)
    return out


@pytest.fixture(scope="module")
def copy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pllm_presets")
    write_personalllm(root, with_ties(fixture_rows(30, seed=5)))
    train = with_ties(fixture_rows(45, seed=6))
    for row in train:
        row["prompt"] = "TRAIN " + row["prompt"]
    return write_personalllm(root, train, split="train")


@pytest.mark.parametrize("preset,alpha,lo,hi,split,n_rows", [
    ("paper", 0.05, 3, 6, "test", 30),
    ("public_script", 0.01, 25, 50, "train", 45),
])
def test_presets_rebuild_the_authors_database(copy_dir: Path, preset, alpha, lo, hi, split, n_rows) -> None:
    raw = with_ties(fixture_rows(30, seed=5)) if split == "test" else with_ties(fixture_rows(45, seed=6))
    if split == "train":
        for row in raw:
            row["prompt"] = "TRAIN " + row["prompt"]
    theirs = authors_database(raw, 60, alpha, 42, lo, hi)
    opts = docs_module.PersonalLLMOptions(preset=preset, n_users=60)
    config = opts.simulation()
    assert (config.alpha, config.k, config.seed) == (alpha, None, 42)
    history_rows = load_prompts(str(copy_dir), split) if split == "train" else None
    sim = simulate(load_prompts(str(copy_dir)), config, history_rows=history_rows)
    ours = prb_database(sim)
    assert ours == theirs
    lengths = [len(e) for e in ours]
    assert min(lengths) >= lo and max(lengths) <= hi - 1
    # Prompts repeat (drawn with replacement), answer 8 is never drawn, ties are kept as b.
    texts = [e[1] for entries in ours for e in entries] + [e[2] for entries in ours for e in entries]
    assert not any(t.startswith("Answer 8 ") for t in texts)
    ties = [e for entries in ours for e in entries if {e[1].split()[1], e[2].split()[1]} == {"2", "3"}]
    assert ties and all(e[3] == "b" for e in ties)
    assert sim.ties >= len(ties) and sim.near_ties == 0
    # Prefix-stable like theirs: fewer users, same first histories.
    fewer = simulate(load_prompts(str(copy_dir)), docs_module.PersonalLLMOptions(preset=preset, n_users=7)
                     .simulation(), history_rows=history_rows)
    assert prb_database(fewer) == theirs[:7]


def test_a_mismatch_would_be_seen(copy_dir: Path) -> None:
    # The comparison above can fail: another seed or alpha gives other entries.
    theirs = authors_database(with_ties(fixture_rows(30, seed=5)), 20, 0.05, 43, 3, 6)
    sim = simulate(load_prompts(str(copy_dir)), docs_module.PersonalLLMOptions(preset="paper", n_users=20).simulation())
    assert prb_database(sim) != theirs


def test_preset_items_use_the_authors_rules_on_the_test_split(copy_dir: Path) -> None:
    config = docs_module.PersonalLLMOptions(preset="public_script", n_users=40, items_per_user=3, k=5).simulation()
    sim = simulate(load_prompts(str(copy_dir)), config, history_rows=load_prompts(str(copy_dir), "train"))
    assert len(sim.items) == 120
    for item in sim.items:
        assert len(item.history) == 5
        assert all(sim.history_prompt(c).prompt.startswith("TRAIN ") for c in item.history)
        c = item.choice
        assert not sim.rows[c.prompt].prompt.startswith("TRAIN ")
        assert c.first != c.second and max(c.first, c.second) <= 6
        first, second = sim.user_rewards(item.user, c.prompt)[[c.first, c.second]]
        assert c.chosen == (c.first if first > second else c.second)


def test_preset_documents_and_option_errors(copy_dir: Path) -> None:
    from prb_tasks.prompts.prompt_store import doc_prompt

    docs = docs_module.build_docs("judge", data_dir=str(copy_dir), preset="public_script", n_users=3, k=2)
    assert len(docs) == 6  # one item per user, in both orders
    text = doc_prompt(docs[0])
    assert text.count("Request: TRAIN Question") == 2 and "(2 comparisons" in text
    default = docs_module.PersonalLLMOptions().simulation()
    assert (default.preset, default.alpha, default.k, default.margin) == (None, 0.01, 4, 0.1)
    assert docs_module.PersonalLLMOptions(preset="paper", alpha=0.5).simulation().alpha == 0.5
    with pytest.raises(DataError) as err:
        docs_module.build_docs("judge", data_dir=str(copy_dir), preset="paper", margin=0.2)
    assert "'margin'" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(DataError) as err:
        docs_module.build_docs("judge", data_dir=str(copy_dir), preset="papr")
    assert "--metadata 'preset'" in str(err.value) and "'paper'" in str(err.value)


def test_public_script_preset_without_a_train_split_says_how_to_get_it(tmp_path: Path) -> None:
    root = write_personalllm(tmp_path, fixture_rows(10))
    with pytest.raises(DataError) as err:
        docs_module.build_docs("judge", data_dir=str(root), preset="public_script", n_users=2)
    message = str(err.value)
    assert "train" in message and "prb data download" in message and "\n" not in message
