"""PersonalLLM as its authors measure it: a model writes the response, ten reward models score it.

``personalllm_gen`` lets any lm-eval model write a response for each simulated user (its
documents carry the user's weights and the dataset rewards a response is compared
with). ``prb personalllm score`` then, for each samples file:

1. scores every generated response with each of the ten reward models through
   ``prb-rm`` (its HF scorer, or its served scorer for an endpoint), so scores land in
   the shared score cache, keyed by (reward model, exact input): a second policy, or a
   re-run, scores only responses no reward model has seen;
2. z-scores each raw score with the authors' published constants and takes the user's
   weighted sum (the authors' ``persona_weighted_score``, ``eval/eval.py``);
3. reports the mean of that reward and two win rates, in percent, each a strict
   greater-than as in their code: against the user's best dataset response and against
   the reference model's dataset response (GPT-4o by default). Intervals resample users.

The dataset side of each comparison uses the rewards stored in the dataset, as the
authors' evaluation does; the generated side is scored by us, so a difference in how a
reward model formats its input (chat template, truncation) is a difference between the
two sides (see docs/personalllm.md).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from prb_tasks.common.errors import PRBError
from prb_tasks.common.suggest import did_you_mean
from prb_tasks.common.textfiles import json_lines
from prb_tasks.data.personalllm.constants import COST_MODEL, HUB_IDS, NORMALISATION, REWARD_MODELS

TASK = "personalllm_gen"
_NEEDED = ("question", "user_id", "user_weights", "best_response_reward")


def process_generation(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """What lm-eval can report without reward models: length and emptiness of the response.

    Args:
        doc: a ``personalllm_gen`` document.
        results: the model's generation (one string).
    """
    text = results[0] if results else ""
    return {"response_words": float(len(text.split())), "empty_response": float(not text.strip())}


@dataclass(frozen=True)
class Generated:
    """One generated response and what it is compared with.

    Attributes:
        user: the simulated user's id.
        question: the request the response answers (what the reward models see).
        response: the generated text.
        weights: the user's weights, in :data:`REWARD_MODELS` order.
        flip_cost: the run negated beaver_7b's z-score.
        best: the user's reward of their best dataset response.
        reference: the user's reward of the reference model's dataset response (None: none in the row).
        preset: the ``personalllm`` preset of the run (``prb``, ``paper`` or ``public_script``).
    """

    user: str
    question: str
    response: str
    weights: tuple[float, ...]
    flip_cost: bool
    best: float
    reference: float | None
    preset: str = "prb"


def sample_files(paths: Sequence[Path]) -> list[Path]:
    """The ``samples_personalllm_gen_*.jsonl`` files under ``paths`` (files are taken as given)."""
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(sorted(path.rglob(f"samples_{TASK}_*.jsonl")))
        else:
            raise PRBError(f"prb personalllm score: '{path}' does not exist; give lm-eval output folders of "
                           f"--tasks {TASK} runs (with --log_samples) or their samples_{TASK}_*.jsonl files")
    if not found:
        raise PRBError(f"prb personalllm score: no samples_{TASK}_*.jsonl under {', '.join(map(str, paths))}; "
                       f"run `prb eval --tasks {TASK} --output_path DIR --log_samples` first")
    return found


def read_generations(path: Path) -> list[Generated]:
    """The generated responses of one samples file, with their comparison rewards.

    Args:
        path: a ``samples_personalllm_gen_*.jsonl`` file written by lm-eval.
    """
    out: list[Generated] = []
    for lineno, sample in json_lines(path, "samples file", "half-written? re-run that evaluation", PRBError,
                                     prefix="prb personalllm score: "):
        doc = sample.get("doc") if isinstance(sample, dict) else None
        if not isinstance(doc, dict) or any(key not in doc for key in _NEEDED):
            raise PRBError(f"prb personalllm score: {path} line {lineno} is not a {TASK} sample (no "
                           f"{'/'.join(_NEEDED)}); give samples of --tasks {TASK}")
        out.append(Generated(
            user=str(doc["user_id"]), question=str(doc["question"]), response=_response(sample),
            weights=tuple(float(w) for w in doc["user_weights"]), flip_cost=bool(doc.get("flip_beaver", False)),
            best=float(doc["best_response_reward"]),
            reference=None if doc.get("reference_reward") is None else float(doc["reference_reward"]),
            preset=str(doc.get("preset") or "prb"),
        ))
    if not out:
        raise PRBError(f"prb personalllm score: {path} holds no samples")
    return out


def usable_generations(path: Path, generations: list[Generated]) -> list[Generated]:
    """The generations worth scoring: failed ones (the backend's error or skip marker) are
    left out with a line; a file of only empty or failed ones is refused with one line, and
    one mostly empty gets a line before its numbers (rewards of silence are not a policy's).

    Args:
        path: the samples file (named in the lines).
        generations: what :func:`read_generations` read from it.
    """
    from prb_tasks.replies.verdict import marker_outcome

    kept = [g for g in generations if marker_outcome(g.response) is None]
    failed = len(generations) - len(kept)
    empty = sum(not g.response.strip() for g in kept)
    total = len(generations)
    if not kept or empty == len(kept):
        parts = [f"{n} {what}" for n, what in ((failed, "failed (an error or a stopped run)"), (empty, "are empty"))
                 if n]
        raise PRBError(f"prb personalllm score: {path}: none of the {total} generations can be scored "
                       f"({' and '.join(parts)}); try --apply_chat_template, a larger max_gen_toks or another "
                       "model, and run the generation again")
    if failed:
        print(f"prb personalllm score: {path}: {failed} of {total} generations failed (an error or a stopped run) "
              "and are left out; run the generation again to fill them", file=sys.stderr)
    if empty * 2 >= len(kept):
        print(f"prb personalllm score: {path}: {empty} of {len(kept)} responses are empty, so the numbers below "
              "mostly score silence; try --apply_chat_template, a larger max_gen_toks, or another model",
              file=sys.stderr)
    return kept


def _response(sample: dict[str, Any]) -> str:
    # lm-eval writes the filtered generation as [text] (or [[text]] for repeats).
    value: Any = sample.get("filtered_resps", sample.get("resps", [""]))
    while isinstance(value, list):
        value = value[0] if value else ""
    return str(value)


def _parse_args_text(text: str, where: str) -> dict[str, Any]:
    from lm_eval.utils import simple_parse_args_string

    try:
        return dict(simple_parse_args_string(text))
    except Exception as exc:  # noqa: BLE001 - lm-eval raises plain ValueError/IndexError on malformed text
        raise PRBError(f"prb personalllm score: cannot read {where} '{text}' ({exc}); write key=value,key=value") \
            from None


def rm_arguments(rm: Sequence[str], others: str | None, common: str | None) -> dict[str, dict[str, Any]]:
    """``prb-rm`` model arguments of each of the ten reward models.

    Args:
        rm: ``NAME=ARGS`` items (``ARGS`` is ``key=value,...`` as for ``--model_args``).
        others: arguments for every reward model no ``rm`` item names (default: the
            authors' checkpoint, ``pretrained=<hub id>``).
        common: arguments added to every reward model's (device, dtype, cache_dir, ...).
    """
    given: dict[str, dict[str, Any]] = {}
    for item in rm:
        name, sep, args = item.partition("=")
        name = name.strip()
        if not sep or not args.strip():
            raise PRBError(f"prb personalllm score: --rm '{item}' needs NAME=ARGS, e.g. "
                           f"--rm gemma_2b=pretrained={HUB_IDS['gemma_2b']}")
        if name not in REWARD_MODELS:
            raise PRBError(f"prb personalllm score: --rm names unknown reward model '{name}'"
                           f"{did_you_mean(name, REWARD_MODELS)}; the ten are {', '.join(REWARD_MODELS)}")
        if name in given:
            raise PRBError(f"prb personalllm score: --rm gives '{name}' twice; give each reward model once")
        given[name] = _parse_args_text(args, f"--rm {name}")
    shared = _parse_args_text(common, "--rm-args") if common else {}
    fallback = _parse_args_text(others, "--other-rms") if others else None
    out: dict[str, dict[str, Any]] = {}
    for name in REWARD_MODELS:
        own = given.get(name, fallback if fallback is not None else {"pretrained": HUB_IDS[name]})
        out[name] = {**shared, **own}
    _check(out)
    return out


def _check(arguments: dict[str, dict[str, Any]]) -> None:
    """Validate every reward model's arguments before any model loads (a typo in the
    tenth should not wait for nine downloads)."""
    from prb_tasks.rm.options import parse_options

    for name, args in arguments.items():
        try:
            parse_options(dict(args))
        except PRBError as exc:
            raise PRBError(f"prb personalllm score: reward model {name}: {exc}") from None


def score_all(generations: Sequence[Generated], arguments: dict[str, dict[str, Any]],
              quiet: bool = False) -> tuple[np.ndarray, dict[str, int]]:
    """Raw scores of every response by every reward model, shape ``(responses, 10)``.

    Reward models with identical arguments are loaded once. Each score goes through
    ``prb-rm``'s cache, so only responses no run has scored with that model are scored.

    Args:
        generations: the responses.
        arguments: ``prb-rm`` model arguments per reward model (:func:`rm_arguments`).
        quiet: no progress bars or per-model lines.

    Returns:
        the scores and, per reward model, how many responses were scored afresh.
    """
    from prb_tasks.rm.inputs import RMInput
    from prb_tasks.rm.model import RewardModelLM

    items = [RMInput(g.question, g.response, question=g.question) for g in generations]
    raw = np.empty((len(items), len(REWARD_MODELS)))
    fresh: dict[str, int] = {}
    done: dict[str, tuple[list[float], int]] = {}
    keys = {name: json.dumps(arguments[name], sort_keys=True, default=str) for name in REWARD_MODELS}
    for column, name in enumerate(REWARD_MODELS):
        key = keys[name]
        if key not in done:
            if not quiet:
                names = ", ".join(n for n in REWARD_MODELS if keys[n] == key)
                shown = ",".join(f"{k}={v}" for k, v in arguments[name].items())
                print(f"prb personalllm score: {names}: prb-rm {shown}", file=sys.stderr)
            model = RewardModelLM.create_from_arg_obj(dict(arguments[name]))
            before = len(model.cache) if model.cache is not None else 0
            scores = model.rewards(items, disable_tqdm=quiet, documents=len(items))
            added = (len(model.cache) - before) if model.cache is not None else len(items)
            done[key] = (scores, added)
            del model
            _free_accelerator()
            fresh[name] = added
        else:
            fresh[name] = 0
        raw[:, column] = done[key][0]
    return raw, fresh


def _free_accelerator() -> None:
    # Ten 7B models one after another: release each before the next loads.
    import gc

    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def user_rewards(raw: np.ndarray, generations: Sequence[Generated]) -> np.ndarray:
    """Each response's reward for its user: weights times the z-scored raw scores.

    Args:
        raw: raw scores, shape ``(responses, 10)`` in :data:`REWARD_MODELS` order.
        generations: the responses (weights, cost-sign convention).
    """
    mean = np.asarray([NORMALISATION[m][0] for m in REWARD_MODELS])
    sd = np.asarray([NORMALISATION[m][1] for m in REWARD_MODELS])
    z = (raw - mean) / sd
    flip = np.asarray([g.flip_cost for g in generations])
    z[flip, REWARD_MODELS.index(COST_MODEL)] *= -1.0
    weights = np.asarray([g.weights for g in generations])
    return np.einsum("ij,ij->i", z, weights)


def _user_bootstrap(values: np.ndarray, users: Sequence[str], resamples: int, seed: int) -> tuple[float, float]:
    """95% interval of the mean of ``values``, resampling users (all of a user's items together)."""
    names = sorted(set(users))
    position = {u: i for i, u in enumerate(names)}
    index = np.asarray([position[u] for u in users])
    sums = np.bincount(index, weights=values, minlength=len(names))
    counts = np.bincount(index, minlength=len(names)).astype(float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(len(names), size=(resamples, len(names)))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def summarise(rewards: np.ndarray, generations: Sequence[Generated], resamples: int = 2000,
              seed: int = 0) -> dict[str, Any]:
    """Mean reward and the two win rates (percent, strict greater-than), with user-bootstrap intervals.

    Args:
        rewards: each response's reward for its user (:func:`user_rewards`).
        generations: the responses, with the rewards they are compared with.
        resamples: bootstrap resamples of users.
        seed: seed of the bootstrap.
    """
    users = [g.user for g in generations]
    best = np.asarray([g.best for g in generations])
    wins_best = (rewards > best).astype(float) * 100.0
    out: dict[str, Any] = {
        "responses": len(generations),
        "users": len(set(users)),
        "mean_reward": float(rewards.mean()),
        "mean_reward_ci": _user_bootstrap(rewards, users, resamples, seed),
        "win_rate_best": float(wins_best.mean()),
        "win_rate_best_ci": _user_bootstrap(wins_best, users, resamples, seed),
    }
    has_ref = [i for i, g in enumerate(generations) if g.reference is not None]
    out["reference_missing"] = len(generations) - len(has_ref)
    # The authors' eval.py divides by every row: a row without a reference response (NaN
    # there) is never won. Their presets follow them; prb's own leaves such rows out.
    out["reference_rule"] = "all_rows" if any(g.preset != "prb" for g in generations) else "rows_with_reference"
    if out["reference_rule"] == "all_rows":
        wins_all = np.asarray([r > g.reference if g.reference is not None else False
                               for r, g in zip(rewards, generations)], dtype=float) * 100.0
        out["win_rate_reference"] = float(wins_all.mean())
        out["win_rate_reference_ci"] = _user_bootstrap(wins_all, users, resamples, seed)
    elif has_ref:
        reference = np.asarray([generations[i].reference for i in has_ref])
        wins_ref = (rewards[has_ref] > reference).astype(float) * 100.0
        out["win_rate_reference"] = float(wins_ref.mean())
        out["win_rate_reference_ci"] = _user_bootstrap(wins_ref, [users[i] for i in has_ref], resamples, seed)
    else:
        out["win_rate_reference"] = None
        out["win_rate_reference_ci"] = None
    return out


def _fmt_ci(ci: tuple[float, float] | None, unit: str = "") -> str:
    return "" if ci is None else f" [{ci[0]:.3g}{unit}, {ci[1]:.3g}{unit}]"


def run(args: argparse.Namespace) -> int:
    """``prb personalllm score``: score generated responses; print and optionally write the results."""
    try:
        arguments = rm_arguments(args.rm or [], args.other_rms, args.rm_args)
        files = sample_files(args.paths)
        # A served model's checkpoint cannot be checked from here; a local one can.
        stand_ins = [n for n in REWARD_MODELS if arguments[n].get("pretrained", HUB_IDS[n]) != HUB_IDS[n]]
        if stand_ins:
            print(f"prb personalllm score: {len(stand_ins)} of the 10 reward models are not the authors' checkpoints "
                  f"({', '.join(stand_ins)}): the numbers are not comparable with the paper's", file=sys.stderr)
        report: list[dict[str, Any]] = []
        for path in files:
            generations = usable_generations(path, read_generations(path))
            raw, fresh = score_all(generations, arguments, quiet=args.quiet)
            rewards = user_rewards(raw, generations)
            summary = summarise(rewards, generations)
            mean = np.asarray([NORMALISATION[m][0] for m in REWARD_MODELS])
            sd = np.asarray([NORMALISATION[m][1] for m in REWARD_MODELS])
            summary["mean_normalised"] = dict(zip(REWARD_MODELS, ((raw - mean) / sd).mean(axis=0).tolist()))
            summary["scored_fresh"] = fresh
            distinct = len({json.dumps(a, sort_keys=True, default=str) for a in arguments.values()})
            unique = len({(g.question, g.response) for g in generations})
            summary["scored_from_cache"] = distinct * unique - sum(fresh.values())
            summary["samples"] = str(path)
            summary["per_response"] = [
                {"user_id": g.user, "question": g.question, "reward": float(r), "best_response_reward": g.best,
                 "reference_reward": g.reference, "raw_scores": dict(zip(REWARD_MODELS, row.tolist()))}
                for g, r, row in zip(generations, rewards, raw)
            ]
            report.append(summary)
            _print(summary)
    except PRBError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"prb personalllm score: cannot write --json {args.json}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    return 0


def _print(summary: dict[str, Any]) -> None:
    fresh = sum(summary["scored_fresh"].values())
    print(f"{summary['samples']}: {summary['responses']} responses, {summary['users']} users; "
          f"{fresh} scores computed, {summary['scored_from_cache']} from the score cache "
          "(intervals: 95%, resampling users)")
    print(f"  mean_reward         {summary['mean_reward']:.4f}{_fmt_ci(summary['mean_reward_ci'])}")
    print(f"  win_rate_best       {summary['win_rate_best']:.1f}%{_fmt_ci(summary['win_rate_best_ci'], '%')}")
    if summary.get("reference_rule") == "all_rows":
        missing = summary["reference_missing"]
        note = (f" ({missing} rows without a reference response count as not won, as the authors' eval.py "
                "divides by every row)") if missing else ""
        print(f"  win_rate_reference  {summary['win_rate_reference']:.1f}%"
              f"{_fmt_ci(summary['win_rate_reference_ci'], '%')}{note}")
    elif summary["win_rate_reference"] is None:
        print("  win_rate_reference  n/a: no row has a response by the reference model "
              "(--metadata reference_model names its writer)")
    else:
        missing = summary["reference_missing"]
        note = f" ({missing} rows without a reference response left out)" if missing else ""
        print(f"  win_rate_reference  {summary['win_rate_reference']:.1f}%"
              f"{_fmt_ci(summary['win_rate_reference_ci'], '%')}{note}")
    if not math.isfinite(summary["mean_reward"]):
        print("  (a reward model returned a non-finite score)")
