"""prb's two official PersonalRewardBench protocols against a transcription of each author's code
(tests/personal_reward_bench_transcription.py) on a copy in the hub layout: N of N."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.data.personal_reward_bench.reader import read_half
from prb_tasks.documents.personal_reward_bench import build_docs, pgenrm_history, pgenrm_selection
from prb_tasks.prompts.prompt_store import doc_prompt
from prb_tasks.scoring.personal_reward_bench import (
    pgenrm_accuracy,
    pgenrm_outcome,
    process_pgenrm,
    process_synthesizeme,
    synthesizeme_high,
    synthesizeme_low,
)
from prb_tasks.testing.personal_reward_bench_copy import write_copy
from tests.personal_reward_bench_transcription import pgenrm_run, synthesizeme_evaluate

HALVES = ("arena", "prism")


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_copy(tmp_path_factory.mktemp("prb_copy"), users=7)


@pytest.fixture(autouse=True)
def _datasets_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The transcription loads the copy with `datasets`, as P-GenRM does; keep its cache in the test's folder.
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def _json(s1: object, s2: object) -> str:
    body = json.dumps({"rationale": "r", "better_response": {"response_1": s1, "response_2": s2}})
    return f"analysis <JSON_START>{body}<JSON_END>"


def _reply(conversation: str, chosen_first: bool) -> str | None:
    """A scripted judge: right, wrong, and every way P-GenRM's script drops a reply, by the item's hash."""
    kind = hashlib.sha256(conversation.encode()).digest()[0] % 11
    right = (9, 2) if chosen_first else (2, 9)
    wrong = right[::-1]
    return [_json(*right), _json(*right), _json(*right), _json(*wrong), _json(5, 5), "no markers at all",
            "<JSON_START>{not json<JSON_END>", '<JSON_START>{"better_response": {"response_1": 3}}<JSON_END>',
            None, _json("8.5", "10"), '<JSON_START>[1, 2]<JSON_END>'][kind]


@pytest.mark.parametrize("half", HALVES)
def test_pgenrm_history_selection_equals_theirs(copy: Path, half: str) -> None:
    theirs = pgenrm_run(copy / read_half(copy, half).folder.name, lambda u, t: True, lambda r, t: None)
    ours: dict[str, list] = {}
    for row, few in pgenrm_selection(read_half(copy, half)):
        ours.setdefault(row.user_id, []).append((row.conversation_id, [f.conversation_id for f in few]))
    assert ours == theirs["selection"]
    assert sum(len(v) for v in ours.values()) == 7 * 3 + 1 + 2  # every test pair, users with few pairs too
    # The history text each test pair's system prompt carries, N of N.
    texts = [pgenrm_history(few) for _, few in pgenrm_selection(read_half(copy, half))]
    assert texts == theirs["few_shots"]
    assert any(len(few) == 6 for _, few in pgenrm_selection(read_half(copy, half)))


@pytest.mark.parametrize("half", HALVES)
def test_pgenrm_accuracy_and_denominator_equal_theirs(copy: Path, half: str, caplog: pytest.LogCaptureFixture) -> None:
    docs = build_docs("pgenrm", half, data_dir=str(copy))
    shown_first = {d["conversation_id"]: d["chosen_position"] == "A" for d in docs}
    outcomes = [process_pgenrm(d, [_reply(d["conversation_id"], d["chosen_position"] == "A")]) for d in docs]
    with caplog.at_level("WARNING", logger="lm_eval.prb_tasks"):
        ours = pgenrm_accuracy([o["acc_pgenrm"] for o in outcomes])

    def their_reply(responses: list[str], test: dict) -> str | None:
        return _reply(test["conversation_id"], responses[0] == test["chosen"]["content"])

    theirs = pgenrm_run(copy / read_half(copy, half).folder.name,
                        lambda user, test: shown_first[test["conversation_id"]], their_reply)
    kept = sum(o["kept_pgenrm"] for o in outcomes)
    assert kept == theirs["processed"] and 0 < kept < len(docs)
    assert ours * 100 == pytest.approx(theirs["accuracy"])
    # prb's own reading of the same replies counts every pair (a dropped one is wrong).
    assert sum(o["acc"] for o in outcomes) == theirs["correct"]
    dropped = {k: sum(o[k] for o in outcomes) for k in outcomes[0] if k.startswith("dropped_")}
    assert sum(dropped.values()) == len(docs) - kept
    assert f"{len(docs) - kept} of {len(docs)} judgments dropped" in caplog.text


def test_pgenrm_reads_a_reply_as_their_script_does() -> None:
    assert pgenrm_outcome(_json(9, 2), chosen_is_first=True) == "correct"
    assert pgenrm_outcome(_json(9, 2), chosen_is_first=False) == "wrong"
    # String scores compare as strings in their script: "8.5" > "10".
    assert pgenrm_outcome(_json("8.5", "10"), chosen_is_first=True) == "correct"
    assert pgenrm_outcome(_json(7, "7"), chosen_is_first=True) == "incomparable"
    assert pgenrm_outcome(_json(4, 4), chosen_is_first=True) == "tie"
    assert pgenrm_outcome("[prb:error] HTTP 500", chosen_is_first=True) == "request_failed"
    assert pgenrm_outcome(None, chosen_is_first=True) == "request_failed"
    assert pgenrm_outcome('<JSON_START>{"better_response": {"a": 1, "b": 2}}<JSON_END>', True) == "tie"
    assert pgenrm_outcome(_json(1, 9), chosen_is_first=True, same_text=True) == "correct"


def test_pgenrm_leaves_out_what_their_script_cannot_read(tmp_path: Path) -> None:
    listed = write_copy(tmp_path / "listed", list_turns=True, halves=("arena",))
    theirs = pgenrm_run(listed / "chatbot_arena_personalized_0125", lambda u, t: True, lambda r, t: _json(9, 2))
    assert theirs["processed"] == 0  # chosen["content"] on a list of turns: every item skipped at submission
    with pytest.raises(DataError, match="no test pair P-GenRM's script can read"):
        build_docs("pgenrm", "arena", data_dir=str(listed))


@pytest.mark.parametrize("half", HALVES)
def test_synthesizeme_both_orders_equal_theirs(copy: Path, half: str) -> None:
    docs = build_docs("synthesizeme", half, data_dir=str(copy))
    replies = ["Result: A", "Result: B", "no verdict", "[prb:error] timeout"]
    scored = []
    first: dict[str, int] = {}
    reversed_: dict[str, int] = {}
    for i, doc in enumerate(docs):
        reply = replies[hashlib.sha256(f"{i}".encode()).digest()[0] % 4]
        scored.append(process_synthesizeme(doc, [reply])["acc_synthesizeme"])
        # predict_pairwise: 1 for "First", -1 for "Second", 0 otherwise; option one is A.
        value = {"Result: A": 1, "Result: B": -1}.get(reply, 0)
        (first if doc["chosen_position"] == "A" else reversed_)[doc["pair_key"]] = value
    keys = list(first)
    theirs = synthesizeme_evaluate([first[k] for k in keys], [reversed_[k] for k in keys])
    assert sorted(scored) == sorted(theirs["results"])
    assert sum(scored) / len(scored) == pytest.approx(theirs["mean"])
    assert synthesizeme_low(scored) == pytest.approx(theirs["lower_bound"], abs=0.02)
    assert synthesizeme_high(scored) == pytest.approx(theirs["upper_bound"], abs=0.02)
    assert len(docs) == 2 * len(keys)


def test_pgenrm_docs_carry_one_order_and_the_history(copy: Path) -> None:
    docs = build_docs("pgenrm", "prism", data_dir=str(copy))
    assert {d["chosen_position"] for d in docs} == {"A", "B"}
    assert len({d["pair_key"] for d in docs}) == len(docs)
    doc = next(d for d in docs if d["history_pairs"] == 6)
    assert doc["system_prompt"].count("\nChosen: ") == 6
    assert "[Response 1]" in doc_prompt(doc)


def test_their_prompts_file_is_read_without_running_it(copy: Path, tmp_path: Path) -> None:
    prompts = tmp_path / "PROMPTS.py"
    prompts.write_text("import sys; sys.exit(3)\nUSER_PREFERENCE_ANALYSIS_PROMPT = '''SYS {few_shots} {{\"k\": 1}}'''\n"
                       "USER_PROMPT_TEMPLATE= '''IN {user_input} R1 {response_1} R2 {response_2}'''\n")
    docs = build_docs("pgenrm", "arena", data_dir=str(copy), pgenrm_prompts=str(prompts))
    doc = next(d for d in docs if d["history_pairs"] == 6)
    assert doc["system_prompt"].startswith("SYS User: ") and doc["system_prompt"].endswith('\n\n {"k": 1}')
    assert doc_prompt(doc).startswith("IN ") and " R1 " in doc_prompt(doc)
    prompts.write_text("USER_PROMPT_TEMPLATE = 'x'\n")
    with pytest.raises(DataError, match="no string USER_PREFERENCE_ANALYSIS_PROMPT"):
        build_docs("pgenrm", "arena", data_dir=str(copy), pgenrm_prompts=str(prompts))


def test_numeric_user_ids_keep_their_order_and_null_splits_are_left_out(tmp_path: Path) -> None:
    # Ids stored as numbers sort by value in the authors' groupby (9 before 10), not as text.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from prb_tasks.testing.personal_reward_bench_copy import half_rows

    folder = tmp_path / "copy" / "prism_personalized_0125"
    (folder / "data").mkdir(parents=True)
    ids = {f"prism-user-{n:02d}": value for n, value in enumerate((10, 9, 100, 2, 30, 7, 1, 11))}
    for split, rows in half_rows("prism", users=6).items():
        rows = [{**r, "user_id": ids[r["user_id"]]} for r in rows]
        rows[0] = {**rows[0], "split": None}
        rows[1] = {**rows[1], "chosen": {"role": "assistant", "content": ""}}
        pq.write_table(pa.Table.from_pylist(rows), folder / "data" / f"{split}-00000-of-00001.parquet")
    copy = read_half(tmp_path / "copy", "prism")
    assert [u.user_id for u in copy.users] == ["1", "2", "7", "9", "10", "11", "30", "100"]
    assert sum(n for why, n in copy.skipped.items() if "None" in why) == 2
    theirs = pgenrm_run(folder, lambda u, t: True, lambda r, t: None)
    ours: dict = {}
    for row, few in pgenrm_selection(copy):
        ours.setdefault(int(row.user_id), []).append((row.conversation_id, [f.conversation_id for f in few]))
    assert ours == theirs["selection"] and list(ours) == sorted(ours)
