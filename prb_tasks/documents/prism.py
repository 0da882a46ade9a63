"""PRISM's tasks (``prb_tasks/tasks/prism/``): the shared builders of :mod:`prb_tasks.documents.people`
on a local PRISM copy (:mod:`prb_tasks.data.prism`)."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, Optional

from pydantic import Field

from prb_tasks.data.prism.constants import ENV_VAR
from prb_tasks.data.prism.protocol import PRESETS, PrismProtocol, protocol_of
from prb_tasks.data.prism.reader import check_layout
from prb_tasks.data.prism.sources import load_copy, resolve_data_dir
from prb_tasks.data.rawfiles import folder_stamp
from prb_tasks.documents import people
from prb_tasks.documents.metadata import MetadataSpec, data_dir_preflight
from prb_tasks.documents.people import CopyRead, PeopleOptions, PeopleSource

FAMILY = "prism"


class PrismOptions(PeopleOptions):
    """``--metadata`` options of the PRISM tasks (each field's description says what it does).

    ``protocol`` picks a preset of the pair options (:mod:`prb_tasks.data.prism.protocol`); a pair
    option given beside it overrides the preset's value.
    """

    data_dir: Optional[str] = Field(None, description="local copy in the HF layout (survey.jsonl, "
                                    f"conversations.jsonl); else ${ENV_VAR}")
    protocol: Literal["prb", "prism", "lore"] = Field(
        "prb", description="preset of the pair options: prb (every turn, chosen vs each other answer, every gap), "
        "prism (the authors' battles: opening turn, all pairs among rated answers, |gap| <= 5 a tie, left out), "
        "lore (LoRe: people with 6+ conversations, the test half of their conversations, seen/unseen cohorts)")
    turns: Optional[Literal["all", "opening"]] = Field(None, description="all turns, or the opening turn only")
    pairs: Optional[Literal["chosen", "all"]] = Field(
        None, description="chosen: the chosen answer vs each other one; all: every pair among the rated answers, "
        "labelled by their scores")
    tie: Optional[int] = Field(None, ge=-1, le=99, description="pairs with |score difference| at most this are ties, "
                               "left out and counted (-1: none)")
    balanced_subset: Optional[bool] = Field(None, description="only conversations with "
                                            "included_in_balanced_subset true")
    min_conversations: Optional[int] = Field(None, ge=0, description="only people with at least this many "
                                             "conversations with a chosen and an unchosen answer")
    conversations: Optional[Literal["all", "train", "test"]] = Field(
        None, description="all, or a half of LoRe's split of each person's conversations (seed 123, 50/50)")
    people: Optional[Literal["all", "seen", "unseen"]] = Field(
        None, description="all, or a cohort of LoRe's split of people (seed 123, 80% seen)")

    def pair_protocol(self) -> PrismProtocol:
        """The pairs these options ask for: the preset, with each option given overriding it."""
        return protocol_of(self.protocol, turns=self.turns, pairs=self.pairs, tie=self.tie,
                           balanced=self.balanced_subset, min_conversations=self.min_conversations,
                           conversations=self.conversations, users=self.people)


#: The ``--metadata`` keys of every ``prism*`` task, checked by the shared validator.
METADATA = MetadataSpec.from_options(FAMILY, PrismOptions, fixed=frozenset({"variant"}))


def read(opts: Any) -> CopyRead:
    """The PRISM copy ``opts.data_dir`` names (the folder; its files' state and the pairs asked for are
    the tag). Options without pair options (the few-shot tasks') get prb's pairs."""
    protocol = opts.pair_protocol() if isinstance(opts, PrismOptions) else PRESETS["prb"]
    folder, copy = load_copy(opts.data_dir, protocol)
    tag = f"{folder}|{folder_stamp(folder)}" + ("" if protocol == PRESETS["prb"] else f"|{protocol}")
    return CopyRead(str(folder), copy.people, tag)


SOURCE = PeopleSource(FAMILY, PrismOptions, METADATA, read)
build_docs = partial(people.build_docs, SOURCE)
load_dataset = partial(people.load_dataset, SOURCE)
fewshot_source = partial(people.fewshot_source, SOURCE)
audit_docs = partial(people.audit_docs, SOURCE)
#: ``prb eval``'s check before a model loads: a named copy must be a folder.
preflight = data_dir_preflight(resolve_data_dir, PrismOptions, lambda folder, _opts, _tasks: check_layout(folder))
