""""Did you mean ...?" for misspelled names (task names, keys, configs, models)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_matches(word: str, choices: Iterable[str], limit: int = 2) -> list[str]:
    """The names in ``choices`` that look like a misspelling of ``word``, best first.

    Case and ``-``/``_`` differences count as near misses too (``K`` for ``k``,
    ``max-posts`` for ``max_posts``).

    Args:
        word: what the user typed.
        choices: the valid names.
        limit: most suggestions returned.
    """
    options = sorted(set(choices))
    folded = {_fold(name): name for name in options}
    exact = folded.get(_fold(word))
    found = [exact] if exact is not None and exact != word else []
    for match in difflib.get_close_matches(_fold(word), list(folded), n=limit, cutoff=0.75):
        if folded[match] not in found and folded[match] != word:
            found.append(folded[match])
    return found[:limit]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for a near miss, else an empty string.

    Args:
        word: what the user typed.
        choices: the valid names.
    """
    found = close_matches(word, choices)
    if not found:
        return ""
    return " (did you mean " + " or ".join(f"'{name}'" for name in found) + "?)"


def _fold(name: str) -> str:
    return name.lower().replace("-", "_")
