"""PersonalLLM: loading the HF layout, simulated users, gold labels, near-ties, the
cost model's sign, histories, and the documents every variant produces."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.data.personalllm.constants import REWARD_MODELS, score_column
from prb_tasks.data.personalllm.items import SimulationConfig, simulate
from prb_tasks.data.personalllm.reader import read_split, usable
from prb_tasks.data.personalllm.sources import load_prompts
from prb_tasks.data.personalllm.users import normalised_scores, sample_weights
from prb_tasks.documents import personalllm as docs_module
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm
from tests.runner import closed_port

# The authors' published (mean, sd) per reward model, typed out here on purpose: the
# hand computation below must not share a typo with the package's constants.
PUBLISHED = {
    "llama3_sfairx": (1.0637639780044557, 2.953017385451928),
    "mistral_weqweasdas": (7.071075622558594, 2.578636650248985),
    "mistral_ray": (3.0136284782886507, 1.6902981149232585),
    "gemma_7b": (1.6259730467796325, 2.6096741570264976),
    "mistral_raft": (8.309211883544922, 3.0728436748484533),
    "gemma_2b": (4.3304170169830325, 2.038611338958803),
    "oasst_deberta_v3": (2.8976835689097644, 1.7207868789061331),
    "oasst_pythia_1b": (4.293944010734558, 2.3018268820938133),
    "oasst_pythia_7b": (4.706351243972779, 1.3659142113789966),
    "beaver_7b": (6.233516894340515, 3.012641148973965),
}


@pytest.fixture(scope="module")
def copy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_personalllm(tmp_path_factory.mktemp("pllm"), fixture_rows(40, seed=3))


def hand_reward(raw_row: dict, response: int, weights: list[float], flip: bool = False) -> float:
    """A user's reward of ``response`` (1-based), computed the long way."""
    total = 0.0
    for weight, model in zip(weights, sorted(PUBLISHED)):
        mean, sd = PUBLISHED[model]
        z = (raw_row[score_column(response, model)] - mean) / sd
        total += weight * (-z if flip and model == "beaver_7b" else z)
    return total


# --------------------------------------------------------------------------- loading


def test_parquet_and_jsonl_copies_read_the_same(tmp_path: Path) -> None:
    rows = fixture_rows(10)
    a = read_split(write_personalllm(tmp_path / "p", rows, "parquet"))
    b = read_split(write_personalllm(tmp_path / "j", rows, "jsonl"))
    assert a == b and len(a) == 10
    assert a[3].prompt_id == "pid-003" and a[3].index == 3 and a[3].models[0] == "writer-1"
    assert a[3].scores[1][REWARD_MODELS.index("gemma_2b")] == rows[3][score_column(2, "gemma_2b")]


def test_bad_rows_are_one_line_naming_file_row_and_column(tmp_path: Path) -> None:
    rows = fixture_rows(6)
    del rows[4][score_column(3, "gemma_7b")]
    root = write_personalllm(tmp_path / "missing", rows, "jsonl")
    with pytest.raises(DataError) as err:
        read_split(root)
    message = str(err.value)
    assert "\n" not in message and "test-00000-of-00001.jsonl" in message
    assert "row 5" in message and "'pid-004'" in message and "response_3_gemma_7b" in message

    rows = fixture_rows(6)
    rows[2]["response_5"] = 17
    with pytest.raises(DataError, match=r"row 3 .*'response_5'"):
        read_split(write_personalllm(tmp_path / "type", rows, "jsonl"))

    with pytest.raises(DataError, match=r"no folder .*data.*--family personalllm"):
        read_split(tmp_path / "nowhere")
    (tmp_path / "empty" / "data").mkdir(parents=True)
    with pytest.raises(DataError, match="no test-"):
        read_split(tmp_path / "empty")
    with pytest.raises(DataError, match="not a folder"):
        load_prompts(str(tmp_path / "nope"))


def test_prompts_with_a_missing_reward_are_left_out_and_said_so(tmp_path: Path, capsys) -> None:
    rows = fixture_rows(8)
    rows[5][score_column(8, "beaver_7b")] = None
    rows[6][score_column(1, "oasst_pythia_1b")] = float("nan")
    kept = usable(read_split(write_personalllm(tmp_path, rows, "parquet")), "fixture")
    assert [r.index for r in kept] == [0, 1, 2, 3, 4, 7]
    err = capsys.readouterr().err
    assert "2 of 8 prompts have a missing reward" in err and "response_8_beaver_7b" in err


