"""The original script's verdict reading: our re-implementation against a transcription.

``_transcribed`` below restates, in a few lines and in our own words, what the authors'
``evaluation/pairwise.py`` does with a completion (read from their repository at commit
a5c6814). ``official_reading`` is written differently (find/translate instead of
split/replace); the two must agree on every completion.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prb_tasks.replies.verdict import ERROR_MARK, SKIPPED_MARK, parse_verdict
from prb_tasks.scoring.official import official_judgment, official_reading


def _transcribed(completion: str) -> tuple[str, bool]:
    """(letter, parse failed) as the original script computes them."""
    text = completion.strip().split("</think>")[-1].strip()
    text = text.replace('"', "").replace("*", "").strip()
    letter = None
    if "result:" in text.lower():
        head = text.lower().split("result:")[1].strip()
        letter = "A" if head.startswith("a") else "B" if head.startswith("b") else None
    return (letter or "A"), letter is None


# Whitespace that str.strip() removes, including NBSP, ideographic space, NEL and the
# information separators; and look-alikes it keeps (zero-width space, BOM).
_SPACES = [" ", "\n", "\t", "\r\n", "\u00a0", "\u3000", "\u2003", "\u0085", "\u2028", "\x1c", "\x0b"]
_NOT_SPACES = ["\u200b", "\ufeff", "\u2060"]

_VERDICTS = [
    "Result: A", "Result: B", "result: a", "result: b", "RESULT: B", "Result:B", "Result:   b",
    "Result: Response B", "Result: Response A", "Result: response b", "Result: [B]", "Result: (B)",
    "Result: 'B'", "Result: \u2018B\u2019", "Result: \u201cB\u201d", 'Result: "B"', "Result: **B**",
    "**Result:** B", "**Result: B**", "*Result*: b", "Result: `B`", "Result: B.", "Result: Both",
    "Result: a tie", "Result: Answer B", "Result: none", "Result:", "Result :B", "Result - B",
    "Verdict: B", "Final result: B", "result:\u00a0b", "result:\u3000B", "result:\u200bB",
    "Result: \ufeffB", "Result: B\nResult: A", "Result: A result: B", "result: result: b",
    "Result: Bresult: a", "RESULT:b RESULT:a", "[[B]]", "B", "b", "Answer: B", '{"result": "B"}',
    "Result:\n\nB", "Result: \n A", "Result: \u00c1", "Result: \uff22", "Result: \u0392",
]
_PREFIXES = [
    "", "The second fits the person better.\n", "<think>Result: A</think>", "<think>Result: B</think>\n",
    "<think>unfinished reasoning Result: A", "Result: A</think>", "</think></think>", "<THINK>x</THINK>",
    "<think>a</think> middle <think>b</think>", "Result: b ... </think>", "Result: b </THINK>", "\u00a0\u3000",
    "Reasoning: the user wants short answers.\n\n", "**Analysis** The user said \"result: a\".\n",
]
_SUFFIXES = ["", "\n", " because it is shorter.", "\u00a0", "\n</think>", "</think> ", "\u200b", "\nresult: a"]


def _corpus() -> list[str]:
    texts: list[str] = ["", " ", "\n\n", "\u00a0", "\u3000", "</think>", "<think>", "result:", "RESULT:"]
    texts += [s + v + s for s in _SPACES for v in ("Result: B", "result: b", "B")]
    texts += [n + v for n in _NOT_SPACES for v in ("Result: B", "b")]
    texts += ["Result:" + n + "B" for n in _NOT_SPACES]
    for prefix, verdict, suffix in itertools.product(_PREFIXES, _VERDICTS, _SUFFIXES[:3]):
        texts.append(prefix + verdict + suffix)
    for verdict, suffix in itertools.product(_VERDICTS, _SUFFIXES[3:]):
        texts.append(verdict + suffix)
    return texts


CORPUS = _corpus()


def test_corpus_is_large_and_varied():
    assert len(CORPUS) >= 200
    readings = [_transcribed(t) for t in CORPUS]
    assert {r for r in readings} == {("A", False), ("B", False), ("A", True)}


@pytest.mark.parametrize("text", CORPUS)
def test_same_reading_as_the_transcription(text):
    reading = official_reading(text)
    assert (reading.letter, reading.parse_failed) == _transcribed(text)


@pytest.mark.parametrize(
    "text, letter, failed",
    [
        ("Result: B", "B", False),
        ("result: b", "B", False),
        ("**Result:** B", "B", False),
        ('"Result": "B"', "B", False),
        ("Result: Response B", "A", True),
        ("Result: [B]", "A", True),
        ("Result: 'B'", "A", True),
        ("Result: \u201cB\u201d", "A", True),
        ("Result: A\nResult: B", "A", False),
        ("result: result: b", "A", True),  # the text between the first two is empty
        ("<think>Result: B</think>\nResult: A", "A", False),
        ("Result: B <think>more", "B", False),
        ("Result: B </THINK> no verdict", "B", False),  # only the lower-case tag counts
        ("</think>Result: B</think>no verdict", "A", True),
        ("Result:\u00a0\u3000b", "B", False),
        ("Result:\u200bB", "A", True),
        ("", "A", True),
        ("I cannot decide.", "A", True),
    ],
)
def test_known_readings(text, letter, failed):
    assert official_reading(text) == type(official_reading(text))(letter, failed)


def test_differs_from_our_reading_where_the_issue_says():
    # Ours reads the named letter; the original falls back to A.
    assert parse_verdict("Result: Response B").letter == "B"
    assert official_reading("Result: Response B").letter == "A"
    # Ours reads the last verdict; the original the first.
    assert parse_verdict("Result: A\nResult: B").letter == "B"
    assert official_reading("Result: A\nResult: B").letter == "A"


def test_failed_and_skipped_requests_have_no_reading():
    assert official_judgment(f"{ERROR_MARK} RateLimitError") is None
    assert official_judgment(f"{SKIPPED_MARK} max_cost reached") is None
    assert official_judgment(None) == official_reading("")
    assert official_judgment("result: b").letter == "B"


_pieces = st.sampled_from(
    ["Result:", "result:", "RESULT:", "A", "B", "a", "b", "Response ", "<think>", "</think>", '"', "*", "'",
     "[", "]", " ", "\n", "\u00a0", "\u3000", "\u200b", "x", "\u0130", "\u212a"]
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_pieces, max_size=14))
def test_random_verdict_like_text(parts):
    text = "".join(parts)
    reading = official_reading(text)
    assert (reading.letter, reading.parse_failed) == _transcribed(text)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=200))
def test_random_text(text):
    reading = official_reading(text)
    assert (reading.letter, reading.parse_failed) == _transcribed(text)
