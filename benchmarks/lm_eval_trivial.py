"""lm-eval's own cost per pair: a two-choice task of trivial documents and a model that does nothing.

The task has the shape of prb's scalar tasks of real people (``multiple_choice`` over
``[chosen, rejected]``, the target 0, ``process_results`` giving ``acc``, ``tie_rate`` and a
per-user ``acc_user`` averaged over users) but its documents are four short fields made in one
list comprehension and its model answers each request with the continuation's length. What a run
costs above lm-eval's start-up is lm-eval's handling of the pairs (documents checked, contexts,
two ``Instance`` requests per pair, filters, ``process_results``, aggregation): what any task
with that many pairs costs in lm-eval, whoever builds its documents::

    python benchmarks/lm_eval_trivial.py 189234      # prints {"pairs": ..., "acc": ...}

The size benchmark (``bench_real_people_size.py``) runs it beside ``prb eval`` at the same
number of pairs and at one pair, to split a pair's CPU into lm-eval's part and prb's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

TASK = """task: trivial_pairs
custom_dataset: !function utils.load
test_split: test
output_type: multiple_choice
doc_to_text: question
doc_to_choice: choices
doc_to_target: 0
target_delimiter: " "
process_results: !function utils.process
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_user
    aggregation: !function utils.mean_over_users
    higher_is_better: true
  - metric: tie_rate
    aggregation: mean
    higher_is_better: false
metadata:
  version: 1.0
"""

UTILS = '''
import os
from collections import defaultdict


class Docs(list):
    # lm-eval asks a split for its field names (a datasets.Dataset has them).
    @property
    def features(self):
        return dict.fromkeys(self[0]) if self else {}


def load(**kwargs):
    pairs = int(os.environ["TRIVIAL_PAIRS"])
    return {"test": Docs({"question": "q", "choices": ["aa" if i % 2 else "a", "b"], "user_id": str(i % 1000)}
                    for i in range(pairs))}


def process(doc, results):
    chosen, rejected = (float(r[0]) for r in results[:2])
    return {"acc": int(chosen > rejected), "tie_rate": int(chosen == rejected),
            "acc_user": (doc["user_id"], int(chosen > rejected))}


def mean_over_users(items):
    by_user = defaultdict(list)
    for user, value in items:
        by_user[user].append(value)
    return sum(sum(v) / len(v) for v in by_user.values()) / len(by_user)
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pairs", type=int)
    args = parser.parse_args()
    import os

    import lm_eval
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager

    class Length(LM):  # type: ignore[misc]
        """Each request's log-likelihood is its continuation's length: no model work at all."""

        def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
            return [(float(len(r.args[1].strip())), False) for r in requests]

        def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
            raise NotImplementedError

        def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
            raise NotImplementedError

    os.environ["TRIVIAL_PAIRS"] = str(args.pairs)
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "trivial_pairs.yaml").write_text(TASK)
        (Path(folder) / "utils.py").write_text(UTILS)
        sys.path.insert(0, folder)
        results = lm_eval.simple_evaluate(model=Length(), tasks=["trivial_pairs"], log_samples=False,
                                          task_manager=TaskManager(include_path=folder, include_defaults=False),
                                          bootstrap_iters=100000)
    assert results is not None
    scores = results["results"]["trivial_pairs"]
    print(json.dumps({"pairs": args.pairs, "acc": scores["acc,none"], "acc_user": scores["acc_user,none"],
                      "tie_rate": scores["tie_rate,none"]}))


if __name__ == "__main__":
    main()
