"""``prb-rm``: scalar reward models and baselines as an lm-eval model.

The scalar tasks are ``multiple_choice`` over ``[chosen, rejected]``; lm-eval asks for
a "log-likelihood" of each choice, and we answer with the reward instead, so the
task's ``process_results`` compares the two rewards.

This class does what every scorer shares: validating arguments, the score cache
(look up first, score only what is missing, store each score as soon as it exists),
the progress bar and the closing throughput line.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from lm_eval.api.model import LM
from tqdm import tqdm

from prb_tasks.rm.distributed import join, launched
from prb_tasks.rm.errors import RMError, ServedRMError
from prb_tasks.rm.factory import build_scorer
from prb_tasks.rm.inputs import RMInput, from_request, reads_document
from prb_tasks.rm.options import HARNESS_KEYS, RMOptions, parse_options
from prb_tasks.rm.score_cache import ScoreCache, score_key


def _merge_harness(args: dict[str, Any], harness: dict[str, Any] | None) -> tuple[dict[str, Any], bool]:
    # lm-eval passes --batch_size/--device (with defaults "1" and "cuda:0") next to
    # --model_args; a key in both would be a duplicate keyword. What the user wrote
    # in --model_args wins; a harness device is marked so that its default can fall
    # back to the CPU on machines without CUDA.
    merged = dict(args)
    device_from_harness = False
    for key, value in (harness or {}).items():
        if value is None or key in merged:
            continue
        if key == "batch_size" and str(value) == "1":
            # lm-eval's default when --batch_size is not given; it cannot be told
            # apart from an explicit 1, and batching never changes scores here, so
            # our own default applies (batch_size=1 in --model_args forces 1).
            continue
        merged[key] = value
        device_from_harness = device_from_harness or key == "device"
    return merged, device_from_harness


class RewardModelLM(LM):
    """Scores each response with a scalar reward.

    Args:
        _device_from_harness: internal; set when ``device`` is lm-eval's default.
        **kwargs: model arguments, see :class:`~prb_tasks.rm.options.RMOptions`.
    """

    def __init__(self, _device_from_harness: bool = False, **kwargs: Any) -> None:
        super().__init__()
        self.options: RMOptions = parse_options(kwargs)
        if self.options.protocol == "official" and launched():
            # The authors score batches of 8 in dataset order, and a bfloat16 score depends
            # on its batch-mates; strided shares would change the batches and the numbers.
            raise RMError("prb-rm: protocol=official reproduces the authors' batches of 8 in dataset order, "
                          "which a data-parallel run splits; run it in one process (without accelerate launch)")
        # Under ``accelerate launch``: lm-eval gives each process its share of the
        # documents by our rank and world size, and gathers the results on rank 0.
        self.ranks = join()
        if self.ranks is not None:
            self._rank, self._world_size, self._device = self.ranks.rank, self.ranks.world_size, self.ranks.device
            if self.options.device == "auto" or _device_from_harness:
                # One device per process: the one accelerate assigned (cuda:<local rank>, or the CPU).
                self.options = self.options.model_copy(update={"device": str(self.ranks.device)})
                _device_from_harness = False
        self.scorer = build_scorer(self.options, device_from_harness=_device_from_harness)
        self.cache: ScoreCache | None = None
        if self.options.cache and self.scorer.identity is not None:
            self.cache = ScoreCache(self.options.resolved_cache_dir())

    def all_gather(self, tensor: Any) -> Any:
        """Gather ``tensor`` from every rank (itself when running alone)."""
        return tensor if self.ranks is None else self.ranks.all_gather(tensor)

    def gather_object(self, obj: Any, dst: int = 0) -> Any:
        """Gather ``obj`` from every rank on rank ``dst`` (a one-item list when alone)."""
        return [obj] if self.ranks is None else self.ranks.gather_object(obj, dst)

    def barrier(self) -> None:
        """Wait for every rank (nothing to wait for when alone)."""
        if self.ranks is not None:
            self.ranks.barrier()

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict | None = None) -> RewardModelLM:
        """The backend from lm-eval's ``--model_args`` string."""
        from lm_eval.utils import simple_parse_args_string

        return cls.create_from_arg_obj(simple_parse_args_string(arg_string), additional_config)

    @classmethod
    def create_from_arg_obj(cls, arg_dict: dict[str, Any], additional_config: dict | None = None) -> RewardModelLM:
        """The backend from parsed ``--model_args``, with lm-eval's ``batch_size`` and ``device`` merged in."""
        merged, device_from_harness = _merge_harness(
            arg_dict, {k: v for k, v in (additional_config or {}).items() if k in HARNESS_KEYS}
        )
        return cls(_device_from_harness=device_from_harness, **merged)

    def rewards(self, items: list[RMInput], disable_tqdm: bool = False, documents: int | None = None) -> list[float]:
        """Rewards for ``items`` in order, from the cache where possible.

        Args:
            items: responses to score.
            disable_tqdm: hide the progress bar and the closing summary.
            documents: how many task documents the responses answer (a pair has two
                responses, a best-of-N group N); None counts them as pairs.
        """
        started = time.perf_counter()
        scorer = self.scorer
        scorer.check(items)
        results: list[float | None] = [None] * len(items)
        plan = scorer.fixed_batches(items)
        keys: list[str] | None = None
        if scorer.identity is not None:
            keys = self._keys(items, plan)
        if self.cache is not None and keys is not None:
            for n, value in enumerate(self.cache.get_many(keys)):
                results[n] = value

        # ``targets[n]``: every position that receives the score computed for item n; None: n alone, for every n
        # (nothing cached and no key to find an input twice: a list per response would cost more than scoring).
        targets: dict[int, list[int]] | None = {}
        chunks: list[list[int]] = []
        if plan is None and keys is None:
            targets = None
            todo = [n for n, value in enumerate(results) if value is None]
            chunks = [todo] if todo else []
        elif plan is not None:
            assert targets is not None
            # Scores depend on batch-mates: a batch is reused from the cache only whole,
            # otherwise scored again as it is.
            chunks = [batch for batch in plan if any(results[n] is None for n in batch)]
            for n in (n for batch in chunks for n in batch):
                results[n] = None
                targets[n] = [n]
        else:
            assert targets is not None
            # Identical inputs (the same pair in two tasks) are scored once.
            todo = []
            first_of: dict[str, int] = {}
            for n, value in enumerate(results):
                if value is not None:
                    continue
                if keys is not None and keys[n] in first_of:
                    targets[first_of[keys[n]]].append(n)
                    continue
                if keys is not None:
                    first_of[keys[n]] = n
                targets[n] = [n]
                todo.append(n)
            chunks = [todo] if todo else []
        hits = sum(r is not None for r in results)

        bar = tqdm(total=len(items), initial=hits, desc=f"prb-rm ({scorer.name})", unit="resp",
                   disable=disable_tqdm, file=sys.stderr)
        fresh = 0

        def reporter(chunk: list[int]):  # returns a scorers.base.Report
            def report(positions, scores) -> None:  # see scorers.base.Report
                nonlocal fresh
                stored: list[tuple[str, float]] = []
                done = 0
                for position, score in zip(positions, scores):
                    n = chunk[position]
                    if targets is None:
                        results[n] = float(score)
                        done += 1
                        continue
                    for target in targets[n]:
                        results[target] = float(score)
                    done += len(targets[n])
                    if keys is not None:
                        stored.append((keys[n], float(score)))
                fresh += len(stored) if keys is not None else done
                if self.cache is not None and stored:
                    self.cache.put_many(stored)
                bar.update(done)
            return report

        scoring_started = time.perf_counter()
        try:
            for chunk in chunks:
                report = reporter(chunk)
                returned = scorer.score([items[n] for n in chunk], report)
                for position, score in enumerate(returned):
                    if results[chunk[position]] is None:  # a scorer that did not report
                        report([position], [score])
        except ServedRMError as exc:
            if self.cache is not None:
                raise ServedRMError(f"{exc} ({fresh} scores from this run are cached in "
                                    f"{self.cache.directory}; re-run to resume)") from None
            raise
        except KeyboardInterrupt:
            bar.close()
            # The message is what `prb eval` prints for Ctrl-C.
            done = sum(r is not None for r in results)
            if self.cache is not None:
                raise KeyboardInterrupt(
                    f"prb-rm: interrupted (Ctrl-C); {done} of {len(items)} responses are scored and kept in "
                    f"the score cache ({self.cache.directory}): re-run the same command to resume"
                ) from None
            why = "the score cache is off (cache=off)" if scorer.identity is not None else "this scorer is not cached"
            raise KeyboardInterrupt(
                f"prb-rm: interrupted (Ctrl-C) after {done} of {len(items)} responses; {why}, "
                "so a re-run starts again"
            ) from None
        finally:
            bar.close()
        if items and not disable_tqdm:
            self._summary(len(items), hits, fresh, time.perf_counter() - started,
                          time.perf_counter() - scoring_started, documents)
        return [float(r) for r in results]  # type: ignore[arg-type]

    def _keys(self, items: list[RMInput], plan: list[list[int]] | None) -> list[str]:
        """Cache keys: the scorer's identity and the exact input.

        For a scorer with fixed batches, also the whole batch and the slot in it.
        """
        identity = self.scorer.identity
        assert identity is not None
        # Each input is formatted as its key is made, not all first: the texts of a whole run grow with the data.
        formatted = self.scorer.formatted
        if plan is None:
            return [score_key(identity, formatted(item)) for item in items]
        keys = [""] * len(items)
        for batch in plan:
            mates = [formatted(items[n]) for n in batch]
            for slot, n in enumerate(batch):
                keys[n] = score_key(identity, json.dumps({"batch": mates, "slot": slot}, ensure_ascii=False))
        return keys

    def _summary(self, total: int, hits: int, fresh: int, elapsed: float, scoring: float,
                 documents: int | None) -> None:
        where = f", process {self.rank + 1} of {self.world_size}" if self.world_size > 1 else ""
        # Rates per pair when every document is a pair; a best-of-N group is not two
        # responses, so runs that include groups count documents instead.
        per = 2.0 if documents is None or 2 * documents == total else total / max(documents, 1)
        unit = "pairs" if per == 2.0 else "documents"
        line = (f"prb-rm ({self.scorer.name}{where}): {total} responses ({total / per:g} {unit}) in {elapsed:.2f} s, "
                f"{total / per / max(elapsed, 1e-9):.1f} {unit}/s")
        if hits:
            line += f"; {hits} from the score cache"
        if fresh and hits:
            line += f", {fresh} scored at {fresh / per / max(scoring, 1e-9):.1f} {unit}/s"
        print(line, file=sys.stderr)
        for note in self.scorer.notes():
            print(f"prb-rm: {note}", file=sys.stderr)
        if self.cache is not None and self.cache.refused:
            print(f"prb-rm: ignored {self.cache.refused} score-cache entries that were not plain JSON numbers",
                  file=sys.stderr)

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        """One reward per request (the response's score), in the requests' order."""
        items = _inputs(requests)
        documents = len({(getattr(r, "task_name", None), getattr(r, "doc_id", None)) for r in requests})
        return [(reward, False) for reward in self.rewards(items, disable_tqdm=disable_tqdm, documents=documents)]

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        """Refused with one line naming the scalar tasks: a reward model has no rolling log-likelihood."""
        raise RMError(
            "prb-rm scores responses; it has no rolling log-likelihood. Use it with the "
            "scalar tasks (personalized_rb_scalar, personalized_rb_sample_scalar)."
        )

    def generate_until(self, requests, disable_tqdm: bool = False):
        """Refused with one line naming the tasks to run instead: a reward model cannot generate text."""
        raise RMError(
            "prb-rm is a scalar reward model and cannot generate text: run it on the "
            "scalar tasks (personalized_rb_scalar*, personalized_rb_sample_scalar, rewardbench2, rmbench), "
            "or use --model prb-judge for the judge tasks (rewardbench2_judge and rmbench_judge among them)."
        )


def _inputs(requests: list[Any]) -> list[RMInput]:
    """``from_request`` of each request.

    A document's later answers (lm-eval asks for a pair's two answers one after the other) reuse what
    its first answer's input took from the document.
    """
    items: list[RMInput] = []
    last_doc: Any = None
    last: RMInput | None = None  # the input of last_doc's previous answer, when built from the document
    for r in requests:
        doc: Any = getattr(r, "doc", None)
        idx = getattr(r, "idx", 0)
        group = getattr(r, "task_name", None)
        if last is not None and doc is last_doc and 0 <= idx < len(doc["choices"]):
            items.append(RMInput(last.prompt, doc["choices"][idx], last.profile_key, last.question, group,
                                 last.user_id))
            continue
        item = from_request(doc, r.args[0], r.args[1], idx, group)
        items.append(item)
        last_doc = doc
        last = item if reads_document(doc, idx) else None
    return items
