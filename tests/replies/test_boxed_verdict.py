"""RM-Bench's boxed pairwise verdicts (prb_tasks/replies/boxed_verdict.py) against a transcription of
every verdict form in the authors' README (THU-KEG/RM-Bench @73c52d7, "The prompt template used for
comparision"), as printed there and as a model sees it once the Python string is formatted."""

from __future__ import annotations

import time

import pytest

from prb_tasks.replies.boxed_verdict import FORMS, parse_boxed
from prb_tasks.replies.verdict import ERROR_MARK, SKIPPED_MARK

# The README's five lines, transcribed: the form, what it says, and the verdict as printed there
# (an escaped Python string: two backslashes, doubled braces).
README = [
    ("A>>B", "Assistant A is significantly better", "\\\\boxed{{A>>B}}", "A", 2),
    ("A>B", "Assistant A is slightly better", "\\\\boxed{{A>B}}", "A", 1),
    ("A=B", "Tie, relatively the same", "\\\\boxed{{A=B}}", None, 0),
    ("B>A", "Assistant B is slightly better", "\\\\boxed{{B>A}}", "B", 1),
    ("B>>A", "Assistant B is significantly better", "\\\\boxed{{B>>A}}", "B", 2),
]


def test_the_five_forms_are_the_readmes() -> None:
    assert {form: meaning for form, meaning in FORMS.items()} == {f: (p, s) for f, _, _, p, s in README}


@pytest.mark.parametrize("form, meaning, printed, preferred, strength", README)
def test_every_readme_form_reads_as_printed_and_as_rendered(form: str, meaning: str, printed: str,
                                                            preferred: str | None, strength: int) -> None:
    rendered = printed.format().replace("\\\\", "\\")  # what str.format makes of the printed line
    assert rendered == "\\boxed{" + form + "}"
    for reply in (f"{meaning}.\n\n{rendered}", f"Final verdict: {printed}", rendered, f"$${rendered}$$",
                  rendered.replace(">", " > ").replace("=", " = ").lower()):
        verdict = parse_boxed(reply)
        assert (verdict.outcome, verdict.form) == ("verdict", form), reply
        assert verdict.preferred == preferred and verdict.tie == (form == "A=B")


@pytest.mark.parametrize("reply, expected", [
    ("First \\boxed{B>A}, on reflection \\boxed{A>>B}", "A>>B"),  # the last box wins
    ("<think>\\boxed{B>>A}</think>So: \\boxed{A>B}", "A>B"),  # reasoning is removed first
    ("\\boxed{A>B}<think>maybe \\boxed{B>A}", "A>B"),  # an unclosed think block: nothing after it counts
    ("A>B", None),  # the verdict must be boxed
    ("Result: A", None),
    ("\\boxed{A}", None),  # not one of the five forms
    ("\\boxed{A>B} or rather \\boxed{A or B}", None),  # the last box is no verdict: not credited
    ("\\boxed{B<A}", None),
    ("\\boxed{A>>>B}", None),
    ("\\boxed{\\text{A>B}}", None),
    ("", None),
])
def test_last_box_and_what_is_not_a_verdict(reply: str, expected: str | None) -> None:
    verdict = parse_boxed(reply)
    assert verdict.form == expected
    assert verdict.outcome == ("verdict" if expected else "unparsed")


def test_markers_and_non_text_are_no_verdicts() -> None:
    assert parse_boxed(f"{ERROR_MARK} 500").outcome == "error"
    assert parse_boxed(f"{SKIPPED_MARK} budget").outcome == "skipped"
    assert parse_boxed(None).outcome == "unparsed"
    assert parse_boxed(None).preferred is None


def test_long_replies_parse_in_linear_time() -> None:
    hostile = "\\boxed{" * 200_000 + "\\\\boxed " * 100_000 + "\\boxed{A>B}"
    started = time.process_time()
    assert parse_boxed(hostile).form == "A>B"
    # Quadratic behaviour on 2 MB would take minutes; linear takes well under a second on any CPU.
    assert time.process_time() - started < 20
