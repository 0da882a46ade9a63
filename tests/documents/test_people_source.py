"""A family of real people is registration only: a :class:`PeopleSource` (options and a reader)
gets every entry point its tasks, the few-shot protocol and ``prb audit`` call."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from prb_tasks.data.people import Choice, Person
from prb_tasks.documents import community_alignment, people, prism
from prb_tasks.documents.fewshot import FewshotOptions
from prb_tasks.documents.metadata import MetadataSpec


class _Options(people.PeopleOptions):
    data_dir: Optional[str] = Field(None, description="the copy")


def _person(pid: str, n: int) -> Person:
    choices = tuple(Choice(key=f"{pid}/c{i}/0/1", group=f"c{i}", interaction=f"c{i}/0", prompt=f"Question {i}?",
                           chosen=f"A good answer {i}.", rejected=f"Bad {i}.", language="pt") for i in range(n))
    return Person(pid, {"age": "18-34"}, (), "Brazil", choices)


def test_a_source_gets_the_documents_fewshot_and_audit_entry_points() -> None:
    asked: list[Any] = []

    def read(opts: Any) -> people.CopyRead:
        asked.append(opts.data_dir)
        return people.CopyRead(f"/copies/{opts.data_dir}", (_person("p1", 4), _person("p2", 4)), f"{opts.data_dir}|1")

    source = people.PeopleSource("toy", _Options, MetadataSpec.from_options("toy", _Options, frozenset({"variant"})),
                                 read)
    docs = people.load_dataset(source, variant="scalar_profile", data_dir="x")["test"]
    assert len(docs) == 8 and {d["subset"] for d in docs} == {"toy"} and docs[0]["country"] == "Brazil"
    assert people.audit_docs(source, "y", {})[0]["user_id"] == "p1"
    data, origin, tag = people.fewshot_source(source, FewshotOptions(data_dir="z", queries=1), featured=False)
    assert data.source == "toy" and set(data.users) == {"p1", "p2"} and tag == "z|1"
    assert (origin.kind, origin.location) == ("local", "/copies/z") and asked == ["x", "y", "z"]
    # PRISM and Community Alignment are such sources, each its registration only.
    for module in (prism, community_alignment):
        assert module.build_docs.func is people.build_docs and module.build_docs.args == (module.SOURCE,)
        assert module.fewshot_source.func is people.fewshot_source and module.audit_docs.func is people.audit_docs
