"""Documents for the families of real people's choices (PRISM, Community Alignment).

Every labelled pair is an item. Variants (``dataset_kwargs.variant``):

- ``judge``: the judge sees the request and the two answers only, in both orders (the floor);
- ``profile``: also what the person told about themselves (demographics; PRISM's
  self-description and system prompt) and up to ``k`` of their choices from *other*
  conversations, with their reasons (leave-one-out; a conversation's own pairs are never
  shown, as they share its chosen answer or continue from it);
- ``oracle``: ``profile`` plus the person's own reason for this very choice where the data has
  one (Community Alignment's feedback on the turn; PRISM's ratings of what mattered in the
  opening turn's choice) and, apart, what they said about the whole conversation (PRISM's
  ``open_feedback``): a diagnostic upper bound, never a leaderboard number;
- ``scalar``: a reward model scores both answers after the bare request;
- ``scalar_profile``: after the same context as ``profile``.

Each document carries the rating gap (``rating_gap``, and its bucket as the item's tag, so
``acc_tag`` averages over how clear the preferences were; data without ratings tags the
language instead), the language and the person's
country (accuracy split by them in ``prb audit``) and ``item``, the hash of the request and
the two answers that another person's identical pair shares (disagreement, majority baseline).

Each family is registration only: it declares its options and how its copy is read in a
:class:`PeopleSource`, and takes its task entry points (``build_docs``, ``load_dataset``,
``fewshot_source``, ``audit_docs``) from the functions here, bound to that source.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, Optional

from pydantic import Field

from prb_tasks.common.memory import building
from prb_tasks.data import profile_store, provenance
from prb_tasks.data.errors import DataError
from prb_tasks.data.people import Choice, Person, clearest
from prb_tasks.documents.metadata import MetadataSpec, check_options, note_unused, task_name
from prb_tasks.documents.options import TemplateOptions, parse_options, unused_templates
from prb_tasks.documents.pairs import (
    CHOSEN_FIRST,
    DocList,
    judge_pair_docs,
    judge_system_prompt,
    to_dataset,
    words,
)
from prb_tasks.prompts.templates import render, resolve
from prb_tasks.prompts.user_history import PastChoice, profile_texts, traits

VARIANTS: tuple[str, ...] = ("judge", "profile", "oracle", "scalar", "scalar_profile")
DEFAULT_K = 4


class PeopleOptions(TemplateOptions):
    """``--metadata`` options shared by the families of real people (each family names its ``data_dir``)."""

    data_dir: Optional[str] = Field(None, description="the local copy in its hub layout")
    k: int = Field(DEFAULT_K, ge=0, description="choices of the same person from other conversations shown with "
                   "each item in the profile, oracle and scalar_profile variants (0 = none)")


def history(shown: list[Choice], target: Choice, k: int) -> list[PastChoice]:
    """The ``k`` latest of a person's choices outside ``target``'s conversation, oldest first.

    Args:
        shown: the person's choices that may be shown, one per turn (:func:`clearest`: of a
            turn's pairs, which share its chosen answer, the clearest), in the data's order.
        target: the held-out item.
        k: most choices shown (0: none).
    """
    picked: list[Choice] = []
    # From the end: a person with hundreds of choices costs k plus one conversation per item.
    for choice in reversed(shown):
        if len(picked) >= k:
            break
        if choice.group != target.group:
            picked.append(choice)
    return [_past(c) for c in reversed(picked)]


def _past(choice: Choice) -> PastChoice:
    # Half the shown choices put the preferred answer second (by the item's hash, so the same
    # every run): a history whose preferred answer always came first would teach "first wins".
    if int(choice.item[-1], 16) % 2:
        return PastChoice(choice.prompt, choice.rejected, choice.chosen, "B", choice.reason, choice.feedback)
    return PastChoice(choice.prompt, choice.chosen, choice.rejected, "A", choice.reason, choice.feedback)


def _tags(choice: Choice) -> list[str]:
    # acc_tag averages over these: how clear the preference was where it was rated, else the language.
    return _tag_list(choice.gap_bucket if choice.gap is not None else
                     f"language {choice.language}" if choice.language else "")


@lru_cache(maxsize=1024)
def _tag_list(tag: str) -> list[str]:
    # One list per tag, shared by the documents that carry it (a few buckets or languages for
    # hundreds of thousands of pairs); nothing changes a document's tags once it is built.
    return [tag] if tag else []


@lru_cache(maxsize=8192)
def answer_id(text: str) -> str:
    """A short hash of an answer's text (stripped): which answer of an item a person chose.

    Cached: a turn's pairs share their chosen answer (one string), so its hash is computed once,
    not once per pair (a profile put two sha256 per pair among the largest costs at release size).
    """
    return hashlib.sha256(text.strip().encode()).hexdigest()[:16]


def _identity(family: str, person: Person, choice: Choice, variant: str) -> dict[str, Any]:
    return {
        "pair_key": choice.key,
        "id": choice.key,
        "subset": family,
        "user_id": person.person_id,
        "tags": _tags(choice),
        "variant": variant,
        "rating_gap": choice.gap,
        "language": choice.language,
        "country": person.country,
        "item": choice.item,
        # Which answer of the item this person chose (the majority baseline counts them).
        "chosen_hash": answer_id(choice.chosen),
        "has_reason": bool(choice.reason),
        "conversation_type": choice.conversation_type,
        "cohort": choice.cohort,
    }


def _scalar_doc(family: str, person: Person, choice: Choice, variant: str, prompt: str,
                profile_key: str) -> dict[str, Any]:
    # scalar_pair_doc(_identity(...), choice.prompt, prompt, ...) in one dict, the same keys in the same
    # order: one document per pair, where an identity dict made and copied for each cost about a microsecond.
    chosen, rejected = choice.chosen, choice.rejected
    return {
        "pair_key": choice.key,
        "id": choice.key,
        "subset": family,
        "user_id": person.person_id,
        "tags": _tags(choice),
        "variant": variant,
        "rating_gap": choice.gap,
        "language": choice.language,
        "country": person.country,
        "item": choice.item,
        "chosen_hash": answer_id(chosen),
        "has_reason": bool(choice.reason),
        "conversation_type": choice.conversation_type,
        "cohort": choice.cohort,
        "question": choice.prompt,
        "prompt": prompt,
        "choices": [chosen, rejected],
        "words_chosen": words(chosen),
        "words_rejected": words(rejected),
        "profile_key": profile_key,
        CHOSEN_FIRST: choice.chosen_first,
    }


def build_people_docs(family: str, people: tuple[Person, ...], variant: str, opts: PeopleOptions,
                      source_tag: str, render_prompts: bool = True) -> list[dict[str, Any]]:
    """Documents for every pair of every person, in the data's order.

    Args:
        family: the family's name (each document's ``subset``).
        people: the people read.
        variant: one of :data:`VARIANTS`.
        opts: the run's options.
        source_tag: names the copy read (its folder and state), so a profile-store key of one
            copy is never another's.
        render_prompts: False (``prb audit``, which reads the request, the answers and the
            person's texts but never a model's prompt): the scalar variants' ``prompt`` is the bare
            request and each pair's texts in the profile store are gathered when first looked up,
            so no pair's history is rendered or held (at PRISM's release size, 2.47 GB otherwise).
    """
    if variant not in VARIANTS:
        raise DataError(f"prb: unknown {family} variant '{variant}'; expected one of {', '.join(VARIANTS)}")
    personal = variant not in ("judge", "scalar")
    # k only where a history is shown: a k given to the scalar task (noted) must not change its documents.
    tag = hashlib.sha256(f"{source_tag}|{opts.k if personal else 0}".encode()).hexdigest()[:12]
    docs: list[dict[str, Any]] = []
    if variant in ("judge", "profile", "oracle"):
        system_prompt = judge_system_prompt(opts.templates, opts.system_template)
        user_ref = resolve("judge/user_person.jinja" if personal else "judge/user.jinja",
                           opts.templates, opts.user_template)
        history_ref = resolve("judge/history.jinja", opts.templates)
        for person in people:
            about = traits(person.demographics) if personal else []
            shown = clearest(person.choices, exclude="")
            for choice in person.choices:
                past = history(shown, choice, opts.k) if personal else []
                context = render(history_ref, history=past, demographics=about) if personal else ""
                oracle = variant == "oracle"
                docs.extend(judge_pair_docs(
                    _identity(family, person, choice, variant), choice.chosen, choice.rejected, system_prompt,
                    _user_message(user_ref, context, choice.prompt, person.profile if personal else (),
                                  choice.reason if oracle else "", choice.feedback if oracle else ""),
                ))
        return docs
    rm_ref = resolve("rm/user_person.jinja", opts.templates, opts.user_template) if personal else None
    for person in people:
        about = traits(person.demographics) if personal else []
        shown = clearest(person.choices, exclude="")
        # One tuple per person, shared by every pair without a history (all of the scalar variant's).
        own = tuple(text for _, text in person.profile)
        for choice in person.choices:
            profile_key = f"{family}::{tag}::{choice.key}"
            if not render_prompts:
                profile_store.remember(profile_key, partial(_texts, own, shown, choice, opts.k) if personal else own)
                docs.append(_scalar_doc(family, person, choice, variant, choice.prompt, profile_key))
                continue
            past = history(shown, choice, opts.k) if personal else []
            prompt = choice.prompt if rm_ref is None else render(
                rm_ref, question=choice.prompt, history=past, demographics=about, profile=person.profile)
            profile_store.remember(profile_key, own + profile_texts(past) if past else own)
            docs.append(_scalar_doc(family, person, choice, variant, prompt, profile_key))
    return docs


def unused_keys(family: str, variant: str) -> dict[str, str]:
    """``--metadata`` keys a variant leaves alone -> why (one note each the user gave:
    :func:`~prb_tasks.documents.metadata.note_unused`).

    Args:
        family: the family's name (its task names).
        variant: one of :data:`VARIANTS`.
    """
    scalar = variant.startswith("scalar")
    unused = unused_templates(system=not scalar, user=variant != "scalar")
    if variant in ("judge", "scalar"):
        takes = f"{family}_profile" if variant == "judge" else f"{family}_scalar_profile"
        unused["k"] = f"it shows none of the person's other choices; {takes} takes k"
    return unused


def _texts(own: tuple[str, ...], shown: list[Choice], choice: Choice, k: int) -> tuple[str, ...]:
    # What the profile store holds for a pair of a personal variant: the person's own texts, then
    # their answers (and reasons) in the pair's history, exactly as the rendered documents keep them.
    past = history(shown, choice, k)
    return own + profile_texts(past) if past else own


def _user_message(ref: Any, context: str, question: str, profile: tuple[tuple[str, str], ...],
                  reason: str, feedback: str) -> Callable[[str, str], str]:
    # Bound here, not in the loop: judge_pair_docs calls it once per order.
    def message(a: str, b: str) -> str:
        return render(ref, context=context, question=question, response_a=a, response_b=b,
                      profile=profile, reason=reason, feedback=feedback)

    return message


@dataclass(frozen=True)
class CopyRead:
    """What one family's reader gives the builders.

    Attributes:
        where: the file or folder read (named in the run's provenance).
        people: the people with their choices.
        tag: names the copy and its state (a cache key of one copy is never another's).
    """

    where: str
    people: tuple[Person, ...]
    tag: str


@dataclass(frozen=True)
class PeopleSource:
    """One family of real people's choices, as the builders here read it.

    Attributes:
        family: the family's name (documents' ``subset``, few-shot users' family).
        options: the pydantic model of its tasks' ``--metadata``.
        metadata: its tasks' accepted keys (:func:`~prb_tasks.documents.metadata.check_options`).
        read: the copy the options name: takes the options (its own, or the few-shot tasks':
            ``data_dir`` and, where the family has one, ``split``), returns a :class:`CopyRead`.
    """

    family: str
    options: type[PeopleOptions]
    metadata: MetadataSpec
    read: Callable[[Any], CopyRead]


def _pairs(copy: CopyRead) -> int:
    return sum(len(p.choices) for p in copy.people)


def build_docs(source: PeopleSource, variant: str, **kwargs: Any) -> list[dict[str, Any]]:
    """Documents of one variant for every pair of the family's copy.

    Args:
        source: the family.
        variant: one of :data:`VARIANTS`.
        **kwargs: ``--metadata`` / ``--model_args`` keys; see the family's options.
    """
    return _build(source, variant, kwargs, render_prompts=True)


def _build(source: PeopleSource, variant: str, kwargs: dict[str, Any], render_prompts: bool) -> list[dict[str, Any]]:
    # Apart from build_docs, so that no --metadata key can turn the rendering off.
    check_options(source.metadata, kwargs, task_name(kwargs))
    opts = parse_options(source.options, kwargs)
    if render_prompts:  # prb audit reads no prompt: no template or k is the user's mistake there
        note_unused(unused_keys(source.family, variant), kwargs, f"the {source.family} {variant} tasks")
    copy = source.read(opts)
    provenance.record(kwargs, provenance.DataSource("local", copy.where, "labelled pairs", _pairs(copy)),
                      task_name(kwargs) or f"{source.family}_{variant}")
    return build_people_docs(source.family, copy.people, variant, opts, copy.tag, render_prompts)


def load_dataset(source: PeopleSource, **kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point of the family's task YAMLs (``variant`` names the variant)."""
    variant = kwargs.pop("variant")
    with building():  # hundreds of thousands of acyclic documents: see building()
        return to_dataset(build_docs(source, variant, **kwargs))


def fewshot_source(source: PeopleSource, opts: Any, featured: bool = True) -> tuple[Any, provenance.DataSource, str]:
    """The family's people for the few-shot tasks (``data_family``: the family's name).

    Args:
        source: the family.
        opts: the few-shot tasks' options (the copy is ``data_dir``).
        featured: compute the features the options ask for.
    """
    copy = source.read(opts)
    origin = provenance.DataSource("local", copy.where, "labelled pairs", _pairs(copy))
    from prb_tasks.documents.fewshot import people_data

    return people_data(source.family, opts, copy.people, origin, copy.tag, featured)


def audit_docs(source: PeopleSource, location: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    """The documents ``prb audit`` reads: the ``scalar_profile`` pairs of a copy, their prompts not
    rendered (the audit reads the request, the answers and the person's texts, never a prompt).

    Args:
        source: the family.
        location: the copy's folder.
        options: the user's ``--metadata`` keys.
    """
    with building():  # hundreds of thousands of acyclic documents: see building()
        return _build(source, "scalar_profile", {**options, "data_dir": location}, render_prompts=False)
