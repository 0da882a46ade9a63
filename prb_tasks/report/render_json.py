"""``report.json``: the report as data for other tools (no per-pair texts)."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from prb_tasks.report.build import Report
from prb_tasks.report.pairwise import ALPHA, CORRECTION
from prb_tasks.report.peruser import PerUser
from prb_tasks.stats.clusters import EXACT_USERS, SIGN_FLIPS
from prb_tasks.stats.pairs import ITERS, LEVEL, SEED


def plain(obj: Any) -> Any:
    """Dataclasses, tuples and NaN turned into JSON values (NaN -> null)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, float) and math.isnan(obj):
        return None
    return obj


def per_user_data(block: PerUser | None) -> dict[str, Any] | None:
    """The per-user blocks with how each number was resampled (None: the data names no users)."""
    if block is None:
        return None
    data = plain(block)
    # What each number resampled, beside it (the dataclasses carry it as a property).
    for row, model in zip(data["spreads"], block.spreads):
        row["spread"]["resampled"] = model.spread.resampled
    for row, found in zip(data["helped"], block.helped):
        row["resampled"] = found.resampled
    if block.agreement is not None:
        data["agreement"]["resampled"] = f"{block.agreement.users} users"
    data["method"] = {
        "distribution": f"per model, each user's accuracy; users with fewer than {block.min_pairs} pairs counted "
                        f"apart; median, mean of the worst 10% of users and share below {block.chance} with "
                        f"percentile intervals from {block.iters} resamples of the counted users, seed {block.seed}",
        "helped": "per user, the personalized model's accuracy minus its counterpart's on the user's shared pairs; "
                  "helped / hurt / level: above / below / at 0; exact two-sided sign test (binomial, 1/2) of helped "
                  f"against hurt; mean difference's interval from {block.iters} resamples of users; per group the "
                  "same, sign tests Holm-corrected over the groups of one field",
        "agreement": "Kendall tau-b of each user's per-model accuracy against the aggregate (all shared pairs); "
                     f"mean over users with an interval from {block.iters} resamples of users (aggregate held "
                     "fixed); noise floor: each user's own pairs resampled (noise_iters), a user counts beyond "
                     "noise when fewer than noise_level of the resamples agree with the aggregate",
    }
    return data


def report_data(report: Report) -> dict[str, Any]:
    """The report as one JSON-ready dict."""
    sections = []
    for s in report.sections:
        sections.append({
            "slug": s.slug, "setting": s.setting, "source": s.source, "title": s.title,
            "diagnostic": s.diagnostic, "pairs_shared_by_all": s.shared_all, "pairs_in_union": s.union,
            "models": plain(s.summaries),
            "ranking": plain(s.ranking),
            "set_apart": [{"id": i, "label": next(m.label for m in s.summaries if m.id == i), "why": why}
                          for i, why in s.set_apart.items()],
            "comparisons": plain(s.comparisons),
            "kappa": {"models": [e.id for e in s.entries if e.logged], "matrix": plain(s.kappa)},
            "charts": [{"title": t, "file": f} for t, f in report.charts.get(s.slug, [])],
            "per_user": per_user_data(s.per_user),
        })
    return {
        "generated": report.generated,
        "inputs": report.inputs,
        "method": {
            "interval": f"percentile bootstrap, {ITERS} draws, seed {SEED}, level {LEVEL}, resampling the unit "
                        "in each model's and comparison's 'resampled': whole pairs within each subset, or whole "
                        "users (all their pairs) where the data names its users",
            "test": "by pairs: exact McNemar on shared pairs (exact sign-flip test of per-pair score differences "
                    f"when scores are 0, 1/2, 1); by users: sign-flip test of per-user summed differences (exact up "
                    f"to {EXACT_USERS} users, else {SIGN_FLIPS} random flips, seed {SEED})",
            "correction": CORRECTION, "alpha": ALPHA,
        },
        "sections": sections,
        "ladders": plain(report.ladders),
        "predicts": plain(report.predicts),
        "notes": report.notes,
    }


def render_json(report: Report) -> str:
    return json.dumps(report_data(report), indent=2, ensure_ascii=False)
