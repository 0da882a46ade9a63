""""Did you mean ...?" for misspelled names (task names, keys, configs, models)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: Names other tools use for one of our option names; spelling distance cannot see these
#: (``top_k`` is far from ``k``), so they are suggested by meaning.
SYNONYMS = {
    "top_k": "k", "topk": "k", "num_posts": "k", "n_posts": "k", "num_history": "k", "history_k": "k",
    "data_file": "data_path", "data_files": "data_path", "file": "data_path", "path": "data_path",
    "dataset_path": "data_dir", "data_folder": "data_dir", "datadir": "data_dir",
}


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
    meant = SYNONYMS.get(_fold(word))
    if meant in options and meant not in found:
        found.append(meant)
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
