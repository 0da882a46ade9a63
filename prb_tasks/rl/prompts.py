"""The RL prompts: Personalized RewardBench rows as Best-of-N's policy sees them, split into train and test.

A row's policy messages are the ``personalized_rb_bon_sample`` document's (its system message,
if any, then the prompt with the question and the top-k posts), so the RL policy is asked
exactly what the Best-of-N policy is; the reward model's user turn is the one the
``personalized_rb_bon`` contestant reads (``official``: the question and the posts with
nothing between them, as the authors' reward server). Rows are split by a hash of their
``pair_key``, so the split does not move when rows are added or reordered.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import partial
from typing import Any, Optional

from prb_tasks.data import profile_store
from prb_tasks.data.personalized_rb.sources import load_table
from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.documents.options import parse_options
from prb_tasks.documents.personalized_rb import DocOptions, selected_posts
from prb_tasks.documents.personalized_rb_bon import BonOptions, build_docs
from prb_tasks.prompts.retrieval import format_posts
from prb_tasks.prompts.templates import render, resolve


@dataclass(frozen=True)
class RLPrompt:
    """One question as the policy and the reward model see it.

    Attributes:
        pair_key: the row (``art/3``), as every Personalized RewardBench task names it.
        messages: the policy's chat (system message when the protocol has one, then the user turn).
        rm_prompt: the reward model's user turn.
        profile_key: where profile scorers (``bm25``) find the user's posts.
        question: the bare question (verl's ``extra_info.query``).
        profile: the shown posts as one text, ``Post i (Category: c):`` then the post (verl's
            ``extra_info.profile``).
    """

    pair_key: str
    messages: tuple[tuple[str, str], ...]
    rm_prompt: str
    profile_key: str
    question: str = ""
    profile: str = ""

    def chat(self) -> list[dict[str, str]]:
        return [{"role": role, "content": text} for role, text in self.messages]


def held_out(pair_key: str, fraction: float) -> bool:
    """Whether a row belongs to the test split (a stable hash of its key below ``fraction``)."""
    digest = hashlib.sha256(f"prb-rl:{pair_key}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def build_prompts(k: int, bon_preset: str, data_dir: Optional[str], templates: Optional[str] = None,
                  extra: Optional[dict[str, Any]] = None) -> list[RLPrompt]:
    """Every row's prompt, with ``k`` posts, in dataset order.

    Args:
        k: profile posts shown.
        bon_preset: ``prb`` or ``official`` (the authors' prompts, from ``templates``).
        data_dir: local copy of the data, ``sample`` for the bundled one (None: $PRB_DATA_DIR, else the hub).
        templates: folder of templates (``prb templates official`` writes the authors').
        extra: other Best-of-N ``--metadata`` keys (``retriever``, ``max_post_chars``...).
    """
    raw: dict[str, Any] = {"k": k, "preset": bon_preset, "data_dir": data_dir, "templates": templates,
                           **(extra or {})}
    raw = {key: value for key, value in raw.items() if value is not None}
    docs = {doc["pair_key"]: doc for doc in build_docs("bon_sample", **raw)}
    options = parse_options(BonOptions, raw)
    official = options.preset == "official"
    rm_ref = None if official else resolve("rm/user_profile.jinja", options.templates)
    retrieval = DocOptions(data_dir=options.data_dir, k=options.k, max_post_chars=options.max_post_chars,
                           retriever=options.retriever, retriever_device=options.retriever_device,
                           retriever_model=options.retriever_model)
    out: list[RLPrompt] = []
    for subset in SUBSETS:
        table = load_table(subset, options.data_dir)
        for index, (row, posts) in enumerate(zip(table.rows, selected_posts(table, subset, retrieval))):
            key = f"{subset.short}/{index}"
            doc = docs[key]
            messages = ((("system", doc["system_prompt"]),) if doc["system_prompt"] else ()) \
                + (("user", doc["prompt"]),)
            rm_prompt = (row.question + format_posts(posts) if rm_ref is None else  # rm_ref is None: official
                         render(rm_ref, question=row.question, category=row.category, posts=posts,
                                posts_text=format_posts(posts)))
            profile_key = f"prb-rl::{subset.config}/{index}"
            profile_store.remember(profile_key, partial(table.profile_texts, index))
            out.append(RLPrompt(key, messages, rm_prompt, profile_key, row.question, format_posts(posts)))
    return out


def split(prompts: list[RLPrompt], fraction: float) -> tuple[list[RLPrompt], list[RLPrompt]]:
    """(train, test) prompts."""
    test = [p for p in prompts if held_out(p.pair_key, fraction)]
    train = [p for p in prompts if not held_out(p.pair_key, fraction)]
    return train, test
