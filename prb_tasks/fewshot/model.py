"""``prb-method``: run a personalization method as an lm-eval model.

The few-shot ``*_fewshot`` tasks are ``multiple_choice`` over ``[chosen, rejected]``;
lm-eval asks for a "log-likelihood" of each choice and we answer with the method's
reward for the document's user after adapting to its k support pairs. The method is
named by ``--model_args method=NAME``; ``method_time_limit=SECONDS`` bounds ``learn`` and
each user's adaptation and scoring at one k; every other model argument is the method's
own option (``rank=2``). Which pairs are support and which are queries comes from the
document's ``split_key`` (:mod:`prb_tasks.fewshot.sources`), never from the text.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from typing import Any

from lm_eval.api.model import LM
from tqdm import tqdm

from prb_tasks.fewshot import registry
from prb_tasks.fewshot.evaluate import Session
from prb_tasks.fewshot.linear import MissingFeatures
from prb_tasks.fewshot.sources import lookup

# lm-eval hands these to every backend; a method takes none of them.
_HARNESS_KEYS = ("batch_size", "max_batch_size", "device")


def _time_limit(value: Any) -> float | None:
    """``method_time_limit`` as seconds (None: no limit); one line when it is not a positive number."""
    if value is None or str(value).strip() == "":
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not (seconds > 0 and seconds != float("inf")):
        raise registry.MethodError(f"prb-method: method_time_limit={value}: give seconds, a number above 0 "
                                   "(e.g. method_time_limit=600)")
    return seconds


class MethodLM(LM):
    """Scores each query response with a personalization method.

    Args:
        method: the method's name (a shipped baseline or an entry point).
        method_time_limit: seconds ``learn``, and each user's ``adapt`` plus the scoring
            of its queries at one k, may take before the run stops with one line (exit 2);
            none by default.
        **options: the method's own options.
    """

    def __init__(self, method: str | None = None, method_time_limit: Any = None, **options: Any) -> None:
        super().__init__()
        if not method:
            raise registry.MethodError(f"prb-method: give --model_args method=NAME; available: "
                                       f"{', '.join(registry.available())}")
        self.time_limit = _time_limit(method_time_limit)
        self.method_name = str(method)
        self.options = options
        registry.build(self.method_name, options)  # fail before any data loads
        self.sessions: dict[str, Session] = {}

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict | None = None) -> MethodLM:
        """The backend from lm-eval's ``--model_args`` string (``method=NAME,option=value``)."""
        from lm_eval.utils import simple_parse_args_string

        return cls.create_from_arg_obj(simple_parse_args_string(arg_string), additional_config)

    @classmethod
    def create_from_arg_obj(cls, arg_dict: dict[str, Any], additional_config: dict | None = None) -> MethodLM:
        """The backend from parsed ``--model_args``.

        The keys lm-eval adds to every model are dropped unless the method takes them.
        """
        # A harness key the method itself takes (the trained method's device=cuda) is its option,
        # not the harness's: keep it (dropping it ran a GPU request on the CPU without a word).
        takes: set[str] = set()
        if arg_dict.get("method"):
            import inspect

            try:
                takes = set(inspect.signature(registry.resolve(str(arg_dict["method"]))).parameters)
            except registry.MethodError:  # an unknown method: __init__ says so in one line
                pass
        return cls(**{k: v for k, v in arg_dict.items() if k not in _HARNESS_KEYS or k in takes})

    def _session(self, key: str) -> Session:
        if key not in self.sessions:
            # Messages name the method as the user did: a class's ``name`` may be a base's (``base``).
            self.sessions[key] = Session(registry.build(self.method_name, self.options), lookup(key), self.time_limit,
                                         label=self.method_name)
        return self.sessions[key]

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        """Score each few-shot request: the method adapts to each (user, k) once, then scores its responses."""
        started = time.perf_counter()
        # (split, user, k) -> request positions, so each user is adapted to once per k.
        groups: dict[tuple[str, str, int], list[int]] = defaultdict(list)
        for n, request in enumerate(requests):
            doc = getattr(request, "doc", None)
            if not isinstance(doc, dict) or "split_key" not in doc:
                raise registry.MethodError("prb-method runs the few-shot tasks only (personalllm_fewshot, "
                                           "personalized_custom_fewshot); use prb-rm or prb-judge for the others")
            groups[(doc["split_key"], str(doc["user_id"]), int(doc["k"]))].append(n)
        results: list[tuple[float, bool]] = [(0.0, False)] * len(requests)
        bar = tqdm(total=len(requests), desc=f"prb-method ({self.method_name})", unit="resp",
                   disable=disable_tqdm, file=sys.stderr)
        try:
            for (key, user, k), positions in sorted(groups.items(), key=lambda g: (g[0][0], g[0][2], g[0][1])):
                keys = [requests[n].doc["query_key"] for n in positions]
                for n, (chosen, rejected) in zip(positions, self._session(key).scores(user, k, keys)):
                    results[n] = (chosen if getattr(requests[n], "idx", 0) == 0 else rejected, False)
                bar.update(len(positions))
        except registry.MethodError:
            raise  # already one line naming the method, the call and the user
        except (MissingFeatures, ValueError) as exc:
            raise registry.MethodError(f"prb-method ({self.method_name}): {exc}") from None
        finally:
            bar.close()
        if not disable_tqdm:
            print(f"prb-method ({self.method_name}): {len(requests)} responses, {len(groups)} (user, k) "
                  f"adaptations in {time.perf_counter() - started:.2f} s", file=sys.stderr)
        return results

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        """Refused with one line: a method scores responses for a user."""
        raise registry.MethodError("prb-method scores responses for a user; run it on the *_fewshot tasks")

    def generate_until(self, requests, disable_tqdm: bool = False):
        """Refused with one line naming the tasks to run instead: a method cannot generate text."""
        raise registry.MethodError("prb-method scores responses and cannot generate text: run it on "
                                   "personalllm_fewshot or personalized_custom_fewshot, or use --model prb-judge "
                                   "on the *_fewshot_judge tasks")
