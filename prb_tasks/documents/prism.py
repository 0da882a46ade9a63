"""PRISM's tasks (``prb_tasks/tasks/prism/``): the shared builder of :mod:`prb_tasks.documents.people`
on a local PRISM copy (:mod:`prb_tasks.data.prism`)."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from prb_tasks.data import provenance
from prb_tasks.data.prism.constants import ENV_VAR
from prb_tasks.data.prism.sources import load_copy, resolve_data_dir
from prb_tasks.data.rawfiles import folder_stamp
from prb_tasks.documents.metadata import MetadataSpec, check_options, data_dir_preflight, task_name
from prb_tasks.documents.options import parse_options
from prb_tasks.documents.pairs import DocList, to_dataset
from prb_tasks.documents.people import PeopleOptions, build_people_docs

FAMILY = "prism"


class PrismOptions(PeopleOptions):
    """``--metadata`` options of the PRISM tasks (each field's description says what it does)."""

    data_dir: Optional[str] = Field(None, description="local copy in the HF layout (survey.jsonl, "
                                    f"conversations.jsonl); else ${ENV_VAR}")


#: The ``--metadata`` keys of every ``prism*`` task, checked by the shared validator.
METADATA = MetadataSpec.from_options(FAMILY, PrismOptions, fixed=frozenset({"variant"}))


def build_docs(variant: str, **kwargs: Any) -> list[dict[str, Any]]:
    """Documents of one variant for every pair of a PRISM copy.

    Args:
        variant: one of :data:`prb_tasks.documents.people.VARIANTS`.
        **kwargs: ``--metadata`` / ``--model_args`` keys; see :class:`PrismOptions`.
    """
    check_options(METADATA, kwargs, task_name(kwargs))
    opts = parse_options(PrismOptions, kwargs)
    folder, copy = load_copy(opts.data_dir)
    pairs = sum(len(p.choices) for p in copy.people)
    provenance.record(kwargs, provenance.DataSource("local", str(folder), "labelled pairs", pairs),
                      task_name(kwargs) or f"prism_{variant}")
    return build_people_docs(FAMILY, copy.people, variant, opts, f"{folder}|{folder_stamp(folder)}")


def fewshot_source(opts: Any, featured: bool = True) -> tuple[Any, provenance.DataSource, str]:
    """PRISM's participants for the few-shot tasks (``data_family: prism``; the copy is ``data_dir``).

    Args:
        opts: the few-shot tasks' options.
        featured: compute the features the options ask for.
    """
    folder, copy = load_copy(opts.data_dir)
    pairs = sum(len(p.choices) for p in copy.people)
    origin = provenance.DataSource("local", str(folder), "labelled pairs", pairs)
    from prb_tasks.documents.fewshot import people_data

    return people_data(FAMILY, opts, copy.people, origin, f"{folder}|{folder_stamp(folder)}", featured)


def load_dataset(**kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point for the PRISM task YAMLs."""
    variant = kwargs.pop("variant")
    return to_dataset(build_docs(variant, **kwargs))


def audit_docs(location: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    """The documents ``prb audit`` reads: the ``scalar_profile`` pairs of a PRISM copy.

    Args:
        location: the copy's folder.
        options: the user's ``--metadata`` keys.
    """
    return build_docs("scalar_profile", **{**options, "data_dir": location})


#: ``prb eval``'s check before a model loads: a named copy must be a folder.
preflight = data_dir_preflight(resolve_data_dir)
