"""Choose and build a scorer from ``--model_args``."""

from __future__ import annotations

from typing import Any

from prb_tasks.rm.scorers.base import Scorer
from prb_tasks.rm.scorers.lexical import BM25ProfileScorer, LengthScorer

BASELINES = {"length": LengthScorer, "bm25": BM25ProfileScorer}


def build_scorer(options: dict[str, Any]) -> Scorer:
    """The scorer described by ``options`` (already validated model_args).

    Args:
        options: ``scorer`` names a baseline.
    """
    name = options.get("scorer")
    if name in BASELINES:
        return BASELINES[name]()
    known = ", ".join(sorted(BASELINES))
    raise ValueError(f"prb-rm: unknown scorer '{name}'; choose one of: {known}")
