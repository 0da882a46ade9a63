"""A transcription, step for step, of how the two PersonalRewardBench authors compute their numbers, on
the hub copy as their loaders read it (pandas frames from the parquet shards), for the tests that check
prb's official protocols against it. Written from reading (not copied from):

- P-GenRM (``Tongyi-ConvAI/Qwen-Character`` @1de87a2, ``Character-GenRM``): ``pre_process/dataset.py``
  (``SynthesizeMeDataset``: concatenate every hub split, ``groupby('user_id')``, split on the ``split``
  column), ``utils.py`` (``get_full_train_val_rotate`` for ``test``, ``fewshot_formatter``,
  ``extract_content``), ``inference/vllm_batch_inference.py`` (``call_llm_and_prepare_data``,
  ``process_user_data_concurrently``, ``run_experiment``);
- SynthesizeMe (``SALT-NLP/SynthesizeMe`` @e91f340): ``personalrm/default_judge.py`` ``evaluate`` and
  ``predict_pairwise``.

What their code leaves to chance is a parameter here: P-GenRM's order of the two answers (shuffled from
72 threads sharing ``random``'s global stream) is ``order``; the replies are ``reply``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


def their_all_user_data(half_folder: Path) -> dict[Any, tuple[list, list, list]]:
    """``SynthesizeMeDataset.get_all_user_data()`` as P-GenRM loads a local copy: ``datasets.load_dataset``
    on the folder (``datasets``' own split order and rows), the listed columns removed where present, every
    split's frame concatenated, then grouped by user and split on the ``split`` column."""
    from datasets import load_dataset

    ds = load_dataset(str(half_folder))
    dropped = [c for c in DROPPED_COLUMNS if c in set(ds.column_names[next(iter(ds))])]
    if dropped:
        ds = ds.remove_columns(dropped)
    joint = pd.concat([ds[split].to_pandas() for split in ds.keys()])
    out = {}
    for user_id, group in joint.groupby("user_id"):
        out[user_id] = (group[group["split"] == "train"].to_dict(orient="records"),
                        group[group["split"] == "val"].to_dict(orient="records"),
                        group[group["split"] == "test"].to_dict(orient="records"))
    return out


#: The columns P-GenRM's loader removes where present (SynthesizeMe's also drops the two scores).
DROPPED_COLUMNS = ("dataset", "query_reasoning", "personalizable_query", "response_reasoning",
                   "personalizable_responses", "agreement", "prediction_meta-llama/Llama-3.3-70B-Instruct",
                   "reasoning_meta-llama/Llama-3.3-70B-Instruct")


def rotate_test(all_user_data: dict[Any, tuple[list, list, list]], n_examples: int = 6,
                seed: int = 42) -> dict[Any, list[dict[str, Any]]]:
    """``get_full_train_val_rotate(all_user_data, n_examples, 'test')`` with the global ``random``."""
    random.seed(seed)
    result = {}
    for user_id, (train_records, _val, test_records) in all_user_data.items():
        entries = []
        test_list, train_pool = list(test_records), list(train_records)
        if not test_list:
            continue
        for t in test_list:
            k = min(n_examples, len(train_pool))
            few = random.sample(train_pool, k) if k > 0 else []
            entries.append({"few_shot": few, "test_data": t})
        if entries:
            result[user_id] = entries
    return result


def fewshot_text(result: list[dict[str, Any]]) -> str:
    """``fewshot_formatter``."""
    out = ""
    for item in result:
        out += f"User: {item['context'][0]['content']}\n"
        out += f"Chosen: {item['chosen']['content']}\n"
        out += f"Rejected: {item['rejected']['content']}\n\n"
    return out


def _extract(response: str) -> str | None:
    try:
        start = response.index("<JSON_START>") + len("<JSON_START>")
        end = response.index("<JSON_END>")
        return response[start:end].strip()
    except ValueError:
        return None


def judge_one(reply: str | None, response_list: list[str], golden: str) -> bool | None:
    """The part of ``call_llm_and_prepare_data`` after the call: True / False, or None (dropped)."""
    if reply is None:  # request_local_vllm's {"error": ...}
        return None
    try:
        parsed = _extract(reply)
        if parsed is None:
            return None
        parsed = json.loads(parsed)
        scores = parsed.get("better_response", {})
        if not scores or len(scores) != 2:
            return None
        s1, s2 = scores.get("response_1", -1), scores.get("response_2", -1)
        if s1 == s2:
            return None
        return response_list[0 if s1 > s2 else 1] == golden
    except (KeyError, IndexError, TypeError, json.JSONDecodeError):
        return None
    except Exception:  # noqa: BLE001 - their thread pool reports any other error and skips the item
        return None


def pgenrm_run(half_folder: Path, order: Callable[[Any, dict], bool],
               reply: Callable[[list[str], dict], str | None]) -> dict[str, Any]:
    """One ``run_experiment``: per user, per test item, their selection, one order, their counting.

    Args:
        half_folder: the half's copy.
        order: ``(user, test row) -> chosen shown first``.
        reply: ``([response_1, response_2], test row) -> the judge's reply`` (None: HTTP error).

    Returns:
        ``selection`` (user -> [(test conversation, [history conversations])]), ``few_shots`` (the formatted
        histories in order), ``processed``, ``correct`` and ``accuracy`` (percent).
    """
    gft = rotate_test(their_all_user_data(half_folder))
    processed = correct = 0
    selection, texts = {}, []
    for user, entries in gft.items():
        selection[user] = []
        for entry in entries:
            test = entry["test_data"]
            try:
                chosen, rejected = test["chosen"]["content"], test["rejected"]["content"]
                test["context"][0]["content"]  # their user_input; raises on a context it cannot read
            except Exception:  # noqa: BLE001 - "Error submitting task": the item is skipped
                continue
            texts.append(fewshot_text(entry["few_shot"]))
            selection[user].append((test["conversation_id"], [f["conversation_id"] for f in entry["few_shot"]]))
            responses = [chosen, rejected] if order(user, test) else [rejected, chosen]
            outcome = judge_one(reply(responses, test), responses, chosen)
            if outcome is None:
                continue
            processed += 1
            correct += int(outcome)
    accuracy = correct / processed * 100 if processed else 0
    return {"selection": selection, "few_shots": texts, "processed": processed, "correct": correct,
            "accuracy": accuracy}


def synthesizeme_evaluate(first: list[int], reversed_: list[int]) -> dict[str, Any]:
    """``DefaultJudge.evaluate`` after its two passes.

    Args:
        first: ``predict_pairwise(context, chosen, rejected)`` per test pair (1 First, -1 Second, 0 tie).
        reversed_: ``predict_pairwise(context, rejected, chosen)`` per test pair.
    """
    from scipy.stats import bootstrap

    overall = first + [-1 * r for r in reversed_]
    overall = [max(0, r) for r in overall]
    # Their call draws a fresh seed each run; the transcription fixes it to compare bounds.
    ci = bootstrap((overall,), np.mean, confidence_level=0.95, method="basic", random_state=0)
    return {"mean": np.mean(overall), "lower_bound": ci.confidence_interval.low,
            "upper_bound": ci.confidence_interval.high, "results": overall}
