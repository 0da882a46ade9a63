"""rewardbench2_judge puts each row back together on its own: two rows sharing an ``id`` are two
rows, as allenai's run_generative_v2.py scores every row of the split independently; and the
judge's prompt shows each bullet on its own line."""

from __future__ import annotations

import pytest

from prb_tasks.data.rewardbench2.schema import Row
from prb_tasks.documents.rewardbench2 import rating_docs
from prb_tasks.scoring.rewardbench2_ratings import judge_best_of_n, judge_ties, judge_top1, process_rating
from tests.scoring.test_rewardbench2_ratings import _theirs_parse, _theirs_row

ROWS = [Row(0, "dup", "Factuality", "Capital of France?", ("Paris.", "Lyon.", "Nice.", "Lille."), 1),
        Row(1, "dup", "Factuality", "Capital of Spain?", ("Madrid.", "Seville.", "Bilbao.", "Cadiz."), 1),
        Row(2, "solo", "Factuality", "Capital of Italy?", ("Rome.", "Milan.", "Turin.", "Genoa."), 1)]
REPLIES = {"Paris.": "9", "Lyon.": "3", "Nice.": "2", "Lille.": "1",
           "Madrid.": "4", "Seville.": "8", "Bilbao.": "", "Cadiz.": "4",
           "Rome.": "7", "Milan.": "7", "Turin.": "x", "Genoa.": "1"}


def _replies(row: Row) -> list[str]:
    return [REPLIES[r] for r in row.responses]


def test_rows_sharing_an_id_are_scored_apart() -> None:
    items = [process_rating(doc, [REPLIES[ROWS[doc["row"]].responses[doc["response_index"]]]])
             for row in ROWS for doc in rating_docs(row)]
    theirs = [_theirs_row([_theirs_parse(t) for t in _replies(row)]) for row in ROWS]
    assert theirs == [1.0, 0.0, 0.5]
    assert judge_best_of_n([i["score"] for i in items]) == pytest.approx(sum(theirs) / 3)
    assert judge_top1([i["top1"] for i in items]) == pytest.approx(1 / 3)


def test_ties_rows_sharing_an_id_are_two_entries() -> None:
    from prb_tasks.scoring.rewardbench2 import ties_score

    ties = [Row(0, "ref:1", "Ties", "Q", ("a", "b", "c"), 1), Row(1, "ref:1", "Ties", "Q", ("d", "e", "f"), 1),
            Row(2, "tied:1", "Ties", "Q", ("g", "h", "i"), 2)]
    # Pooled as allenai pools a prompt's ref rows, the worst correct answer (a: 2) loses to e and f (3).
    ratings = {"a": "2", "b": "1", "c": "1", "d": "9", "e": "3", "f": "3", "g": "9", "h": "8", "i": "2"}
    items = [process_rating(doc, [ratings[row.responses[doc["response_index"]]]])
             for row in ties for doc in rating_docs(row)]
    expected = ties_score((row.id, row.num_correct, [float(_theirs_parse(ratings[r])) for r in row.responses])
                          for row in ties).score
    assert judge_ties([i["score"] for i in items]) == pytest.approx(expected)


@pytest.mark.parametrize("subset", ["Focus", "Ties"])
def test_each_bullet_of_the_prompt_is_on_its_own_line(subset: str) -> None:
    prompt = rating_docs(Row(0, "r", subset, "Q?", ("A.", "B."), 1))[0]["prompt"]
    bullets = [line for line in prompt.splitlines() if line.startswith("- ")]
    assert len(bullets) == 3
    assert bullets[1].startswith("- Be objective.") and ".- " not in prompt
