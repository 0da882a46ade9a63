"""The loader on HF-layout folders (parquet and jsonl) and every kind of bad row."""

from __future__ import annotations

import copy
import json

import pytest

from prb_tasks.cli.datatools import validate
from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.sources import ENV_VAR, load_rows
from prb_tasks.data.personalized_rb.subsets import SUBSETS, subset_by_name
from prb_tasks.documents.personalized_rb import build_docs
from tests.conftest import FILE, write_layout
from tests.runner import closed_port

ART = subset_by_name("art")


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_loads_every_subset_in_dataset_order(tmp_path, all_sample_rows, fmt):
    write_layout(tmp_path, all_sample_rows, fmt)
    for subset in SUBSETS:
        rows = load_rows(subset, str(tmp_path))
        assert [r.id for r in rows] == [r["id"] for r in all_sample_rows[subset.config]]
        first = all_sample_rows[subset.config][0]
        assert rows[0].profile[0].text == first["profile"][0]["text"]
        assert rows[0].rubric_aspects[0].aspect == first["rubric_aspects"][0]["aspect"]


def test_env_var_selects_folder(tmp_path, all_sample_rows, monkeypatch):
    rows = {ART.config: all_sample_rows[ART.config][:3]}
    write_layout(tmp_path, rows, "jsonl")
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert len(load_rows(ART)) == 3
    # An explicit data_dir wins over the environment variable.
    assert len(load_rows(ART, "sample")) == 12


def test_sample_keyword_and_counts():
    for subset in SUBSETS:
        assert len(load_rows(subset, "sample")) >= 12


def _mutations():
    def drop(field):
        return lambda r: r.pop(field)

    def set_(field, value):
        return lambda r: r.__setitem__(field, value)

    return {
        "missing question": (drop("question"), "question"),
        "missing chosen": (drop("chosen"), "chosen"),
        "profile not a list": (set_("profile", "posts"), "profile"),
        "aspect missing reason": (lambda r: r["rubric_aspects"][0].pop("reason"), "rubric_aspects.0.reason"),
        "post text not a string": (lambda r: r["profile"][1].__setitem__("text", 7), "profile.1.text"),
        "question null": (set_("question", None), "question"),
        "id wrong type": (set_("id", 12), "id"),
    }


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
@pytest.mark.parametrize("kind", list(_mutations()))
def test_bad_row_names_file_row_id_and_field(tmp_path, all_sample_rows, fmt, kind):
    mutate, field = _mutations()[kind]
    rows = copy.deepcopy(all_sample_rows[ART.config])
    if fmt == "parquet" and kind in ("profile not a list", "post text not a string", "id wrong type"):
        pytest.skip("parquet columns are typed; this mistake cannot be written to parquet")
    mutate(rows[4])
    write_layout(tmp_path, {ART.config: rows}, fmt)
    with pytest.raises(DataError) as info:
        load_rows(ART, str(tmp_path))
    message = str(info.value)
    assert "\n" not in message
    assert f"{FILE}.{fmt}" in message
    # rows[4] is the fifth row: numbered from 1, like lines (in jsonl, its line number)
    assert "row 5 " in message
    if kind != "id wrong type":
        assert rows[4]["id"] in message
    assert f"'{field}'" in message


def _odd_rows(rows: list[dict]) -> list[dict]:
    """0-based rows 5 and 9 repeat ids, row 2 has identical answers, row 7 a blank question."""
    rows = copy.deepcopy(rows)
    rows[2]["rejected"] = rows[2]["chosen"] + "\n"
    rows[5]["id"] = rows[1]["id"]
    rows[9]["id"] = rows[1]["id"]
    rows[7]["question"] = " \u00a0"
    return rows


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_odd_rows_are_kept_and_reported_once_per_kind(tmp_path, all_sample_rows, fmt, capsys):
    rows = _odd_rows(all_sample_rows[ART.config])
    write_layout(tmp_path, {ART.config: rows}, fmt)
    loaded = load_rows(ART, str(tmp_path))
    assert [r.id for r in loaded] == [r["id"] for r in rows]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3, err
    assert all(line.startswith(f"prb: warning: {tmp_path / ART.config}: ") for line in err)
    assert "2 rows with duplicate id (rows 6, 10)" in err[0] and "never by id" in err[0]
    assert "1 row with a blank question (row 8)" in err[1]
    assert "1 row with chosen == rejected (row 3)" in err[2] and "tie" in err[2] and "by position" in err[2]
    load_rows(ART, str(tmp_path))  # a second task of the same run: no repeat
    assert capsys.readouterr().err == ""

    docs = build_docs("art", "both", data_dir=str(tmp_path))
    keys = {d["pair_key"] for d in docs}
    assert keys == {f"art/{n}" for n in range(len(rows))}
    assert [d["id"] for d in docs[::2]] == [r["id"] for r in rows]
    scalar = build_docs("art", "scalar", data_dir=str(tmp_path))
    assert len({d["profile_key"] for d in scalar}) == len(rows)


