"""Documents of the Best-of-N tasks on Personalized RewardBench (``personalized_rb_bon*``).

Three steps, each an ordinary lm-eval run that reads the previous one's samples:

- ``bon_sample`` (``personalized_rb_bon_sample``): a policy answers each question given
  the user's top-k posts (the retrieval of the profile-aware tasks); lm-eval's ``repeats``
  asks for N answers per question (the candidates);
- ``bon_grade`` (``personalized_rb_bon_grade``): a grader scores each candidate once
  against the row's rubric aspects (``--metadata candidates``);
- ``bon`` / ``bon_judge`` (``personalized_rb_bon`` for scalar RMs, ``personalized_rb_bon_judge``
  for judges, pointwise): the contestant scores every candidate, and best-of-k is a
  lookup of the gold grades (``--metadata candidates`` and ``grades``).

All three subsets are one task; questions are named by ``pair_key`` (``art/3``) as in
the pairwise tasks, so ``prb validity`` can match them.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Literal, Optional

from pydantic import Field

from prb_tasks.data import profile_store, provenance
from prb_tasks.data.bon_files import CandidateSet, load_candidates, load_grades, text_sha
from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.columnar import SubsetTable
from prb_tasks.data.personalized_rb.sources import load_table
from prb_tasks.data.personalized_rb.subsets import SUBSETS, Subset
from prb_tasks.docs.metadata import MetadataSpec, check_options, task_name
from prb_tasks.docs.options import TemplateOptions, parse_options
from prb_tasks.docs.pairs import DocList, judge_system_prompt, to_dataset
from prb_tasks.docs.personalized_rb import DocOptions, selected_posts, subset_source
from prb_tasks.prompts.retrieval import DEFAULT_MAX_POST_CHARS, RETRIEVERS, format_posts
from prb_tasks.prompts.templates import render, resolve

#: Posts shown in the Best-of-N tasks: the authors' Best-of-N pipeline shows the top 10.
BON_K = 10
Variant = Literal["bon_sample", "bon_grade", "bon", "bon_judge"]
VARIANTS: tuple[str, ...] = ("bon_sample", "bon_grade", "bon", "bon_judge")


class BonOptions(TemplateOptions):
    """``--metadata`` options of the ``personalized_rb_bon*`` tasks."""

    data_dir: Optional[str] = Field(None, description="local copy in the HF layout; 'sample' = the bundled sample "
                                    "(default $PRB_DATA_DIR, else the hub)")
    k: int = Field(BON_K, ge=1, description=f"profile posts shown to the policy and contestants (default {BON_K}, "
                   "as the authors' Best-of-N pipeline)")
    max_post_chars: int = Field(DEFAULT_MAX_POST_CHARS, ge=0, description="longest post text shown; 0 = whole posts")
    retriever: Literal[RETRIEVERS] = Field("bm25", description="how posts are ranked: bm25 (default) or embedding")  # type: ignore[valid-type]
    candidates: Optional[str] = Field(None, description="personalized_rb_bon_sample's --output_path folder or "
                                      "samples file, or your own JSONL (pair_key or id, candidates)")
    grades: Optional[str] = Field(None, description="personalized_rb_bon_grade's --output_path folder or samples "
                                  "file (personalized_rb_bon, personalized_rb_bon_judge)")


#: The ``--metadata`` keys of every ``personalized_rb_bon*`` task.
METADATA = MetadataSpec.from_options("personalized_rb_bon", BonOptions, fixed=frozenset({"variant", "source"}))

_SYSTEM = {"bon_grade": "bon/grade_system.jinja", "bon_judge": "judge/pointwise_system.jinja"}
_USER = {"bon_sample": "bon/policy.jinja", "bon_grade": "bon/grade_user.jinja", "bon": "rm/user_profile.jinja",
         "bon_judge": "judge/user_pointwise.jinja"}


def _options(raw: dict[str, Any]) -> BonOptions:
    check_options(METADATA, raw, task_name(raw))
    return parse_options(BonOptions, raw)


def _tables(options: BonOptions, raw: dict[str, Any]) -> tuple[list[tuple[Subset, SubsetTable]], str]:
    """Every subset's table, and the profile store's key prefix (which data the rows came from)."""
    tables = [(subset, load_table(subset, options.data_dir)) for subset in SUBSETS]
    rows = sum(len(table.rows) for _, table in tables)
    origin = subset_source(DocOptions(data_dir=options.data_dir), None, SUBSETS[0], rows)
    # One task reads all three subsets: one record for the results file.
    origin = dataclasses.replace(origin, subset="+".join(subset.config for subset in SUBSETS))
    provenance.record(raw, origin, task_name(raw) or "personalized_rb_bon")
    return tables, "hub" if origin.kind == "hub" else origin.location


def _posts(subset: Subset, table: SubsetTable, options: BonOptions) -> list[list[Any]]:
    retrieval = DocOptions(data_dir=options.data_dir, k=options.k, max_post_chars=options.max_post_chars,
                           retriever=options.retriever)
    return selected_posts(table, subset, retrieval)


def _need(options: BonOptions, key: str, variant: str) -> str:
    value = getattr(options, key)
    if value is None:
        step = "personalized_rb_bon_sample" if key == "candidates" else "personalized_rb_bon_grade"
        raise DataError(f"prb: personalized_rb_{variant} needs --metadata '{{\"{key}\": \"<{step}'s "
                        "--output_path folder>\"}'")
    return value


def _by_key(sets: list[CandidateSet], tables: list[tuple[Subset, SubsetTable]]) -> dict[str, CandidateSet]:
    """Candidate sets by ``pair_key``; a set named by ``id`` is matched to its row."""
    ids: dict[str, list[str]] = {}
    keys: set[str] = set()
    for subset, table in tables:
        for index, row in enumerate(table.rows):
            key = f"{subset.short}/{index}"
            keys.add(key)
            ids.setdefault(str(row.id), []).append(key)
    out: dict[str, CandidateSet] = {}
    for item in sets:
        if item.key is not None:
            if item.key not in keys:
                raise DataError(f"prb: {item.source}: no row '{item.key}' in this data (keys look like art/0); "
                                "use the data the candidates were written for")
            out[item.key] = item
            continue
        found = ids.get(item.row_id or "", [])
        if len(found) != 1:
            problem = "no row has" if not found else f"{len(found)} rows have"
            raise DataError(f"prb: {item.source}: {problem} id '{item.row_id}'; name the row by pair_key instead")
        out[found[0]] = item
    return out


def _sample_docs(tables: list[tuple[Subset, SubsetTable]], options: BonOptions) -> list[dict[str, Any]]:
    ref = resolve(_USER["bon_sample"], options.templates, options.user_template)
    docs = []
    for subset, table in tables:
        for index, (row, posts) in enumerate(zip(table.rows, _posts(subset, table, options))):
            docs.append({"pair_key": f"{subset.short}/{index}", "id": row.id, "subset": subset.config,
                         "variant": "bon_sample", "post_ids": [p.id for p in posts],
                         "prompt": render(ref, question=row.question, category=row.category, posts=posts,
                                          posts_text=format_posts(posts))})
    return docs


def _grade_docs(tables: list[tuple[Subset, SubsetTable]], options: BonOptions) -> list[dict[str, Any]]:
    candidates = load_candidates(_need(options, "candidates", "bon_grade"))
    by_key = _by_key(candidates.sets, tables)
    _note_failed(candidates.failed)
    system = judge_system_prompt(options.templates, options.system_template, _SYSTEM["bon_grade"])
    ref = resolve(_USER["bon_grade"], options.templates, options.user_template)
    docs = []
    for subset, table in tables:
        for index, row in enumerate(table.rows):
            key = f"{subset.short}/{index}"
            if key not in by_key:
                continue
            aspects = [a.model_dump() for a in row.rubric_aspects]
            for number, text in enumerate(by_key[key].texts):
                docs.append({"pair_key": key, "id": row.id, "subset": subset.config, "variant": "bon_grade",
                             "candidate": number, "candidate_sha": text_sha(text), "aspects": len(aspects),
                             "system_prompt": system,
                             "prompt": render(ref, question=row.question, category=row.category,
                                              aspects=aspects, response=text)})
    return docs


def _note_failed(failed: int) -> None:
    if failed:
        print(f"prb: {failed} questions left out: one of their candidates failed to generate; re-run "
              "personalized_rb_bon_sample to fill them in", file=sys.stderr, flush=True)


def _contestant_docs(tables: list[tuple[Subset, SubsetTable]], options: BonOptions,
                     variant: str, tag: str) -> list[dict[str, Any]]:
    candidates = load_candidates(_need(options, "candidates", variant))
    grades = load_grades(_need(options, "grades", variant))
    by_key = _by_key(candidates.sets, tables)
    _note_failed(candidates.failed)
    # The pointwise rules of PersonalLLM's judge task, told that the evidence here is posts.
    system = render(resolve(_SYSTEM["bon_judge"], options.templates, options.system_template),
                    evidence="earlier posts") if variant == "bon_judge" else None
    ref = resolve(_USER[variant], options.templates, options.user_template)
    context_ref = resolve("bon/judge_context.jinja", options.templates)
    docs: list[dict[str, Any]] = []
    ungraded = 0
    for subset, table in tables:
        all_posts = _posts(subset, table, options)
        for index, row in enumerate(table.rows):
            key = f"{subset.short}/{index}"
            if key not in by_key:
                continue
            texts = by_key[key].texts
            known = [(key, text_sha(t)) in grades for t in texts]
            if not all(known):
                # Graded with --limit, or grades of other candidates: nothing to look up.
                ungraded += 1
                continue
            gold = [grades[(key, text_sha(t))] for t in texts]
            posts = all_posts[index]
            identity = {"pair_key": key, "id": row.id, "subset": subset.config, "variant": variant,
                        "post_ids": [p.id for p in posts], "gold": gold}
            if variant == "bon":
                # Same key as the pairwise scalar tasks: profile scorers (bm25) read the posts there.
                profile_key = f"{tag}::{subset.config}/{index}"
                profile_store.remember(profile_key, lambda table=table, index=index: tuple(table.profiles.texts(index)))
                docs.append({**identity, "choices": list(texts), "profile_key": profile_key,
                             "prompt": render(ref, question=row.question, category=row.category, posts=posts,
                                              posts_text=format_posts(posts))})
                continue
            context = render(context_ref, posts=posts, posts_text=format_posts(posts))
            for number, text in enumerate(texts):
                docs.append({**identity, "candidate": number, "system_prompt": system,
                             "prompt": render(ref, context=context, question=row.question, response=text)})
    if ungraded:
        print(f"prb: {ungraded} questions have candidates without a gold grade in '{options.grades}' "
              "(graded with --limit?); they are left out", file=sys.stderr, flush=True)
    if not docs:
        raise DataError(f"prb: no question has all its candidates graded in '{options.grades}'; run "
                        "personalized_rb_bon_grade on the same candidates first")
    return docs


def build_docs(variant: str, source: str | None = None, **raw: Any) -> list[dict[str, Any]]:
    """Documents of one Best-of-N step, in dataset order.

    Args:
        variant: ``bon_sample``, ``bon_grade``, ``bon`` or ``bon_judge``.
        source: ``sample`` for the bundled data (fixed by a task YAML), else None.
        **raw: ``--metadata`` / ``--model_args`` keys (see :class:`BonOptions`).
    """
    options = _options(raw)
    if source is not None:
        options = options.model_copy(update={"data_dir": source})
    tables, tag = _tables(options, raw)
    if variant == "bon_sample":
        return _sample_docs(tables, options)
    if variant == "bon_grade":
        return _grade_docs(tables, options)
    if variant in ("bon", "bon_judge"):
        return _contestant_docs(tables, options, variant, tag)
    raise DataError(f"prb: unknown task variant '{variant}'; expected one of {VARIANTS}")


def load_dataset(**kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point for the task YAMLs: a ``{"test": documents}`` dict."""
    variant = kwargs.pop("variant")
    return to_dataset(build_docs(variant, **kwargs))
