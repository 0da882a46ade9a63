"""PRISM's tasks (``prb_tasks/tasks/prism/``): the shared builders of :mod:`prb_tasks.documents.people`
on a local PRISM copy (:mod:`prb_tasks.data.prism`)."""

from __future__ import annotations

from functools import partial
from typing import Any, Optional

from pydantic import Field

from prb_tasks.data.prism.constants import ENV_VAR
from prb_tasks.data.prism.sources import load_copy, resolve_data_dir
from prb_tasks.data.rawfiles import folder_stamp
from prb_tasks.documents import people
from prb_tasks.documents.metadata import MetadataSpec, data_dir_preflight
from prb_tasks.documents.people import CopyRead, PeopleOptions, PeopleSource

FAMILY = "prism"


class PrismOptions(PeopleOptions):
    """``--metadata`` options of the PRISM tasks (each field's description says what it does)."""

    data_dir: Optional[str] = Field(None, description="local copy in the HF layout (survey.jsonl, "
                                    f"conversations.jsonl); else ${ENV_VAR}")


#: The ``--metadata`` keys of every ``prism*`` task, checked by the shared validator.
METADATA = MetadataSpec.from_options(FAMILY, PrismOptions, fixed=frozenset({"variant"}))


def read(opts: Any) -> CopyRead:
    """The PRISM copy ``opts.data_dir`` names (the folder; its files' state is the tag)."""
    folder, copy = load_copy(opts.data_dir)
    return CopyRead(str(folder), copy.people, f"{folder}|{folder_stamp(folder)}")


SOURCE = PeopleSource(FAMILY, PrismOptions, METADATA, read)
build_docs = partial(people.build_docs, SOURCE)
load_dataset = partial(people.load_dataset, SOURCE)
fewshot_source = partial(people.fewshot_source, SOURCE)
audit_docs = partial(people.audit_docs, SOURCE)
#: ``prb eval``'s check before a model loads: a named copy must be a folder.
preflight = data_dir_preflight(resolve_data_dir)
