"""Bring-your-own preference files: validation with one-line errors, leave-one-out
histories that never leak the held-out choice, and per-user / per-tag accuracy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.data import provenance
from prb_tasks.data.custom.reader import read_users
from prb_tasks.data.custom.sources import example_path
from prb_tasks.data.errors import DataError
from prb_tasks.documents import custom
from prb_tasks.scoring.breakdowns import mean_over_tags, mean_over_users, process_scalar_users_tags
from tests.liveness import count_at_each_validation, raw_users_alive, track_records


def pref(n: int, chosen: str = "response_A", tags: list[str] | None = None, **extra) -> dict:
    return {
        "prompt": f"PROMPT-{n}: what would you suggest?",
        "response_A": f"ANSWER-A-{n} with some words",
        "response_B": f"ANSWER-B-{n} with other words",
        "chosen_response": chosen,
        "reason": f"REASON-{n} because it suits me",
        "value_alignment": tags if tags is not None else [f"tag{n % 3}"],
        **extra,
    }


def user(uid: str, prefs: list[dict], **extra) -> dict:
    return {"user_id": uid, "demographics": {"age": 40, "city": "Lyon"}, "preferences": prefs, **extra}


def write_jsonl(path: Path, users: list[dict]) -> Path:
    path.write_text("".join(json.dumps(u) + "\n" for u in users), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- reading


def test_example_file_and_both_formats(tmp_path: Path) -> None:
    users = read_users(example_path())
    assert len(users) == 6 and sum(len(u.preferences) for u in users) == 20
    assert any(len(u.preferences) == 1 for u in users)
    raw = [json.loads(line) for line in example_path().read_text(encoding="utf-8").splitlines()]
    as_json = tmp_path / "prefs.json"
    as_json.write_text(json.dumps(raw), encoding="utf-8")
    assert read_users(as_json) == users


BAD_CASES = [
    # (users or raw text, expected pieces of the one-line message)
    ([user("u1", [pref(0), {**pref(1), "chosen_response": "A"}])],
     ["user 'u1'", "preferences[1]", "'chosen_response'", "'response_A' or 'response_B'"]),
    ([user("u1", [pref(0)]), user("u2", [pref(1), pref(2), {k: v for k, v in pref(3).items() if k != "response_B"}])],
     ["user 'u2' (entry 2)", "preferences[2]", "'response_B'", "Field required"]),
    ([user("u1", [{**pref(0), "prompt": "   "}])], ["preferences[0]", "'prompt'", "blank"]),
    ([user("u1", [{**pref(0), "response_B": "ANSWER-A-0 with some words"}])], ["preferences[0]", "same text"]),
    ([user("u1", [{**pref(0), "value_alignment": "honesty"}])], ["preferences[0]", "'value_alignment'"]),
    ([user("u1", [])], ["user 'u1'", "'preferences'", "at least 1"]),
    ([{"demographics": {}, "preferences": [pref(0)]}], ["entry 1", "'user_id'", "Field required"]),
    ([user("u1", [pref(0)]), user("u1", [pref(1)])], ["entry 2", "'u1'", "repeats entry 1"]),
    ([user("u1", [pref(0)], demographics=["old"])], ["user 'u1'", "'demographics'"]),
]


@pytest.mark.parametrize(("users", "pieces"), BAD_CASES)
def test_bad_files_fail_with_one_line_naming_file_user_preference_and_field(
        tmp_path: Path, users: list[dict], pieces: list[str]) -> None:
    path = write_jsonl(tmp_path / "prefs.jsonl", users)
    with pytest.raises(DataError) as err:
        read_users(path)
    message = str(err.value)
    assert "\n" not in message and str(path) in message
    for piece in pieces:
        assert piece in message


def test_broken_json_files(tmp_path: Path) -> None:
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text(json.dumps(user("u1", [pref(0)])) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"a\.jsonl line 2, column \d+: not valid JSON"):
        read_users(jsonl)
    lines_as_json = tmp_path / "b.json"
    lines_as_json.write_text(jsonl.read_text().splitlines()[0] + "\n" + jsonl.read_text().splitlines()[0])
    with pytest.raises(DataError, match=r"Extra data.*name the file \.jsonl"):
        read_users(lines_as_json)
    obj = tmp_path / "c.json"
    obj.write_text(json.dumps(user("u1", [pref(0)])))
    with pytest.raises(DataError, match="expected a JSON array of user objects"):
        read_users(obj)
    (tmp_path / "d.csv").write_text("x")
    with pytest.raises(DataError, match=r"\.json or \.jsonl"):
        read_users(tmp_path / "d.csv")
    (tmp_path / "e.jsonl").write_text("\n")
    with pytest.raises(DataError, match="holds no users"):
        read_users(tmp_path / "e.jsonl")


def test_data_path_is_required_and_fixed_for_the_example_tasks(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="read your preference file from the metadata key data_path"):
        custom.build_docs("judge")
    with pytest.raises(DataError, match="is not a file"):
        custom.build_docs("judge", data_path=str(tmp_path / "missing.jsonl"))
    with pytest.raises(DataError, match="always use the bundled example"):
        custom.build_docs("judge", source="example", data_path=str(tmp_path / "x.jsonl"))
    with pytest.raises(DataError, match=r"--metadata 'k'"):
        custom.build_docs("judge", source="example", k=-1)
    assert len(custom.build_docs("scalar", data_path="example")) == 20


# --------------------------------------------------------------------------- leave-one-out


def test_leave_one_out_never_shows_the_held_out_choice_or_reason(tmp_path: Path) -> None:
    prefs = [pref(n, chosen=("response_A", "response_B")[n % 2]) for n in range(6)]
    # A repeat of preference 2 (same prompt and answers, swapped, other reason) must
    # not reveal preference 2's answer either.
    prefs.append({**pref(2), "response_A": pref(2)["response_B"], "response_B": pref(2)["response_A"],
                  "chosen_response": "response_B", "reason": "REASON-repeat of two"})
    path = write_jsonl(tmp_path / "prefs.jsonl", [user("u1", prefs), user("solo", [pref(9)])])
    for k in (0, 2, 4, 10):
        docs = custom.build_docs("judge", data_path=str(path), k=k)
        assert len(docs) == 2 * 8
        for d in docs:
            held_out = int(d["pair_key"].split("/")[1])
            text = d["prompt"]
            uid = d["user_id"]
            own = (prefs if uid == "u1" else [pref(9)])[held_out]
            context, new = text.split("=== New comparison ===")
            assert own["reason"] not in text
            assert "preferred" not in new
            shown = context.count("The person preferred")
            expected = 0 if uid == "solo" else min(k, 5 if held_out in (2, 6) else 6)
            assert shown == expected, (k, d["pair_key"])
            if held_out in (2, 6) and uid == "u1":
                assert "REASON-2 " not in text and "REASON-repeat" not in text and "PROMPT-2:" not in context
            if uid == "solo":
                assert "No earlier choices of this person are available." in text
            assert "- age: 40" in text and "- city: Lyon" in text


def test_history_is_the_k_latest_other_preferences_in_file_order(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "prefs.jsonl", [user("u1", [pref(n) for n in range(6)])])
    docs = custom.build_docs("scalar_history", data_path=str(path), k=2)

    def shown(doc):
        return [n for n in range(6) if f"PROMPT-{n}:" in doc["prompt"].split("My request:")[0]]

    assert shown(docs[0]) == [4, 5] and shown(docs[5]) == [3, 4] and shown(docs[3]) == [4, 5]
    assert docs[0]["prompt"].index("PROMPT-4") < docs[0]["prompt"].index("PROMPT-5")  # oldest first
    plain = custom.build_docs("scalar", data_path=str(path), k=2)
    assert plain[0]["prompt"] == plain[0]["question"] == "PROMPT-0: what would you suggest?"
    assert plain[0]["choices"] == ["ANSWER-A-0 with some words", "ANSWER-B-0 with other words"]


# --------------------------------------------------------------------------- metrics


def test_accuracy_per_user_and_per_tag(tmp_path: Path) -> None:
    prefs = [pref(0, tags=["a"]), pref(1, tags=["a", "b"]), pref(2, tags=[]), pref(3, tags=["b"])]
    path = write_jsonl(tmp_path / "prefs.jsonl", [user("u1", prefs), user("u2", [pref(4, tags=["c"])])])
    docs = custom.build_docs("scalar", data_path=str(path))
    # An RM right on u1's items 0 and 2 and on u2's only item.
    right = {"u1/0", "u1/2", "u2/0"}
    outs = [process_scalar_users_tags(d, [(1.0, False), (0.0, False)] if d["pair_key"] in right
                                      else [(0.0, False), (1.0, False)]) for d in docs]
    assert [o["acc"] for o in outs] == [1, 0, 1, 0, 1]
    assert mean_over_users([o["acc_user"] for o in outs]) == pytest.approx((2 / 4 + 1) / 2)
    # Tags: a -> [1, 0], b -> [0, 0], c -> [1]; item 2 has no tag and is left out.
    assert mean_over_tags([o["acc_tag"] for o in outs]) == pytest.approx((0.5 + 0 + 1) / 3)
    assert docs[1]["tags"] == ["a", "b"] and docs[0]["subset"] == "custom"


def test_the_run_records_a_users_own_file_as_a_local_file(tmp_path: Path) -> None:
    mine = tmp_path / "mine.jsonl"
    mine.write_bytes(example_path().read_bytes())
    docs = custom.build_docs("scalar", data_path=str(mine), config_source="mine.yaml")
    sources = provenance.for_results(
        {"configs": {"personalized_custom_scalar": {"metadata": {"config_source": "mine.yaml"}}}})
    source = sources["personalized_custom_scalar"]
    assert (source.kind, source.location, source.rows) == ("file", str(mine), len(docs))
    assert provenance.summary_lines(sources) == [
        f"Data: local file {mine}: preferences {len(docs)} rows ({len(docs)} in total)"]


def test_data_validate_takes_example_like_the_tasks_and_audit(capsys: pytest.CaptureFixture[str]) -> None:
    from prb_tasks.cli.datatools import validate

    assert validate(Path("example")) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{example_path()}: ok") and "users: 6" in out


# --------------------------------------------------------------------------- memory


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
@pytest.mark.parametrize("variant", ["judge", "scalar", "scalar_history"])
def test_documents_are_built_holding_one_user_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str, variant: str
) -> None:
    # Issue 51: the reader kept every user (preferences and profile) for the whole run; a
    # scorer needs one user's history at a time. Counted at each user's first item.
    users = [user(f"mem-{n}", [pref(3 * n + i) for i in range(3)], profile=[f"post {n}"] * 50) for n in range(40)]
    path = tmp_path / f"prefs{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(users), encoding="utf-8")
    else:
        write_jsonl(path, users)
    seen: list[int] = []
    history = custom.leave_one_out
    alive = track_records(monkeypatch)

    def counting(preferences: list, held_out: int, k: int) -> list:
        if held_out == 0:
            seen.append(alive("mem-"))
        return history(preferences, held_out, k)

    monkeypatch.setattr(custom, "leave_one_out", counting)
    docs = custom.build_docs(variant, data_path=str(path))
    assert len(seen) == 40 and len({d["user_id"] for d in docs}) == 40
    assert max(seen) <= 2, seen
    assert alive("mem-") <= 1  # and nothing of the file once the documents are built


def test_a_json_array_is_parsed_one_user_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 51: a .json array was parsed whole, so every user's raw object (and the file's
    # text) was alive before the first user was validated. Counted at each validation.
    from prb_tasks.data.custom import reader

    path = tmp_path / "prefs.json"
    path.write_text(json.dumps([user(f"raw-{n}", [pref(n)], profile=[f"post {n}"] * 50) for n in range(40)],
                               indent=1), encoding="utf-8")
    seen = count_at_each_validation(monkeypatch, lambda: raw_users_alive("raw-"), every=8)
    assert [u.user_id for u in reader.iter_users(path)] == [f"raw-{n}" for n in range(40)]
    assert len(seen) == 5 and max(seen) <= 2, seen  # at users 1, 9, 17, 25, 33: the whole array would be 40


GOOD_USER = json.dumps(user("u1", [pref(0)]))


@pytest.mark.parametrize(("text", "message"), [
    (f'[{GOOD_USER},\n {{"user_id": "u2",\n  "x": }}]', r"not valid JSON \(Expecting value at line 3 column 8\)"),
    (f"[{GOOD_USER}]\n{GOOD_USER}", r"not valid JSON \(Extra data at line 2 column 1\).*name the file \.jsonl"),
    # Python 3.13 names the trailing comma; older ones expect a value after it.
    (f"[{GOOD_USER},]", r"not valid JSON \((Expecting value|Illegal trailing comma.*) at line 1 column \d+\)"),
])
def test_a_json_array_broken_past_its_first_users_is_named_by_line_and_column(
        tmp_path: Path, text: str, message: str) -> None:
    # Users before the break are streamed; the break is named as json.loads names it in the whole file.
    path = tmp_path / "prefs.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        read_users(path)


def test_a_json_array_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "prefs.json"
    path.write_bytes(json.dumps([user("u1", [pref(0)])]).encode()[:-3] + b"\xe9\"}]")
    with pytest.raises(DataError, match=r"is not UTF-8 text \(line 1, byte \d+: 0xe9\)"):
        read_users(path)


def test_data_validate_counts_a_user_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # `prb data validate` held every validated user in a list to count them.
    from prb_tasks.data.custom.family import validate

    users = [user(f"mem-{n}", [pref(n, "response_B" if n % 4 == 0 else "response_A",
                                    tags=[] if n % 5 == 0 else None, reason=" " if n % 2 else "why")]
                  * (1 if n % 10 == 0 else 2)) for n in range(40)]
    path = write_jsonl(tmp_path / "prefs.jsonl", users)
    del users
    alive = track_records(monkeypatch)
    seen = count_at_each_validation(monkeypatch, lambda: alive("mem-"))
    assert validate(path) == 0
    assert len(seen) == 40 and max(seen) <= 2, seen
    assert capsys.readouterr().out.splitlines() == [
        f"{path}: ok",
        "  users: 40 (4 with a single preference, judged with no history)",
        "  preferences: 76 (chosen is response_A in 58, response_B in 18)",
        "  without a reason: 40; without value_alignment tags: 12",
        "  tags (3): tag0 22, tag1 22, tag2 20",
    ]
