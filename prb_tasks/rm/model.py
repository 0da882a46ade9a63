"""``prb-rm``: scalar reward models and baselines as an lm-eval model.

The scalar tasks are ``multiple_choice`` over ``[chosen, rejected]``; lm-eval asks for
a "log-likelihood" of each choice, and we answer with the reward instead, so the
task's ``process_results`` compares the two rewards.
"""

from __future__ import annotations

import time
from typing import Any

from lm_eval.api.model import LM
from tqdm import tqdm

from prb_tasks.rm.factory import build_scorer
from prb_tasks.rm.inputs import RMInput, from_request

# Keys lm-eval itself adds to every model's arguments; accepted and ignored here
# unless a scorer uses them.
_HARNESS_KEYS = {"batch_size", "max_batch_size", "device"}
_OWN_KEYS = {"scorer"}


class RewardModelLM(LM):
    """Scores each response with a scalar reward.

    Args:
        scorer: ``length`` (longer wins) or ``bm25`` (overlap with the user's posts).
        **kwargs: lm-eval's ``batch_size`` / ``device`` and scorer-specific options.
    """

    def __init__(self, scorer: str = "length", **kwargs: Any) -> None:
        super().__init__()
        unknown = set(kwargs) - _HARNESS_KEYS - _OWN_KEYS
        if unknown:
            raise ValueError(
                f"prb-rm: unknown model_args {sorted(unknown)}; accepted: scorer "
                "(length, bm25)"
            )
        self.options: dict[str, Any] = {"scorer": scorer, **kwargs}
        self.scorer = build_scorer(self.options)

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        items: list[RMInput] = [
            from_request(getattr(r, "doc", None), r.args[0], r.args[1], getattr(r, "idx", 0))
            for r in requests
        ]
        started = time.perf_counter()
        rewards: list[float] = []
        step = 64
        with tqdm(total=len(items), desc=f"prb-rm ({self.scorer.name})", disable=disable_tqdm) as bar:
            for start in range(0, len(items), step):
                batch = items[start:start + step]
                rewards.extend(self.scorer.score(batch))
                bar.update(len(batch))
        elapsed = time.perf_counter() - started
        if items and not disable_tqdm:
            print(f"prb-rm: scored {len(items)} responses in {elapsed:.2f}s "
                  f"({len(items) / 2 / max(elapsed, 1e-9):.1f} pairs/s)")
        return [(float(r), False) for r in rewards]

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError(
            "prb-rm scores responses; it has no rolling log-likelihood. Use it with the "
            "scalar tasks (personalized_rb_scalar, personalized_rb_sample_scalar)."
        )

    def generate_until(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError(
            "prb-rm is a scalar reward model and cannot generate text: run it on the "
            "scalar tasks (personalized_rb_scalar*, personalized_rb_sample_scalar), "
            "or use --model prb-judge for the judge tasks."
        )
