"""textfiles._json is json.loads on a line: the same values, the same refusals (message and place)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from prb_tasks.common.errors import PRBError
from prb_tasks.common.textfiles import _json, json_lines_at


def _outcome(parse, text: str) -> tuple:
    try:
        return ("value", repr(parse(text)))
    except json.JSONDecodeError as exc:
        return ("refused", exc.msg, exc.pos)
    except RecursionError:
        return ("too deep",)
    except ValueError as exc:
        return ("number", str(exc))


def test_random_lines_parse_or_fail_as_json_loads() -> None:
    rng = random.Random(3)
    pieces = ["{", "}", "[", "]", '"a"', ":", ",", " ", "1", "-", ".5", "e3", "NaN", "Infinity", "true", "null",
              "\ufeff", "\t", '"\\u00e9"', '"\\', "x", "\n", "0"]
    for _ in range(50000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        assert _outcome(_json, text) == _outcome(json.loads, text), repr(text)


def test_edge_lines_parse_or_fail_as_json_loads() -> None:
    for text in ["[" * 100000, "1" * 5000, ' {"a": 1}  ', '{"a": 1} x', "", "   ", "\ufeff{}", '{"a": [1, 2.5, null]}']:
        assert _outcome(_json, text) == _outcome(json.loads, text), text[:20]


def test_json_lines_refuse_a_lone_surrogate_and_keep_pairs_and_escaped_backslashes(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    # An escaped emoji (a pair), a literal backslash before "ud800" (text, no escape), then a lone low half in a key.
    path.write_text('{"a": "\\ud83d\\ude00"}\n{"b": "\\\\ud800"}\n{"\\udc00": 1}\n', encoding="utf-8")
    rows = json_lines_at(path, "data file", "fix the line", max_line=None)
    assert next(rows)[2] == {"a": "\U0001f600"}
    assert next(rows)[2] == {"b": "\\ud800"}
    with pytest.raises(PRBError) as caught:
        next(rows)
    assert str(caught.value) == (f"prb: {path} line 3: a text holds \\udc00, half of a UTF-16 surrogate pair "
                                 "standing alone (no character); fix the line")
