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
                 profile_key: list[str], **_: Any) -> list[float]:
        items = [RMInput(p, _text(c), key) for p, c, key in zip(rm_prompt, completions, profile_key)]
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
