"""Per-user truth of a report section: whom each model serves, whom personalization
helps, and whose ranking of the models differs from the aggregate.

Built for sections whose data names its users (PersonalLLM, PRISM, Community Alignment,
your own data, the few-shot tasks); the statistics themselves are
:mod:`prb_tasks.stats.peruser`. A section of Personalized RewardBench (one pair per asker,
no user ids) gets none of this.

*Counterparts* (who is helped): a personalized model is set beside the model that sees the
same pairs without the user:

- in a few-shot section, every method beside the ``nonpersonalized`` method (its label
  carries ``method=nonpersonalized``);
- across sections of one benchmark and data source, a model shown something about the user
  (history, demographics, profile...) beside the same model (same run label: model and
  arguments) on the user-blind task of the ``question`` setting.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from prb_tasks.report.outcomes import Entry
from prb_tasks.report.pairwise import aligned, shared_keys
from prb_tasks.stats.pairs import ITERS, SEED
from prb_tasks.stats.peruser import (
    MIN_PAIRS,
    Agreement,
    Split,
    Spread,
    group_splits,
    helped_split,
    rank_agreement,
    spread,
    user_means,
)


class Section(Protocol):
    """What this module reads of a report section (:class:`prb_tasks.report.build.Section`)."""

    setting: str
    source: str
    entries: list[Entry]
    set_apart: dict[str, str]

#: Fields of a logged document that put users into groups (people data sets carry them).
GROUP_FIELDS = ("country", "language")
#: A field with more values than this is not a grouping (an id, a free text).
MAX_GROUPS = 30
#: Groups with fewer users than this are left out of the split by group.
MIN_GROUP_USERS = 3
#: What counts as chance for one pair.
CHANCE = 0.5
NONPERSONALIZED = "method=nonpersonalized"
USER_BLIND = "question"


@dataclass
class ModelSpread:
    """One model's per-user accuracy: its distribution, and every user's value for the chart."""

    id: str
    label: str
    spread: Spread
    #: per counted user, the accuracy (same order as ``users``).
    accuracies: list[float] = field(default_factory=list)
    users: list[str] = field(default_factory=list)


@dataclass
class GroupSplit:
    """Helped / hurt / level within one group of users (one value of a field)."""

    field: str
    value: str
    split: Split


@dataclass
class Helped:
    """One personalized model beside its non-personalized counterpart."""

    id: str
    label: str
    counterpart_id: str
    counterpart_label: str
    counterpart_is: str
    shared_pairs: int
    split: Split
    groups: list[GroupSplit] = field(default_factory=list)

    @property
    def resampled(self) -> str:
        return f"{self.split.users} users"


@dataclass
class PerUser:
    """The per-user blocks of one section (see the module docstring)."""

    min_pairs: int
    chance: float
    iters: int
    seed: int
    spreads: list[ModelSpread]
    helped: list[Helped]
    agreement: Agreement | None
    agreement_models: list[str]
    agreement_pairs: int
    #: why a block is empty or partial (no counterpart, too few models...).
    notes: list[str] = field(default_factory=list)
    #: fields of the data that could group users, and which were found.
    group_fields: list[str] = field(default_factory=list)


def users_of(entry: Entry) -> list[str]:
    """Per pair, its user; a pair without one is its own user (as the intervals count it)."""
    known = entry.user if len(entry.user) == len(entry.keys) else [None] * len(entry.keys)
    return [u if u is not None else f"pair:{k}" for u, k in zip(known, entry.keys)]


def names_users(entry: Entry) -> bool:
    """Whether the entry's data names the user of its pairs."""
    return entry.logged and any(u is not None for u in entry.user)


def _rows(entry: Entry, keys: list[str]) -> list[int]:
    index = entry.index
    return [index[k] for k in keys]


def model_spread(entry: Entry, min_pairs: int = MIN_PAIRS) -> ModelSpread:
    """The distribution of one model's per-user accuracy.

    Args:
        entry: a logged model whose data names users.
        min_pairs: users with fewer pairs are counted apart.
    """
    means = user_means(entry.score, users_of(entry))
    keep = means.pairs >= min_pairs
    return ModelSpread(entry.id, entry.label, spread(means.means, means.pairs, min_pairs, CHANCE),
                       [float(x) for x in means.means[keep]], [u for u, k in zip(means.users, keep) if k])


