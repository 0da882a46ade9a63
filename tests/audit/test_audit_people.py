"""``prb audit`` on real people: disagreement on the same pair, the majority baseline (this
person left out), shortcuts by language and by country."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from prb_tasks.audit.baselines import outcomes
from prb_tasks.audit.command import audit, render
from prb_tasks.audit.data import AuditRequest, load_audit_data
from prb_tasks.audit.people import MAJORITY, disagreement_lines, people_lines
from tests.community_alignment_fixture import write_ca


@pytest.fixture
def ca_pairs(tmp_path: Path):
    return load_audit_data(AuditRequest(data=str(write_ca(tmp_path / "ca"))))


def test_majority_of_the_other_people_on_the_same_pair(ca_pairs) -> None:
    pairs = ca_pairs.pairs
    credit, tie = outcomes(MAJORITY, pairs)
    by_key = {p.key: (c, t) for p, c, t in zip(pairs, credit, tie)}
    # The shared prompt's answers a and d: 101 and 102 chose d, 103 chose a.
    assert by_key["101/1/first/a"] == (0.5, True)  # the others split: 102 d, 103 a
    assert by_key["103/3/first/d"] == (0.0, False)  # both others chose d, 103 chose a
    assert by_key["102/2/first/b"] == (1.0, False)  # 101 also chose d over b
    # A pair nobody else answered is left out, never guessed.
    assert np.isnan(by_key["104/5/first/b"][0]) and np.isnan(by_key["101/4/first/b"][0])
    assert int((~np.isnan(credit)).sum()) == 7 and float(np.nanmean(credit)) == pytest.approx(5 / 7)


def test_disagreement_and_groups(ca_pairs) -> None:
    assert disagreement_lines(ca_pairs.pairs) == [
        "Requests asked by 2+ people: 1 of 5; pairs answered by 2+ people: 3 of 9",
        # {a,d}: d, d, a (one of three pairs people split on); 2 of 6 ordered pairs of people agree there, 2 of 2
        # on {b,d} and on {c,d}: 6 of 10.
        "On those pairs people disagreed on 1 (33.3%); two people picked the same answer 60.0% of the time "
        "(50%: a coin)",
    ]
    lines = people_lines(ca_pairs.pairs)
    assert "    fr: 11; longer 36.4, position 36.4, majority 71.4" in lines
    assert "    United States: 1; longer 100.0, position 100.0" in lines
    assert all(len(line) <= 120 for line in lines)


def test_the_audit_table_has_the_majority_row_and_the_section(ca_pairs, tmp_path: Path) -> None:
    rows, design = audit(ca_pairs)
    majority = next(r for r in rows if r.name == "majority")
    assert majority.pairs == 7 and majority.acc is not None and majority.acc.value == pytest.approx(5 / 7)
    text = render(ca_pairs, rows, design, "table")
    assert "\nReal people:\n" in text and "majority" in text
    # Data without people answering pairs has neither.
    example = load_audit_data(AuditRequest(data="example"))
    rows, design = audit(example)
    assert "majority" not in [r.name for r in rows]
    assert "Real people" not in render(example, rows, design, "table")
