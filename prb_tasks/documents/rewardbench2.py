"""Turn RewardBench 2 rows into the documents lm-eval iterates over.

One document per row: every response (``chosen`` then ``rejected``, as allenai's
loader unrolls them) is one choice of a ``multiple_choice`` task, so a scalar RM
scores each response exactly once and :mod:`prb_tasks.scoring.rewardbench2` applies
allenai's rules to the rewards. The RM sees ``[user: prompt, assistant: response]``,
the conversation allenai's ``run_v2.py`` builds. The task YAML names the subset
(``dataset_kwargs``); the user can point at a local copy with ``--metadata``.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field

from prb_tasks.data.errors import DataError
from prb_tasks.data.rewardbench2.schema import SUBSETS, Row, subset_slug
from prb_tasks.data.rewardbench2.sources import ENV_VAR, HF_REPO, HF_SPLIT, load_rows, resolve_data_dir
from prb_tasks.documents.general_source import Benchmark, record_part
from prb_tasks.documents.metadata import MetadataSpec, check_options, data_dir_preflight, task_name
from prb_tasks.documents.options import parse_options
from prb_tasks.documents.pairs import ASK_ONCE, UNLESS_REASK, DocList, to_dataset


class RewardBench2Options(BaseModel):
    """``--metadata`` options of the RewardBench 2 tasks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data_dir: Optional[str] = Field(
        None, description=f"local copy in the HF layout (<dir>/data/test-*.parquet); else ${ENV_VAR}, else the HF hub")


BENCHMARK = Benchmark("RewardBench 2", HF_REPO, HF_SPLIT, "subset", "download the whole test split")

#: The ``--metadata`` keys of every ``rewardbench2*`` task.
METADATA = MetadataSpec.from_options("rewardbench2", RewardBench2Options, fixed=frozenset({"subset", "judge"}))


def row_doc(row: Row) -> dict[str, Any]:
    """The document of one row.

    Args:
        row: a validated row.
    """
    return {
        "id": row.id,
        "subset": row.subset,
        "row": row.index,
        "question": row.prompt,
        "prompt": row.prompt,
        "choices": list(row.responses),
        "num_correct": row.num_correct,
    }


#: The judge's prompt: one response at a time, rated 1-10 (allenai's ratings path; our wording).
RATING_TEMPLATE = "judge/rewardbench2_rating.jinja"


def rating_docs(row: Row) -> list[dict[str, Any]]:
    """A judge's documents of one row: one per response, each rated on its own.

    Args:
        row: a validated row; its first ``num_correct`` responses are the correct ones.
    """
    from prb_tasks.prompts.templates import render, resolve

    ref = resolve(RATING_TEMPLATE)
    ties = subset_slug(row.subset) == "ties"
    return [{
        "id": f"{row.id}/r{index + 1}",
        "variant": "rating",  # prb-judge: a 1-10 rating, not a pairwise verdict (no A/B warning)
        # allenai sends each rating request once and reads an empty reply as unrated (-1):
        # prb-judge does the same unless the user asks for its re-asks (reask=1).
        ASK_ONCE: UNLESS_REASK,
        "row_id": row.id,
        "subset": row.subset,
        "row": row.index,
        "response_index": index,
        "responses": len(row.responses),
        "num_correct": row.num_correct,
        "question": row.prompt,
        "prompt": render(ref, question=row.prompt, response=response, ties=ties),
    } for index, response in enumerate(row.responses)]


def build_docs(subset: str, judge: bool = False, **kwargs: Any) -> list[dict[str, Any]]:
    """Documents of one subset, in dataset order.

    Args:
        subset: a subset as the hub names it (``Precise IF``), or its task form (``precise_if``).
        judge: one document per response for a judge that rates it (:func:`rating_docs`),
            instead of one per row for a scalar RM.
        **kwargs: ``--metadata`` / ``--model_args`` keys; see :class:`RewardBench2Options`.
    """
    check_options(METADATA, kwargs, task_name(kwargs))
    opts = parse_options(RewardBench2Options, kwargs)
    wanted = subset_slug(subset)
    if wanted not in {subset_slug(s) for s in SUBSETS}:
        raise DataError(f"prb: unknown RewardBench 2 subset '{subset}'; expected one of {', '.join(SUBSETS)}")
    rows = load_rows(opts.data_dir)
    picked = [row for row in rows if subset_slug(row.subset) == wanted]
    name = next(s for s in SUBSETS if subset_slug(s) == wanted)
    record_part(kwargs, BENCHMARK, resolve_data_dir(opts.data_dir), name, len(picked), f"rewardbench2_{wanted}",
                (r.subset for r in rows))
    return [doc for row in picked for doc in rating_docs(row)] if judge else [row_doc(row) for row in picked]


preflight = data_dir_preflight(resolve_data_dir, RewardBench2Options)


def load_dataset(**kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point for the RewardBench 2 task YAMLs."""
    subset = kwargs.pop("subset")
    judge = bool(kwargs.pop("judge", False))
    return to_dataset(build_docs(subset, judge=judge, **kwargs))