def test_long_lists_of_rows_are_cut(all_sample_rows):
    from prb_tasks.data.personalized_rb.checks import find_warnings
    from prb_tasks.data.personalized_rb.schema import PRBRow

    rows = [PRBRow.model_validate({**all_sample_rows[ART.config][0], "chosen": "", "id": ""})] * 8
    found = {w.kind: w for w in find_warnings(rows)}
    assert set(found) == {"duplicate id", "a blank id", "a blank chosen or rejected answer"}
    assert "8 rows with a blank id (rows 1, 2, 3, 4, 5, ...)" in found["a blank id"].line("x")
    assert found["duplicate id"].rows == tuple(range(1, 8))


def test_broken_files(tmp_path, all_sample_rows):
    folder = tmp_path / ART.config
    folder.mkdir()
    path = folder / f"{FILE}.jsonl"
    good = json.dumps(all_sample_rows[ART.config][0])
    path.write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 2, column 2: not valid JSON"):
        load_rows(ART, str(tmp_path))
    path.write_text(good + "\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 2: expected a JSON object"):
        load_rows(ART, str(tmp_path))
    path.write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="holds no rows"):
        load_rows(ART, str(tmp_path))
    (folder / f"{FILE}.parquet").write_bytes(b"not parquet")
    with pytest.raises(DataError, match="both .parquet and .jsonl"):
        load_rows(ART, str(tmp_path))
    path.unlink()
    with pytest.raises(DataError, match="cannot read parquet"):
        load_rows(ART, str(tmp_path))


def test_missing_folder_and_bad_data_dir(tmp_path):
    with pytest.raises(DataError, match=r"no folder .*Art_and_Entertainment.*prb data download"):
        load_rows(ART, str(tmp_path))
    with pytest.raises(DataError, match="not a folder"):
        load_rows(ART, str(tmp_path / "nope"))


def test_validate_command_counts(tmp_path, all_sample_rows, capsys):
    write_layout(tmp_path, all_sample_rows, "parquet")
    assert validate(tmp_path) == 0
    out = capsys.readouterr().out
    assert "Art_and_Entertainment" in out and " 12 " in out and "total" in out
    bad = copy.deepcopy(all_sample_rows)
    bad["Society_and_Culture"][3].pop("narrative")
    write_layout(tmp_path, bad, "parquet")
    assert validate(tmp_path) == 1
    assert "narrative" in capsys.readouterr().out
    odd = {**all_sample_rows, ART.config: _odd_rows(all_sample_rows[ART.config])}
    write_layout(tmp_path, odd, "parquet")
    assert validate(tmp_path) == 0
    text = capsys.readouterr().out
    out = text.splitlines()
    art = next(n for n, line in enumerate(out) if line.startswith(ART.config))
    assert " 12  ok, 3 warnings (the published split has 767" in out[art]
    # The warnings under the row are wrapped to 120 columns: read them with the line breaks flattened, in order.
    flat = " ".join(text.split())
    places = [flat.find(s) for s in ("duplicate id (rows 6, 10)", "blank question", "chosen == rejected (row 3)",
                                     "Lifestyle_and_Personal_Development 12 ok (")]
    assert -1 not in places and places == sorted(places), places


def test_docs_stay_small_and_profiles_are_not_copied(all_sample_rows):
    rows = all_sample_rows[ART.config]
    for variant in ("both", "official", "profile", "oracle", "scalar", "scalar_profile"):
        docs = build_docs("art", variant, data_dir="sample")
        assert docs
        for doc in docs:
            assert "profile" not in doc and "rubric_aspects" not in doc and "narrative" not in doc
            text = json.dumps(doc)
            # No doc carries a post that was not selected for it.
            unselected = [p["text"] for r in rows if r["id"] == doc["id"] for p in r["profile"]
                          if p["id"] not in doc["post_ids"]]
            assert not any(t in text for t in unselected)
    assert len(build_docs("art", "both", data_dir="sample")) == 2 * len(rows)
    assert len(build_docs("art", "official", data_dir="sample")) == len(rows)


