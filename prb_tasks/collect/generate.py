"""``prb collect serve --generate MODEL_A,MODEL_B``: write the two answers of each prompt.

Each prompt goes to MODEL_A (exported as ``response_A``) and MODEL_B (``response_B``)
through prb-judge (:class:`prb_tasks.judge.model.JudgeLM`): the same litellm path,
retries, key handling and answer cache as judging, so running the command again sends
nothing new. A resumed collection reuses the answers it started with.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prb_tasks.collect.pairs import Pair, read_pairs, read_prompts
from prb_tasks.common.errors import PRBError
from prb_tasks.data.errors import DataError
from prb_tasks.documents.pairs import ASK_ONCE

# Two models at temperature 0 can write the same text; a little sampling keeps the
# pair comparable (the answers are cached, so the pair does not change on a rerun).
GENERATION = {"until": [], "max_gen_toks": 512, "temperature": 0.7}


@dataclass(frozen=True)
class _Request:
    """The two fields of an lm-eval request that :class:`JudgeLM` reads."""

    args: tuple[Any, ...]
    doc: dict[str, Any]
    task_name: str = "prb_collect_generate"


def parse_models(spec: str) -> tuple[str, str]:
    """``MODEL_A,MODEL_B`` as two litellm model names.

    Args:
        spec: the ``--generate`` value.
    """
    names = [s.strip() for s in spec.split(",")]
    if len(names) != 2 or not all(names):
        raise PRBError(f"prb collect: --generate {spec!r}: give two litellm models, e.g. "
                       "--generate openai/gpt-4o-mini,anthropic/claude-3-5-haiku-latest")
    return names[0], names[1]


def _answers(model: str, prompts: list[str], model_args: dict[str, Any]) -> list[str]:
    from prb_tasks.judge.model import JudgeLM

    lm = JudgeLM(**{**model_args, "model": model})
    lm.expects_verdicts = False  # these replies are answers to compare, not verdicts
    print(f"prb collect: writing {len(prompts)} answers with {model}", file=sys.stderr, flush=True)
    return lm.generate_until([_Request((p, dict(GENERATION)), {ASK_ONCE: True}) for p in prompts])


def generate_pairs(pairs_file: Path, spec: str, model_args_text: str, out: Path) -> list[Pair]:
    """The pairs of a prompts-only file, answered by two models.

    Args:
        pairs_file: ``.jsonl`` with a ``prompt`` (and optional ``id``) per line.
        spec: ``MODEL_A,MODEL_B``.
        model_args_text: prb-judge model arguments for both models (``api_base=...,max_tokens=...``).
        out: the collection's export file; a collection already started keeps its pairs.
    """
    from prb_tasks.collect.store import CollectStore, state_folder
    from prb_tasks.common.keyargs import KEY_SOURCE, refuse_key_arguments

    model_a, model_b = parse_models(spec)
    prompts = read_prompts(pairs_file)
    if (state_folder(out) / "session.json").is_file():
        stored = CollectStore.open(out).pairs
        if [(p.pair_id, p.prompt) for p in stored] == [(p.pair_id, p.prompt) for p in prompts]:
            return stored
    from lm_eval.utils import simple_parse_args_string

    model_args = simple_parse_args_string(model_args_text) if model_args_text else {}
    refuse_key_arguments(model_args, "prb collect: --model-args", KEY_SOURCE["prb-judge"])
    texts = [p.prompt for p in prompts]
    answers_a, answers_b = _answers(model_a, texts, model_args), _answers(model_b, texts, model_args)
    rows = []
    for prompt, a, b in zip(prompts, answers_a, answers_b):
        for model, text in ((model_a, a), (model_b, b)):
            if not text.strip():
                raise PRBError(f"prb collect: {model} gave no answer for prompt {prompt.pair_id!r} (see the usage "
                               "lines above); run again: answers already received are cached")
        if a.strip() == b.strip():
            raise PRBError(f"prb collect: {model_a} and {model_b} wrote the same answer to prompt {prompt.pair_id!r}; "
                           "use two different models, or sampling (temperature) that varies their answers")
        rows.append({"id": prompt.pair_id, "prompt": prompt.prompt, "response_A": a.strip(), "response_B": b.strip()})
    generated = state_folder(out).with_suffix(".pairs.jsonl")
    generated.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    try:
        return read_pairs(generated)
    except DataError as exc:  # e.g. both models wrote the same text
        raise PRBError(f"{exc} (the answers {model_a} and {model_b} wrote are in {generated})") from None
