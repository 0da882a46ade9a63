"""The length baseline on a Community Alignment or PRISM copy in plain pandas, without prb.

What ``prb eval --model prb-rm --model_args scorer=length --tasks community_alignment_scalar``
(or ``prism_scalar``) computes, written from the data cards' rules and nothing of prb's code:
every turn with a preferred answer gives one pair per other non-empty answer (a different text;
the release's ``EMPTY STRING`` placeholder is no answer; Community Alignment's ``<|end_of_text|>``
token is no part of an answer), the longer answer (characters, stripped) wins, a tie is wrong.
A Community Alignment conversation ends at the first turn without a prompt or preference; a
PRISM turn gives pairs only with exactly one chosen answer. Prints one JSON line: pairs,
``acc``, ``tie_rate`` and ``acc_user`` (each person's accuracy, averaged over people)::

    python benchmarks/people_pandas_reference.py community_alignment /tmp/prb-people/community_alignment
    python benchmarks/people_pandas_reference.py prism /tmp/prb-people/prism

The size benchmark (``bench_real_people_size.py``) runs it beside ``prb eval`` and compares
their numbers and their CPU time. It reads a release's files as they are (no hostile-file checks).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

EMPTY = "EMPTY STRING"
END = "<|end_of_text|>"
TURNS = ("first", "second", "third", "fourth")
LETTERS = ("a", "b", "c", "d")


def community_pairs(folder: Path) -> pd.DataFrame:
    """One row per pair: ``user``, ``chosen`` and ``rejected`` lengths."""
    path = folder / "community_alignment.csv"
    if not path.is_file():
        path = folder / "data" / "filtered_community_alignment.csv"
    columns = ["annotator_id"] + [f"{t}_turn_{f}" for t in TURNS for f in ("prompt", "preferred_response",
                                                                             *(f"response_{x}" for x in LETTERS))]
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, usecols=lambda c: c in columns)
    going = pd.Series(True, index=frame.index)
    parts = []
    for turn in TURNS:
        if f"{turn}_turn_prompt" not in frame:
            break
        preferred = frame[f"{turn}_turn_preferred_response"].str.strip()
        going &= (frame[f"{turn}_turn_prompt"].str.strip() != "") & (preferred != "")
        letter = preferred.str.removeprefix("response_")
        texts = {x: frame[f"{turn}_turn_response_{x}"].str.replace(END, "", regex=False).str.strip() for x in LETTERS}
        texts = {x: t.where(t != EMPTY, "") for x, t in texts.items()}
        best = pd.Series("", index=frame.index)
        for x in LETTERS:
            best = best.where(letter != x, texts[x])
        going &= best != ""
        for x in LETTERS:
            keep = going & (letter != x) & (texts[x] != "") & (texts[x] != best)
            parts.append(pd.DataFrame({"user": frame["annotator_id"][keep], "chosen": best[keep].str.len(),
                                       "rejected": texts[x][keep].str.len()}))
    return pd.concat(parts, ignore_index=True)


def prism_pairs(folder: Path) -> pd.DataFrame:
    """One row per pair: ``user``, ``chosen`` and ``rejected`` lengths."""
    conversations = pd.read_json(folder / "conversations.jsonl", lines=True)
    history = conversations[["conversation_id", "user_id", "conversation_history"]].explode("conversation_history")
    entries = pd.json_normalize(history["conversation_history"].tolist())
    entries["conversation_id"] = history["conversation_id"].to_numpy()
    entries["user"] = history["user_id"].to_numpy()
    models = entries[entries["role"] == "model"].copy()
    models["text"] = models["content"].fillna("").astype(str).str.strip()
    models = models[(models["text"] != "") & (models["text"] != EMPTY)]
    models["chosen"] = models["if_chosen"].fillna(False).astype(bool)
    turn = ["conversation_id", "turn"]
    counts = models.groupby(turn)["chosen"].transform("sum")
    models = models[counts == 1]
    best = models[models["chosen"]][[*turn, "text"]].rename(columns={"text": "best"})
    others = models[~models["chosen"]].merge(best, on=turn)
    others = others[others["text"] != others["best"]]
    return pd.DataFrame({"user": others["user"], "chosen": others["best"].str.len(),
                         "rejected": others["text"].str.len()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("family", choices=("community_alignment", "prism"))
    parser.add_argument("folder", type=Path, help="the copy's folder, in its hub layout")
    args = parser.parse_args()
    pairs = (community_pairs if args.family == "community_alignment" else prism_pairs)(args.folder)
    correct = (pairs["chosen"] > pairs["rejected"]).astype(float)
    print(json.dumps({"pairs": len(pairs), "acc": correct.mean(),
                      "tie_rate": (pairs["chosen"] == pairs["rejected"]).mean(),
                      "acc_user": correct.groupby(pairs["user"]).mean().mean()}))


if __name__ == "__main__":
    main()
