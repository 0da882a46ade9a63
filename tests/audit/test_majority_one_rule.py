"""``prb audit`` and ``prb eval`` give the majority baseline by one rule (prb_tasks.scoring.majority): a
person who met the same pair twice and chose differently votes for each answer by half, never for both in full,
and never by their last choice only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from prb_tasks.audit.baselines import outcomes
from prb_tasks.audit.data import AuditRequest, load_audit_data
from prb_tasks.audit.people import MAJORITY
from prb_tasks.documents.community_alignment import build_docs
from prb_tasks.scoring.majority import majority_credits
from prb_tasks.scoring.people import people_lines
from tests.community_alignment_fixture import SHARED, SHARED_PROMPT, ca_row, ca_rows, write_ca


def test_the_rule() -> None:
    # x met item i twice (a, then b); z chose a; y chose b. For x: z a, y b, a tie. For z: x half a and half b,
    # y b: b leads. For y: x half and half, z a: a leads. Nobody else met j; no item, no vote.
    entries = [("i", "x", "a"), ("i", "x", "b"), ("i", "z", "a"), ("i", "y", "b"), ("j", "y", "c"), (None, "q", "a")]
    assert majority_credits(entries) == [0.5, 0.5, 0.0, 0.0, None, None]


def test_audit_and_eval_agree_when_a_person_meets_a_pair_twice(tmp_path: Path) -> None:
    # Annotator 101 met the shared prompt's answers again in a later conversation and chose a over d this time.
    rows = [*ca_rows(), ca_row(7, 101, "fr", [(SHARED_PROMPT, SHARED, "a", "")], country="France")]
    folder = write_ca(tmp_path / "ca", rows)
    audit_pairs = load_audit_data(AuditRequest(data=str(folder))).pairs
    credit, _ = outcomes(MAJORITY, audit_pairs)
    audited = float(np.nanmean(credit))
    docs = build_docs("scalar", data_dir=str(folder))
    (line,) = [x for x in people_lines("ca", [{"doc": d, "acc": 1.0} for d in docs]) if "majority" in x]
    evaluated = float(line.split("majority of other people ")[1].split("%")[0]) / 100
    n = int(line.split(" on the ")[1].split()[0])
    assert n == int((~np.isnan(credit)).sum())
    assert audited == pytest.approx(evaluated, abs=0.0005)
    # 103 chose a over d; the others: 102 d, and 101 once d, once a: d leads, so the crowd is wrong on 103's pair.
    by_key = dict(zip((p.key for p in audit_pairs), credit))
    assert by_key["103/3/first/d"] == 0.0
