"""An independent PersonalRewardBench copy in the hub layout, written for the breaker tests, and the
authors' computations transcribed from their scripts (not from prb's code).

Layout (as ``hf download`` writes it): ``<root>/<hub name>/data/<hub split>-00000-of-00001.parquet``
with the hub splits ``train``, ``validation`` and ``test`` (the Chatbot Arena half's viewer lists those three).
Columns as the rows show them in SynthesizeMe's ``examples/prism.ipynb``: ``conversation_id``, ``user_id``,
``context`` (a list of role/content turns), ``chosen`` / ``rejected`` (one role/content turn, role ``model``),
``split`` (train / val / test), ``flip``, and the columns the authors' loaders drop.

Quirks: numeric user ids in the Arena half (int64) and ``user<N>`` ids in the PRISM half (``user10`` sorts
before ``user9``), each user's rows scattered over the three hub splits, users with more than 6 train pairs,
with 1 pair, with no train pair, with no test pair, a duplicated row, an answer that is empty, a pair whose
two answers are the same text, multi-turn contexts, non-English and emoji text, a long answer, a row of
another ``split`` value.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

ARENA = "chatbot_arena_personalized_0125"
PRISM = "prism_personalized_0125"
HUB_SPLITS = ("train", "validation", "test")

_WORDS = ("tide", "kiln", "orbit", "fern", "quartz", "harbor", "violin", "lantern", "mosaic", "glacier")
_FOREIGN = ("Wie backe ich Roggenbrot?", "¿Por qué el cielo es azul?", "東京でおすすめの公園は？",
            "Расскажи про Байкал.", "ما هي عاصمة المغرب؟ 🌍", "Peux-tu résumer « Candide » ?")


def _turn(role: str, text: str) -> dict[str, str]:
    return {"role": role, "content": text}


def _answer(rng: random.Random, long: bool) -> str:
    n = rng.randint(18, 30) if long else rng.randint(2, 6)
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _row(rng: random.Random, uid: Any, n: int, split: str, likes_long: bool) -> dict[str, Any]:
    question = _FOREIGN[n % len(_FOREIGN)] if n % 3 == 2 else f"Q{n} from {uid}: tell me about {rng.choice(_WORDS)}"
    context = [_turn("user", question)]
    if n % 4 == 1:
        context = [_turn("user", f"opening {n} of {uid}"), _turn("model", "ok, go on"), _turn("user", question)]
    chosen, rejected = _answer(rng, likes_long), _answer(rng, not likes_long)
    if n % 5 == 4:  # the user goes against habit now and then
        chosen, rejected = rejected, chosen
    return {"conversation_id": f"c{uid}-{n}", "user_id": uid, "context": context,
            "chosen": _turn("model", chosen), "rejected": _turn("model", rejected), "split": split,
            "flip": bool(rng.random() < 0.5), "chosen_score": float(rng.randint(60, 100)),
            "rejected_score": float(rng.randint(1, 59)), "dataset": "x", "agreement": 0.5,
            "query_reasoning": "q", "personalizable_query": True,
            "prediction_meta-llama/Llama-3.3-70B-Instruct": "First",
            "reasoning_meta-llama/Llama-3.3-70B-Instruct": "because"}


def half_rows(half: str, seed: int = 7, hub_splits: tuple[str, ...] = HUB_SPLITS) -> list[dict[str, Any]]:
    """Every row of one half, in no particular order (each has a ``_hub`` key: its hub split)."""
    rng = random.Random(f"{half}-{seed}")
    numbers = [9, 10, 2, 100, 33, 4, 58, 7]  # as text, user10 sorts before user9; as numbers, 9 before 10
    uid = (lambda i: numbers[i] * 3) if half == "arena" else (lambda i: f"user{numbers[i]}")
    plans = [(9, 2, 4), (7, 1, 3), (3, 0, 2), (0, 1, 2), (1, 0, 0), (0, 0, 1), (12, 3, 3), (2, 2, 1)]
    rows: list[dict[str, Any]] = []
    for i, (n_train, n_val, n_test) in enumerate(plans):
        n = 0
        for split, count in (("train", n_train), ("val", n_val), ("test", n_test)):
            for _ in range(count):
                row = _row(rng, uid(i), n, split, likes_long=i % 2 == 0)
                row["_hub"] = hub_splits[rng.randrange(len(hub_splits))]
                rows.append(row)
                n += 1
    first = rows[0]
    rows.append({**first, "_hub": hub_splits[-1]})  # the same train row twice
    same = next(r for r in rows if r["split"] == "test")
    same["rejected"] = dict(same["chosen"])  # two answers with one text
    empty = [r for r in rows if r["split"] == "test"][3]
    empty["chosen"] = _turn("model", "")  # an empty answer
    longest = [r for r in rows if r["split"] == "train"][5]
    longest["chosen"] = _turn("model", "lorem ipsum 🙂 " * 400)
    rows.append({**rows[1], "split": "unused", "_hub": hub_splits[1 % len(hub_splits)]})
    return rows


def write_copy(root: Path, seed: int = 7, hub_splits: tuple[str, ...] = HUB_SPLITS) -> Path:
    """Write both halves under ``root`` in the hub layout (plus each half's README.md); returns ``root``.

    ``hub_splits``: the hub splits the rows are spread over (the real halves have train, validation, test).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    for half, name in (("arena", ARENA), ("prism", PRISM)):
        rows = half_rows(half, seed, hub_splits)
        folder = root / name / "data"
        folder.mkdir(parents=True, exist_ok=True)
        (root / name / "README.md").write_text("---\nlicense: mit\n---\n", encoding="utf-8")
        for hub in hub_splits:
            part = [{k: v for k, v in r.items() if k != "_hub"} for r in rows if r["_hub"] == hub]
            pq.write_table(pa.Table.from_pylist(part), folder / f"{hub}-00000-of-00001.parquet")
    return root


# ---- the authors' computations, transcribed from their scripts ----------------------------------------


def authors_user_data(half_dir: Path) -> dict[Any, tuple[list[dict], list[dict], list[dict]]]:
    """Both authors' loaders: ``load_dataset`` on the folder, every split concatenated, ``groupby('user_id')``."""
    import pandas as pd
    from datasets import load_dataset

    ds = load_dataset(str(half_dir))
    joint = pd.concat([ds[split].to_pandas() for split in ds.keys()])
    return {uid: (g[g["split"] == "train"].to_dict(orient="records"), g[g["split"] == "val"].to_dict(orient="records"),
                  g[g["split"] == "test"].to_dict(orient="records")) for uid, g in joint.groupby("user_id")}


def pgenrm_rotate(all_user_data: dict, n_examples: int = 6, seed: int = 42) -> list[tuple[Any, dict, list[dict]]]:
    """P-GenRM's ``get_full_train_val_rotate(..., 'test')``, flattened to (user, test item, few-shot) in their order."""
    random.seed(seed)
    out = []
    for uid, (train, _val, test) in all_user_data.items():
        if not list(test):
            continue
        pool = list(train)
        for t in test:
            k = min(n_examples, len(pool))
            out.append((uid, t, random.sample(pool, k) if k > 0 else []))
    return out


def pgenrm_fewshots(items: list[dict]) -> str:
    """P-GenRM's ``fewshot_formatter``."""
    return "".join(f"User: {i['context'][0]['content']}\nChosen: {i['chosen']['content']}\n"
                   f"Rejected: {i['rejected']['content']}\n\n" for i in items)


def pgenrm_judge(reply: str | None, response_list: list[str], golden: str) -> bool | None:
    """P-GenRM's parse of one reply (``call_llm_and_prepare_data`` after the call): True / False, or None
    where their script drops the item (an exception their thread pool swallows counts as dropped)."""
    if reply is None:
        return None
    try:
        try:
            start = reply.index("<JSON_START>") + len("<JSON_START>")
            body = reply[start:reply.index("<JSON_END>")].strip()
        except ValueError:
            return None
        parsed = json.loads(body)
        scores = parsed.get("better_response", {})
        if not scores or len(scores) != 2:
            return None
        s1, s2 = scores.get("response_1", -1), scores.get("response_2", -1)
        if s1 == s2:
            return None
        return response_list[0 if s1 > s2 else 1] == golden
    except (KeyError, IndexError, TypeError, json.JSONDecodeError, AttributeError):
        return None
