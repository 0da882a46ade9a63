"""Turn a bring-your-own preference file into the documents lm-eval iterates over.

Each preference is an item. The judge sees the user's demographics and the user's
*other* preferences with their reasons (leave-one-out: the ``k`` latest in file
order, oldest first; a preference identical to the held-out one is never shown), then
the held-out pair in both orders. Scalar variants give an RM the bare prompt, or the
prompt preceded by the same context. Options come from ``--metadata``
(:class:`CustomOptions`); lm-eval also passes every ``--model_args`` key, hence ``**kwargs``.
"""

from __future__ import annotations

import hashlib
from typing import Any, Optional

from pydantic import Field

from prb_tasks.data import profile_store, provenance
from prb_tasks.data.custom.schema import Preference, UserRecord
from prb_tasks.data.custom.sources import example_path, missing_path_line, stream_users
from prb_tasks.data.errors import DataError
from prb_tasks.documents.metadata import MetadataSpec, check_options, note_unused, task_name
from prb_tasks.documents.options import TemplateOptions, option_keys, parse_options, unused_templates
from prb_tasks.documents.pairs import (
    DocList,
    judge_pair_docs,
    judge_system_prompt,
    scalar_pair_doc,
    to_dataset,
)
from prb_tasks.prompts.templates import render, resolve
from prb_tasks.prompts.user_history import PastChoice, profile_texts, traits

VARIANTS: tuple[str, ...] = ("judge", "scalar", "scalar_history")
SUBSET = "custom"
DEFAULT_K = 4


class CustomOptions(TemplateOptions):
    """``--metadata`` options of the ``personalized_custom`` tasks (each field's description says what it does)."""

    data_path: Optional[str] = Field(None, description="your preference file (.json or .jsonl), or `example`")
    k: int = Field(DEFAULT_K, ge=0, description="other preferences of the same user shown with each item (0 = none)")


CUSTOM_KEYS = option_keys(CustomOptions)
#: The ``--metadata`` keys of every ``personalized_custom*`` task, checked by the shared validator.
METADATA = MetadataSpec.from_options("personalized_custom", CustomOptions, fixed=frozenset({"variant", "source"}))


def _same_item(a: Preference, b: Preference) -> bool:
    return a.prompt.strip() == b.prompt.strip() and {a.response_A.strip(), a.response_B.strip()} == {
        b.response_A.strip(), b.response_B.strip()}


def leave_one_out(preferences: list[Preference], held_out: int, k: int) -> list[PastChoice]:
    """The history shown with preference ``held_out``: the ``k`` latest other preferences.

    Args:
        preferences: all of the user's preferences, in file order (taken as time order).
        held_out: index of the item to predict.
        k: most preferences shown.
    """
    if k <= 0:
        return []
    target = preferences[held_out]
    others = [p for i, p in enumerate(preferences) if i != held_out and not _same_item(p, target)]
    return [PastChoice(p.prompt, p.response_A, p.response_B, p.chosen_letter, p.reason) for p in others[-k:]]


def _identity(user: UserRecord, index: int, pref: Preference, variant: str) -> dict[str, Any]:
    key = f"{user.user_id}/{index}"
    return {
        "pair_key": key,
        "id": key,
        "subset": SUBSET,
        "user_id": str(user.user_id),
        "tags": list(pref.value_alignment),
        "variant": variant,
        # The user's categorical demographics, so reports can split users into groups
        # (``prb compare``'s "who is helped" per country...); numbers such as an age are not groups.
        "demographics": {str(k): v.strip() for k, v in user.demographics.items() if isinstance(v, str) and v.strip()},
    }


def build_docs(variant: str, source: str | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    """Documents for every preference of every user, in file order.

    Args:
        variant: ``judge``, ``scalar`` or ``scalar_history``.
        source: fixed data from the task YAML (``example`` for the example tasks).
        **kwargs: ``--metadata`` / ``--model_args`` keys; see :class:`CustomOptions`.
    """
    if variant not in VARIANTS:
        raise DataError(f"prb: unknown personalized_custom variant '{variant}'; expected one of {', '.join(VARIANTS)}")
    check_options(METADATA, kwargs, task_name(kwargs))
    opts = parse_options(CustomOptions, kwargs)
    note_unused(unused_templates(system=variant == "judge", user=variant != "scalar"), kwargs,
                f"the personalized_custom {variant} tasks")
    if source is not None and opts.data_path is not None:
        raise DataError(
            f"prb: the personalized_custom_example tasks always use the bundled example; drop data_path "
            f"'{opts.data_path}' or run personalized_custom with it"
        )
    # One user at a time: a user's preferences and profile are let go once their documents are built.
    path, users = stream_users(source or opts.data_path, kwargs.get("data_dir"))
    tag = hashlib.sha256(f"{path}|{path.stat().st_mtime}|{opts.k}".encode()).hexdigest()[:12]
    system_prompt = judge_system_prompt(opts.templates, opts.system_template) if variant == "judge" else ""
    user_ref = (
        resolve("judge/user_history.jinja" if variant == "judge" else "rm/user_history.jinja",
                opts.templates, opts.user_template)
        if variant != "scalar" else None
    )
    history_ref = resolve("judge/history.jinja", opts.templates) if variant == "judge" else None
    docs: list[dict[str, Any]] = []
    rows = 0
    for user in users:
        about = traits(user.demographics)
        for index, pref in enumerate(user.preferences):
            history = leave_one_out(user.preferences, index, opts.k)
            identity = _identity(user, index, pref, variant)
            if variant == "judge":
                assert user_ref is not None and history_ref is not None
                context = render(history_ref, history=history, demographics=about)
                ref = user_ref
                docs.extend(judge_pair_docs(
                    identity, pref.chosen, pref.rejected, system_prompt,
                    lambda a, b: render(ref, context=context, question=pref.prompt, response_a=a,
                                        response_b=b, history=history, demographics=about),
                ))
                continue
            prompt = pref.prompt if user_ref is None else render(
                user_ref, question=pref.prompt, history=history, demographics=about)
            profile_key = f"custom::{tag}::{identity['pair_key']}"
            profile_store.remember(profile_key, profile_texts(history))
            docs.append(scalar_pair_doc(identity, pref.prompt, prompt, pref.chosen, pref.rejected, profile_key,
                                        chosen_first=pref.chosen_letter == "A"))
        rows += len(user.preferences)
    origin = provenance.DataSource("sample" if path == example_path() else "file", str(path), "preferences", rows)
    provenance.record(kwargs, origin, task_name(kwargs) or f"personalized_custom_{variant}")
    return docs


def preflight(tasks: dict[str, Any], metadata: dict[str, Any], settings: dict[str, Any] | None = None) -> None:
    """Checks ``prb eval`` runs before a model loads: a file must be named.

    Args:
        tasks: requested task or group name -> :class:`prb_tasks.common.taskindex.TaskInfo`.
        metadata: the run's ``--metadata``.
        settings: the run's other lm-eval settings (not needed here).
    """
    if any(info.source is None for info in tasks.values()) and metadata.get("data_path") in (None, ""):
        raise DataError(missing_path_line(metadata.get("data_dir")))


def load_dataset(**kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point for the personalized_custom task YAMLs."""
    variant = kwargs.pop("variant")
    return to_dataset(build_docs(variant, **kwargs))



def audit_docs(location: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    """The documents ``prb audit`` reads: the ``scalar_history`` pairs of a preference file.

    Args:
        location: the file, or ``example``.
        options: the user's ``--metadata`` keys.
    """
    return build_docs("scalar_history", data_path=location, **options)
