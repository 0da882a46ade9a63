"""Turn RM-Bench rows into the documents lm-eval iterates over.

One document per prompt: its six choices are the three chosen responses, then the three
rejected ones (concise, detailed plain, detailed markdown each), so a scalar RM scores
each response once and :mod:`prb_tasks.scoring.rmbench` builds the authors' 3x3 matrix
from the rewards. The RM sees ``[user: prompt, assistant: response]``, the conversation
the authors' ``run_rm.py`` builds. The task YAML names the domain (``dataset_kwargs``).
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field

from prb_tasks.data import provenance
from prb_tasks.data.errors import DataError
from prb_tasks.data.rmbench.schema import DOMAINS, Row, domain_of
from prb_tasks.data.rmbench.sources import ENV_VAR, FILE_NAME, HF_REPO, HF_SPLIT, load_rows, resolve_data_dir
from prb_tasks.documents.metadata import MetadataSpec, check_options, task_name
from prb_tasks.documents.options import parse_options
from prb_tasks.documents.pairs import DocList, to_dataset


class RMBenchOptions(BaseModel):
    """``--metadata`` options of the RM-Bench tasks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data_dir: Optional[str] = Field(
        None, description=f"folder holding {FILE_NAME} (or data/{FILE_NAME}); else ${ENV_VAR}, else the HF hub")


#: The ``--metadata`` keys of every ``rmbench*`` task.
METADATA = MetadataSpec.from_options("rmbench", RMBenchOptions, fixed=frozenset({"domain"}))


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


def build_docs(domain: str, **kwargs: Any) -> list[dict[str, Any]]:
    """Documents of one scored domain (``safety`` takes both safety sub-domains), in file order.

    Args:
        domain: one of chat, math, code, safety.
        **kwargs: ``--metadata`` / ``--model_args`` keys; see :class:`RMBenchOptions`.
    """
    check_options(METADATA, kwargs, task_name(kwargs))
    opts = parse_options(RMBenchOptions, kwargs)
    if domain not in DOMAINS:
        raise DataError(f"prb: unknown RM-Bench domain '{domain}'; expected one of {', '.join(DOMAINS)}")
    rows = load_rows(opts.data_dir)
    docs = [row_doc(row) for row in rows if domain_of(row.domain) == domain]
    folder = resolve_data_dir(opts.data_dir)
    origin = (provenance.DataSource("hub", HF_REPO, f"{HF_SPLIT}: {domain}", len(docs)) if folder is None
              else provenance.DataSource("local", str(folder), f"{domain}", len(docs)))
    provenance.record(kwargs, origin, task_name(kwargs) or f"rmbench_{domain}")
    if not docs:
        where = "the HF hub" if folder is None else str(folder)
        found = sorted({r.domain for r in rows})
        raise DataError(f"prb: RM-Bench in {where} has no rows of domain '{domain}' (it holds "
                        f"{', '.join(found) or 'none'}); use the whole {FILE_NAME}")
    return docs


def load_dataset(**kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point for the RM-Bench task YAMLs."""
    domain = kwargs.pop("domain")
    return to_dataset(build_docs(domain, **kwargs))
