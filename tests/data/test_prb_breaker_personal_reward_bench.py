"""PersonalRewardBench against an independent copy in the hub layout (tests/prb_breaker_fixture.py) and
the authors' computations transcribed from their scripts: the reader, every task variant, validate and
the user mistakes a run meets. Written without reading the family's own tests."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.prb_breaker_fixture import (
    ARENA,
    PRISM,
    authors_user_data,
    pgenrm_fewshots,
    pgenrm_judge,
    pgenrm_rotate,
    write_copy,
)

HALF_DIRS = (("arena", ARENA), ("prism", PRISM))


@pytest.fixture(scope="module")
def copy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_copy(tmp_path_factory.mktemp("prb_breaker") / "copy")


@pytest.fixture(scope="module")
def authors(copy_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Each half as both authors' loaders read it (``datasets.load_dataset`` on the folder, offline)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_DATASETS_CACHE", str(tmp_path_factory.mktemp("hf_cache")))
    mp.setenv("HF_DATASETS_OFFLINE", "1")
    try:
        return {half: authors_user_data(copy_dir / name) for half, name in HALF_DIRS}
    finally:
        mp.undo()


def _scalar_reference(data: dict) -> tuple[float, float]:
    """prb-rm ``scorer=length``'s accuracy (characters, ties wrong), pooled and per-user macro."""
    per_user = [[len(t["chosen"]["content"]) > len(t["rejected"]["content"]) for t in test]
                for _, (_, _, test) in data.items() if len(test)]
    pooled = [x for user in per_user for x in user]
    return sum(pooled) / len(pooled), sum(sum(u) / len(u) for u in per_user) / len(per_user)


@pytest.mark.parametrize("variant", ["judge", "kcurve", "synthesizeme"])
def test_judge_variants_build_their_prompts(copy_dir: Path, variant: str) -> None:
    # The shared judge template gained a `feedback` field (PRISM's open feedback); a family that renders it
    # must pass it, or every judge task of the family stops with "'feedback' is undefined".
    from prb_tasks.documents.personal_reward_bench import build_docs

    docs = build_docs(variant, "arena", data_dir=str(copy_dir))
    per_k = 6 if variant == "kcurve" else 1
    assert len(docs) == 16 * 2 * per_k  # 16 test pairs, both orders
    assert all("Response A:" in d["prompt"] and "Result: A" in d["prompt"] for d in docs)


def test_pgenrm_history_draws_match_their_rotate_n_of_n(copy_dir: Path, authors: dict[str, dict]) -> None:
    # Their loader (load_dataset, concat of the hub splits, groupby) and get_full_train_val_rotate, against
    # the official task's documents: same users in the same order, same test pair, same 6-pair history text.
    from prb_tasks.documents.personal_reward_bench import build_docs

    for half, _ in HALF_DIRS:
        reference = pgenrm_rotate(authors[half])
        docs = build_docs("pgenrm", half, data_dir=str(copy_dir))
        assert len(docs) == len(reference) == 16
        for (uid, item, few), doc in zip(reference, docs):
            assert doc["user_id"] == f"{half}:{uid}"
            assert doc["history_pairs"] == len(few) == min(6, len(authors[half][uid][0]))
            assert pgenrm_fewshots(few) in doc["system_prompt"]
            assert item["context"][0]["content"] in doc["prompt"]
        # Arena ids are numbers: pandas sorts them by value (1000, 1037, ...), not as text.
        users = list(dict.fromkeys(d["user_id"] for d in docs))
        assert users == [f"{half}:{u}" for u in authors[half] if len(authors[half][u][2])]


def test_clean_history_is_the_users_latest_train_val_pairs_never_a_test_pair(copy_dir: Path,
                                                                              authors: dict[str, dict]) -> None:
    from prb_tasks.documents.personal_reward_bench import build_docs

    for half, _ in HALF_DIRS:
        docs = build_docs("judge", half, data_dir=str(copy_dir))
        for uid, (train, val, test) in authors[half].items():
            mine = [d for d in docs if d["user_id"] == f"{half}:{uid}"]
            assert len(mine) == 2 * len(test)
            shown = (list(train) + list(val))[-6:]
            for doc in mine:
                assert doc["history_pairs"] == len(shown)
                history = doc["prompt"].split("=== New comparison ===")[0]
                at = 0
                for past in shown:  # oldest first: each found after the one before
                    at = history.index(past["chosen"]["content"] or "preferred", at)
                for other in test:  # a test pair never shows up as history
                    answer = other["chosen"]["content"]
                    assert not answer or len(answer) < 40 or answer not in history


