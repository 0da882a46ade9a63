"""What only data of real people can answer, for ``prb audit``: do people disagree on the same
pair, does the crowd's choice predict a person's (the majority baseline), and how the
shortcuts fare by language and by country.

A pair's ``item`` is the request and its two answers (hashed, either order): two people with the
same item were shown the same comparison. Community Alignment's pre-generated prompts are
answered by many annotators; PRISM's repeated opening prompts got different sampled answers,
so its items rarely repeat and the prompt count says how often the request itself did.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np

from prb_tasks.audit.baselines import Baseline, Scores
from prb_tasks.audit.data import AuditPair
from prb_tasks.scoring.majority import majority_credits


def _majority(pairs: list[AuditPair]) -> Callable[[AuditPair], Scores]:
    # prb eval's rule (one function): what most other people chose on the same item.
    credits = majority_credits([(p.item, str(p.user), p.chosen_id or p.chosen.strip()) for p in pairs])
    by_pair = {id(pair): credit for pair, credit in zip(pairs, credits)}

    def scores(pair: AuditPair) -> Scores:
        credit = by_pair.get(id(pair))
        if credit is None:
            return None
        return (1.0, 0.0) if credit == 1 else (0.0, 1.0) if credit == 0 else (0.0, 0.0)

    return scores


MAJORITY = Baseline("majority", "what most other people chose on the same pair",
                    lambda pair: None, prepare=_majority)


def has_people(pairs: list[AuditPair]) -> bool:
    """Whether the pairs come from a family of real people (they carry items)."""
    return any(p.item is not None for p in pairs)


def disagreement_lines(pairs: list[AuditPair]) -> list[str]:
    """How often people disagree on the same pair, and how often a request was asked by several people.

    Args:
        pairs: the data set's pairs.
    """
    chosen: dict[str, dict[str, str]] = defaultdict(dict)
    askers: dict[str, set[str]] = defaultdict(set)
    for pair in pairs:
        if pair.item is None:
            continue
        chosen[pair.item][str(pair.user)] = pair.chosen.strip()
        askers[" ".join(pair.question.split())].add(str(pair.user))
    shared = {item: picks for item, picks in chosen.items() if len(picks) >= 2}
    repeated = sum(len(people) >= 2 for people in askers.values())
    lines = [f"Requests asked by 2+ people: {repeated} of {len(askers)}; pairs answered by 2+ people: "
             f"{len(shared)} of {len(chosen)}"]
    if shared:
        split = sum(len(set(picks.values())) > 1 for picks in shared.values())
        agree, total = 0, 0
        for picks in shared.values():
            counts = Counter(picks.values())
            n = sum(counts.values())
            agree += sum(c * (c - 1) for c in counts.values())
            total += n * (n - 1)
        lines.append(f"On those pairs people disagreed on {split} ({100 * split / len(shared):.1f}%); two people "
                     f"picked the same answer {100 * agree / total:.1f}% of the time (50%: a coin)")
    return lines


#: The shortcuts shown per language and country (the crowd, and the two that need no text).
BY_GROUP = ("majority", "longer", "position")


#: The groups the lines split by: what each pair says, and how a line names it.
GROUPS = (("language", "language"), ("country", "country"), ("conversation_type", "conversation type"),
          ("cohort", "cohort"), ("gap_bucket", "rating gap (gap 0: a tie broken at random)"))


def group_lines(pairs: list[AuditPair]) -> list[str]:
    """The :data:`BY_GROUP` shortcuts' accuracy by language, country, conversation type, cohort and
    rating gap (each where the pairs have values).

    Args:
        pairs: the data set's pairs.
    """
    from prb_tasks.audit.baselines import BASELINES, outcomes

    credits = {b.name: outcomes(b, pairs)[0] for b in (*BASELINES, MAJORITY) if b.name in BY_GROUP}
    lines: list[str] = []
    for field, label in GROUPS:
        values = [str(getattr(p, field)) for p in pairs]
        groups = Counter(v for v in values if v)
        if not groups:
            continue
        lines.append(f"  By {label} (pairs; accuracy % of each shortcut where it applies):")
        for group, n in groups.most_common():
            where = np.array([v == group for v in values])
            parts = []
            for name, credit in credits.items():
                measured = where & ~np.isnan(credit)
                if measured.any():
                    parts.append(f"{name} {100 * float(credit[measured].mean()):.1f}")
            lines.append(f"    {group[:40]}: {n}; " + ", ".join(parts))
    return lines


def people_lines(pairs: list[AuditPair]) -> list[str]:
    """The real-people section of ``prb audit`` (empty for data without people answering pairs).

    Args:
        pairs: the data set's pairs.
    """
    if not has_people(pairs):
        return []
    return ["Real people:", *(f"  {line}" for line in disagreement_lines(pairs)), *group_lines(pairs)]