def _user_groups(entry: Entry, users: list[str], keys: list[str]) -> dict[str, dict[str, str]]:
    """field -> user -> group, from the logged documents (a user's most frequent value)."""
    seen: dict[str, dict[str, Counter[str]]] = {}
    for row, user in zip(_rows(entry, keys), users):
        doc = entry.docs[row] if row < len(entry.docs) else {}
        found: dict[str, Any] = {f: doc.get(f) for f in GROUP_FIELDS}
        demographics = doc.get("demographics")
        if isinstance(demographics, dict):
            found.update({f"demographics.{k}": v for k, v in demographics.items()})
        for name, raw in found.items():
            if isinstance(raw, str) and raw.strip():
                seen.setdefault(name, {}).setdefault(user, Counter())[str(raw).strip()] += 1
    out = {}
    for name, per_user in seen.items():
        groups = {u: c.most_common(1)[0][0] for u, c in per_user.items()}
        sizes = Counter(groups.values())
        # A group of one or two users says nothing about a group: its users are left out.
        kept = {u: g for u, g in groups.items() if sizes[g] >= MIN_GROUP_USERS}
        if 2 <= len(set(kept.values())) <= MAX_GROUPS:
            out[name] = kept
    return out


def helped(personal: Entry, counterpart: Entry, counterpart_is: str) -> Helped | None:
    """Whom ``personal`` helps against ``counterpart``, on the pairs both scored.

    Args:
        personal: the model shown the user (or adapting to them).
        counterpart: the same pairs without the user.
        counterpart_is: how the counterpart was chosen, in words.
    """
    keys = shared_keys([personal, counterpart])
    if not keys:
        return None
    users = [users_of(personal)[i] for i in _rows(personal, keys)]
    diffs = user_means(aligned(personal, keys) - aligned(counterpart, keys), users)
    found = Helped(personal.id, personal.label, counterpart.id, counterpart.label, counterpart_is, len(keys),
                   helped_split(diffs.means))
    for name, groups in sorted(_user_groups(personal, users, keys).items()):
        per_user = [groups.get(u) for u in diffs.users]
        found.groups += [GroupSplit(name, value, split)
                         for value, split in group_splits(diffs.means, per_user)]
    return found


def counterparts(section: Section, sections: Sequence[Section]) -> list[tuple[Entry, Entry, str]]:
    """(personalized, counterpart, how it was chosen) for a section (see the module docstring).

    Args:
        section: the section whose models are the personalized ones.
        sections: every section of the report (user-blind twins live in their own).
    """
    ranked = [e for e in section.entries if names_users(e) and e.id not in section.set_apart]
    found: list[tuple[Entry, Entry, str]] = []
    blind = [e for e in ranked if NONPERSONALIZED in e.label]
    for base in blind:
        found += [(e, base, "the nonpersonalized method") for e in ranked
                  if e is not base and NONPERSONALIZED not in e.label and e.run.backend == base.run.backend]
    if section.setting in (USER_BLIND, "oracle"):
        return found
    benchmark = {e.family.benchmark for e in ranked}
    for other in sections:
        if other is section or other.setting != USER_BLIND or other.source != section.source:
            continue
        twins = [e for e in other.entries if names_users(e) and e.id not in other.set_apart
                 and e.family.benchmark in benchmark]
        for e in ranked:
            found += [(e, t, f"the same model on the user-blind task {t.family.name}") for t in twins
                      if t.run.label == e.run.label and t.family.benchmark == e.family.benchmark]
    return found


def per_user(section: Section, sections: Sequence[Section], min_pairs: int = MIN_PAIRS) -> PerUser | None:
    """The per-user blocks of ``section``, or None when its data names no users.

    Args:
        section: the section.
        sections: every section of the report (for user-blind counterparts).
        min_pairs: users with fewer pairs are counted apart in the distribution.
    """
    ranked = [e for e in section.entries if names_users(e) and e.id not in section.set_apart]
    if not ranked:
        return None
    out = PerUser(min_pairs, CHANCE, ITERS, SEED, [model_spread(e, min_pairs) for e in ranked], [], None, [], 0)
    for personal, counterpart, how in counterparts(section, sections):
        found = helped(personal, counterpart, how)
        if found is not None:
            out.helped.append(found)
    if not out.helped:
        out.notes.append("who is helped: no non-personalized counterpart in this comparison (run the "
                         "nonpersonalized method, or the same model on the benchmark's user-blind task)")
    out.group_fields = sorted({g.field for h in out.helped for g in h.groups})
    if out.helped and not out.group_fields:
        out.notes.append("who is helped, by group: the data names no groups of users (country, language, "
                         "demographics)")
    keys = shared_keys(ranked)
    if len(ranked) >= 2 and keys:
        users = [users_of(ranked[0])[i] for i in _rows(ranked[0], keys)]
        scores = np.stack([aligned(e, keys) for e in ranked], axis=1)
        out.agreement = rank_agreement(scores, users)
        out.agreement_models = [e.label for e in ranked]
        out.agreement_pairs = len(keys)
    else:
        out.notes.append("whose ranking differs: needs at least 2 models sharing pairs")
    return out