# --------------------------------------------------------------------------- users


def test_users_are_the_authors_dirichlet_draw_in_sorted_model_order() -> None:
    assert list(REWARD_MODELS) == sorted(PUBLISHED) and REWARD_MODELS[0] == "beaver_7b"
    weights = sample_weights(300, 0.01, 42)
    # The authors' call, verbatim in effect: scipy.stats.dirichlet.rvs with an integer random_state.
    from scipy.stats import dirichlet

    assert np.array_equal(weights, dirichlet.rvs(np.full(10, 0.01), size=300, random_state=42))
    assert np.array_equal(sample_weights(50, 0.05, 7), dirichlet.rvs(np.full(10, 0.05), size=50, random_state=7))
    assert np.allclose(weights.sum(axis=1), 1.0)
    # Prefix-stable: the first users do not depend on how many are drawn.
    assert np.array_equal(sample_weights(7, 0.01, 42), weights[:7])
    # alpha 0.01 makes most users follow about one reward model.
    assert np.median(weights.max(axis=1)) > 0.9
    with pytest.raises(DataError, match="alpha"):
        sample_weights(1000, 0.0001, 42)


def test_normalisation_uses_the_published_constants_and_the_cost_sign_is_selectable() -> None:
    rows = fixture_rows(3)
    from prb_tasks.data.personalllm.reader import validate_rows

    prompts = validate_rows(rows, "fixture")
    plain = normalised_scores(prompts)
    flipped = normalised_scores(prompts, flip_cost=True)
    beaver = REWARD_MODELS.index("beaver_7b")
    for p, raw in enumerate(rows):
        for i in range(8):
            for m, model in enumerate(REWARD_MODELS):
                mean, sd = PUBLISHED[model]
                assert plain[p, i, m] == pytest.approx((raw[score_column(i + 1, model)] - mean) / sd, abs=1e-12)
    assert np.array_equal(flipped[..., beaver], -plain[..., beaver])
    others = [m for m in range(10) if m != beaver]
    assert np.array_equal(flipped[..., others], plain[..., others])


# --------------------------------------------------------------------------- items


def test_gold_labels_match_a_hand_computation(copy_dir: Path) -> None:
    raw = fixture_rows(40, seed=3)
    for flip in (False, True):
        config = SimulationConfig(n_users=30, k=3, items_per_user=2, margin=0.1, flip_cost=flip)
        sim = simulate(load_prompts(str(copy_dir)), config)
        assert len(sim.items) == 60
        for item in sim.items:
            weights = list(sim.weights[item.user])
            for choice in (item.choice, *item.history):
                row = raw[sim.rows[choice.prompt].index]
                first = hand_reward(row, choice.first + 1, weights, flip)
                second = hand_reward(row, choice.second + 1, weights, flip)
                assert choice.chosen == (choice.first if first > second else choice.second)
                assert choice.gap == pytest.approx(abs(first - second), abs=1e-9)
                assert choice.gap > config.margin


def test_the_cost_models_sign_under_both_conventions(copy_dir: Path) -> None:
    raw = fixture_rows(40, seed=3)
    rows = load_prompts(str(copy_dir))
    weights = sample_weights(200, 0.01, 42)
    user = int(weights[:, REWARD_MODELS.index("beaver_7b")].argmax())
    assert weights[user, REWARD_MODELS.index("beaver_7b")] > 0.999  # a user who follows the cost model

    def beaver_of(sim, choice, which):
        return raw[sim.rows[choice.prompt].index][score_column(which + 1, "beaver_7b")]

    for flip, prefers_higher_cost in ((False, True), (True, False)):
        sim = simulate(rows, SimulationConfig(n_users=user + 1, k=4, items_per_user=3, flip_cost=flip))
        choices = {c for it in sim.items if it.user == user for c in (it.choice, *it.history)}
        assert len(choices) == 7  # 3 items, the first with 4 earlier choices
        for c in choices:
            higher = beaver_of(sim, c, c.chosen) > beaver_of(sim, c, c.rejected)
            # The authors keep beaver_7b's raw sign: such a user prefers the *higher* cost.
            assert higher == prefers_higher_cost


