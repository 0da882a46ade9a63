"""Best-of-N as the Personalized RewardBench authors measure it (``preset: official``).

Read in their ``BoN/score.py`` and ``BoN/evaluate.py`` (commit a5c6814); prb's own rules
(:mod:`prb_tasks.scoring.bestofk`) stay the default. Under the preset:

- **grade**: the grader's reply is stripped; the text inside the first ``[...]`` (or the
  whole reply when there is none) gives every number it contains (``-?\\d+\\.?\\d*``),
  and the grade is their mean. No number at all scores 0. Nothing is checked against
  the rubric: a count of grades other than the aspects' or a value outside 0-2 is
  averaged as it is (``[2, 1, 0]`` reads 1.0, ``Aspect 1: 2`` reads 1.5, ``[3]`` reads 3).

Their picks and per-k summary are :mod:`prb_tasks.scoring.bon_official`:

- **pick**: among the first k candidates the highest reward wins and a tie goes to the
  earliest candidate, as Python's ``max`` keeps the first of equal keys (a NaN reward
  behaves as it does there too: only a later *greater* value replaces the current best).
- **report**: per subset and per k in 1, 2, 4, ..., 128 (a k above N picks among all N,
  as their slicing does), the number of questions, mean, population standard deviation
  (``np.std``), minimum and maximum of the picks' grades.

A failed request or a skipped one (prb's markers; their local vLLM has neither) is no
grade: the candidate's question is left out, and counted, under either rule.
"""

from __future__ import annotations

import re
from typing import Optional

import numpy as np

from prb_tasks.replies.verdict import marker_outcome

#: The ``rule`` a document of the official preset carries (grades and contestants).
RULE = "official"

_BRACKETS = re.compile(r"\[([^\]]+)\]")
_NUMBER = re.compile(r"-?\d+\.?\d*")


def official_grade(completion: object) -> Optional[float]:
    """The grade their evaluate.py reads from a grader reply; None only for prb's
    failure markers (a failed or skipped request, which is no reply at all).

    Args:
        completion: the grader's text.
    """
    if marker_outcome(completion) is not None or not isinstance(completion, str):
        return None
    text = completion.strip()
    inside = _BRACKETS.search(text)
    numbers = [float(n) for n in _NUMBER.findall(inside.group(1) if inside else text)]
    # np.mean as theirs: its pairwise sum can differ from sum() / len() in the last bit.
    return float(np.mean(numbers)) if numbers else 0.0
