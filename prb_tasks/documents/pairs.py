"""Pieces every family's document builder shares: a pair judged in both orders, a
scalar-RM pair document, the judge's system prompt, and the harness dataset."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache, partial
from typing import Any

from prb_tasks.prompts.templates import render, resolve

BOTH_ORDERS = ("A", "B")  # chosen shown first, then second

# Document key telling a judge backend to score the first reply as it comes (no second
# ask after an empty reply, no verdict re-ask): the official protocol's one call per row.
ASK_ONCE = "ask_once"
#: ``ASK_ONCE``'s value for a task whose authors score the first reply but whose users may
#: choose prb's re-asks: the first reply is scored as it comes unless the judge runs with
#: ``reask`` (then an empty reply is sent again and a reply without its verdict re-asked).
UNLESS_REASK = "unless_reask"

# Document key holding the generation settings a task's authors used (``max_gen_toks``,
# ``temperature``...), which prb-judge sends in place of the task YAML's; a key the user
# gives with ``--gen_kwargs`` still wins (prb-judge says so in one line).
GENERATION = "generation"

# Scalar-document key: whether the data itself shows the chosen answer first (its own
# order, before prb shows both orders), for the position baseline of `prb audit`.
CHOSEN_FIRST = "chosen_first"


#: Each ASCII byte as ``b" "`` where ``str.split()`` splits (``str.isspace``, the separators \x1c-\x1f
#: included) and as ``b"x"`` elsewhere: an ASCII text's words are then the ``b" x"`` in it, plus one
#: if it starts with a word.
_WORD_START = bytes(32 if chr(code).isspace() else 120 for code in range(256))


@lru_cache(maxsize=4096)
def words(text: str) -> int:
    """Whitespace-separated words of ``text`` (for length-bias statistics): ``len(text.split())``.

    Cached: the pairs of a turn share their chosen answer (one string), counted once, not once per pair.
    An ASCII text is counted without making a string per word: ``split()`` was the largest single
    cost of building Community Alignment's scalar documents at release size; this takes about 40%
    of its time on those answers.
    """
    if not text.isascii():
        return len(text.split())
    marks = text.encode("ascii").translate(_WORD_START)
    return marks.count(b" x") + marks.startswith(b"x")


def judge_system_prompt(templates: str | None, override: str | None,
                        name: str = "judge/system.jinja") -> str:
    """The judge's rules, rendered once: they do not depend on the item.

    Args:
        templates: user folder of replacement templates.
        override: a file replacing this template.
        name: which bundled template holds the rules.
    """
    return render(resolve(name, templates, override))


def judge_pair_docs(
    identity: dict[str, Any],
    chosen: str,
    rejected: str,
    system_prompt: str,
    render_user: Callable[[str, str], str],
    positions: Iterable[str] = BOTH_ORDERS,
    rebuild: bool = False,
) -> list[dict[str, Any]]:
    """One judge document per position of the chosen response.

    Args:
        identity: fields naming the pair (``pair_key``, ``subset``, ``variant``, ...).
        chosen: the response the user prefers.
        rejected: the other response.
        system_prompt: the rendered rules.
        render_user: builds the user message from (response A, response B).
        positions: where chosen is shown, one document each (``A``, ``B``).
        rebuild: ``render_user`` gives the same text when called again later (its inputs are
            bound, not loop variables), so the prompt store may keep it instead of the text
            (:func:`prb_tasks.prompts.prompt_store.rebuildable`).
    """
    from prb_tasks.prompts.prompt_store import rebuildable

    docs: list[dict[str, Any]] = []
    for chosen_position in positions:
        a, b = (chosen, rejected) if chosen_position == "A" else (rejected, chosen)
        docs.append({
            **identity,
            "chosen_position": chosen_position,
            "words_chosen": words(chosen),
            "words_rejected": words(rejected),
            "system_prompt": system_prompt,
            "prompt": rebuildable(render_user(a, b), partial(render_user, a, b)) if rebuild else render_user(a, b),
        })
    return docs


def scalar_pair_doc(identity: dict[str, Any], question: str, prompt: str, chosen: str, rejected: str,
                    profile_key: str, chosen_first: bool) -> dict[str, Any]:
    """A scalar-RM document: choices ``[chosen, rejected]`` each scored after ``prompt``.

    Args:
        identity: fields naming the pair.
        question: the bare request (without any context).
        prompt: the user turn the RM sees.
        chosen: the response the user prefers.
        rejected: the other response.
        profile_key: where profile-based baselines find the user's texts.
        chosen_first: whether the data itself lists the chosen response first.
    """
    return {
        **identity,
        "question": question,
        "prompt": prompt,
        "choices": [chosen, rejected],
        "words_chosen": words(chosen),
        "words_rejected": words(rejected),
        "profile_key": profile_key,
        CHOSEN_FIRST: chosen_first,
    }


class DocList(list):
    """One split's documents as lm-eval reads them: a plain list that also answers
    ``features`` (the field names lm-eval looks up once per task).

    A ``datasets.Dataset`` would copy every document (rendered prompts included) into
    Arrow and lm-eval would convert each one back into a dict three times per task (to
    check a document, to list few-shot candidates, to build requests, to score): a few
    seconds on the full benchmark, for documents that are already dicts.
    """

    @property
    def features(self) -> dict[str, None]:
        """The first document's field names (every document of a split has the same)."""
        return dict.fromkeys(self[0]) if self else {}


def to_dataset(docs: list[dict[str, Any]]) -> dict[str, DocList]:
    """The ``{"test": documents}`` dict a ``custom_dataset`` loader returns; each prompt
    moves to :mod:`prb_tasks.prompts.prompt_store` (the samples file then writes it once)."""
    from prb_tasks.common.memory import trim
    from prb_tasks.prompts.prompt_store import stash

    dataset = {"test": DocList(stash(docs))}
    trim()  # what building them freed (rendered prompts, ranking buffers) goes back to the system
    return dataset
