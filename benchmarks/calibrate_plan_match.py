"""Calibrate the similarity threshold of the plan-quality metric on the bundled sample.

A plan aspect "matches" a gold rubric aspect when their all-MiniLM-L6-v2 cosine
similarity reaches a threshold (``prb_tasks.replies.plans.MATCH_THRESHOLD``). To pick
it, every gold aspect of the bundled sample has a hand-written, planner-style rewording
(``benchmarks/data/plan_paraphrases.json``, written for this project), and we ask, for
each candidate threshold:

- true match rate: a rewording matches its own aspect;
- same-user false match rate: a rewording matches *another* aspect of the same user
  (the hard case: same topic, different expectation);
- other-user false match rate: a rewording matches an aspect of another user of the
  same subset;
- and, at plan level, the recall of a perfect plan (all rewordings), of a plan that
  leaves one aspect out (recall of the left-out aspect should be 0), and of another
  user's plan (should be 0).

Run: ``python benchmarks/calibrate_plan_match.py`` (needs the ``embed`` extra).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from prb_tasks.data.personalized_rb.sources import load_rows
from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.replies.plans import MATCH_THRESHOLD, match_counts
from prb_tasks.text.encoder import shared_encoder

PARAPHRASES = Path(__file__).resolve().parent / "data" / "plan_paraphrases.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thresholds", default="0.30,0.35,0.40,0.45,0.50,0.55,0.60,0.65,0.70")
    args = parser.parse_args()
    thresholds = [float(t) for t in args.thresholds.split(",")]
    rewordings = json.loads(PARAPHRASES.read_text(encoding="utf-8"))

    rows = [(s.short, row) for s in SUBSETS for row in load_rows(s, "sample")]
    gold = [[a.aspect for a in row.rubric_aspects] for _, row in rows]
    plans = [rewordings[row.id] for _, row in rows]
    for (_, row), g, p in zip(rows, gold, plans):
        assert len(g) == len(p), f"{row.id}: {len(p)} rewordings for {len(g)} aspects"
    encoder = shared_encoder()
    texts = sorted({t for items in gold + plans for t in items})
    vectors = dict(zip(texts, encoder.encode(texts, normalize=True)))

    def sims(a: list[str], b: list[str]) -> np.ndarray:
        return np.stack([vectors[t] for t in a]) @ np.stack([vectors[t] for t in b]).T

    own = [sims(p, g) for p, g in zip(plans, gold)]
    positives = np.concatenate([np.diag(m) for m in own])
    same_user = np.concatenate([m[~np.eye(len(m), dtype=bool)] for m in own])
    others = np.concatenate([
        sims(plans[i], gold[j]).ravel()
        for i, (si, _) in enumerate(rows) for j, (sj, _) in enumerate(rows) if i != j and si == sj
    ])
    print(f"{len(rows)} users, {len(positives)} aspects; cosine similarity quantiles (10/50/90%):")
    for name, values in (("rewording vs its aspect", positives), ("vs other aspects, same user", same_user),
                         ("vs aspects of other users", others)):
        q = np.quantile(values, [0.1, 0.5, 0.9])
        print(f"  {name:30s} {q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f}   (n={len(values)})")
    auc = float((positives[:, None] > same_user[None, :]).mean())
    print(f"  AUC rewording vs same-user other aspect: {auc:.3f}")

    print("\n| threshold | true match | false match, same user | false match, other users |"
          " recall, perfect plan | recall of left-out aspect | recall, other user's plan |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    separation: dict[float, float] = {}
    for t in thresholds:
        perfect = np.mean([match_counts(m, t)[0] / m.shape[1] for m in own])
        left_out = []
        for m in own:
            for j in range(m.shape[1]):
                rest = np.delete(m, j, axis=0)
                left_out.append(float(rest.size and (rest[:, j] >= t).any()))
        wrong = []
        for i, (si, _) in enumerate(rows):
            j = next(k for k in range(i + 1, i + len(rows)) if rows[k % len(rows)][0] == si)
            m = sims(plans[j % len(rows)], gold[i])
            wrong.append(match_counts(m, t)[0] / m.shape[1])
        separation[t] = float(perfect - np.mean(left_out))
        mark = "  <- MATCH_THRESHOLD" if abs(t - MATCH_THRESHOLD) < 1e-9 else ""
        print(f"| {t:.2f} | {np.mean(positives >= t):.2f} | {np.mean(same_user >= t):.3f} | "
              f"{np.mean(others >= t):.3f} | {perfect:.2f} | {np.mean(left_out):.2f} | {np.mean(wrong):.2f} |{mark}")

    best = max(separation, key=lambda t: separation[t])
    print(f"\nbest separation (recall of a perfect plan minus recall of a left-out aspect): "
          f"{separation[best]:.2f} at threshold {best:.2f}; MATCH_THRESHOLD is {MATCH_THRESHOLD}")


if __name__ == "__main__":
    main()