@pytest.mark.slow
def test_prb_rm_length_on_every_task_equals_a_plain_reference(copy_dir: Path, authors: dict[str, dict],
                                                             tmp_path: Path) -> None:
    # `--tasks 'personal_reward_bench_*'` as the docs give it: prb-rm keeps its 4 scalar tasks and says so.
    from tests.runner import flat, read_results, run_cli

    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personal_reward_bench_*",
                    "--metadata", json.dumps({"data_dir": str(copy_dir)}), "--output_path", str(tmp_path / "out")],
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "prb-rm runs 4 of its 15 tasks" in flat(proc.stdout + proc.stderr)
    results = read_results(tmp_path / "out")["results"]
    for half, _ in HALF_DIRS:
        pooled, per_user = _scalar_reference(authors[half])
        for task in (f"personal_reward_bench_{half}_scalar", f"personal_reward_bench_{half}_scalar_history"):
            assert results[task]["acc,none"] == pytest.approx(pooled)
            assert results[task]["acc_user,none"] == pytest.approx(per_user)
        assert (pooled, round(per_user, 4)) == (0.5, 0.4762)


_PGENRM_REPLIES = (
    '<JSON_START>{"better_response": {"response_1": 8, "response_2": 3}}<JSON_END>',
    '<JSON_START>{"better_response": {"response_1": 3, "response_2": 8}}<JSON_END>',
    '<JSON_START>{"better_response": {"response_1": 5, "response_2": 5}}<JSON_END>',
    "no markers at all",
    '<JSON_START>{"better_response": {"response_1": 8,}}<JSON_END>',
    '<JSON_START>{"better_response": [1, 2]}<JSON_END>',
    '<JSON_START>{"better_response": {"response_1": "9", "response_2": "10"}}<JSON_END>',
    '<JSON_START>{"better_response": {"response_1": NaN, "response_2": 3}}<JSON_END>',
    '<JSON_START>{"better_response": {"response_1": 1, "response_2": 2, "x": 3}}<JSON_END>',
    '<JSON_START>{"better_response": {"response_1": 5, "other": 3}}<JSON_END>',
    '<JSON_END> early <JSON_START>{"better_response": {"response_1": 1, "response_2": 2}}',
    "<JSON_START>[1, 2]<JSON_END>",
    "",
    'why\n<JSON_START>\n{"rationale": "r", "better_response": {"response_2": 0.5, "response_1": 0.25}}\n<JSON_END>',
    '<JSON_START>{"better_response": {"response_1": 8, "response_2": "3"}}<JSON_END>',
    '<JSON_START>{"better_response": {"response_1": true, "response_2": 0.5}}<JSON_END>',
)


def _shown(messages: list[dict[str, Any]]) -> tuple[str, str, str]:
    content = messages[-1]["content"]
    text = content if isinstance(content, str) else content[0]["text"]
    found = re.search(r"\[Response 1\]\n(.*)\n\[End of response 1\]\n\n\[Response 2\]\n(.*)\n\[End of response 2\]",
                      text, re.S)
    assert found, text
    return text, found[1], found[2]


