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

``--metadata '{"preset": "official"}'`` runs every step as the authors' ``BoN/`` scripts
do (see docs/reproducing.md): their policy system message and prompts (written by
``prb templates official``), Contriever retrieval of whole posts, the question and the
posts concatenated with nothing between them as the scalar RM's user turn, their grader
prompt and its list reply (:mod:`prb_tasks.replies.bon_official`). Documents of the
preset carry ``rule: official``, so grades made under one preset are never read under
the other.
"""

from __future__ import annotations

import dataclasses
import sys
from functools import partial
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import Field, model_validator

from prb_tasks.data import profile_store, provenance
from prb_tasks.data.bon_files import CandidateSet, load_candidates, load_grades, text_sha
from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.columnar import SubsetTable
from prb_tasks.data.personalized_rb.sources import load_table
from prb_tasks.data.personalized_rb.subsets import SUBSETS, Subset
from prb_tasks.documents.metadata import MetadataSpec, check_options, task_name
from prb_tasks.documents.options import TemplateOptions, parse_options
from prb_tasks.documents.pairs import ASK_ONCE, GENERATION, DocList, judge_system_prompt, to_dataset
from prb_tasks.documents.personalized_rb import DocOptions, selected_posts, subset_source
from prb_tasks.prompts.retrieval import DEFAULT_MAX_POST_CHARS, RETRIEVERS, format_posts
from prb_tasks.prompts.templates import render, resolve
from prb_tasks.replies.bon_official import RULE as OFFICIAL

#: Posts shown in the Best-of-N tasks: the authors' Best-of-N pipeline shows the top 10.
BON_K = 10
Variant = Literal["bon_sample", "bon_grade", "bon", "bon_judge"]
VARIANTS: tuple[str, ...] = ("bon_sample", "bon_grade", "bon", "bon_judge")


class BonOptions(TemplateOptions):
    """``--metadata`` options of the ``personalized_rb_bon*`` tasks."""

    data_dir: Optional[str] = Field(None, description="local copy in the HF layout; 'sample' = the bundled sample "
                                    "(default $PRB_DATA_DIR, else the hub)")
    preset: Literal["prb", "official"] = Field(
        "prb", description="prb (default: prb's protocol) or official (every step as the authors' BoN scripts: "
        "their prompts via `prb templates official`, Contriever retrieval of whole posts, their RM input, list "
        "grades with an unreadable one scored 0, the first of tied rewards picked); see docs/reproducing.md")
    k: int = Field(BON_K, ge=1, description=f"profile posts shown to the policy and contestants (default {BON_K}, "
                   "as the authors' Best-of-N pipeline)")
    max_post_chars: int = Field(DEFAULT_MAX_POST_CHARS, ge=0, description="longest post text shown; 0 = whole posts "
                                "(default 1000; preset official: 0)")
    retriever: Literal[RETRIEVERS] = Field(  # type: ignore[valid-type]
        "bm25", description="how posts are ranked: bm25 (default), embedding (all-MiniLM-L6-v2) or contriever "
        "(the authors' encoder; preset official)")
    retriever_model: Optional[str] = Field(None, description="retriever=contriever's checkpoint: hub name or local "
                                           "folder (default facebook/contriever-msmarco)")
    retriever_device: str = Field("auto", description="where a dense retriever runs: auto (default), cpu, cuda, "
                                  "cuda:N, mps")
    candidates: Optional[str] = Field(None, description="personalized_rb_bon_sample's --output_path folder or "
                                      "samples file, or your own JSONL (pair_key or id, candidates)")
    grades: Optional[str] = Field(None, description="personalized_rb_bon_grade's --output_path folder or samples "
                                  "file (personalized_rb_bon, personalized_rb_bon_judge)")

    @model_validator(mode="after")
    def _official_fixes_retrieval(self) -> "BonOptions":
        if self.preset != OFFICIAL:
            return self
        given = self.model_fields_set
        if "retriever" in given and self.retriever != "contriever":
            raise ValueError(f"preset official ranks posts with Contriever as the authors do; drop "
                             f"'retriever' ({self.retriever}) or use preset prb")
        if "max_post_chars" in given and self.max_post_chars != 0:
            raise ValueError(f"preset official shows whole posts as the authors do; drop 'max_post_chars' "
                             f"({self.max_post_chars}) or use preset prb")
        for key in ("user_template", "system_template"):
            if getattr(self, key) is not None:
                raise ValueError(f"preset official uses the authors' prompts from 'templates'; drop '{key}' "
                                 "or use preset prb")
        return self.model_copy(update={"retriever": "contriever", "max_post_chars": 0})


#: The ``--metadata`` keys of every ``personalized_rb_bon*`` task.
METADATA = MetadataSpec.from_options("personalized_rb_bon", BonOptions, fixed=frozenset({"variant", "source"}))

_SYSTEM = {"bon_grade": "bon/grade_system.jinja", "bon_judge": "judge/pointwise_system.jinja"}
#: The authors' grader settings (BoN/evaluate.py: ``SamplingParams(temperature=0.0, max_tokens=32)``).
OFFICIAL_GRADER = {"max_gen_toks": 32, "temperature": 0.0}

# The authors' messages, written by `prb templates official` (prb does not ship their text).
_OFFICIAL = {"bon_sample": ("bon/official_policy_system.jinja", "bon/official_policy.jinja"),
             "bon_grade": ("bon/official_grade_system.jinja", "bon/official_grade.jinja")}
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
                           retriever=options.retriever, retriever_device=options.retriever_device,
                           retriever_model=options.retriever_model)
    return selected_posts(table, subset, retrieval)


def _official_templates(options: BonOptions, variant: str) -> tuple[Any, Any]:
    """The authors' (system, user) templates of a step, from the ``templates`` folder."""
    names = _OFFICIAL[variant]
    folder = Path(options.templates).expanduser() if options.templates else None
    missing = [name for name in names if folder is None or not (folder / name).is_file()]
    if missing:
        where = f"'{folder}' has no {missing[0]}" if folder is not None else "no 'templates' folder was given"
        raise DataError(f"prb: preset official needs the authors' prompts, which prb does not ship ({where}): run "
                        "`prb templates official DIR` once (on a machine with internet access, or with --source "
                        "<their checkout>) and add \"templates\": \"DIR\" to --metadata")
    return resolve(names[0], options.templates), resolve(names[1], options.templates)


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
    official = options.preset == OFFICIAL
    if official:
        system_ref, ref = _official_templates(options, "bon_sample")
        system = render(system_ref)
    else:
        ref, system = resolve(_USER["bon_sample"], options.templates, options.user_template), ""
    docs = []
    for subset, table in tables:
        for index, (row, posts) in enumerate(zip(table.rows, _posts(subset, table, options))):
            if official:
                # Their sample.py: the template's {question}, then {profile} (the posts as laid out).
                prompt = render(ref, question=row.question, profile=format_posts(posts))
            else:
                prompt = render(ref, question=row.question, category=row.category, posts=posts,
                                posts_text=format_posts(posts))
            docs.append({"pair_key": f"{subset.short}/{index}", "id": row.id, "subset": subset.config,
                         "variant": "bon_sample", "post_ids": [p.id for p in posts],
                         # "" sends no system message (prb's protocol has none).
                         "system_prompt": system, "prompt": prompt,
                         **({"rule": OFFICIAL, ASK_ONCE: True} if official else {})})
    return docs


