"""The reward of ``prb rl``: prb-rm's scorer, called by TRL as a reward function.

TRL's GRPOTrainer calls a reward function with the batch's prompts and completions and the
dataset's other columns; this one reads ``rm_prompt`` and ``profile_key`` from them, scores
``[user: rm_prompt, assistant: completion]`` with ``prb-rm`` (its score cache included, so a
resumed run does not score again what it scored before) and scales the scores as the preset
says (the authors divide by 10). A batch the scorer cannot score gets the preset's error reward
(the authors' 0.5), counted and reported, never silently.
"""

from __future__ import annotations

import sys
from typing import Any

from prb_tasks.common.errors import PRBError
from prb_tasks.rm.inputs import RMInput


def load_rm(model_args: str, reward_url: str | None = None) -> Any:
    """``prb-rm`` built from its ``--model_args`` string (``endpoint`` set from ``reward_url``).

    Args:
        model_args: what ``prb eval --model prb-rm --model_args`` takes, e.g. ``pretrained=org/rm``.
        reward_url: a served RM's base URL (vLLM ``--runner pooling``), in place of a local model.
    """
    from prb_tasks.rm.errors import RMError
    from prb_tasks.rm.model import RewardModelLM

    args = model_args
    if reward_url:
        args = f"{model_args},endpoint={reward_url}" if model_args else f"endpoint={reward_url}"
    try:
        return RewardModelLM.create_from_arg_string(args)
    except (RMError, PRBError, ValueError) as exc:
        raise PRBError(f"prb rl: reward model '{args}' did not load: {str(exc).splitlines()[0]}") from None
    except OSError as exc:
        raise PRBError(f"prb rl: reward model '{args}' did not load: {str(exc).splitlines()[0]}; check the "
                       "path or hub name") from None


def _text(completion: Any) -> str:
    """A completion's text, whether TRL passes a string or a conversational message list."""
    if isinstance(completion, list):
        return "".join(str(m.get("content", "")) for m in completion if isinstance(m, dict))
    return str(completion)


#: Batches in a row the reward model may fail before ``prb rl`` stops (one failed batch is the
#: authors' rule: its completions get the preset's reward and training goes on).
STOP_AFTER_FAILED_BATCHES = 3


class RMReward:
    """A TRL reward function scoring completions with one ``prb-rm`` model.

    Args:
        rm: a loaded ``prb-rm`` (:func:`load_rm`).
        scale: multiply every score by this.
        on_error: reward of a completion the RM could not score.
    """

    def __init__(self, rm: Any, scale: float, on_error: float) -> None:
        self.rm = rm
        self.scale = scale
        self.on_error = on_error
        self.failures = 0
        self.calls = 0
        self.failed_in_a_row = 0
        # TRL logs each reward function under its __name__.
        self.__name__ = f"prb_rm_{rm.scorer.name}"

    def __call__(self, prompts: list[Any], completions: list[Any], rm_prompt: list[str],
                 profile_key: list[str], question: list[str] | None = None, **_: Any) -> list[float]:
        # The bare question too: a trained checkpoint reads it as the request (not the prompt with posts).
        questions = question if question is not None else [None] * len(rm_prompt)
        items = [RMInput(p, _text(c), key, q or None)
                 for p, c, key, q in zip(rm_prompt, completions, profile_key, questions)]
        self.calls += 1
        try:
            scores = self.rm.rewards(items, disable_tqdm=True)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - the authors' rule: a failed score is 0.5, counted
            self.failures += len(items)
            self.failed_in_a_row += 1
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
            if self.failed_in_a_row >= STOP_AFTER_FAILED_BATCHES:
                # A run of failures is a reward model that is down (a server that never answers),
                # not a completion it could not score: training on constant rewards teaches nothing.
                raise PRBError(f"prb rl: the reward model failed on {self.failed_in_a_row} batches in a row "
                               f"(last: {reason}); stopped instead of training on reward {self.on_error} for "
                               "everything: check that it is running (--reward-url) and run again") from None
            print(f"prb rl: the reward model failed on a batch of {len(items)} ({reason}); "
                  f"reward {self.on_error} each, as the preset says", file=sys.stderr)
            return [self.on_error] * len(items)
        self.failed_in_a_row = 0
        return [float(s) * self.scale for s in scores]


def check_prompts(rm_args: str, prompts: list[Any]) -> None:
    """Refuse in one line, before any training, a ``prb train`` checkpoint that must not score
    ``prompts`` (trained on their rows: :mod:`prb_tasks.train.provenance`); other RMs pass.

    During training a batch the RM cannot score gets the error reward, so this is the check
    that stops the run (whichever engine, verl's reward worker included).

    Args:
        rm_args: the RM's ``--model_args`` (``pretrained=DIR`` of a checkpoint is checked).
        prompts: the training prompts (:class:`~prb_tasks.rl.prompts.RLPrompt`).
    """
    from pathlib import Path

    from prb_tasks.train.checkpoint import MANIFEST, read_manifest
    from prb_tasks.train.provenance import Scope, check

    folder = next((part.split("=", 1)[1] for part in rm_args.split(",") if part.startswith("pretrained=")), None)
    if folder is None or not (Path(folder).expanduser() / MANIFEST).is_file():
        return
    manifest = read_manifest(folder, "prb rl")
    # The prompts are the family's rows only when they are Personalized RewardBench's (pair keys
    # like art/3); LaMP-QA's train questions are another data set, compared by their questions.
    check(manifest, folder, Scope("", questions=[p.question for p in prompts if p.question],
                                  instead="train the policy on LaMP-QA's train questions (--lamp-qa DIR) or "
                                          "give a reward model trained on other rows"), f"prb rl: --rm {rm_args}")