def test_profile_variant_uses_top_k_bounded_posts():
    docs = build_docs("lifestyle", "profile", data_dir="sample", k=2, max_post_chars=80)
    for doc in docs:
        assert len(doc["post_ids"]) == 2
        assert "Post 1 (Category:" in doc["prompt"] and "Post 3" not in doc["prompt"]
    with pytest.raises(DataError, match="'k' must be an integer"):
        build_docs("lifestyle", "profile", data_dir="sample", k="many")


def test_oracle_shows_aspects_and_question_only_does_not(all_sample_rows):
    aspect = all_sample_rows[ART.config][0]["rubric_aspects"][0]["aspect"]
    oracle = build_docs("art", "oracle", data_dir="sample")[0]["prompt"]
    plain = build_docs("art", "both", data_dir="sample")[0]["prompt"]
    assert aspect in oracle and aspect not in plain


def test_download_offline_fails_with_one_clear_message(tmp_path, capsys, monkeypatch):
    from prb_tasks.cli.datatools import download
    from prb_tasks.data import hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert download(tmp_path / "copy") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "cannot download QiyaoMa/Personalized-RewardBench: HF_HUB_OFFLINE is set" in err[0]
    assert "access to huggingface.co" in err[0]

    # Without the switch, an unreachable hub is found by one quick connection attempt
    # (this machine has no network; a closed local port stands in for it anyway).
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    port = closed_port()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    hub.unreachable_reason.cache_clear()
    try:
        assert download(tmp_path / "copy") == 1
    finally:
        hub.unreachable_reason.cache_clear()
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"cannot connect to 127.0.0.1:{port}" in line


def test_download_and_validate_name_what_is_wrong(tmp_path, capsys):
    from prb_tasks.cli.datatools import download

    (tmp_path / "file").write_text("x")
    assert download(tmp_path / "file" / "copy") == 2
    assert "cannot create" in capsys.readouterr().err
    assert download(tmp_path / "copy", ["Art_and_Entertainmnt"]) == 2
    assert "did you mean 'Art_and_Entertainment'" in capsys.readouterr().err
    assert validate(tmp_path / "file") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "is a file, not a folder" in line
    assert validate(tmp_path / "nowhere") == 2
    assert "does not exist" in capsys.readouterr().err


def test_validate_sample_keyword(capsys, monkeypatch, tmp_path):
    from pathlib import Path

    monkeypatch.chdir(tmp_path)  # no folder called 'sample' here
    assert validate(Path("sample")) == 0
    out = capsys.readouterr().out
    assert "the bundled synthetic sample" in out and "36" in out


def test_loader_without_network_fails_at_once(monkeypatch):
    # Plain lm_eval has no preflight: the loader checks the hub itself, with one quick
    # connection attempt (a closed local port stands in for the missing network).
    from prb_tasks.data import hub
    from prb_tasks.data.personalized_rb import sources

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "PRB_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    port = closed_port()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    hub.unreachable_reason.cache_clear()
    sources._from_hub.cache_clear()
    try:
        with pytest.raises(DataError) as info:
            load_rows(ART)
    finally:
        hub.unreachable_reason.cache_clear()
    message = str(info.value)
    assert message.startswith("prb: cannot load QiyaoMa/Personalized-RewardBench (Art_and_Entertainment) from the "
                              f"HF hub: cannot connect to 127.0.0.1:{port}")
    assert "prb data download DIR" in message and "HF_HUB_OFFLINE=1" in message


def test_download_offline_names_the_family_in_the_command_it_suggests(tmp_path, capsys, monkeypatch):
    """Offline, ``prb data download DIR --family personal_reward_bench`` suggested `prb data download DIR`,
    which copies Personalized RewardBench instead."""
    from prb_tasks.cli.datatools import download

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert download(tmp_path / "copy", family="personal_reward_bench") == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "HF_HUB_OFFLINE is set; run `prb data download DIR --family personal_reward_bench` on a machine" in line
