"""LaMP-QA, read from a local copy, as the authors' PPO trains on it (``--lamp-qa DIR``).

The authors' ``PPO/`` trains on LaMP-QA's *train* split (``alireza7/LaMP-QA``, one config per
subset), its profiles ranked by Contriever (``retrieve/rank_dataset.py``), the top 10 posts in
their ``sample.txt`` (``PPO/prepare_data.py``). Personalized RewardBench is built from LaMP-QA's
*test* questions, so prb's held-out answers stay its rows, graded by their rubrics.

A copy is read in the hub's layout, ``DIR/<config>/<split>-*.parquet`` (what
``hf download alireza7/LaMP-QA --repo-type dataset --local-dir DIR`` writes for a
parquet dataset), or as JSON Lines / JSON: ``DIR/<config>/<split>*.jsonl``,
``DIR/<config>_<split>.jsonl`` (their ``rank_dataset.py``'s output) or ``DIR/<config>_<split>.json``
(LaMP-QA's own ``download_datasets.py``). Each row needs ``question`` and ``profile`` (a list of
posts with ``id``, ``category`` and ``text``); other fields are ignored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, ValidationError

from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.schema import ProfilePost
from prb_tasks.data.personalized_rb.subsets import SUBSETS, Subset
from prb_tasks.data.rawfiles import describe_error, raw_rows
from prb_tasks.prompts.retrieval import RetrievalOptions, SelectedPost, format_posts, select_posts_many
from prb_tasks.prompts.templates import render, resolve
from prb_tasks.rl.prompts import RLPrompt


class LampRow(BaseModel):
    """The fields of a LaMP-QA row that the policy's prompt uses.

    Attributes:
        id: the row's id (string or number in the files).
        question: the user's question.
        profile: the user's past posts.
    """

    model_config = ConfigDict(extra="ignore")

    id: str = ""
    question: str
    profile: list[ProfilePost]


def split_files(folder: Path, config: str, split: str) -> list[Path]:
    """The files of one subset's split in a local copy (the first layout that has any).

    Args:
        folder: the copy's root.
        config: the subset's config name (``Art_and_Entertainment``...).
        split: ``train`` or ``test``.
    """
    patterns = ((folder / config, f"{split}-*.parquet"), (folder / config, f"{split}*.jsonl"),
                (folder, f"{config}_{split}.jsonl"), (folder, f"{config}_{split}.json"),
                (folder / "data" / config, f"{split}-*.parquet"))
    for base, pattern in patterns:
        found = sorted(base.glob(pattern))
        if found:
            return found
    return []


def _records(path: Path) -> list[dict[str, Any]]:
    """A file's rows: parquet and JSON Lines through prb's shared reader, a ``.json`` array here."""
    text = path.read_text(encoding="utf-8") if path.suffix == ".json" else ""
    if text.lstrip().startswith("["):
        try:
            return list(json.loads(text))
        except json.JSONDecodeError as exc:
            raise DataError(f"prb rl: {path} is not JSON ({exc.msg}, line {exc.lineno}); fix or re-download the "
                            "LaMP-QA copy") from None
    return list(raw_rows(path))


def read_split(folder: Path, subset: Subset, split: str) -> list[LampRow]:
    """One subset's rows of one split.

    Args:
        folder: the copy's root (``--lamp-qa``).
        subset: which subset.
        split: ``train`` or ``test``.
    """
    files = split_files(folder, subset.config, split)
    if not files:
        raise DataError(f"prb rl: no {split} split of {subset.config} under '{folder}' (looked for "
                        f"{subset.config}/{split}-*.parquet, {subset.config}/{split}*.jsonl, "
                        f"{subset.config}_{split}.jsonl and .json); download it: hf download "
                        f"alireza7/LaMP-QA --repo-type dataset --local-dir {folder}")
    rows: list[LampRow] = []
    for path in files:
        for number, record in enumerate(_records(path), 1):
            try:
                posts = record.get("profile")
                if isinstance(posts, list):  # post ids are numbers in some copies
                    posts = [{**post, "id": str(post.get("id", ""))} if isinstance(post, dict) else post
                             for post in posts]
                rows.append(LampRow.model_validate({**record, "id": str(record.get("id", "")), "profile": posts}))
            except ValidationError as exc:
                raise DataError(f"prb rl: {path} row {number}: {describe_error(exc)}; a LaMP-QA row needs "
                                "question and profile (posts with id, category and text)") from None
    return rows


def lamp_prompt(key: str, question: str, posts: list[SelectedPost], templates: Optional[str]) -> RLPrompt:
    """One question in the authors' policy prompt (their ``prepare_data.py``), posts as given.

    Args:
        key: the question's name in prb (``art-train/12``).
        question: the question.
        posts: the posts shown, in rank order.
        templates: the folder ``prb templates official`` wrote (their ``sample.txt`` and system message).
    """
    profile = format_posts(posts)
    system = render(resolve("bon/official_policy_system.jinja", templates))
    user = render(resolve("bon/official_policy.jinja", templates), question=question, profile=profile)
    return RLPrompt(key, (("system", system), ("user", user)), question + profile, f"prb-rl-lamp::{key}",
                    question, profile)


def lamp_qa_prompts(folder: str, split: str, k: int, templates: Optional[str],
                    retrieval: Optional[RetrievalOptions] = None) -> list[RLPrompt]:
    """Every subset's questions of ``split``, each with its top-``k`` posts by Contriever.

    Args:
        folder: the local copy (``--lamp-qa``).
        split: ``train`` (training) or ``test``.
        k: posts shown (their training: 10).
        templates: the authors' prompts (``prb templates official``).
        retrieval: ranking settings (default: Contriever, whole posts, as their ``rank_dataset.py``).
    """
    if not templates:
        raise DataError("prb rl: --lamp-qa trains with the authors' prompts, which prb does not ship: run "
                        "`prb templates official DIR` once and add --templates DIR")
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise DataError(f"prb rl: --lamp-qa '{folder}' is not a folder; give the local copy of alireza7/LaMP-QA")
    options = retrieval or RetrievalOptions(retriever="contriever", k=k, max_post_chars=0)
    out: list[RLPrompt] = []
    for subset in SUBSETS:
        rows = read_split(root, subset, split)
        ranked = select_posts_many([(row.question, row.profile) for row in rows], options)
        out.extend(lamp_prompt(f"{subset.short}-{split}/{index}", row.question, posts, templates)
                   for index, (row, posts) in enumerate(zip(rows, ranked)))
    return out
