"""Turn PersonalLLM prompts and simulated users into the documents lm-eval iterates over.

One loader serves every PersonalLLM task; the task YAML names the variant
(``dataset_kwargs``), the user tunes the simulation with ``--metadata`` (see
:class:`PersonalLLMOptions`). lm-eval also passes every ``--model_args`` key here,
hence ``**kwargs``. Variants:

- ``judge``: a judge sees the user's ``k`` earlier choices and a new pair, in both orders;
- ``scalar`` / ``scalar_history``: an RM scores ``[chosen, rejected]`` after the bare
  prompt, or after the prompt preceded by the user's earlier choices;
- ``bon`` / ``bon_history``: an RM scores all eight responses (Best-of-N);
- ``bon_judge``: a judge rates each of the eight responses on its own (Best-of-N);
- ``gen``: any model *writes* the response for the user, given the user's first ``k``
  earlier choices as in-context examples (the authors' self-ICL baseline; ``k`` 0 is
  their zero-shot prompt); ``prb personalllm score`` then scores it with the ten reward
  models (:mod:`prb_tasks.scoring.personalllm_gen`).
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any, Literal, Optional

from pydantic import Field, model_validator

from prb_tasks.data import profile_store, provenance
from prb_tasks.data.errors import DataError
from prb_tasks.data.personalllm.constants import (
    DEFAULT_ALPHA,
    DEFAULT_SEED,
    DEFAULT_USERS,
    HF_REPO,
    HF_SPLIT,
    N_RESPONSES,
)
from prb_tasks.data.personalllm.items import (
    DEFAULT_ITEMS_PER_USER,
    DEFAULT_K,
    DEFAULT_MARGIN,
    Choice,
    Simulation,
    SimulationConfig,
    UserItem,
    simulate,
)
from prb_tasks.data.personalllm.presets import PRESETS
from prb_tasks.data.personalllm.schema import PromptRow
from prb_tasks.data.personalllm.sources import load_prompts, resolve_data_dir, source_tag
from prb_tasks.data.personalllm.users import user_name
from prb_tasks.documents.metadata import MetadataSpec, check_options, data_dir_preflight, note_unused, task_name
from prb_tasks.documents.options import TemplateOptions, option_keys, parse_options, unused_templates
from prb_tasks.documents.pairs import DocList, judge_pair_docs, judge_system_prompt, scalar_pair_doc, to_dataset
from prb_tasks.prompts.templates import render, resolve
from prb_tasks.prompts.user_history import PastChoice, profile_texts

VARIANTS: tuple[str, ...] = ("judge", "scalar", "scalar_history", "bon", "bon_history", "bon_judge", "gen")
_WITH_HISTORY = {"judge", "scalar_history", "bon_history", "bon_judge", "gen"}
ICLResponses = Literal["winning_only", "winning_and_losing", "losing_only", "losing_as_winning_only"]


class PersonalLLMOptions(TemplateOptions):
    """``--metadata`` options of the PersonalLLM tasks (each field's description says what it does)."""

    data_dir: Optional[str] = Field(
        None, description="local copy in the HF layout (<dir>/data/test-*.parquet); else $PRB_PERSONALLLM_DIR, "
        "else the HF hub")
    preset: Literal["prb", "paper", "public_script"] = Field(
        "prb", description="whose item construction: prb (default, our own), paper (the interaction-database "
        "script kept with the paper's source, namkoong-lab/Private_PersonalLLM: alpha 0.05, 3-5 earlier choices "
        "from the test split; not the histories the paper's text describes) or public_script (their public "
        "script: alpha 0.01, 25-49 earlier choices from the train split); presets keep near-ties and label an "
        "exact tie b")
    n_users: int = Field(DEFAULT_USERS, ge=1, description="simulated users (authors' default 1000)")
    alpha: Optional[float] = Field(None, gt=0, description="symmetric Dirichlet concentration (default 0.01 as in "
                                   "the authors' public generation script; the paper's experiments and the paper "
                                   "preset use 0.05)")
    user_seed: int = Field(DEFAULT_SEED, ge=0, description="seed of the users' weights and of their walks over "
                           "prompts (authors' default 42; not `seed`, which is a model argument)")
    k: Optional[int] = Field(None, ge=0, description="earlier choices shown with each item (default 4; 0 = none; "
                             "with a preset: the first k of the user's history, default all)")
    items_per_user: int = Field(DEFAULT_ITEMS_PER_USER, ge=1, description="choices to predict per user")
    margin: Optional[float] = Field(None, ge=0, description="pairs whose two rewards for the user differ by at "
                                    "most this are dropped (default 0.1; not with a preset)")
    flip_beaver: bool = Field(False, description="negate the cost model beaver_7b's z-score (the authors do not)")
    icl_responses: ICLResponses = Field(
        "winning_only", description="personalllm_gen: which answers of each earlier choice the in-context examples "
        "show (the authors' responses_to_include; winning_only was their best)")
    reference_model: str = Field(
        "gpt-4o", min_length=1, description="personalllm_gen: the dataset response a generated one is compared "
        "with for win_rate_reference, named by its writer (response_N_model contains this, case-insensitive)")

    @model_validator(mode="after")
    def _preset_keeps_ties(self) -> "PersonalLLMOptions":
        if self.preset != "prb" and self.margin is not None:
            raise ValueError(f"'margin' is prb's own rule; preset {self.preset} keeps near-ties as the authors "
                             "do: drop 'margin' or use preset prb")
        return self

    def simulation(self) -> SimulationConfig:
        """The simulation settings these options describe (a preset's values where a key is not given)."""
        preset = PRESETS.get(self.preset)
        return SimulationConfig(
            n_users=self.n_users,
            alpha=self.alpha if self.alpha is not None else (preset.alpha if preset else DEFAULT_ALPHA),
            seed=self.user_seed,
            k=self.k if self.k is not None or preset else DEFAULT_K,
            items_per_user=self.items_per_user,
            margin=self.margin if self.margin is not None else DEFAULT_MARGIN,
            flip_cost=self.flip_beaver,
            preset=preset.name if preset else None,
        )


PERSONALLLM_KEYS = option_keys(PersonalLLMOptions)
#: The ``--metadata`` keys of every ``personalllm*`` task, checked by the shared validator.
METADATA = MetadataSpec.from_options("personalllm", PersonalLLMOptions, fixed=frozenset({"variant"}))

_USER_TEMPLATE = {
    "gen": "gen/icl.jinja",
    "judge": "judge/user_history.jinja",
    "scalar_history": "rm/user_history.jinja",
    "bon_history": "rm/user_history.jinja",
    "bon_judge": "judge/user_pointwise.jinja",
}
_SYSTEM_TEMPLATE = {"judge": "judge/system.jinja", "bon_judge": "judge/pointwise_system.jinja"}

# Simulations already built in this process, keyed on the rows objects and the settings.
_SIMULATIONS: dict[tuple[int, int, SimulationConfig], tuple[list[PromptRow], Simulation]] = {}


def simulation_for(rows: list[PromptRow], config: SimulationConfig,
                   history_rows: list[PromptRow] | None = None, walk_only: bool = False) -> Simulation:
    """The simulation of ``config`` over ``rows``, built once per process.

    Args:
        rows: prompts with all rewards (the loader's cached list).
        config: simulation settings.
        history_rows: prompts of a preset's history split when it is not ``rows``.
        walk_only: the caller uses each user's whole walk of ``k + 1`` clear choices (the
            few-shot tasks), not items with ``k`` earlier choices: the notice says so.
    """
    key = (id(rows), id(history_rows), config)
    hit = _SIMULATIONS.get(key)
    if hit is None or hit[0] is not rows:
        sim = simulate(rows, config, history_rows=history_rows)
        if len(_SIMULATIONS) >= 4:
            _SIMULATIONS.pop(next(iter(_SIMULATIONS)))
        _SIMULATIONS[key] = hit = (rows, sim)
        users = f"prb: PersonalLLM: {config.n_users} simulated users (alpha {config.alpha:g}, user_seed {config.seed})"
        if walk_only:
            print(f"{users}, {(config.k or 0) + config.items_per_user} clear choices per user "
                  f"over {len(rows)} prompts, "
                  f"{sim.near_ties} near-ties dropped (margin {config.margin:g})", file=sys.stderr)
        elif config.preset is None:
            print(f"{users}, {len(sim.items)} items over {len(rows)} prompts, k={config.k} earlier choices, "
                  f"{sim.near_ties} near-ties dropped (margin {config.margin:g})", file=sys.stderr)
        else:
            preset = PRESETS[config.preset]
            shown = "all" if config.k is None else f"the first {config.k}"
            print(f"{users}, preset {preset.name}: {preset.min_history}-{preset.max_history - 1} earlier choices "
                  f"per user from the {preset.history_split} split ({shown} shown), {len(sim.items)} items over "
                  f"{len(rows)} test prompts, {sim.ties} exact ties labelled b, near-ties kept", file=sys.stderr)
    return hit[1]


def _past(sim: Simulation, choice: Choice) -> PastChoice:
    row = sim.history_prompt(choice)
    return PastChoice(row.prompt, row.responses[choice.first], row.responses[choice.second],
                      "A" if choice.chosen == choice.first else "B")


def _pair_identity(sim: Simulation, item: UserItem, variant: str) -> dict[str, Any]:
    """Fields naming one pair: which user, prompt and responses, and how clear the choice was."""
    row = sim.rows[item.choice.prompt]
    c = item.choice
    key = f"{user_name(item.user)}/p{row.index}/{c.first + 1}-{c.second + 1}"
    return {
        "pair_key": key,
        "id": key,
        "subset": row.subset,
        "user_id": user_name(item.user),
        "prompt_id": row.prompt_id,
        "variant": variant,
        "response_chosen": c.chosen + 1,
        "response_rejected": c.rejected + 1,
        "model_chosen": row.models[c.chosen] or "",
        "model_rejected": row.models[c.rejected] or "",
        "reward_gap": c.gap,
    }


def _group_identity(sim: Simulation, item: UserItem, variant: str) -> dict[str, Any]:
    """Fields naming one (user, prompt) Best-of-N group, with the rewards that score it."""
    row = sim.rows[item.choice.prompt]
    user_rewards = sim.user_rewards(item.user, item.choice.prompt)
    return {
        "group_key": f"{user_name(item.user)}/p{row.index}",
        "subset": row.subset,
        "user_id": user_name(item.user),
        "prompt_id": row.prompt_id,
        "variant": variant,
        "user_rewards": [float(x) for x in user_rewards],
        "popular_rewards": [float(x) for x in sim.population_rewards(item.choice.prompt)],
        "user_best": int(user_rewards.argmax()),
    }


def _generation_doc(sim: Simulation, item: UserItem, history: list[PastChoice], prompt: str,
                    opts: PersonalLLMOptions) -> dict[str, Any]:
    """One ``gen`` document: the prompt to answer, the user's weights and the rewards a
    generated response is compared with (all computed from the dataset's stored scores)."""
    row = sim.rows[item.choice.prompt]
    rewards = sim.user_rewards(item.user, item.choice.prompt)
    wanted = opts.reference_model.lower()
    reference = next((i for i, name in enumerate(row.models) if name and wanted in name.lower()), None)
    key = f"{user_name(item.user)}/p{row.index}"
    return {
        "id": key,
        "group_key": key,
        "user_id": user_name(item.user),
        "prompt_id": row.prompt_id,
        "subset": row.subset,
        "variant": "gen",
        "question": row.prompt,
        "prompt": prompt,
        "shots": len(history),
        "user_weights": [float(w) for w in sim.weights[item.user]],
        "flip_beaver": sim.config.flip_cost,
        "dataset_rewards": [float(r) for r in rewards],
        "best_response_reward": float(rewards.max()),
        "reference_model": row.models[reference] if reference is not None else None,
        "reference_reward": float(rewards[reference]) if reference is not None else None,
        # Which construction made the item: the authors' presets also score win_rate_reference their way.
        "preset": sim.config.preset or "prb",
    }


class _Renderer:
    """Templates of one variant, resolved once; renders the per-item texts."""

    def __init__(self, variant: str, opts: PersonalLLMOptions) -> None:
        self.variant = variant
        self.system_prompt = (
            judge_system_prompt(opts.templates, opts.system_template, _SYSTEM_TEMPLATE[variant])
            if variant in _SYSTEM_TEMPLATE else ""
        )
        self.user_ref = (
            resolve(_USER_TEMPLATE[variant], opts.templates, opts.user_template)
            if variant in _USER_TEMPLATE else None
        )
        self.history_ref = resolve("judge/history.jinja", opts.templates) if variant in _SYSTEM_TEMPLATE else None

    def context(self, history: list[PastChoice]) -> str:
        """The judge's view of the user (earlier choices), rendered once per item."""
        assert self.history_ref is not None
        return render(self.history_ref, history=history, demographics=[])

    def rm_prompt(self, question: str, history: list[PastChoice]) -> str:
        """The user turn an RM sees: the bare request, or the request after the history."""
        if self.user_ref is None:
            return question
        return render(self.user_ref, question=question, history=history, demographics=[])


def unused_keys(variant: str) -> dict[str, str]:
    """``--metadata`` keys a variant leaves alone -> why (one note each the user gave:
    :func:`~prb_tasks.documents.metadata.note_unused`). ``k`` is never one: it also sets how many clear
    choices each simulated user makes, so it shapes every variant's items.

    Args:
        variant: one of :data:`VARIANTS`.
    """
    unused = unused_templates(system=variant in _SYSTEM_TEMPLATE, user=variant in _USER_TEMPLATE)
    if variant != "gen":
        unused["icl_responses"] = unused["reference_model"] = "only personalllm_gen generates answers"
    return unused


def build_docs(variant: str, **kwargs: Any) -> list[dict[str, Any]]:
    """Documents of one PersonalLLM variant, grouped by user.

    Args:
        variant: one of :data:`VARIANTS`.
        **kwargs: ``--metadata`` / ``--model_args`` keys; see :class:`PersonalLLMOptions`.
    """
    if variant not in VARIANTS:
        raise DataError(f"prb: unknown PersonalLLM variant '{variant}'; expected one of {', '.join(VARIANTS)}")
    check_options(METADATA, kwargs, task_name(kwargs))
    opts = parse_options(PersonalLLMOptions, kwargs)
    note_unused(unused_keys(variant), kwargs, f"the personalllm {variant} tasks")
    config = opts.simulation()
    prompts = load_prompts(opts.data_dir)
    preset = PRESETS.get(opts.preset)
    history_rows = None
    if preset is not None and preset.history_split != HF_SPLIT:
        try:
            history_rows = load_prompts(opts.data_dir, preset.history_split)
        except DataError as exc:
            raise DataError(f"{exc}; preset {preset.name} draws histories from the {preset.history_split} split "
                            "(`prb data download DIR --family personalllm` fetches it)") from None
    folder = resolve_data_dir(opts.data_dir)
    origin = (provenance.DataSource("hub", HF_REPO, HF_SPLIT, len(prompts)) if folder is None
              else provenance.DataSource("local", str(folder), HF_SPLIT, len(prompts)))
    provenance.record(kwargs, origin, task_name(kwargs) or f"personalllm_{variant}")
    sim = simulation_for(prompts, config, history_rows)
    tag = hashlib.sha256(f"{source_tag(opts.data_dir)}|{config}".encode()).hexdigest()[:12]
    out = _Renderer(variant, opts)
    docs: list[dict[str, Any]] = []
    for item in sim.items:
        row = sim.rows[item.choice.prompt]
        history = [_past(sim, c) for c in item.history] if variant in _WITH_HISTORY else []
        if variant == "gen":
            assert out.user_ref is not None
            docs.append(_generation_doc(sim, item, history, render(
                out.user_ref, question=row.prompt, history=history, responses=opts.icl_responses), opts))
            continue
        chosen, rejected = row.responses[item.choice.chosen], row.responses[item.choice.rejected]
        if variant == "judge":
            context = out.context(history)
            assert out.user_ref is not None
            ref = out.user_ref
            docs.extend(judge_pair_docs(
                _pair_identity(sim, item, variant), chosen, rejected, out.system_prompt,
                lambda a, b: render(ref, context=context, question=row.prompt, response_a=a,
                                    response_b=b, history=history, demographics=[]),
            ))
        elif variant in ("scalar", "scalar_history"):
            identity = _pair_identity(sim, item, variant)
            profile_key = f"personalllm::{tag}::{identity['pair_key']}"
            profile_store.remember(profile_key, profile_texts([_past(sim, c) for c in item.history]))
            docs.append(scalar_pair_doc(identity, row.prompt, out.rm_prompt(row.prompt, history),
                                        chosen, rejected, profile_key,
                                        chosen_first=item.choice.chosen == item.choice.first))
        elif variant in ("bon", "bon_history"):
            identity = _group_identity(sim, item, variant)
            profile_key = f"personalllm::{tag}::{identity['group_key']}"
            profile_store.remember(profile_key, profile_texts([_past(sim, c) for c in item.history]))
            docs.append({
                **identity,
                "id": identity["group_key"],
                "question": row.prompt,
                "prompt": out.rm_prompt(row.prompt, history),
                "choices": list(row.responses),
                "profile_key": profile_key,
            })
        else:  # bon_judge: one document per response, the group's eight in a row
            identity = _group_identity(sim, item, variant)
            context = out.context(history)
            assert out.user_ref is not None
            for index in range(N_RESPONSES):
                docs.append({
                    **identity,
                    "id": f"{identity['group_key']}/r{index + 1}",
                    "response_index": index,
                    "words_response": len(row.responses[index].split()),
                    "system_prompt": out.system_prompt,
                    "prompt": render(out.user_ref, context=context, question=row.prompt,
                                     response=row.responses[index], history=history, demographics=[]),
                })
    if not docs:
        raise DataError("prb: PersonalLLM: the simulation produced no items; lower 'margin' or use more prompts")
    return docs


preflight = data_dir_preflight(resolve_data_dir, PersonalLLMOptions)


def load_dataset(**kwargs: Any) -> dict[str, DocList]:
    """``custom_dataset`` entry point for the PersonalLLM task YAMLs."""
    variant = kwargs.pop("variant")
    return to_dataset(build_docs(variant, **kwargs))


def audit_docs(location: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    """The documents ``prb audit`` reads: the ``scalar_history`` pairs of a local copy.

    Args:
        location: the copy's folder.
        options: the user's ``--metadata`` keys.
    """
    return build_docs("scalar_history", data_dir=location, **options)
