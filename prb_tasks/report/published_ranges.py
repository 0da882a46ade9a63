"""Published figures for how well one ranking predicts another (facts from the papers,
checked 2026-12-05), shown beside what ``prb compare`` and ``prb validity`` measure.

They were measured on other models and other data: they say what range is usual, not what
a run should get.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Published:
    """One published figure for how well one ranking predicts another."""

    measure: str
    value: str
    what: str
    source: str


PUBLISHED = (
    Published("kendall", "0.08-0.31", "personalized RM accuracy vs downstream behaviour",
              "The Reward Model Selection Crisis in Personalized Alignment, arXiv 2512.23067"),
    Published("spearman", "0.26-0.37", "benchmark accuracy vs downstream quality (its Best of N and PPO studies)",
              "Personalized RewardBench (its own downstream study)"),
    Published("kendall", "0.04 mean, 57% near zero or negative",
              "one user's model ranking vs the aggregate ranking, 115 Chatbot Arena users",
              "Personalized Benchmarking: Evaluating LLMs by Individual Preferences, ACL Findings 2026"),
)