def test_near_ties_are_dropped(tmp_path: Path) -> None:
    rows = fixture_rows(30, seed=5)
    for row in rows[::2]:  # every other prompt: responses 1-4 score exactly alike
        for i in (2, 3, 4):
            for model in REWARD_MODELS:
                row[score_column(i, model)] = row[score_column(1, model)]
    prompts = load_prompts(str(write_personalllm(tmp_path, rows)))
    tied = {p.index for p in prompts[::2]}
    for margin in (0.0, 0.1, 0.5):
        sim = simulate(prompts, SimulationConfig(n_users=40, k=4, margin=margin))
        shown = [c for it in sim.items for c in (it.choice, *it.history)]
        assert shown and all(c.gap > margin for c in shown)
        # No exact tie among responses 1-4 of a tied prompt is ever shown.
        assert not [c for c in shown if sim.rows[c.prompt].index in tied and {c.first, c.second} <= {0, 1, 2, 3}]
        assert sim.near_ties > 0
    wider = simulate(prompts, SimulationConfig(n_users=40, k=4, margin=1.0))
    assert wider.near_ties > sim.near_ties


def test_histories_are_earlier_choices_and_never_the_item(copy_dir: Path) -> None:
    sim = simulate(load_prompts(str(copy_dir)), SimulationConfig(n_users=25, k=4, items_per_user=3))
    by_user: dict[int, list] = {}
    for item in sim.items:
        by_user.setdefault(item.user, []).append(item)
    for items in by_user.values():
        assert len(items) == 3
        for item in items:
            assert len(item.history) == 4
            prompts = [c.prompt for c in item.history]
            assert item.choice.prompt not in prompts and len(set(prompts)) == 4
        # Later items see the earlier items among their earlier choices.
        assert items[1].history[-1] == items[0].choice and items[2].history[-1] == items[1].choice


def test_generation_is_deterministic_and_users_do_not_depend_on_each_other(copy_dir: Path) -> None:
    rows = load_prompts(str(copy_dir))
    config = SimulationConfig(n_users=12, k=4, items_per_user=2)
    a, b = simulate(rows, config), simulate(rows, config)
    assert a.items == b.items and np.array_equal(a.weights, b.weights)
    more = simulate(rows, SimulationConfig(n_users=20, k=4, items_per_user=2))
    assert more.items[:24] == a.items
    other = simulate(rows, SimulationConfig(n_users=12, seed=7, k=4, items_per_user=2))
    assert other.items != a.items


def test_documents_are_identical_across_processes(copy_dir: Path) -> None:
    code = (
        "import json,hashlib,sys;from prb_tasks.documents.personalllm import build_docs;"
        "d=[build_docs(v, data_dir=sys.argv[1], n_users=9, items_per_user=2) for v in "
        "('judge','scalar_history','bon','bon_judge')];"
        "print(hashlib.sha256(json.dumps(d,sort_keys=True).encode()).hexdigest())"
    )
    digests = {
        subprocess.run([sys.executable, "-c", code, str(copy_dir)], capture_output=True, text=True,
                       check=True, env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}).stdout
        for seed in (1, 2)
    }
    assert len(digests) == 1


# --------------------------------------------------------------------------- documents


def test_judge_documents_both_orders_fields_and_history_text(copy_dir: Path) -> None:
    docs = docs_module.build_docs("judge", data_dir=str(copy_dir), n_users=6, k=2, version=1.0,
                                  model="openai/x", seed=99)
    assert len(docs) == 12
    keys = [d["pair_key"] for d in docs]
    assert all(keys.count(k) == 2 for k in keys) and len(set(keys)) == 6
    for first, second in zip(docs[::2], docs[1::2]):
        assert (first["chosen_position"], second["chosen_position"]) == ("A", "B")
        for field in ("pair_key", "subset", "user_id", "variant", "words_chosen", "words_rejected",
                      "system_prompt", "prompt"):
            assert field in first
        assert first["subset"] in ("anthropic_hh", "ultrafeedback") and first["variant"] == "judge"
        assert first["prompt"].count("The person preferred") == 2
        new = first["prompt"].split("=== New comparison ===")[1]
        assert "preferred the" not in new
    # A model's `seed` (lm-eval passes model_args here too) does not touch the users.
    assert docs == docs_module.build_docs("judge", data_dir=str(copy_dir), n_users=6, k=2)


