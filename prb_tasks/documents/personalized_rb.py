"""Turn validated benchmark rows into the small documents lm-eval iterates over.

One loader serves every task; the task YAML says which subset and variant it wants
(``dataset_kwargs``) and the user tunes it with ``--metadata`` (the keys of
:data:`METADATA`). lm-eval also passes every ``--model_args`` key here;
:mod:`prb_tasks.documents.metadata` tells the two apart and refuses unknown keys.

The planner's two stages are variants too: ``plan`` (stage 1: question + retrieved
posts, the model lists the aspects this user expects) and ``planned`` (stage 2: the
judge sees the aspects that stage 1 inferred, read from its samples files).

Prompts are rendered here, once, so the sample log shows exactly what was sent and
the judge backend sees plain chat messages. Raw profiles are never copied into docs.
"""

from __future__ import annotations

import sys
from functools import partial
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from prb_tasks.common.resources import sample_dir
from prb_tasks.common.suggest import did_you_mean
from prb_tasks.data import profile_store, provenance
from prb_tasks.data.errors import DataError, NoDataError
from prb_tasks.data.personalized_rb.columnar import PairRow, SubsetTable
from prb_tasks.data.personalized_rb.sources import load_table, resolve_data_dir
from prb_tasks.data.personalized_rb.subsets import HF_REPO, Subset, subset_by_name
from prb_tasks.data.plan_files import PlanRecord, load_plans, question_sha
from prb_tasks.documents.metadata import (
    MetadataError,
    MetadataSpec,
    check_options,
    note_unused,
    task_name,
)
from prb_tasks.documents.options import unused_templates
from prb_tasks.documents.pairs import (
    ASK_ONCE,
    BOTH_ORDERS,
    CHOSEN_FIRST,
    DocList,
    judge_pair_docs,
    judge_system_prompt,
    to_dataset,
)
from prb_tasks.prompts.retrieval import (
    DEFAULT_K,
    DEFAULT_MAX_POST_CHARS,
    RETRIEVERS,
    RetrievalOptions,
    SelectedPost,
    format_posts,
    select_posts_columns,
)
from prb_tasks.prompts.selection_cache import cached_selection
from prb_tasks.prompts.templates import TemplateRef, render, resolve
from prb_tasks.replies.order import official_positions
from prb_tasks.replies.plans import parse_plan
from prb_tasks.text.encoder import BACKENDS, DTYPES

Variant = Literal["both", "official", "profile", "oracle", "planned", "plan", "scalar", "scalar_profile"]
JUDGE_VARIANTS = ("both", "official", "profile", "oracle", "planned")
PLAN_VARIANTS = ("plan",)
SCALAR_VARIANTS = ("scalar", "scalar_profile")
PLANS_MISSING = ("error", "skip")
#: The options with a fixed set of values: name -> (default, values).
_CHOICES = {
    "retriever": ("bm25", RETRIEVERS),
    "retriever_dtype": ("float32", DTYPES),
    "retriever_backend": ("torch", BACKENDS),
    "plans_missing": ("error", PLANS_MISSING),
}

_USER_TEMPLATE = {
    "both": "judge/user.jinja",
    "official": "judge/user.jinja",
    "profile": "judge/user_profile.jinja",
    "oracle": "judge/user_oracle.jinja",
    "planned": "judge/user_planned.jinja",
    "plan": "planner/user.jinja",
    "scalar_profile": "rm/user_profile.jinja",
}
_SYSTEM_TEMPLATE = {"plan": "planner/system.jinja"}


def _text(value: Any) -> str | None:
    """A text option: None and "" mean unset; anything else is read as text."""
    return None if value in (None, "") else str(value)


def _integer(value: Any, name: str, minimum: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"--metadata '{name}' must be an integer, got {value!r}") from None
    if number < minimum:
        raise ValueError(f"--metadata '{name}' must be at least {minimum}, got {number}")
    return number


