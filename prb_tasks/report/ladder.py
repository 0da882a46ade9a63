"""One model across task variants on the same pairs: the ladder that locates its weakness.

Question only -> raw profile -> planner -> oracle aspects: each rung gives the model
more of what the user expects. Where accuracy jumps says whether the model fails at
inferring the user or at applying what it knows. Any variants present are laid out in
:data:`ORDER`; unknown ones follow alphabetically.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from prb_tasks.report.outcomes import Entry, design_of
from prb_tasks.report.pairwise import aligned, shared_keys
from prb_tasks.stats.pairs import Interval

ORDER = ("both", "scalar", "official", "profile", "scalar_profile", "plan", "planned", "oracle")
NAMES = {
    "both": "question only", "scalar": "question only", "official": "question only (official order)",
    "profile": "raw profile", "scalar_profile": "raw profile", "planned": "planner aspects",
    "oracle": "oracle aspects (diagnostic)",
}


@dataclass
class Rung:
    """One variant of the ladder, on the pairs every rung shares."""

    id: str
    family: str
    variant: str
    name: str
    acc: Interval | None
    gain: Interval | None
    p_value: float | None


@dataclass
class Ladder:
    """One model (label and kind) on one data source across its variants; ``resampled``
    says what its intervals and tests resampled (``36 pairs``, ``12 users``)."""

    label: str
    kind: str
    source: str
    pairs: int
    rungs: list[Rung]
    resampled: str = ""


def _rank(variant: str) -> tuple[int, str]:
    return (ORDER.index(variant), "") if variant in ORDER else (len(ORDER), variant)


def ladders(entries: list[Entry]) -> list[Ladder]:
    """A ladder for every model with at least two variants on one data source."""
    groups: dict[tuple[str, str, str], dict[str, Entry]] = defaultdict(dict)
    for entry in entries:
        if entry.logged and entry.variant:
            # The newest run of a variant wins (entries come oldest first).
            groups[(entry.label, entry.kind, entry.source)][entry.variant] = entry
    out: list[Ladder] = []
    for (label, kind, source), by_variant in groups.items():
        if len(by_variant) < 2:
            continue
        ordered = [by_variant[v] for v in sorted(by_variant, key=_rank)]
        keys = shared_keys(ordered)
        if not keys:
            continue
        base = aligned(ordered[0], keys)
        design = design_of(ordered[0], keys)
        rungs = []
        for i, entry in enumerate(ordered):
            scores = aligned(entry, keys)
            acc = design.interval(scores)
            gain = design.interval(scores - base) if i else None
            p = design.paired_test(scores, base).p_value if i else None
            variant = entry.variant or "?"
            rungs.append(Rung(entry.id, entry.family.name, variant, NAMES.get(variant, variant), acc, gain, p))
        out.append(Ladder(label, kind, source, len(keys), rungs, design.label()))
    return out