def test_scalar_and_bon_documents(copy_dir: Path) -> None:
    from prb_tasks.data import profile_store

    rows = fixture_rows(40, seed=3)
    plain = docs_module.build_docs("scalar", data_dir=str(copy_dir), n_users=5)
    history = docs_module.build_docs("scalar_history", data_dir=str(copy_dir), n_users=5)
    assert [d["pair_key"] for d in plain] == [d["pair_key"] for d in history]
    for a, b in zip(plain, history):
        assert a["prompt"] == a["question"] and b["prompt"].endswith(a["question"])
        assert b["prompt"].count("I preferred:") == 4 and a["choices"] == b["choices"]
        assert len(profile_store.lookup(a["profile_key"])) == 4
    bon = docs_module.build_docs("bon", data_dir=str(copy_dir), n_users=5)
    sim = docs_module.simulation_for(load_prompts(str(copy_dir)), SimulationConfig(n_users=5))
    for doc, item in zip(bon, sim.items):
        row = rows[sim.rows[item.choice.prompt].index]
        assert doc["choices"] == [row[f"response_{i}"] for i in range(1, 9)]
        weights = list(sim.weights[item.user])
        assert doc["user_rewards"] == pytest.approx([hand_reward(row, i, weights) for i in range(1, 9)])
        average = list(sim.weights.mean(axis=0))
        assert doc["popular_rewards"] == pytest.approx([hand_reward(row, i, average) for i in range(1, 9)])
        assert doc["user_best"] == int(np.argmax(doc["user_rewards"]))
    judged = docs_module.build_docs("bon_judge", data_dir=str(copy_dir), n_users=5)
    assert len(judged) == 40 and [d["response_index"] for d in judged[:8]] == list(range(8))
    assert "Score: N" in judged[0]["system_prompt"]


def test_bad_options_are_one_line(copy_dir: Path) -> None:
    for bad, field in (({"alpha": -1}, "alpha"), ({"n_users": "many"}, "n_users"), ({"k": -2}, "k"),
                       ({"margin": "wide"}, "margin"), ({"flip_beaver": "perhaps"}, "flip_beaver")):
        with pytest.raises(DataError) as err:
            docs_module.build_docs("judge", data_dir=str(copy_dir), **bad)
        assert f"--metadata '{field}'" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(DataError, match="unknown PersonalLLM variant"):
        docs_module.build_docs("pairs", data_dir=str(copy_dir))
    assert "user_seed" in docs_module.PERSONALLLM_KEYS and "seed" not in docs_module.PERSONALLLM_KEYS
    meanings = docs_module.METADATA.keys
    assert set(meanings) == docs_module.PERSONALLLM_KEYS and all(meanings.values())


def test_environment_variable_selects_the_copy(copy_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("PRB_PERSONALLLM_DIR", str(copy_dir))
    assert len(load_prompts()) == 40
    monkeypatch.setenv("PRB_PERSONALLLM_DIR", str(copy_dir / "missing"))
    with pytest.raises(DataError, match="PRB_PERSONALLLM_DIR"):
        load_prompts()


def test_hub_out_of_reach_fails_at_once_with_one_line(monkeypatch) -> None:
    import time

    from prb_tasks.common.hub_reach import unreachable_reason
    from prb_tasks.data.personalllm import sources

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "PRB_PERSONALLLM_DIR"):
        monkeypatch.delenv(name, raising=False)
    # A closed local port stands in for the hub, so the test needs no network rule.
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    unreachable_reason.cache_clear()
    sources._from_hub.cache_clear()
    started = time.monotonic()
    with pytest.raises(DataError) as info:
        sources.load_prompts()
    unreachable_reason.cache_clear()
    assert time.monotonic() - started < 10
    message = str(info.value)
    assert "\n" not in message and "cannot load namkoong-lab/PersonalLLM" in message
    assert "prb data download DIR --family personalllm" in message
