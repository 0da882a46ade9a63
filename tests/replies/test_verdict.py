"""Verdict parsing: the accepted forms, the last verdict wins, reasoning is ignored,
ambiguous verdicts are not credited, and any completion parses quickly."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prb_tasks.replies.verdict import (
    ERROR_MARK,
    SKIPPED_MARK,
    TAIL_CHARS,
    parse_verdict,
    strip_reasoning,
)


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
        ("Result: A (Response A fits the user)", "A"),
        ("Final verdict: Response A is better than Response B.", "A"),
        ("Result: A, because B misses the point", "A"),
        ("Result: A\nBoth answers are fluent.", "A"),
        ('{"reasoning": "Result: A is weaker", "choice": "B"}', "B"),
        ("Repeat the format Result: A or Result: B.\nResult: B", "B"),
        ("<THINK>Result: A</Think>Result: B", "B"),
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


@pytest.mark.parametrize(
    "text",
    ["Result: A or B", "Result: A/B", "Result: A and B", "Result: Both", "Result: Neither", "Result: A, B",
     "Result: tie", "Result: A tie", "Result: A & B", "Result: Response A or Response B", "Result: [A/B]",
     "Result: A or Result: B", "Final verdict: neither A nor B", '{"choice": "A or B"}', '{"winner": "tie"}',
     "A or B", "Both"],
)
def test_ambiguous_verdicts_are_not_credited(text):
    assert parse_verdict(text).outcome == "unparsed"


@pytest.mark.parametrize("ambiguous", ["Result: Both", "Result: A or B", "Final verdict: a tie", '{"choice": "A/B"}'])
def test_a_last_ambiguous_verdict_overrides_an_earlier_letter(ambiguous):
    assert parse_verdict(f"Result: A\nOn reflection:\n{ambiguous}").outcome == "unparsed"


@pytest.mark.parametrize(
    "text, letter",
    [("Result: a", "A"), ("Result: b", "B"), ("**Result:** **b**", "B"), ("Result: response b.\nThanks", "B"),
     ("a", "A"), ("b.", "B"), ("[[b]]", "B"), ('{"choice": "b"}', "B"),
     ("Answer: a response that follows the profile", None), ("Result: b, because it fits", None),
     ("Result: a tie", None), ("The answer: a", "A")],
)
def test_lower_case_letter_counts_only_standing_alone(text, letter):
    """Lower case after a keyword follows the same rule as a bare reply: alone on its line."""
    assert parse_verdict(text).letter == letter


def test_only_the_tail_can_hold_the_verdict():
    padding = "x " * TAIL_CHARS
    assert parse_verdict("Result: B\n" + padding).outcome == "unparsed"
    assert parse_verdict(padding + "\nResult: B").letter == "B"
    # Reasoning is removed before the tail is taken.
    assert parse_verdict("Result: B\n<think>" + padding).letter == "B"


def test_strip_reasoning():
    assert strip_reasoning("a</think>b</THINK>c<think>d<think>e").strip() == "c"
    assert strip_reasoning("no tags") == "no tags"


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


# Hostile completions: a judge looping on tags, whitespace, brackets or verdict keywords.
_LOOP_UNITS = ["<think>", "<THINK>", "</think>", " ", "\n", "Result:", "Result: A or ", "{", "[", "[[", "{\"choice\": ",
               '{"choice": "A"}', "Final ", "Response ", "A", "b", "*", "`", ":", "-", "é", "\u0130"]
_MB = 1_000_000


@st.composite
def _hostile(draw):
    parts = []
    budget = _MB
    for _ in range(draw(st.integers(1, 4))):
        unit = draw(st.sampled_from(_LOOP_UNITS) | st.text(min_size=1, max_size=12))
        reps = draw(st.integers(1, max(1, budget // len(unit))))
        parts.append(unit * reps)
        budget -= len(unit) * reps
        if budget <= 0:
            break
        parts.append(draw(st.text(max_size=40)))
    return "".join(parts)[:_MB]


@settings(max_examples=60, deadline=None)
@given(_hostile())
def test_any_completion_up_to_1_mb_parses_fast(text):
    """The issue's target is 100 ms per 1 MB (benchmarks/bench_verdict.py); 1 s leaves room for a loaded machine."""
    # CPU time, not wall time: other processes on a loaded machine do not count.
    start = time.process_time()
    verdict = parse_verdict(text)
    elapsed = time.process_time() - start
    assert verdict.outcome in ("verdict", "unparsed")
    assert elapsed < 1.0, f"{elapsed:.2f} s for {len(text):,} characters"


@pytest.mark.parametrize(
    "text",
    ["<THINK>" * 20_000, "<think>" * 2_300, "Result:" + " " * 16_000 + "x", "<think>" * 150_000,
     "Result:" + " " * _MB + "x", "{" * _MB, "[[" + " " * _MB, "Final" + " " * _MB, "Result: A or " * 80_000],
)
def test_issue_inputs_parse_fast(text):
    start = time.process_time()  # CPU time: a loaded machine does not count
    assert parse_verdict(text).outcome == "unparsed"
    assert time.process_time() - start < 1.0