def _choice(value: Any, name: str, default: str, choices: tuple[str, ...]) -> str:
    chosen = _text(value) or default
    if chosen not in choices:
        raise ValueError(f"--metadata '{name}' must be one of {', '.join(choices)}, got {chosen!r}"
                         f"{did_you_mean(chosen, choices)}")
    return chosen


class DocOptions(BaseModel):
    """User-tunable settings of every ``personalized_rb*`` task, validated from ``--metadata``.

    The fields are the ``--metadata`` keys (:data:`METADATA`); each description says what
    the key does. Values are read as the command line gives them (``k`` may come as
    ``"3"``); a wrong one is one line naming the key. ``max_post_chars`` is checked before
    ``k``, so of two mistakes the same one is reported as before.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    data_dir: Optional[str] = Field(
        None, description="local copy in the HF layout; 'sample' = the bundled sample (default $PRB_DATA_DIR, "
                          "else the hub)")
    max_post_chars: int = Field(
        DEFAULT_MAX_POST_CHARS,
        description=f"longest post text shown; 0 = whole posts (default {DEFAULT_MAX_POST_CHARS})")
    k: int = Field(DEFAULT_K, description=f"posts shown in profile variants (default {DEFAULT_K})")
    retriever: str = Field(
        "bm25", description="how posts are ranked: bm25 (default), embedding (dense, all-MiniLM-L6-v2) or "
                            "contriever (dense, the authors' facebook/contriever-msmarco)")
    retriever_model: Optional[str] = Field(
        None, description="retriever=contriever's checkpoint: a hub name or local folder (default "
                          "facebook/contriever-msmarco)")
    retriever_device: str = Field(
        "auto", description="where the dense retriever runs: auto (default), cpu, cuda, cuda:N, mps")
    retriever_dtype: str = Field(
        "float32", description="dense retriever precision: float32 (default), bfloat16, float16, or auto "
                               "(bfloat16 where the hardware computes it natively)")
    retriever_backend: str = Field(
        "torch", description="what runs the dense retriever: torch (default) or openvino (CPU only, extra "
                             "embed-fast; about 2x the texts per second of torch on a small CPU)")
    plans: Optional[str] = Field(
        None, description="planner stage 1's --output_path folder or samples file (personalized_rb_planned)")
    plans_missing: str = Field("error", description="error (default) or skip rows that have no plan")
    templates: Optional[str] = Field(
        None, description="folder of replacement templates, same file names as templates/")
    system_template: Optional[str] = Field(
        None, description="file replacing the judge (or planner) system prompt")
    user_template: Optional[str] = Field(
        None, description="file replacing the user-message template of the variant")
    rows: Optional[str] = Field(
        None, description="a file of row keys (art/12, one a line) to score, the others left out: the rows "
                          "prb train held out (its OUT/heldout_rows.txt)")

    @field_validator("data_dir", "retriever_model", "plans", "templates", "system_template", "user_template", "rows",
                     mode="before")
    @classmethod
    def _texts(cls, value: Any) -> str | None:
        return _text(value)

    @field_validator("retriever_device", mode="before")
    @classmethod
    def _device(cls, value: Any) -> str:
        return _text(value) or "auto"

    @field_validator("max_post_chars", mode="before")
    @classmethod
    def _post_chars(cls, value: Any) -> int:
        number = _integer(value, "max_post_chars", 0)
        if 0 < number < 50:
            raise ValueError(f"--metadata 'max_post_chars' must be 0 (whole posts) or at least 50, got {number}")
        return number

    @field_validator("k", mode="before")
    @classmethod
    def _k(cls, value: Any) -> int:
        return _integer(value, "k", 1)

    @field_validator("retriever", "retriever_dtype", "retriever_backend", "plans_missing", mode="before")
    @classmethod
    def _choices(cls, value: Any, info: ValidationInfo) -> str:
        assert info.field_name is not None  # a field validator is always called for a field
        default, choices = _CHOICES[info.field_name]
        return _choice(value, info.field_name, default, choices)

    @classmethod
    def from_kwargs(cls, raw: dict[str, Any], source: str | None = None) -> "DocOptions":
        """Validate the loader's keywords.

        Args:
            raw: every keyword lm-eval passed (``--metadata``, ``--model_args``, its own).
            source: the data source fixed by the task YAML (``sample``), if any.

        Raises:
            MetadataError: an unknown ``--metadata`` key, or ``data_dir`` given to a
                task whose data is fixed.
            DataError: a value of the wrong type.
        """
        task = task_name(raw)
        check_options(METADATA, raw, task)
        _check_fixed_source(task, source, raw.get("data_dir"))
        try:
            return cls.model_validate({key: value for key, value in raw.items() if key in cls.model_fields})
        except ValidationError as exc:
            raise DataError(f"prb: {exc.errors()[0]['msg'].removeprefix('Value error, ')}") from None

    @property
    def retrieval(self) -> RetrievalOptions:
        """How posts are picked for the profile-aware variants."""
        return RetrievalOptions(self.retriever, self.k, self.max_post_chars, self.retriever_device,
                                self.retriever_dtype, self.retriever_backend, self.retriever_model)


#: The ``--metadata`` keys of every ``personalized_rb*`` task.
METADATA = MetadataSpec.from_options("personalized_rb", DocOptions, fixed=frozenset({"subset", "variant", "source"}))


def selected_posts(table: SubsetTable, subset: Subset, options: DocOptions) -> list[list[SelectedPost]]:
    """Top-k posts of every row, ranked in one batch (dense retrieval embeds across rows);
    kept for the run and on disk (see :mod:`prb_tasks.prompts.selection_cache`).

    Args:
        table: the subset's rows and their profiles.
        subset: the subset.
        options: retrieval settings (retriever, k, post length, device, precision).
    """
    # Rows are ranked a batch at a time, so only a batch of profiles is decoded at once.
    return cached_selection(
        table.data_key, subset.config, options.retrieval, len(table),
        lambda: select_posts_columns([row.question for row in table.rows], table.profile_batches(),
                                     options.retrieval),
    )


def _plan_for(
    record: PlanRecord | None, identity: dict[str, Any], row: PairRow, options: DocOptions
) -> PlanRecord | None:
    """The stage-1 plan of this row, checked to be about the same question."""
    key = identity["pair_key"]
    if record is None:
        if options.plans_missing == "skip":
            return None
        raise DataError(
            f"prb: no plan for row {key} (id {row.id!r}) in '{options.plans}'; run stage 1 "
            "(personalized_rb_plan) on the same data without --limit, or add plans_missing=skip "
            "to --metadata to judge only rows that have a plan"
        )
    if record.question_sha != question_sha(row.question):
        raise DataError(
            f"prb: the plan for row {key} in {record.source} was made for a different question "
            "(other data?); run stage 1 on the same data as stage 2"
        )
    return record


def _identity(row: PairRow, index: int, subset: Subset, variant: Variant) -> dict[str, Any]:
    """Fields every document carries: which pair, which subset, which task variant.

    ``pair_key`` is ``<subset short name>/<row number>``: unique even when the data
    repeats an id (the dataset's ``id`` is kept as its own field).
    """
    return {
        "pair_key": f"{subset.short}/{index}",
        "id": row.id,
        "subset": subset.config,
        "category": row.category,
        "variant": variant,
    }


def _check_fixed_source(task: str | None, source: str | None, data_dir: Any) -> None:
    if source is not None and data_dir not in (None, "", source):
        raise MetadataError(
            f"prb: {task or 'this task'} always reads the bundled {source}, so data_dir={data_dir!r} "
            "would be ignored; run the same variant without '_sample' (e.g. personalized_rb_scalar) "
            "to use your data, or drop data_dir"
        )


def preflight(tasks: dict[str, Any], metadata: dict[str, Any], settings: dict[str, Any] | None = None) -> None:
    """Checks that need no rows, run by ``prb eval`` before any model is loaded.

    A data folder that does not exist, a ``data_dir`` for a sample task, or an
    unreachable hub would otherwise only surface after a model (perhaps a large one)
    has loaded.

    Args:
        tasks: requested task or group name -> :class:`prb_tasks.common.taskindex.TaskInfo`.
        metadata: the run's ``--metadata``.
        settings: the run's other lm-eval settings (not needed here).
    """
    from prb_tasks.data.personalized_rb.sources import check_hub

    DocOptions.from_kwargs(dict(metadata))  # a misspelt or out-of-range value, before the model loads
    data_dir = metadata.get("data_dir")
    for name, info in sorted(tasks.items()):
        _check_fixed_source(name, info.source, data_dir)
    if any(info.source is None for info in tasks.values()) and resolve_data_dir(data_dir) is None:
        check_hub()


def subset_source(options: DocOptions, source: str | None, subset: Subset, rows: int) -> provenance.DataSource:
    """Where a subset's rows came from (the hub, a local copy or the bundled sample), for provenance.

    Args:
        options: the run's document options (its ``data_dir``).
        source: a task's fixed source (``sample``), or None to use ``options.data_dir``.
        subset: the subset read.
        rows: how many rows were read.
    """
    folder = resolve_data_dir(source or options.data_dir)
    if folder is None:
        return provenance.DataSource("hub", HF_REPO, subset.config, rows)
    kind: provenance.Kind = "sample" if folder.resolve() == sample_dir().resolve() else "local"
    return provenance.DataSource(kind, str(folder), subset.config, rows)


def _judge_docs(
    table: SubsetTable, subset: Subset, variant: Variant, options: DocOptions
) -> list[dict[str, Any]]:
    rows = table.rows
    # The rules do not depend on the row: render them once per subset.
    system_prompt = judge_system_prompt(options.templates, options.system_template)
    user_ref = resolve(_USER_TEMPLATE[variant], options.templates, options.user_template)
    positions = official_positions(len(rows)) if variant == "official" else None
    all_posts = selected_posts(table, subset, options) if variant == "profile" else [[] for _ in rows]
    if variant == "planned" and options.plans is None:
        raise DataError("prb: personalized_rb_planned needs the plans of stage 1: "
                        "--metadata '{\"plans\": \"<stage-1 --output_path folder>\"}'")
    plans = load_plans(options.plans) if variant == "planned" and options.plans else None
    docs: list[dict[str, Any]] = []
    failed = 0
    for index, row in enumerate(rows):
        posts = all_posts[index]
        identity = _identity(row, index, subset, variant)
        extra: dict[str, Any] = {}
        inferred: list[str] | None = None
        if plans is not None:
            record = _plan_for(plans.get(identity["pair_key"]), identity, row, options)
            if record is None:
                continue
            plan = parse_plan(record.completion)
            failed += plan.outcome in ("error", "skipped")
            inferred = list(plan.aspects)
            extra = {"plan_aspects": inferred, "plan_empty": int(not inferred)}
        orders = ["A" if positions[index] else "B"] if positions is not None else BOTH_ORDERS
        if positions is not None:
            extra[ASK_ONCE] = True
        docs.extend(judge_pair_docs(
            {**identity, "post_ids": [p.id for p in posts], **extra},
            row.chosen, row.rejected, system_prompt,
            # Inputs bound now: the prompt store renders it again when lm-eval asks.
            partial(_render_user, user_ref, row, posts=posts, inferred=inferred),
            positions=orders, rebuild=True,
        ))
    if failed:
        print(f"prb: {failed} plans of {subset.config} failed or were skipped in stage 1; those rows are "
              "judged with no aspects; re-run stage 1 to fill them in",
              file=sys.stderr, flush=True)
    return docs


def _render_user(
    ref: TemplateRef, row: PairRow, a: str, b: str, posts: list, inferred: list[str] | None = None
) -> str:
    # In the planned variant ``aspects`` holds the *inferred* aspects (same shape as the
    # gold ones, without evidence or reason), so the judge never sees the rubric.
    # Rendered two to four times per request (see prompt_store), so what the template never
    # names is not built: the profile template reads ``posts`` and neither of these.
    aspects = [] if not ref.mentions("aspects") else (
        [{"aspect": text, "evidence": "", "reason": ""} for text in inferred]
        if inferred is not None else [aspect.model_dump() for aspect in row.rubric_aspects]
    )
    return render(
        ref,
        question=row.question,
        category=row.category,
        response_a=a,
        response_b=b,
        posts=posts,
        posts_text=format_posts(posts) if ref.mentions("posts_text") else "",
        aspects=aspects,
    )


def _plan_docs(table: SubsetTable, subset: Subset, options: DocOptions) -> list[dict[str, Any]]:
    """Stage 1 of the planner: question + top-k posts; the model lists the expected aspects."""
    system_prompt = judge_system_prompt(options.templates, options.system_template, _SYSTEM_TEMPLATE["plan"])
    user_ref = resolve(_USER_TEMPLATE["plan"], options.templates, options.user_template)
    docs: list[dict[str, Any]] = []
    for index, (row, posts) in enumerate(zip(table.rows, selected_posts(table, subset, options))):
        docs.append({
            **_identity(row, index, subset, "plan"),
            "question_sha": question_sha(row.question),
            # For the plan-quality metric only; never rendered into the prompt.
            "gold_aspects": [aspect.aspect for aspect in row.rubric_aspects],
            "post_ids": [p.id for p in posts],
            "system_prompt": system_prompt,
            "prompt": render(user_ref, question=row.question, category=row.category,
                             posts=posts, posts_text=format_posts(posts)),
        })
    return docs


def _scalar_docs(
    table: SubsetTable, subset: Subset, variant: Variant, options: DocOptions, tag: str
) -> list[dict[str, Any]]:
    rows = table.rows
    user_ref = (
        resolve(_USER_TEMPLATE[variant], options.templates, options.user_template)
        if variant == "scalar_profile" else None
    )
    all_posts = selected_posts(table, subset, options) if user_ref is not None else [[] for _ in rows]
    # Where the authors' judge script shows the chosen answer (their seeded draw): the
    # data's own order, for the position baseline of `prb audit`.
    first = official_positions(len(rows))
    docs: list[dict[str, Any]] = []
    for index, (row, posts) in enumerate(zip(rows, all_posts)):
        prompt = (
            render(user_ref, question=row.question, category=row.category, posts=posts,
                   posts_text=format_posts(posts))
            if user_ref is not None else row.question
        )
        profile_key = f"{tag}::{subset.config}/{index}"
        # Read from the column only if a profile-based scorer asks (never for a judge).
        profile_store.remember(profile_key, partial(table.profile_texts, index))
        docs.append({
            **_identity(row, index, subset, variant),
            "question": row.question,
            "prompt": prompt,
            "choices": [row.chosen, row.rejected],
            "post_ids": [p.id for p in posts],
            "profile_key": profile_key,
            CHOSEN_FIRST: bool(first[index]),
        })
    return docs


def build_docs(
    subset: str, variant: Variant, source: str | None = None, **options: Any
) -> list[dict[str, Any]]:
    """Documents for one subset and variant, in dataset order.

    Args:
        subset: HF config name or short name.
        variant: which task family (see module docstring).
        source: fixed data source from the task YAML (``"sample"`` for sample tasks);
            overrides ``data_dir``.
        **options: ``--metadata`` / ``--model_args`` keys; see :class:`DocOptions`.
    """
    chosen_subset = subset_by_name(subset)
    opts = DocOptions.from_kwargs(options, source)
    table = load_table(chosen_subset, source or opts.data_dir)
    origin = subset_source(opts, source, chosen_subset, len(table.rows))
    provenance.record(options, origin, task_name(options) or chosen_subset.config)
    if opts.rows is not None:
        return _only_rows(_variant_docs(table, chosen_subset, variant, opts, origin), opts.rows, chosen_subset)
    return _variant_docs(table, chosen_subset, variant, opts, origin)


def _only_rows(docs: list[dict[str, Any]], path: str, subset: Subset) -> list[dict[str, Any]]:
    """The documents of the rows ``path`` names (``--metadata rows``); one line when it names none here."""
    from pathlib import Path

    try:
        wanted = {line.strip() for line in Path(path).expanduser().read_text(encoding="utf-8").splitlines()}
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"prb: --metadata rows '{path}' cannot be read ({exc.__class__.__name__}); give the file "
                        "of row keys (prb train writes OUT/heldout_rows.txt)") from None
    kept = [doc for doc in docs if doc.get("pair_key") in wanted]
    if not kept:
        raise DataError(f"prb: --metadata rows '{path}' names no row of subset {subset.config} "
                        f"(keys such as {subset.short}/0); give the rows file of this data, or leave this subset out")
    return kept


def _variant_docs(table: SubsetTable, chosen_subset: Subset, variant: Variant, opts: DocOptions,
                  origin: provenance.DataSource) -> list[dict[str, Any]]:
    if variant in JUDGE_VARIANTS:
        return _judge_docs(table, chosen_subset, variant, opts)
    if variant in PLAN_VARIANTS:
        return _plan_docs(table, chosen_subset, opts)
    if variant in SCALAR_VARIANTS:
        # The profile store's key prefix: which data the rows came from.
        tag = "hub" if origin.kind == "hub" else origin.location
        return _scalar_docs(table, chosen_subset, variant, opts, tag)
    known = JUDGE_VARIANTS + PLAN_VARIANTS + SCALAR_VARIANTS
    raise DataError(f"prb: unknown task variant '{variant}'; expected one of {known}")


#: The options that pick and cut the posts shown: read only by the variants that show posts.
POST_KEYS = ("k", "max_post_chars", "retriever", "retriever_model", "retriever_device", "retriever_dtype",
             "retriever_backend")


def unused_keys(variant: str) -> dict[str, str]:
    """``--metadata`` keys a variant leaves alone -> why (one note each the user gave:
    :func:`~prb_tasks.documents.metadata.note_unused`).

    Args:
        variant: the task's variant.
    """
    unused = unused_templates(system=variant not in SCALAR_VARIANTS, user=variant in _USER_TEMPLATE)
    if variant not in ("profile", "plan", "scalar_profile"):
        for key in POST_KEYS:
            unused[key] = "it shows no posts; personalized_rb_profile, _plan and _scalar_profile select them"
    if variant != "planned":
        unused["plans"] = unused["plans_missing"] = "only personalized_rb_planned reads stage 1's plans"
    return unused


def load_dataset(**kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point for the task YAMLs: a ``{"test": documents}`` dict."""
    subset = kwargs.pop("subset")
    variant = kwargs.pop("variant")
    # Here, not in build_docs: prb audit builds the scalar documents with the user's keys, and reads no prompt.
    # One note per variant, not per subset task.
    group = "personalized_rb_sample" if kwargs.get("source") else "personalized_rb"
    group += "" if variant == "both" else f"_{variant}"
    note_unused(unused_keys(variant), kwargs, f"the {group} tasks", by_name=False)
    return to_dataset(build_docs(subset, variant, **kwargs))


def audit_docs(location: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    """The documents ``prb audit`` reads: the ``scalar`` variant of every subset the copy holds.

    Args:
        location: a local copy's folder, or ``sample``.
        options: the user's ``--metadata`` keys.

    Raises:
        NoDataError: the folder holds no subset folder.
    """
    from prb_tasks.data.personalized_rb.reader import split_files
    from prb_tasks.data.personalized_rb.subsets import SUBSETS

    folder = resolve_data_dir(location)
    assert folder is not None
    present = []
    for subset in SUBSETS:
        try:
            split_files(folder, subset)
        except DataError:
            continue
        present.append(subset)
    if not present:
        raise NoDataError(f"prb: '{location}' holds no Personalized RewardBench subset folder "
                          f"({', '.join(s.config for s in SUBSETS)})")
    docs: list[dict[str, Any]] = []
    for subset in present:
        docs += build_docs(subset.config, "scalar", data_dir=location, **options)
    return docs
