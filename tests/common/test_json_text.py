"""textfiles._json is json.loads on a line: the same values, the same refusals (message and place)."""

from __future__ import annotations

import json
import random

from prb_tasks.common.textfiles import _json


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
