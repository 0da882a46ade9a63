"""The benchmark's three subsets (HF configs) and the short names our tasks use."""

from __future__ import annotations

from dataclasses import dataclass

HF_REPO = "QiyaoMa/Personalized-RewardBench"
HF_SPLIT = "test"


@dataclass(frozen=True)
class Subset:
    """One HF config of the benchmark.

    Attributes:
        config: HF config name, also the folder name in the repo layout.
        short: suffix used in task names (``personalized_rb_<short>``).
        expected_rows: row count of the published test split (None if unknown).
    """

    config: str
    short: str
    expected_rows: int | None


SUBSETS: tuple[Subset, ...] = (
    Subset("Art_and_Entertainment", "art", 767),
    Subset("Lifestyle_and_Personal_Development", "lifestyle", 989),
    # 2,830 in total minus the two published counts; not confirmed independently.
    Subset("Society_and_Culture", "society", 1074),
)
"""The benchmark's three subsets (HF configs) with their published row counts."""


def subset_by_name(name: str) -> Subset:
    """Find a subset by HF config name or short name (case-insensitive)."""
    for s in SUBSETS:
        if name.lower() in (s.config.lower(), s.short):
            return s
    known = ", ".join(f"{s.config} ({s.short})" for s in SUBSETS)
    raise ValueError(f"prb: unknown subset '{name}'; expected one of: {known}")
