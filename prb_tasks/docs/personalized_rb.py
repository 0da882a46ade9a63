"""Turn validated benchmark rows into the small documents lm-eval iterates over.

One loader serves every task; the task YAML says which subset and variant it wants
(``dataset_kwargs``) and the user tunes it with ``--metadata`` (the keys of
:data:`METADATA`). lm-eval also passes every ``--model_args`` key here;
:mod:`prb_tasks.docs.metadata` tells the two apart and refuses unknown keys.

Prompts are rendered here, once, so the sample log shows exactly what was sent and
the judge backend sees plain chat messages. Raw profiles are never copied into docs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from prb_tasks.data import profile_store, provenance
from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.schema import PRBRow
from prb_tasks.data.personalized_rb.sources import load_rows, resolve_data_dir
from prb_tasks.data.personalized_rb.subsets import HF_REPO, Subset, subset_by_name
from prb_tasks.docs.metadata import MetadataError, MetadataSpec, check_options
from prb_tasks.prompts.retrieval import DEFAULT_K, DEFAULT_MAX_POST_CHARS, select_posts
from prb_tasks.prompts.templates import TemplateRef, render, resolve
from prb_tasks.resources import sample_dir
from prb_tasks.scoring.order import official_positions

Variant = Literal["both", "official", "profile", "oracle", "scalar", "scalar_profile"]
JUDGE_VARIANTS = ("both", "official", "profile", "oracle")
SCALAR_VARIANTS = ("scalar", "scalar_profile")

#: The ``--metadata`` keys of every ``personalized_rb*`` task.
METADATA = MetadataSpec(
    family="personalized_rb",
    keys={
        "data_dir": "local copy in the HF layout; 'sample' = the bundled sample (default $PRB_DATA_DIR, else the hub)",
        "k": f"posts shown in profile variants (default {DEFAULT_K})",
        "max_post_chars": f"longest post text shown (default {DEFAULT_MAX_POST_CHARS})",
        "templates": "folder of replacement templates, same file names as templates/",
        "system_template": "file replacing the judge system prompt",
        "user_template": "file replacing the user-message template of the variant",
    },
    fixed=frozenset({"subset", "variant", "source"}),
)

_USER_TEMPLATE = {
    "both": "judge/user.jinja",
    "official": "judge/user.jinja",
    "profile": "judge/user_profile.jinja",
    "oracle": "judge/user_oracle.jinja",
    "scalar_profile": "rm/user_profile.jinja",
}


@dataclass(frozen=True)
class DocOptions:
    """User-tunable settings, validated from ``--metadata``.

    Attributes:
        data_dir: local copy of the data (``"sample"`` for the bundled one).
        k: posts shown in profile variants.
        max_post_chars: longest post text shown.
        templates: folder of replacement templates.
        system_template: file replacing the judge system prompt.
        user_template: file replacing the user-message template of this variant.
    """

    data_dir: str | None = None
    k: int = DEFAULT_K
    max_post_chars: int = DEFAULT_MAX_POST_CHARS
    templates: str | None = None
    system_template: str | None = None
    user_template: str | None = None

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
        task = _task_name(raw)
        check_options(METADATA, raw, task)
        _check_fixed_source(task, source, raw.get("data_dir"))

        def as_int(name: str, default: int, minimum: int) -> int:
            value = raw.get(name, default)
            try:
                number = int(value)
            except (TypeError, ValueError):
                raise DataError(f"prb: --metadata '{name}' must be an integer, got {value!r}") from None
            if number < minimum:
                raise DataError(f"prb: --metadata '{name}' must be at least {minimum}, got {number}")
            return number

        def as_str(name: str) -> str | None:
            value = raw.get(name)
            return None if value in (None, "") else str(value)

        return cls(
            data_dir=as_str("data_dir"),
            k=as_int("k", DEFAULT_K, 1),
            max_post_chars=as_int("max_post_chars", DEFAULT_MAX_POST_CHARS, 50),
            templates=as_str("templates"),
            system_template=as_str("system_template"),
            user_template=as_str("user_template"),
        )


def _words(text: str) -> int:
    return len(text.split())


def _identity(row: PRBRow, subset: Subset, variant: Variant) -> dict[str, Any]:
    """Fields every document carries: which pair, which subset, which task variant."""
    return {
        "pair_key": f"{subset.short}/{row.id}",
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


def preflight(tasks: dict[str, Any], metadata: dict[str, Any]) -> None:
    """Checks that need no rows, run by ``prb eval`` before any model is loaded.

    A data folder that does not exist, a ``data_dir`` for a sample task, or an
    unreachable hub would otherwise only surface after a model (perhaps a large one)
    has loaded.

    Args:
        tasks: requested task or group name -> :class:`prb_tasks.taskindex.TaskInfo`.
        metadata: the run's ``--metadata``.
    """
    from prb_tasks.data.personalized_rb.sources import check_hub

    data_dir = metadata.get("data_dir")
    for name, info in sorted(tasks.items()):
        _check_fixed_source(name, info.source, data_dir)
    if any(info.source is None for info in tasks.values()) and resolve_data_dir(data_dir) is None:
        check_hub()


def _task_name(raw: dict[str, Any]) -> str | None:
    # lm-eval passes the task's YAML file; ours are named after their task.
    origin = raw.get("config_source")
    if not origin or origin == "inline":
        return None
    from pathlib import Path

    return Path(str(origin)).stem


def _source_tag(options: DocOptions, source: str | None) -> str:
    folder = resolve_data_dir(source or options.data_dir)
    return "hub" if folder is None else str(folder)


def _data_source(options: DocOptions, source: str | None, subset: Subset, rows: int) -> provenance.DataSource:
    folder = resolve_data_dir(source or options.data_dir)
    if folder is None:
        return provenance.DataSource("hub", HF_REPO, subset.config, rows)
    kind = "sample" if folder.resolve() == sample_dir().resolve() else "local"
    return provenance.DataSource(kind, str(folder), subset.config, rows)


def _judge_docs(
    rows: list[PRBRow], subset: Subset, variant: Variant, options: DocOptions
) -> list[dict[str, Any]]:
    # The rules do not depend on the row: render them once per subset.
    system_prompt = render(resolve("judge/system.jinja", options.templates, options.system_template))
    user_ref = resolve(_USER_TEMPLATE[variant], options.templates, options.user_template)
    positions = official_positions(len(rows)) if variant == "official" else None
    docs: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        posts = (
            select_posts(row.question, row.profile, options.k, options.max_post_chars)
            if variant == "profile" else []
        )
        if positions is not None:
            orders = ["A" if positions[index] else "B"]
        else:
            orders = ["A", "B"]  # chosen shown first, then second
        for chosen_position in orders:
            a, b = (row.chosen, row.rejected) if chosen_position == "A" else (row.rejected, row.chosen)
            docs.append({
                **_identity(row, subset, variant),
                "chosen_position": chosen_position,
                "words_chosen": _words(row.chosen),
                "words_rejected": _words(row.rejected),
                "post_ids": [p.id for p in posts],
                "system_prompt": system_prompt,
                "prompt": _render_user(user_ref, row, a, b, posts),
            })
    return docs


def _render_user(ref: TemplateRef, row: PRBRow, a: str, b: str, posts: list) -> str:
    return render(
        ref,
        question=row.question,
        category=row.category,
        response_a=a,
        response_b=b,
        posts=posts,
        aspects=[aspect.model_dump() for aspect in row.rubric_aspects],
    )


def _scalar_docs(
    rows: list[PRBRow], subset: Subset, variant: Variant, options: DocOptions, tag: str
) -> list[dict[str, Any]]:
    user_ref = (
        resolve(_USER_TEMPLATE[variant], options.templates, options.user_template)
        if variant == "scalar_profile" else None
    )
    docs: list[dict[str, Any]] = []
    for row in rows:
        posts = (
            select_posts(row.question, row.profile, options.k, options.max_post_chars)
            if user_ref is not None else []
        )
        prompt = (
            render(user_ref, question=row.question, category=row.category, posts=posts)
            if user_ref is not None else row.question
        )
        profile_key = f"{tag}::{subset.config}/{row.id}"
        profile_store.remember(profile_key, tuple(p.text for p in row.profile))
        docs.append({
            **_identity(row, subset, variant),
            "question": row.question,
            "prompt": prompt,
            "choices": [row.chosen, row.rejected],
            "post_ids": [p.id for p in posts],
            "profile_key": profile_key,
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
    rows = load_rows(chosen_subset, source or opts.data_dir)
    origin = _data_source(opts, source, chosen_subset, len(rows))
    provenance.record(options, origin)
    provenance.announce(_task_name(options) or chosen_subset.config, origin)
    if variant in JUDGE_VARIANTS:
        return _judge_docs(rows, chosen_subset, variant, opts)
    if variant in SCALAR_VARIANTS:
        return _scalar_docs(rows, chosen_subset, variant, opts, _source_tag(opts, source))
    raise DataError(f"prb: unknown task variant '{variant}'; expected one of {JUDGE_VARIANTS + SCALAR_VARIANTS}")


def load_dataset(**kwargs: Any):  # noqa: ANN201 - datasets.DatasetDict, imported lazily
    """``custom_dataset`` entry point for the task YAMLs: a ``{"test": Dataset}`` dict."""
    import datasets

    subset = kwargs.pop("subset")
    variant = kwargs.pop("variant")
    docs = build_docs(subset, variant, **kwargs)
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})
