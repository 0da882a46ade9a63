"""The context model's user text: each part a share of the token budget, support pairs as summaries.

The few-shot protocol hands the context model up to 16 support pairs; written out whole
(the request, both answers, the reason) one pair of realistic answers fills a 256-token
budget, so the model could never read more than one. Here:

- every part the user has (``demographics``, ``history``, ``profile``) gets a share of the
  budget (:data:`SHARES`: history two, the others one each); a part that needs less than
  its share leaves the rest to the others, so a user without a profile spends that share
  on history (and a missing part is simply empty, in training and evaluation alike);
- a support pair is a summary, one line: the start of the chosen answer and the user's
  reason (the start of the other answer only when the data has no reason), each cut short;
- support pairs are taken most relevant to the scored request first (BM25 over their
  requests and reasons) and shown oldest first; profile texts are ranked by relevance too;
  a summary that does not fit is left out whole, a profile text is cut at a word boundary.

:func:`fit_report` says how many support pairs fit at each k, which ``prb train`` prints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prb_tasks.fewshot.context import HEADERS, _history_order, _profile_order
from prb_tasks.fewshot.method import Pair, User, thaw
from prb_tasks.prompts.retrieval import truncate
from prb_tasks.prompts.user_history import traits

#: Most characters kept of a summarised support pair's chosen answer, other answer and reason.
CHOSEN_CHARS, OTHER_CHARS, REASON_CHARS = 64, 48, 80
#: Each part's weight in the budget: history holds up to 16 pairs, so it gets two shares.
SHARES = {"demographics": 1, "history": 2, "profile": 1}
# A profile text cut shorter than this says too little to keep.
_MIN_CUT_CHARS = 40


@dataclass(frozen=True)
class Context:
    """A user's text for one RM input.

    Attributes:
        text: the text (empty when the user has nothing in the parts asked for).
        support_kept: how many support pairs it holds.
    """

    text: str
    support_kept: int


def summary(pair: Pair) -> str:
    """One support pair as the context model reads it: the start of the chosen answer and the
    user's reason (the start of the other answer when the data has no reason).

    Args:
        pair: a labelled pair of the user.
    """
    chose = f"- chose: {truncate(pair.chosen.text, CHOSEN_CHARS)}"
    if pair.reason.strip():
        return f"{chose}; why: {truncate(pair.reason, REASON_CHARS)}"
    return f"{chose}; over: {truncate(pair.rejected.text, OTHER_CHARS)}"


def _items(part: str, user: User, support: Sequence[Pair], query: str) -> list[tuple[int, str]]:
    """(display position, text) of a part's items, most wanted first."""
    if part == "demographics":
        return [(i, f"- {t.name}: {t.value}") for i, t in enumerate(traits(thaw(user.demographics)))]
    if part == "history":
        return [(i, summary(support[i])) for i in _history_order(support, query)]
    order = _profile_order(user.profile, query, "bm25")
    posts = [user.profile[i] for i in order]
    return [(rank, f"Post {rank + 1}{f' (Category: {p.category})' if p.category else ''}:\n{p.text}")
            for rank, p in enumerate(posts)]


def _section(part: str, items: Sequence[tuple[int, str]]) -> str:
    if not items:
        return ""
    joiner = "\n" if part in ("demographics", "history") else "\n\n"
    return HEADERS[part] + "\n" + joiner.join(text for _, text in sorted(items))


def _fill(part: str, items: list[tuple[int, str]], allowance: int, measure: Callable[[str], int]) -> list:
    """The part's items that fit in ``allowance``, most wanted first; a profile text may be cut."""
    kept: list[tuple[int, str]] = []
    for position, text in items:
        if measure(_section(part, [*kept, (position, text)])) <= allowance:
            kept.append((position, text))
            continue
        if part == "profile":
            low, high, best = _MIN_CUT_CHARS, len(text) - 1, None
            while low <= high:  # the longest cut that fits
                mid = (low + high) // 2
                candidate = (position, truncate(text, mid))
                if measure(_section(part, [*kept, candidate])) <= allowance:
                    best, low = candidate, mid + 1
                else:
                    high = mid - 1
            if best is not None:
                kept.append(best)
        break
    return kept


def budgeted_context(user: User, support: Sequence[Pair], query: str, parts: Sequence[str], budget: int,
                     measure: Callable[[str], int]) -> Context:
    """The user's text within ``budget``, each part a share (see the module's docstring).

    Args:
        user: the user (``demographics`` and ``profile``; either may be empty).
        support: the user's pairs the model may read, oldest first (never the scored one).
        query: the request being scored (ranks history and profile).
        parts: which parts, in display order (of ``demographics``, ``history``, ``profile``).
        budget: most units of ``measure`` (tokens with a tokenizer's counter).
        measure: the length of a text.
    """
    wanted = {part: _items(part, user, support, query) for part in parts}
    present = [p for p in parts if wanted[p]]
    need = {p: measure(_section(p, wanted[p])) for p in present}
    # Weighted shares; a part needing less than its share leaves the rest to the others.
    separators = measure("\n\n") * max(len(present) - 1, 0)
    left, allowance = max(budget - separators, 0), {}
    order = sorted(present, key=lambda p: need[p] / SHARES[p])
    for n, part in enumerate(order):
        weight = SHARES[part] / sum(SHARES[p] for p in order[n:])
        allowance[part] = min(need[part], int(left * weight))
        left -= allowance[part]
    kept = {p: _fill(p, wanted[p], allowance[p], measure) for p in present}
    text = "\n\n".join(s for s in (_section(p, kept[p]) for p in present) if s)
    # Tokens of a joined text can differ by one or two from the sum of its pieces'.
    while measure(text) > budget and any(kept.values()):
        largest = max(present, key=lambda p: measure(_section(p, kept[p])))
        kept[largest] = kept[largest][:-1]
        text = "\n\n".join(s for s in (_section(p, kept[p]) for p in present) if s)
    return Context(text, len(kept.get("history", [])))


def fit_report(users: Sequence[tuple[User, Sequence[Pair]]], parts: Sequence[str], budget: int,
               measure: Callable[[str], int], ks: Sequence[int], sample: int = 20) -> dict[int, int]:
    """k -> the median number of support pairs that fit, over up to ``sample`` users with more than k pairs.

    Each user's first k pairs are the support and the next one is the scored request.

    Args:
        users: (user, pairs oldest first).
        parts: the context parts.
        budget: the token budget.
        measure: the length of a text.
        ks: support sizes (0 is skipped).
        sample: users measured per k (the first ones with enough pairs).
    """
    report: dict[int, int] = {}
    for k in ks:
        if k < 1:
            continue
        counts = sorted(budgeted_context(user, pairs[:k], pairs[k].prompt, parts, budget, measure).support_kept
                        for user, pairs in [u for u in users if len(u[1]) > k][:sample])
        if counts:
            report[k] = counts[len(counts) // 2]
    return report