@pytest.mark.slow
def test_pgenrm_official_accuracy_equals_their_parse_on_hostile_replies(copy_dir: Path, authors: dict[str, dict],
                                                                        tmp_path: Path) -> None:
    # One `prb eval` (the YAML's aggregation is part of what is checked): each reply is one of the ways their
    # script keeps or drops a judgment; their parse, transcribed, gives the expected numbers per half.
    from tests.runner import read_results, run_fake_judge

    golden: dict[tuple[str, str], tuple[str, str]] = {}
    for half, _ in HALF_DIRS:
        for _uid, item, _few in pgenrm_rotate(authors[half]):
            pair = (item["chosen"]["content"], item["rejected"]["content"])
            golden[pair] = golden[pair[::-1]] = (half, pair[0])
    seen: list[tuple[str, str, str]] = []
    lock = threading.Lock()

    def policy(messages: list[dict[str, Any]], model: str) -> str:
        _, one, two = _shown(messages)
        with lock:
            reply = _PGENRM_REPLIES[len(seen) % len(_PGENRM_REPLIES)]
            seen.append((one, two, reply))
        return reply

    tasks = "personal_reward_bench_arena_official_pgenrm,personal_reward_bench_prism_official_pgenrm"
    proc, out, sent = run_fake_judge(policy, tasks, json.dumps({"data_dir": str(copy_dir)}), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sent == 32 == len(seen)
    results = read_results(out)["results"]
    for half, _ in HALF_DIRS:
        outcomes = [pgenrm_judge(reply, [one, two], golden[(one, two)][1]) for one, two, reply in seen
                    if golden[(one, two)][0] == half]
        kept = [o for o in outcomes if o is not None]
        row = results[f"personal_reward_bench_{half}_official_pgenrm"]
        assert row["kept_pgenrm,none"] == pytest.approx(len(kept) / 16)
        assert row["acc_pgenrm,none"] == pytest.approx(sum(kept) / len(kept))
        assert row["acc,none"] == pytest.approx(sum(kept) / 16)  # prb's reading: a dropped judgment is wrong
    assert "judgments dropped from acc_pgenrm" in proc.stderr


@pytest.mark.parametrize("deeper", ["prism_personalized_0125", "prism_personalized_0125/data"])
def test_a_halfs_own_folder_is_named_with_its_parent(copy_dir: Path, deeper: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # Passing the half's folder (or its data/) instead of the folder holding the halves is the likely slip
    # after `hf download ... --local-dir DIR/prism_personalized_0125`. It was guessed to be
    # PersonalLLM ("field 'prompt': Field required; fix the row or re-download the data") or Personalized
    # RewardBench (missing subset folders), and the tasks told the user to download into a nested folder.
    from prb_tasks.cli import datatools
    from prb_tasks.data.errors import DataError
    from prb_tasks.data.family import detect_family
    from prb_tasks.documents.personal_reward_bench import build_docs

    given = copy_dir / deeper
    assert detect_family(given) == "personal_reward_bench"
    assert datatools.validate(given) == 1
    out = capsys.readouterr()
    lines = (out.out + out.err).strip().splitlines()
    assert len(lines) == 1 and str(copy_dir) in lines[0] and "PRISM half" in lines[0], lines
    with pytest.raises(DataError) as caught:
        build_docs("scalar", "prism", data_dir=str(given))
    message = str(caught.value)
    assert "\n" not in message and f"give the folder above it ({copy_dir})" in message
    assert "hf download" not in message


def test_a_split_missing_one_of_its_shards_is_refused_not_read_short(tmp_path: Path) -> None:
    # An interrupted download leaves train-00000-of-00002 without train-00001-of-00002: read as it was, the
    # half lost users and pairs without a word and every number changed.
    from prb_tasks.data.errors import DataError
    from prb_tasks.documents.personal_reward_bench import build_docs

    root = write_copy(tmp_path / "copy")
    data = root / PRISM / "data"
    (data / "train-00000-of-00001.parquet").rename(data / "train-00000-of-00002.parquet")
    with pytest.raises(DataError) as caught:
        build_docs("scalar", "prism", data_dir=str(root))
    message = str(caught.value)
    assert "\n" not in message and "train-00001-of-00002.parquet" in message and str(data) in message
    assert "download" in message
    # Two downloads of different shard counts in one folder would read some rows twice.
    import shutil

    shutil.copy(data / "train-00000-of-00002.parquet", data / "train-00001-of-00002.parquet")
    shutil.copy(data / "test-00000-of-00001.parquet", data / "train-00000-of-00001.parquet")
    with pytest.raises(DataError, match=r"train shards of \[1, 2\] parts at once"):
        build_docs("scalar", "prism", data_dir=str(root))


def test_prb_audit_on_a_copy_of_a_family_it_cannot_audit_says_so(copy_dir: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # The copy is recognised as PersonalRewardBench, which has no audit source: prb audit hit an assert
    # (a traceback) instead of saying which families it audits.
    from prb_tasks.cli import main

    assert main(["audit", str(copy_dir)]) == 2
    out = capsys.readouterr()
    lines = (out.out + out.err).strip().splitlines()
    assert len(lines) == 1 and "PersonalRewardBench" in lines[0] and "Traceback" not in lines[0], lines
    assert "--family" in lines[0]


def _longer_verdict(prompt: str) -> str:
    """A judge that names the longer response (no verdict on equal lengths)."""
    tail = prompt.split("=== New comparison ===")[-1]
    found = re.search(r"\nResponse A:\n(.*)\n\nResponse B:\n(.*)\n\nGoing by", tail, re.S)
    assert found, tail
    a, b = found[1], found[2]
    return "I cannot tell." if len(a) == len(b) else f"Result: {'A' if len(a) > len(b) else 'B'}"


def test_synthesizeme_both_orders_equals_their_evaluate(copy_dir: Path, authors: dict[str, dict]) -> None:
    # DefaultJudge.evaluate: predict_pairwise(chosen, rejected) for every test pair, then (rejected, chosen),
    # the second negated, max(0, .), mean; a scipy 'basic' bootstrap over those 2N values.
    import numpy as np
    from scipy.stats import bootstrap

    from prb_tasks.documents.personal_reward_bench import build_docs
    from prb_tasks.scoring.personal_reward_bench import process_synthesizeme, synthesizeme_high, synthesizeme_low

    def predict(one: str, two: str) -> int:
        return 0 if len(one) == len(two) else (1 if len(one) > len(two) else -1)

    for half, _ in HALF_DIRS:
        tests = [t for _, (_, _, test) in authors[half].items() for t in test]
        first = [predict(t["chosen"]["content"], t["rejected"]["content"]) for t in tests]
        second = [predict(t["rejected"]["content"], t["chosen"]["content"]) for t in tests]
        theirs = [max(0, r) for r in first + [-r for r in second]]
        docs = build_docs("synthesizeme", half, data_dir=str(copy_dir))
        assert len(docs) == 2 * len(tests) and all("No earlier choices" in d["prompt"] for d in docs)
        ours = [process_synthesizeme(d, [_longer_verdict(d["prompt"])])["acc_synthesizeme"] for d in docs]
        assert sorted(ours) == sorted(theirs) and np.mean(ours) == pytest.approx(np.mean(theirs))
        found = bootstrap((np.asarray(theirs, dtype=float),), np.mean, confidence_level=0.95, method="basic",
                          random_state=0).confidence_interval
        # Their bootstrap is unseeded: prb's bounds (a fixed seed, its own order) are within resampling noise.
        assert synthesizeme_low(ours) == pytest.approx(found.low, abs=0.07)
        assert synthesizeme_high(ours) == pytest.approx(found.high, abs=0.07)
        assert synthesizeme_low(ours) < np.mean(ours) < synthesizeme_high(ours)


def test_published_rows_are_not_told_to_rerun_with_log_samples(tmp_path: Path) -> None:
    # A published row has no samples by nature; prb compare printed ten lines telling the user to re-run
    # each paper's number "with --log_samples".
    from prb_tasks.data.personal_reward_bench.published import write_published
    from prb_tasks.report.runs import load_runs

    files = write_published(tmp_path / "published")
    notes: list[str] = []
    runs = load_runs([tmp_path / "published"], notes)
    assert len(runs) == len(files) == 10 and {r.backend for r in runs} == {"published"}
    assert not [n for n in notes if "--log_samples" in n], notes


def test_a_copy_with_one_half_names_the_tasks_it_can_run(tmp_path: Path) -> None:
    # The docs allow a copy with one half; `--tasks 'personal_reward_bench_*'` then stops on the other half,
    # and the line only said to download it.
    import shutil

    from prb_tasks.data.errors import DataError
    from prb_tasks.documents.personal_reward_bench import build_docs

    root = write_copy(tmp_path / "copy")
    shutil.rmtree(root / ARENA)
    assert len(build_docs("scalar", "prism", data_dir=str(root))) == 16
    with pytest.raises(DataError) as caught:
        build_docs("scalar", "arena", data_dir=str(root))
    message = str(caught.value)
    assert "\n" not in message and "hf download MichaelR207/chatbot_arena_personalized_0125" in message
    assert "--tasks 'personal_reward_bench_prism*'" in message


def test_hub_splits_are_concatenated_in_the_order_load_dataset_gives(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # `datasets` lists train, validation, test, then every other split by name: a hub split named "val"
    # comes after "test" (prb put it before, so each user's train rows, and P-GenRM's draws from them,
    # came in another order than the authors' loader gives).
    from prb_tasks.documents.personal_reward_bench import build_docs

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    root = write_copy(tmp_path / "copy", hub_splits=("train", "val", "test", "extra"))
    for half, name in HALF_DIRS:
        reference = pgenrm_rotate(authors_user_data(root / name))
        docs = build_docs("pgenrm", half, data_dir=str(root))
        assert [pgenrm_fewshots(few) in d["system_prompt"] for (_, _, few), d in zip(reference, docs)] == [True] * 16


def test_validate_counts_equal_the_authors_loader(copy_dir: Path, authors: dict[str, dict],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from prb_tasks.cli import datatools

    assert datatools.validate(copy_dir) == 0
    out = capsys.readouterr().out
    for half, _ in HALF_DIRS:
        users = authors[half].values()
        n = [sum(len(u[i]) for u in users) for i in range(3)]
        assert f"users: {len(users)}; pairs: train {n[0]}, val {n[1]}, test {n[2]}" in out
        assert (f"users without train pairs (judged with no history): {sum(not len(u[0]) for u in users)}; "
                f"without test pairs: {sum(not len(u[2]) for u in users)}") in out
    assert out.count("rows left out: 1 with split 'unused'") == 2 and max(map(len, out.splitlines())) <= 120
