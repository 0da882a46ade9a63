"""Turn RM-Bench rows into the documents lm-eval iterates over.

Scalar RMs: one document per prompt; its six choices are the three chosen responses,
then the three rejected ones (concise, detailed plain, detailed markdown each), so a
scalar RM scores each response once and :mod:`prb_tasks.scoring.rmbench` builds the
authors' 3x3 matrix from the rewards. The RM sees ``[user: prompt, assistant: response]``,
the conversation the authors' ``run_rm.py`` builds.

Judges (``judge: true``): one document per (chosen style, rejected style) pair and order,
18 per prompt, each a pairwise prompt ending in a boxed verdict;
:mod:`prb_tasks.scoring.rmbench_judge` turns the verdicts into the same matrix.

The task YAML names the domain (``dataset_kwargs``).
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field

from prb_tasks.data.errors import DataError
from prb_tasks.data.rmbench.schema import DOMAINS, STYLES, Row, domain_of
from prb_tasks.data.rmbench.sources import ENV_VAR, FILE_NAME, HF_REPO, HF_SPLIT, load_rows, resolve_data_dir
from prb_tasks.documents.general_source import Benchmark, record_part
from prb_tasks.documents.metadata import MetadataSpec, check_options, task_name
from prb_tasks.documents.options import parse_options
from prb_tasks.documents.pairs import DocList, to_dataset


class RMBenchOptions(BaseModel):
    """``--metadata`` options of the RM-Bench tasks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data_dir: Optional[str] = Field(
        None, description=f"folder holding {FILE_NAME} (or data/{FILE_NAME}); else ${ENV_VAR}, else the HF hub")


BENCHMARK = Benchmark("RM-Bench", HF_REPO, HF_SPLIT, "domain", f"use the whole {FILE_NAME}")

#: The ``--metadata`` keys of every ``rmbench*`` task.
METADATA = MetadataSpec.from_options("rmbench", RMBenchOptions, fixed=frozenset({"domain", "judge"}))


def row_doc(row: Row) -> dict[str, Any]:
    """The document of one prompt."""
    return {
        "id": row.id,
        "subset": row.domain,
        "row": row.index,
        "question": row.prompt,
        "prompt": row.prompt,
        "choices": [*row.chosen, *row.rejected],
    }


#: The judge's prompt: the user's prompt and two responses, a boxed five-way verdict (the authors'
#: README's format; prb's wording).
PAIR_TEMPLATE = "judge/rmbench_pair.jinja"
#: A judge's documents per prompt: 9 style pairs x 2 orders.
JUDGMENTS_PER_PROMPT = 18


def pair_docs(row: Row) -> list[dict[str, Any]]:
    """A judge's documents of one prompt: each (chosen style, rejected style) pair in both orders.

    Args:
        row: a validated row.

    The 3 x 3 x 2 = 18 documents come cell by cell, chosen in A before chosen in B, so
    ``--limit`` cuts whole prompts when it is a multiple of 18
    (:data:`prb_tasks.scoring.rmbench_judge.CALLS_PER_PROMPT`).
    """
    from prb_tasks.prompts.prompt_store import stash
    from prb_tasks.prompts.templates import render, resolve

    ref = resolve(PAIR_TEMPLATE)
    docs = []
    for i, chosen in enumerate(row.chosen):
        for j, rejected in enumerate(row.rejected):
            for position in ("A", "B"):
                first, second = (chosen, rejected) if position == "A" else (rejected, chosen)
                docs.append({
                    "id": f"{row.id}/c{i}r{j}/{position}",
                    "variant": "rmbench_pair",  # prb-judge: a boxed verdict (reply_forms), not `Result: A`
                    "row_id": row.id,
                    "subset": row.domain,
                    "row": row.index,
                    "chosen_style": i,
                    "rejected_style": j,
                    "styles": f"{STYLES[i]} vs {STYLES[j]}",
                    "chosen_position": position,
                    "prompt": render(ref, question=row.prompt, response_a=first, response_b=second),
                })
    # The prompts go to the samples file once, in the requests (prompt_store).
    return stash(docs)


def build_docs(domain: str, judge: bool = False, **kwargs: Any) -> list[dict[str, Any]]:
    """Documents of one scored domain (``safety`` takes both safety sub-domains), in file order.

    Args:
        domain: one of chat, math, code, safety.
        judge: 18 documents per prompt for a pairwise judge (:func:`pair_docs`), instead
            of one per prompt for a scalar RM.
        **kwargs: ``--metadata`` / ``--model_args`` keys; see :class:`RMBenchOptions`.
    """
    check_options(METADATA, kwargs, task_name(kwargs))
    opts = parse_options(RMBenchOptions, kwargs)
    if domain not in DOMAINS:
        raise DataError(f"prb: unknown RM-Bench domain '{domain}'; expected one of {', '.join(DOMAINS)}")
    rows = load_rows(opts.data_dir)
    picked = [row for row in rows if domain_of(row.domain) == domain]
    record_part(kwargs, BENCHMARK, resolve_data_dir(opts.data_dir), domain, len(picked), f"rmbench_{domain}",
                (r.domain for r in rows))
    return [doc for row in picked for doc in pair_docs(row)] if judge else [row_doc(row) for row in picked]


def preflight(tasks: dict[str, Any], metadata: dict[str, Any], settings: dict[str, Any] | None = None) -> None:
    """Run by ``prb eval`` before a model loads: a ``data_dir`` that is not a folder is one
    line now, and a judge run whose ``--limit`` cuts a prompt's judgments is told so (they
    are paid for, then left out of the matrix).

    Args:
        tasks: requested task or group name -> :class:`prb_tasks.common.taskindex.TaskInfo`.
        metadata: the run's ``--metadata`` (``data_dir``).
        settings: the run's lm-eval settings (``limit``).
    """
    import sys

    resolve_data_dir(metadata.get("data_dir"))

    limit = (settings or {}).get("limit")
    judged = sorted(name for name in tasks if name.startswith("rmbench_judge"))
    try:
        whole = float(limit) if limit is not None else None
    except (TypeError, ValueError):
        return  # lm-eval itself refuses a --limit that is not a number
    if not judged or whole is None or whole < 1 or (whole.is_integer() and int(whole) % JUDGMENTS_PER_PROMPT == 0):
        return
    given = int(whole) if whole.is_integer() else whole
    below = int(whole) // JUDGMENTS_PER_PROMPT * JUDGMENTS_PER_PROMPT
    lost = (f"the {int(whole) - below} judgments past {below} in each domain are" if below else
            f"no prompt is whole and all {int(whole)} judgments of each domain are")
    # `prb:`, not `prb eval:`: plain `lm_eval` runs this check too (prb_tasks/cli/lm_eval_hook.py).
    print(f"prb: warning: --limit {given} with {', '.join(judged)}: a prompt is scored from its "
          f"{JUDGMENTS_PER_PROMPT} judgments (9 style pairs x 2 orders), so {lost} paid for and left out; "
          f"use a multiple of {JUDGMENTS_PER_PROMPT} (e.g. {below or JUDGMENTS_PER_PROMPT}"
          f"{'' if not below else f' or {below + JUDGMENTS_PER_PROMPT}'})", file=sys.stderr)


def load_dataset(**kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point for the RM-Bench task YAMLs."""
    domain = kwargs.pop("domain")
    judge = bool(kwargs.pop("judge", False))
    return to_dataset(build_docs(domain, judge=judge, **kwargs))
