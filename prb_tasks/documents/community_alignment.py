"""Community Alignment's tasks (``prb_tasks/tasks/community_alignment/``): the shared builders of
:mod:`prb_tasks.documents.people` on a local copy (:mod:`prb_tasks.data.community_alignment`)."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, Optional

from pydantic import Field

from prb_tasks.data.community_alignment.constants import DEFAULT_SPLIT, ENV_VAR
from prb_tasks.data.community_alignment.reader import data_file
from prb_tasks.data.community_alignment.sources import load_copy, resolve_data_dir
from prb_tasks.documents import people
from prb_tasks.documents.metadata import MetadataSpec, data_dir_preflight
from prb_tasks.documents.people import CopyRead, PeopleOptions, PeopleSource

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


def read(opts: Any) -> CopyRead:
    """The file of the copy ``opts.data_dir`` that ``opts.split`` picks (``auto`` when None)."""
    copy = load_copy(opts.data_dir, opts.split or DEFAULT_SPLIT)
    return CopyRead(str(copy.path), copy.people, f"{copy.path}|{copy.path.stat().st_mtime}")


SOURCE = PeopleSource(FAMILY, CommunityOptions, METADATA, read)
build_docs = partial(people.build_docs, SOURCE)
load_dataset = partial(people.load_dataset, SOURCE)
fewshot_source = partial(people.fewshot_source, SOURCE)
audit_docs = partial(people.audit_docs, SOURCE)
#: ``prb eval``'s check before a model loads: a named copy must be a folder.
preflight = data_dir_preflight(resolve_data_dir, CommunityOptions,
                                lambda folder, opts, _tasks: data_file(folder, opts.split))