def _grade_docs(tables: list[tuple[Subset, SubsetTable]], options: BonOptions) -> list[dict[str, Any]]:
    candidates = load_candidates(_need(options, "candidates", "bon_grade"))
    by_key = _by_key(candidates.sets, tables)
    _note_failed(candidates.failed)
    official = options.preset == OFFICIAL
    if official:
        system_ref, ref = _official_templates(options, "bon_grade")
        system = render(system_ref)
    else:
        system = judge_system_prompt(options.templates, options.system_template, _SYSTEM["bon_grade"])
        ref = resolve(_USER["bon_grade"], options.templates, options.user_template)
    docs = []
    for subset, table in tables:
        for index, row in enumerate(table.rows):
            key = f"{subset.short}/{index}"
            if key not in by_key:
                continue
            aspects = [a.model_dump() for a in row.rubric_aspects]
            # Their evaluate.py: {question}, {answer}, then {aspects} as the aspect names joined by ", ".
            names = ", ".join(str(a["aspect"]) for a in aspects)
            for number, text in enumerate(by_key[key].texts):
                prompt = (render(ref, question=row.question, answer=text, aspects=names) if official else
                          render(ref, question=row.question, category=row.category, aspects=aspects, response=text))
                docs.append({"pair_key": key, "id": row.id, "subset": subset.config, "variant": "bon_grade",
                             "candidate": number, "candidate_sha": text_sha(text), "aspects": len(aspects),
                             "system_prompt": system, "prompt": prompt,
                             # Their vLLM run reads one reply per request, an empty one included,
                             # greedy, at most 32 new tokens (evaluate.py's SamplingParams).
                             **({"rule": OFFICIAL, ASK_ONCE: True, GENERATION: dict(OFFICIAL_GRADER)}
                                if official else {})})
    return docs


def _note_failed(failed: int) -> None:
    if failed:
        print(f"prb: {failed} questions left out: one of their candidates failed to generate; re-run "
              "personalized_rb_bon_sample to fill them in", file=sys.stderr, flush=True)


def _contestant_docs(tables: list[tuple[Subset, SubsetTable]], options: BonOptions,
                     variant: str, tag: str) -> list[dict[str, Any]]:
    official = options.preset == OFFICIAL
    if official and variant == "bon_judge":
        raise DataError("prb: preset official covers scalar RMs (personalized_rb_bon): the authors publish no "
                        "prompt for a generative contestant; run personalized_rb_bon_judge with preset prb")
    candidates = load_candidates(_need(options, "candidates", variant))
    grades = load_grades(_need(options, "grades", variant), options.preset)
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
                profile_store.remember(profile_key, partial(table.profile_texts, index))
                if official:
                    # Their score.py: the user turn is the question and the posts, with nothing between them.
                    prompt = row.question + format_posts(posts)
                else:
                    prompt = render(ref, question=row.question, category=row.category, posts=posts,
                                    posts_text=format_posts(posts))
                docs.append({**identity, "choices": list(texts), "profile_key": profile_key, "prompt": prompt,
                             **({"rule": OFFICIAL} if official else {})})
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
