"""Documents of the few-shot tasks: each evaluated user's query pairs at every k.

One loader serves the ``fewshot`` task folder; the YAML names the data (``data_family``:
``personalllm`` or ``custom``), the variant (``method``: a personalization method run by
``prb-method``; ``judge``: a generative judge shown the support pairs in its prompt) and,
for judges, which support pairs it is shown (``selection``: the ``k`` most recent, or the
``k`` most similar to the query by BM25 over the prompts, taken from the support pool).
The protocol itself is :mod:`prb_tasks.fewshot.split`.

A document is one query pair at one k: ``pair_key`` is ``<query>@k<k>`` and its subset
``NN-shot``, so every report table splits by k. lm-eval passes every ``--model_args``
key here too, hence ``**kwargs``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from typing import Any, Literal, Optional

from pydantic import Field

from prb_tasks.common.atomic import digest as file_digest
from prb_tasks.common.terminal import fit
from prb_tasks.data import provenance
from prb_tasks.data.custom.sources import example_path, stream_users
from prb_tasks.data.errors import DataError
from prb_tasks.data.people import Person
from prb_tasks.data.personalllm.constants import DEFAULT_ALPHA, HF_REPO, HF_SPLIT
from prb_tasks.data.personalllm.items import DEFAULT_MARGIN, SimulationConfig
from prb_tasks.data.personalllm.sources import load_prompts, resolve_data_dir, source_tag
from prb_tasks.documents.custom import CustomOptions
from prb_tasks.documents.metadata import MetadataSpec, check_options, note_unused, task_name
from prb_tasks.documents.options import TemplateOptions, parse_options, unused_templates
from prb_tasks.documents.pairs import (
    CHOSEN_FIRST,
    DocList,
    judge_pair_docs,
    judge_system_prompt,
    scalar_pair_doc,
    to_dataset,
)
from prb_tasks.documents.personalllm import PersonalLLMOptions, simulation_for
from prb_tasks.fewshot.method import Pair, User
from prb_tasks.fewshot.sources import FewshotData, custom_pairs, people_pairs, personalllm_pairs, remember
from prb_tasks.fewshot.split import (
    DEFAULT_EVALUATE,
    DEFAULT_QUERIES,
    DEFAULT_SPLIT_SEED,
    DEFAULT_UNSEEN_SHARE,
    EVALUATE,
    KS,
    UnseenUser,
    make_split,
)
from prb_tasks.prompts.templates import render, resolve
from prb_tasks.prompts.user_history import PastChoice
from prb_tasks.text.bm25 import BM25Index

DEFAULT_PAIRS_PER_USER = KS[-1] + DEFAULT_QUERIES
# Typed Any: a FieldInfo given as a default is the field's own (pydantic reads it as Field(...)).
_PLL: dict[str, Any] = PersonalLLMOptions.model_fields
_CUSTOM: dict[str, Any] = CustomOptions.model_fields


class FewshotOptions(TemplateOptions):
    """``--metadata`` options of the few-shot tasks (each field's description says what it does)."""

    # PersonalLLM's simulation (the same keys and meanings as the personalllm tasks).
    data_dir: Optional[str] = _PLL["data_dir"]
    n_users: int = _PLL["n_users"]
    alpha: Optional[float] = _PLL["alpha"]
    user_seed: int = _PLL["user_seed"]
    margin: Optional[float] = _PLL["margin"]
    flip_beaver: bool = _PLL["flip_beaver"]
    pairs_per_user: int = Field(DEFAULT_PAIRS_PER_USER, ge=1, description="PersonalLLM: clear choices simulated "
                                "per user (default 24: a pool of 16 support pairs and 8 queries)")
    # Your own file.
    data_path: Optional[str] = _CUSTOM["data_path"]
    # A copy published as more than one file (Community Alignment).
    split: Optional[str] = Field(None, description="which file of a copy published as several, as the family's "
                                 "split option (Community Alignment: auto, latest, filtered or full); None: default")
    # The protocol.
    unseen_share: float = Field(DEFAULT_UNSEEN_SHARE, gt=0, lt=1, description="share of users evaluated (unseen); "
                                "the others are seen: all their labels are the method's to learn from")
    split_seed: int = Field(DEFAULT_SPLIT_SEED, ge=0, description="seed of the seen/unseen user split")
    queries: int = Field(DEFAULT_QUERIES, ge=1, description="fixed query pairs per evaluated user (its latest)")
    evaluate: Literal["unseen_users", "seen_users_unseen_prompts", "seen_users_seen_prompts"] = Field(
        "unseen_users", description="who is evaluated: unseen_users (the protocol), seen_users_unseen_prompts (the "
        "seen users on their latest queries pairs, held out of what is learned) or seen_users_seen_prompts (the "
        "seen users on pairs learned from: a sanity row)")
    features: Literal["auto", "embedding"] = Field(
        "auto", description="response features of the feature-based methods: auto (PersonalLLM's ten reward-model "
        "scores; none in your own file) or embedding (each response's all-MiniLM-L6-v2 embedding; the embed extra)")


METADATA = MetadataSpec.from_options("fewshot", FewshotOptions,
                                     fixed=frozenset({"data_family", "variant", "selection"}))


def check_split(source: str, opts: FewshotOptions) -> None:
    """Refuse ``split`` for a family whose own tasks have no such option (its data is one file set).

    Args:
        source: the family's name.
        opts: the few-shot options.

    Raises:
        DataError: ``split`` was given to such a family (one line).
    """
    if opts.split is None:
        return
    from prb_tasks.data import families

    if "split" not in families.load(families.get(source).options).model_fields:
        having = families.either(f.name for f in families.families() if f.fewshot is not None
                                 and "split" in families.load(f.options).model_fields)
        raise DataError(f"prb: few-shot ({source}): --metadata split '{opts.split}' picks a file of a copy "
                        f"published as several ({having}); {source} has one: leave split out")


#: The keys of PersonalLLM's simulation: the other families' few-shot tasks read real users.
SIMULATION_KEYS = ("n_users", "alpha", "user_seed", "margin", "flip_beaver", "pairs_per_user")


def unused_keys(source: str, variant: str) -> dict[str, str]:
    """``--metadata`` keys a few-shot task leaves alone -> why (one note each the user gave:
    :func:`~prb_tasks.documents.metadata.note_unused`).

    Args:
        source: the task's data family.
        variant: ``method`` or ``judge``.
    """
    unused = unused_templates(system=False, user=False) if variant == "method" else {}
    for key in unused:
        unused[key] = "prb-method scores the pairs; no prompt is rendered (the _fewshot_judge tasks render one)"
    if variant == "judge":
        unused["features"] = "only the feature-based methods of the _fewshot tasks (prb-method) read features"
    if source != "personalllm":
        for key in SIMULATION_KEYS:
            unused[key] = f"it reads {source}'s users; only the personalllm few-shot tasks simulate users"
    if source != "custom":
        unused["data_path"] = "only the personalized_custom few-shot tasks read a preference file"
    return unused


def personalllm_data(opts: FewshotOptions, featured: bool = True) -> tuple[FewshotData, provenance.DataSource, str]:
    """Simulated PersonalLLM users' pairs, split; with where they came from and a tag
    naming the simulation (for the split's key).

    Args:
        opts: the options (simulation and protocol).
        featured: compute the features ``opts.features`` asks for (judges need none).
    """
    config = SimulationConfig(
        n_users=opts.n_users, alpha=opts.alpha if opts.alpha is not None else DEFAULT_ALPHA, seed=opts.user_seed,
        k=opts.pairs_per_user - 1, items_per_user=1,
        margin=opts.margin if opts.margin is not None else DEFAULT_MARGIN, flip_cost=opts.flip_beaver)
    prompts = load_prompts(opts.data_dir)
    sim = simulation_for(prompts, config, walk_only=True)
    by_user, users = personalllm_pairs(sim)
    folder = resolve_data_dir(opts.data_dir)
    origin = (provenance.DataSource("hub", HF_REPO, HF_SPLIT, len(prompts)) if folder is None
              else provenance.DataSource("local", str(folder), HF_SPLIT, len(prompts)))
    digest = hashlib.sha256()
    for row in prompts:  # the texts the users chose between, in file order
        digest.update("\x1f".join((row.prompt, *row.responses)).encode("utf-8") + b"\x1e")
    simulation = {"n_users": opts.n_users, "alpha": config.alpha, "user_seed": opts.user_seed,
                  "pairs_per_user": opts.pairs_per_user, "margin": config.margin, "flip_beaver": opts.flip_beaver,
                  "data_digest": digest.hexdigest()[:16]}
    return (split_users(opts, by_user, users, "personalllm", featured, simulation), origin,
            f"{source_tag(opts.data_dir)}|{config}")


def custom_data(opts: FewshotOptions, data_dir: Any = None,
                featured: bool = True) -> tuple[FewshotData, provenance.DataSource, str]:
    """A custom file's users' pairs, split; with where they came from and a tag naming the file.

    Args:
        opts: the options (``data_path`` and the protocol).
        data_dir: ``--metadata`` ``data_dir``, named when ``data_path`` is missing (default: ``opts.data_dir``).
        featured: compute the features ``opts.features`` asks for (judges need none).
    """
    # A user at a time: only the pairs and users built from the file are kept, not its records.
    path, records = stream_users(opts.data_path, data_dir if data_dir is not None else opts.data_dir)
    by_user, users = custom_pairs(records)
    rows = sum(len(pairs) for pairs in by_user.values())
    origin = provenance.DataSource("sample" if path == example_path() else "file", str(path), "preferences", rows)
    file = {"data_digest": file_digest(path)[:16]}  # read in blocks, not the whole file at once
    return split_users(opts, by_user, users, "custom", featured, file), origin, f"{path}|{path.stat().st_mtime}"


def people_data(family: str, opts: FewshotOptions, people: tuple[Person, ...], origin: provenance.DataSource,
                tag: str, featured: bool) -> tuple[FewshotData, provenance.DataSource, str]:
    """A family of real people's ``fewshot`` source: its people split by the protocol.

    Args:
        family: the family's name.
        opts: the options (the protocol).
        people: the people read.
        origin: where they were read from.
        tag: names the copy read (for the split's key).
        featured: compute the features ``opts.features`` asks for (judges need none).
    """
    by_user, users = people_pairs(family, people)
    return split_users(opts, by_user, users, family, featured, {"data_digest": people_digest(by_user, users)}), \
        origin, tag


def people_digest(by_user: dict[str, list[Pair]], users: dict[str, User]) -> str:
    """16 hex digits of the sha256 of everything a trained model reads of real people: each
    person's pairs (prompt, chosen, rejected, reason) in order, demographics and profile.

    A checkpoint records it (``split``'s ``data_digest``), so an edited copy of PRISM or
    Community Alignment (a choice flipped, a person's profile changed) is refused, as an
    edited preference file is.

    Args:
        by_user: user id -> pairs, oldest first.
        users: user id -> the user.
    """
    digest = hashlib.sha256()
    for user_id in sorted(by_user):
        user = users.get(user_id)
        about = json.dumps([sorted((user.demographics or {}).items()) if user else [],
                            [(post.category, post.text) for post in (user.profile if user else ())]],
                           ensure_ascii=False, default=str)
        digest.update(f"{user_id}\x1f{about}\x1e".encode("utf-8"))
        for pair in by_user[user_id]:
            digest.update("\x1f".join((pair.key, pair.prompt, pair.chosen.text, pair.rejected.text,
                                       pair.reason or "")).encode("utf-8") + b"\x1e")
    return digest.hexdigest()[:16]


def split_users(opts: FewshotOptions, by_user: dict[str, list[Pair]], users: dict[str, User], family: str,
                featured: bool, data: dict[str, Any] | None = None) -> FewshotData:
    """Every user's pairs (with the features asked for) split by the protocol.

    Args:
        opts: the options (the protocol's keys).
        by_user: user id -> pairs, oldest first.
        users: user id -> user.
        family: where the users come from, for messages.
        featured: compute the features ``opts.features`` asks for.
        data: the settings that decide which users exist (the file's digest, the simulation's keys;
            None: only the protocol's keys are recorded).
    """
    if featured and opts.features == "embedding":
        from prb_tasks.fewshot.features import with_embeddings

        by_user = with_embeddings(by_user)
    split = make_split(by_user, opts.unseen_share, opts.split_seed, opts.queries, evaluate=opts.evaluate)
    settings = {**(data or {}), "unseen_share": opts.unseen_share, "split_seed": opts.split_seed}
    if opts.evaluate != DEFAULT_EVALUATE:
        # Recorded only when not the protocol's, so checkpoints written before the key still match.
        settings["evaluate"] = opts.evaluate
    return FewshotData(split, users, {p.key: p for ps in by_user.values() for p in ps}, family, settings)


def chosen_shown_first(pair: Pair) -> bool:
    """Where a support pair's chosen response is shown to a judge: fixed per pair by a
    hash of its key, so about half are shown first and every run shows the same."""
    return hashlib.sha256(pair.key.encode()).digest()[0] % 2 == 0


def _past(pair: Pair) -> PastChoice:
    first = chosen_shown_first(pair)
    a, b = (pair.chosen, pair.rejected) if first else (pair.rejected, pair.chosen)
    return PastChoice(pair.prompt, a.text, b.text, "A" if first else "B")


def support_for(user: UnseenUser[Pair], query: Pair, k: int, selection: str) -> tuple[Pair, ...]:
    """The support pairs a judge is shown, oldest first.

    Args:
        user: the evaluated user.
        query: the query pair.
        k: how many.
        selection: ``recent`` (the protocol's support set) or ``similar`` (the ``k`` pairs
            of the pool whose prompts are closest to the query's by BM25; ties keep pool order).
    """
    if selection == "recent" or k == 0:
        return user.support(k)
    if k > len(user.pool):
        raise ValueError(f"user {user.user_id} has fewer than k={k} support pairs")
    best = BM25Index([p.prompt for p in user.pool]).top_k(query.prompt, k)
    return tuple(user.pool[i] for i in sorted(best))


def _check_method(name: Any, source: str) -> None:
    """One line, before any data is loaded or embedded, when ``--model_args method=NAME`` cannot
    run on ``source``'s data (the oracle on your own file)."""
    if not name:
        return
    from prb_tasks.fewshot.registry import MethodError, resolve

    try:
        method = resolve(str(name))
    except MethodError:
        return  # prb-method names an unknown method itself
    if method.data_families and source not in method.data_families:
        raise DataError(f"prb: method '{name}' runs on {' or '.join(method.data_families)} data only, not on "
                        f"{source} data; run it on {' or '.join(f + '_fewshot' for f in method.data_families)}")


def build_docs(source: str, variant: str, selection: str = "recent", **kwargs: Any) -> list[dict[str, Any]]:
    """Documents of one few-shot task.

    Args:
        source: a family with few-shot tasks (``personalllm``, ``custom``, ``prism``...).
        variant: ``method`` (scalar documents for ``prb-method``) or ``judge`` (both orders).
        selection: judges only: ``recent`` or ``similar`` (see :func:`support_for`).
        **kwargs: ``--metadata`` / ``--model_args`` keys; see :class:`FewshotOptions`.
    """
    check_options(METADATA, kwargs, task_name(kwargs))
    opts = parse_options(FewshotOptions, kwargs)
    check_split(source, opts)
    note_unused(unused_keys(source, variant), kwargs, f"the {source} few-shot {variant} tasks")
    if variant == "method":
        _check_method(kwargs.get("method"), source)
    featured = variant == "method"
    from prb_tasks.data import families

    data, origin, tag = families.fewshot_source(source)(opts, featured=featured)
    if opts.evaluate != DEFAULT_EVALUATE:
        # The split names the data source, so the tables and prb compare's sections say which it is.
        origin = dataclasses.replace(origin, subset=f"{origin.subset}; {EVALUATE[opts.evaluate]}")
    provenance.record(kwargs, origin, task_name(kwargs) or f"{source}_fewshot")
    split = data.split
    key = "fewshot::" + hashlib.sha256(
        f"{source}|{tag}|{opts.unseen_share}|{opts.split_seed}|{opts.queries}|"
        f"{featured and opts.features}|{opts.evaluate}".encode()).hexdigest()[:12]
    remember(key, data)
    evaluated = ("unseen" if opts.evaluate == DEFAULT_EVALUATE
                 else f"evaluated ({EVALUATE[opts.evaluate]})")
    print(fit(f"prb: few-shot split ({source}): {len(split.seen)} seen users, {len(split.unseen)} {evaluated} "
              f"(split_seed {split.seed}), {split.queries} query pairs per evaluated user, k = "
              f"{', '.join(map(str, split.ks))}"), file=sys.stderr)
    for line in split.shortfall_lines():
        print(fit(f"prb: few-shot split ({source}): {line}"), file=sys.stderr)
    if variant == "judge":
        system_prompt = judge_system_prompt(opts.templates, opts.system_template)
        user_ref = resolve("judge/user_history.jinja", opts.templates, opts.user_template)
        history_ref = resolve("judge/history.jinja", opts.templates)
    docs: list[dict[str, Any]] = []
    for k in split.ks:
        for user in split.evaluated(k):
            for query in user.queries:
                identity = {
                    "pair_key": f"{query.key}@k{k}", "id": f"{query.key}@k{k}", "subset": f"{k:02d}-shot",
                    "user_id": user.user_id, "k": k, "query_key": query.key, "split_key": key,
                    "variant": variant if variant == "method" else f"judge_{selection}",
                }
                if variant == "method":
                    doc = scalar_pair_doc(identity, query.prompt, query.prompt, query.chosen.text,
                                          query.rejected.text, "", chosen_first=True)
                    doc.pop(CHOSEN_FIRST)  # the protocol keeps no display order
                    docs.append(doc)
                    continue
                history = [_past(p) for p in support_for(user, query, k, selection)]
                context = render(history_ref, history=history, demographics=[])
                docs.extend(judge_pair_docs(
                    identity, query.chosen.text, query.rejected.text, system_prompt,
                    # Called before the loop moves on (no rebuild), so the loop's names are bound.
                    lambda a, b: render(
                        user_ref, context=context, question=query.prompt, response_a=a, response_b=b,
                        history=history, demographics=[]),
                ))
    if not docs:
        raise DataError(f"prb: few-shot ({source}): no user has {split.queries} query pairs; lower 'queries' "
                        "or give users more pairs")
    return docs


def load_dataset(**kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point for the few-shot task YAMLs."""
    source = kwargs.pop("data_family")
    variant = kwargs.pop("variant")
    selection = kwargs.pop("selection", "recent")
    return to_dataset(build_docs(source, variant, selection, **kwargs))
