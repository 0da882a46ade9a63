"""Community Alignment's tasks (``prb_tasks/tasks/community_alignment/``): the shared builder of
:mod:`prb_tasks.documents.people` on a local copy (:mod:`prb_tasks.data.community_alignment`)."""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field

from prb_tasks.data import provenance
from prb_tasks.data.community_alignment.constants import DEFAULT_SPLIT, ENV_VAR
from prb_tasks.data.community_alignment.sources import load_copy, resolve_data_dir
from prb_tasks.documents.metadata import MetadataSpec, check_options, data_dir_preflight, task_name
from prb_tasks.documents.options import parse_options
from prb_tasks.documents.pairs import DocList, to_dataset
from prb_tasks.documents.people import PeopleOptions, build_people_docs

FAMILY = "community_alignment"


class CommunityOptions(PeopleOptions):
    """``--metadata`` options of the Community Alignment tasks (each field's description says what it does)."""

    data_dir: Optional[str] = Field(None, description="local copy in the HF layout (community_alignment.csv); "
                                    f"else ${ENV_VAR}")
    split: Literal["auto", "latest", "filtered", "full"] = Field(
        DEFAULT_SPLIT, description="which CSV file: latest (community_alignment.csv), filtered or full (the first "
        "release's data/ files: conversations without missing turns, or all); auto (default): the first present")


#: The ``--metadata`` keys of every ``community_alignment*`` task, checked by the shared validator.
METADATA = MetadataSpec.from_options(FAMILY, CommunityOptions, fixed=frozenset({"variant"}))


def build_docs(variant: str, **kwargs: Any) -> list[dict[str, Any]]:
    """Documents of one variant for every pair of a Community Alignment copy.

    Args:
        variant: one of :data:`prb_tasks.documents.people.VARIANTS`.
        **kwargs: ``--metadata`` / ``--model_args`` keys; see :class:`CommunityOptions`.
    """
    check_options(METADATA, kwargs, task_name(kwargs))
    opts = parse_options(CommunityOptions, kwargs)
    copy = load_copy(opts.data_dir, opts.split)
    pairs = sum(len(p.choices) for p in copy.people)
    provenance.record(kwargs, provenance.DataSource("local", str(copy.path), "labelled pairs", pairs),
                      task_name(kwargs) or f"{FAMILY}_{variant}")
    return build_people_docs(FAMILY, copy.people, variant, opts, f"{copy.path}|{copy.path.stat().st_mtime}")


def fewshot_source(opts: Any, featured: bool = True) -> tuple[Any, provenance.DataSource, str]:
    """Community Alignment's annotators for the few-shot tasks (``data_family: community_alignment``;
    the copy is ``data_dir``, the file its ``split`` picks: ``auto`` when not given).

    Args:
        opts: the few-shot tasks' options.
        featured: compute the features the options ask for.
    """
    copy = load_copy(opts.data_dir, opts.split or DEFAULT_SPLIT)
    origin = provenance.DataSource("local", str(copy.path), "labelled pairs", sum(len(p.choices) for p in copy.people))
    from prb_tasks.documents.fewshot import people_data

    return people_data(FAMILY, opts, copy.people, origin, f"{copy.path}|{copy.path.stat().st_mtime}", featured)


def load_dataset(**kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point for the Community Alignment task YAMLs."""
    variant = kwargs.pop("variant")
    return to_dataset(build_docs(variant, **kwargs))


def audit_docs(location: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    """The documents ``prb audit`` reads: the ``scalar_profile`` pairs of a copy.

    Args:
        location: the copy's folder.
        options: the user's ``--metadata`` keys.
    """
    return build_docs("scalar_profile", **{**options, "data_dir": location})


#: ``prb eval``'s check before a model loads: a named copy must be a folder.
preflight = data_dir_preflight(resolve_data_dir)
