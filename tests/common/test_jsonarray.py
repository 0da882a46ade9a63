"""A JSON array read an element at a time: the same values as ``json.loads`` wherever the
chunks happen to cut the text, and every malformed file refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.common.jsonarray import NotAnArray, array_items

GOOD = [
    "[]",
    " \n[ ]\n ",
    '[{"user_id": "u1", "xs": [1, 2, {"a": "]}\\",["}]}, {"user_id": "u2"}]',
    "[12345, -6.5e3, true, false, null, \"x\", [], {}]",
    '[{"text": "caf\u00e9 \u65e5\u672c \U0001f600 \\u00e9"}, 7]',
    "[\r\n\t1\r\n,\r\n2\r\n]\r\n",
]


@pytest.mark.parametrize("text", GOOD)
@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 20])
def test_elements_are_what_json_loads_gives_wherever_chunks_cut(tmp_path: Path, text: str, chunk: int) -> None:
    # A chunk of 1 cuts every number, literal, string and multi-byte character somewhere.
    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")
    assert list(array_items(path, chunk=chunk)) == json.loads(text)


def test_a_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'[{"a": 1}]')
    assert list(array_items(path, chunk=2)) == [{"a": 1}]


BAD = [
    "", "   ", '{"user_id": "u1"}', '"text"', "[1,]", "[1 2]", "[1] x", "[1] [2]", "[1", "[", "[1,",
    '[{"a": 1}, {"a": }]', "[tru]", "[1, 2, 3,, 4]",
]


@pytest.mark.parametrize("text", BAD)
@pytest.mark.parametrize("chunk", [1, 4, 1 << 20])
def test_anything_but_a_well_formed_array_is_refused(tmp_path: Path, text: str, chunk: int) -> None:
    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(NotAnArray):
        list(array_items(path, chunk=chunk))


def test_bytes_that_are_not_utf8_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b'[{"a": "caf\xe9"}]')
    with pytest.raises(NotAnArray):
        list(array_items(path, chunk=4))


def test_elements_are_handed_out_as_they_are_reached(tmp_path: Path) -> None:
    # The point of the module: the first element arrives before the end of the file is read,
    # and an element handed out is not kept.
    path = tmp_path / "a.json"
    path.write_text(json.dumps([{"n": n, "pad": "x" * 100} for n in range(1000)]), encoding="utf-8")
    items = array_items(path, chunk=256)
    first = next(items)
    frame = items.gi_frame
    assert frame is not None
    window = frame.f_locals["text"]
    assert first["n"] == 0 and not window.ended and len(window.text) < 2_000
    assert sum(1 for _ in items) == 999
