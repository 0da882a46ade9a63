"""The scalar path holds one piece of profiles at a time, in both layouts.

A profile-based scorer (``bm25``, ``embedding``) asks for one user's posts after the
other; what the process holds must not grow with the data. Measured by what Arrow's
memory pool holds (bytes alive, not time) after loading and after each lookup.
"""

from __future__ import annotations

import copy
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prb_tasks.data import profile_store
from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.columnar import PIECE_ROWS
from prb_tasks.data.personalized_rb.sources import load_table
from prb_tasks.data.personalized_rb.subsets import subset_by_name
from prb_tasks.documents.personalized_rb import build_docs
from tests.conftest import FILE, write_layout

ART = subset_by_name("art")
ROWS = 1500


def _big_rows(sample: list[dict]) -> list[dict]:
    """``ROWS`` rows with profiles of about 20 KB each, every one different."""
    rows = []
    for n in range(ROWS):
        row = copy.deepcopy(sample[n % len(sample)])
        row["id"] = f"big-{n}"
        row["profile"] = [{"category": "c", "id": f"{n}-{i}", "text": f"user {n} post {i} " + "word " * 200}
                          for i in range(20)]
        rows.append(row)
    return rows


def _held() -> int:
    pa.default_memory_pool().release_unused()
    return pa.total_allocated_bytes()


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_scalar_lookups_hold_one_piece_of_profiles(tmp_path, all_sample_rows, fmt):
    rows = _big_rows(all_sample_rows[ART.config])
    write_layout(tmp_path, {ART.config: rows}, fmt)
    profile_bytes = sum(len(p["text"]) for row in rows for p in row["profile"])  # about 30 MB
    before = _held()
    docs = build_docs("art", "scalar", data_dir=str(tmp_path))
    # Loaded: the small fields only (the old .jsonl reader held every profile from here on).
    loaded = _held() - before
    assert loaded < profile_bytes / 5
    peak = 0
    for doc, row in zip(docs, rows):
        assert profile_store.lookup(doc["profile_key"]) == tuple(p["text"] for p in row["profile"])
        peak = max(peak, _held() - before - loaded)
    # One piece of PIECE_ROWS rows (about 1.3 MB) and the parquet reader's buffers (about
    # 6 MB here), never the column (the old code decoded the whole subset on the first lookup).
    assert peak < profile_bytes / 3


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_lookups_in_any_order_read_the_right_row(tmp_path, all_sample_rows, fmt):
    rows = _big_rows(all_sample_rows[ART.config])[:3 * PIECE_ROWS + 5]
    folder = tmp_path / ART.config
    if fmt == "parquet":
        folder.mkdir()
        # Several row groups, none a multiple of a piece: a lookup starts at its row's group.
        pq.write_table(pa.Table.from_pylist(rows), folder / f"{FILE}.parquet", row_group_size=50)
    else:
        write_layout(tmp_path, {ART.config: rows}, fmt)
        path = folder / f"{FILE}.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        # A byte-order mark and blank lines move the offsets; rows still count from 1.
        path.write_bytes(b"\xef\xbb\xbf" + lines[0] + b"\n" + b"".join(lines[1:3]) + b"  \n" + b"".join(lines[3:]))
    table = load_table(ART, str(tmp_path))
    order = [len(rows) - 1, 0, 1, PIECE_ROWS + 3, 2, 120, 49, 50, 51, len(rows) - 2, 7, *range(len(rows))]
    for n in order:
        assert table.profile_texts(n) == tuple(p["text"] for p in rows[n]["profile"]), n
    with pytest.raises(IndexError):
        table.profile_texts(len(rows))


def test_jsonl_rewritten_after_loading_is_one_line(tmp_path, all_sample_rows):
    rows = all_sample_rows[ART.config]
    write_layout(tmp_path, {ART.config: rows}, "jsonl")
    table = load_table(ART, str(tmp_path))
    path = tmp_path / ART.config / f"{FILE}.jsonl"
    path.write_text("".join(json.dumps({"id": r["id"]}) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError) as info:
        table.profile_texts(4)
    assert str(info.value).startswith(f"prb: {path} changed while it was being read (row 5: ")
    assert "\n" not in str(info.value)
