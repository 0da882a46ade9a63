"""Verdict parsing: the accepted forms, the last verdict wins, reasoning is ignored."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prb_tasks.scoring.verdict import ERROR_MARK, SKIPPED_MARK, parse_verdict


@pytest.mark.parametrize(
    "text, letter",
    [
        ("The second fits better.\nResult: B", "B"),
        ("Result: A", "A"),
        ("**Result:** B", "B"),
        ("**Result: A**", "A"),
        ("My verdict is [[A]]", "A"),
        ("[[b]]", "B"),
        ("Answer: B", "B"),
        ('{"choice": "B", "reason": "budget"}', "B"),
        ('```json\n{"winner": "Response A"}\n```', "A"),
        ("Final verdict: Response B", "B"),
        ("Result: (A)", "A"),
        ("B", "B"),
        ("Response A.", "A"),
        ("Result: A\nOn reflection, Result: B", "B"),
        ("<think>Result: A looks right</think>\nResult: B", "B"),
        ("stuff Result: A </think> Result: B", "B"),
    ],
)
def test_accepted_forms(text, letter):
    verdict = parse_verdict(text)
    assert verdict.outcome == "verdict" and verdict.letter == letter


@pytest.mark.parametrize(
    "text",
    ["", "   ", "I cannot decide between these two.", "Result: a tie", "<think>Result: A</think>",
     "<think>Result: B and still thinking", "Both are good", "Result:", "ABBA"],
)
def test_unparsed_is_never_a_letter(text):
    assert parse_verdict(text).outcome == "unparsed"
    assert parse_verdict(text).letter is None


def test_markers_and_non_strings():
    assert parse_verdict(f"{ERROR_MARK} RateLimitError").outcome == "error"
    assert parse_verdict(f"{SKIPPED_MARK} max_cost reached").outcome == "skipped"
    assert parse_verdict(None).outcome == "unparsed"


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300))
def test_parser_never_raises(text):
    verdict = parse_verdict(text)
    assert verdict.outcome in ("verdict", "unparsed", "error", "skipped")
    assert (verdict.letter in ("A", "B")) == (verdict.outcome == "verdict")


_pieces = st.sampled_from(
    ["Result: A", "Result: B", "[[A]]", "[[B]]", "<think>", "</think>", "{", "}", '"choice": "A"',
     "**", "Answer:", " ", "\n", "lorem ipsum", "Response B"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_pieces, max_size=12))
def test_parser_never_raises_on_verdict_like_noise(parts):
    text = "".join(parts)
    parse_verdict(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="<>[]{}"), max_size=80),
       st.sampled_from(["A", "B"]))
def test_appended_verdict_wins(prefix, letter):
    assert parse_verdict(f"{prefix}\nResult: {letter}").letter == letter
