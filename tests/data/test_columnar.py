"""Subsets held as checked Arrow columns: the same rows and errors as row-by-row validation."""

from __future__ import annotations

import copy

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb import columnar
from prb_tasks.data.personalized_rb.reader import validate_rows
from prb_tasks.data.personalized_rb.sources import load_rows, load_table
from prb_tasks.data.personalized_rb.subsets import SUBSETS, subset_by_name
from prb_tasks.documents.personalized_rb import build_docs
from tests.conftest import FILE, write_layout

ART = subset_by_name("art")


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_rows_equal_row_by_row_validation(tmp_path, all_sample_rows, fmt):
    write_layout(tmp_path, all_sample_rows, fmt)
    for subset in SUBSETS:
        expected = validate_rows(all_sample_rows[subset.config], "x")
        assert [r.model_dump() for r in load_rows(subset, str(tmp_path))] == [r.model_dump() for r in expected]


def test_good_parquet_never_builds_rows_one_by_one(tmp_path, all_sample_rows, monkeypatch):
    write_layout(tmp_path, all_sample_rows, "parquet")
    monkeypatch.setattr(columnar, "validate_rows", lambda *a, **k: pytest.fail("validated row by row"))
    table = load_table(ART, str(tmp_path))
    assert len(table.rows) == 12 and table.profiles.count(0) == len(all_sample_rows[ART.config][0]["profile"])


def test_empty_profiles_and_large_strings_take_the_column_path(tmp_path, all_sample_rows, monkeypatch):
    rows = copy.deepcopy(all_sample_rows[ART.config])
    rows[3]["profile"] = []  # valid; parquet's footer counts it as a null leaf, so the column is read
    folder = tmp_path / ART.config
    folder.mkdir()
    table = pa.Table.from_pylist(rows)
    large = pa.schema([pa.field(f.name, pa.large_string() if f.type == pa.string() else f.type)
                       for f in table.schema])
    pq.write_table(table.cast(large), folder / f"{FILE}.parquet")
    monkeypatch.setattr(columnar, "validate_rows", lambda *a, **k: pytest.fail("validated row by row"))
    loaded = load_table(ART, str(tmp_path))
    assert loaded.profiles.count(3) == 0 and loaded.profiles.texts(0) == [p["text"] for p in rows[0]["profile"]]
    docs = build_docs("art", "profile", data_dir=str(tmp_path), k=2)
    assert [d["post_ids"] for d in docs if d["pair_key"] == "art/3"] == [[], []]


def test_null_post_text_names_row_and_field(tmp_path, all_sample_rows):
    rows = copy.deepcopy(all_sample_rows[ART.config])
    rows[5]["profile"][2]["text"] = None
    write_layout(tmp_path, {ART.config: rows}, "parquet")
    with pytest.raises(DataError) as info:
        load_table(ART, str(tmp_path))
    message = str(info.value)
    # rows are numbered from 1 in messages: index 5 is row 6
    assert "\n" not in message and "row 6 " in message and "'profile.2.text'" in message
    assert rows[5]["id"] in message and f"{FILE}.parquet" in message


def test_shards_and_batches_cover_every_row_in_order(tmp_path, all_sample_rows):
    rows = all_sample_rows[ART.config]
    folder = tmp_path / ART.config
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(rows[:5]), folder / "test-00000-of-00002.parquet")
    pq.write_table(pa.Table.from_pylist(rows[5:]), folder / "test-00001-of-00002.parquet")
    table = load_table(ART, str(tmp_path))
    assert [r.id for r in table.rows] == [r["id"] for r in rows]
    seen = []
    for start, posts in table.profile_batches(rows=3):
        for offset in range(len(posts)):
            seen.append((start + offset, posts.texts(offset)))
    assert seen == [(i, [p["text"] for p in r["profile"]]) for i, r in enumerate(rows)]
    # The data's identity changes with the bytes of any shard.
    key = table.data_key
    pq.write_table(pa.Table.from_pylist(rows[5:][::-1]), folder / "test-00001-of-00002.parquet")
    assert load_table(ART, str(tmp_path)).data_key != key


def test_one_subset_keeps_its_profiles_decoded(tmp_path, all_sample_rows):
    write_layout(tmp_path, all_sample_rows, "parquet")
    art, other = load_table(ART, str(tmp_path)), load_table(subset_by_name("society"), str(tmp_path))
    assert art.profiles.texts(0) and "profiles" in art.__dict__
    assert other.profiles.texts(0) and "profiles" not in art.__dict__
    assert art.profiles.texts(1)  # read again when asked
