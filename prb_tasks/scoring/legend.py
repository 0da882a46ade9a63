"""The short metric legend ``prb eval`` prints under lm-eval's table.

Only metrics that appear in the run's results are explained, with the meaning that
fits the task kind (a judge's ``acc`` counts judgments, a scalar RM's counts pairs).
"""

from __future__ import annotations

import re
from typing import Any

_JUDGE = {
    "acc": "share of judgments naming the user's chosen answer (unparsed, errors, skipped count wrong)",
    "acc_macro": "in a group row, the plain mean of the subsets (acc there is size-weighted)",
    "acc_pair": "share of pairs judged right in both orders",
    "consistency": "share of pairs where the same answer was preferred in both orders",
    "double_game": "JudgeBench's double-game score: +1 per order naming the chosen answer, -1 per order "
                   "naming the other, share of pairs netting above 0 (order-inconsistent pairs net 0)",
    "acc_pos_a": "acc over the judgments that showed the chosen answer as A",
    "acc_pos_b": "acc over the judgments that showed the chosen answer as B",
    "pos_bias": "|acc_pos_a - acc_pos_b| (in a group row: the subsets' biases, weighted by their judgments)",
    "pos_a_rate": "share of verdicts naming position A; 0.5 is ideal (no position bias), so the table "
                  "shows no arrow: values above and below 0.5 are both biased",
    "soft_acc": ("soft verdicts (logprobs=): the probability the judge gave the chosen answer at its verdict "
                 "token (P(A) and P(B) renormalised over the two letters), averaged over the pair's two orders so "
                 "position preference cancels; mean over the pairs with a soft verdict in both orders"),
    "soft_cover": "share of pairs with a soft verdict in both orders (the rest have no soft score)",
    "ece": ("expected calibration error of the soft verdicts: pairs binned by confidence max(s, 1 - s) into 10 "
            "bins over 0.5-1, mean |accuracy - confidence| weighted by pairs (a pair at s = 0.5, a tie, counts "
            "half right); in a group row, the subsets' values weighted by their pairs"),
    "acc_cov": ("acc_covQ: accuracy of the soft verdicts on the Q% of pairs the judge is surest of (abstaining on "
                "the rest; pairs tied at the cut count at their mean); in a group row, the subsets' values "
                "weighted by their pairs"),
    "parse_fail": "share of replies with no readable verdict",
    "error_rate": "share of judgments whose request failed for good",
    "skip_rate": "share of judgments not sent because the run stopped sending (max_cost reached, server gone "
                 "or frozen, quota spent, cache disk full)",
    "acc_official": "the original script's reading, where a missing verdict counts as A",
    "acc_pos_a_official": "acc_pos_a under the original script's reading",
    "acc_pos_b_official": "acc_pos_b under the original script's reading",
    "pos_bias_official": "pos_bias under the original script's reading",
    "pos_a_rate_official": "share of verdicts read as A by the original script (its parse failures count as A)",
    "parse_fail_official": "replies the original script's reading cannot parse (it counts them as A)",
    "always_a_official": "what a judge that always answers A scores on the same pairs (acc_official's floor "
                         "when replies carry no readable verdict)",
    "acc_synthesizeme": "SynthesizeMe's official accuracy: both orders, a tie or failed call wrong (its 95% bootstrap "
                        "over judgments: acc_synthesizeme_low / _high)",
    "acc_pgenrm": "P-GenRM's official accuracy: correct over kept judgments (ties, unreadable JSON and failed "
                  "requests dropped; dropped_* count them)",
    "kept_pgenrm": "share of judgments P-GenRM's official reading keeps in its denominator",
    "acc_user": "accuracy of each user, averaged over users (every user counts the same)",
    "acc_tag": ("accuracy within each tag, averaged over tags (items without tags left out); the tag is the "
                "value_alignment tag of custom data, PRISM's rating-gap bucket, Community Alignment's language"),
    "aukc": "few-shot: area under the k-curve (accuracy over k = 0, 1, 2, 4, 8, 16 equally spaced, ends "
            "counting half); the k-curve's intervals resample users",
    "plan_recall": "share of the user's rubric aspects the plan recovered (embedding match; failed plans count 0)",
    "plan_precision": "share of the plan's aspects that match a rubric aspect (non-empty plans)",
    "plan_empty": "share of planner replies with no aspects",
    "plan_size": "aspects per plan",
    "bon_reward": "the user's normalised reward of the response picked among the first N",
    "bon_regret": "the user's best reward among those N minus the pick's (0 = always the user's favourite)",
    "bon_win_random": "chance the pick beats a random one of the N (ties half; 0.5 = no better than chance)",
    "bon_win_popular": "chance the pick beats the population favourite among the N (ties half; 0.5 = no better)",
    "bon_gold": "mean gold grade (0-2, rubric) of the candidate picked among all N (ties: expectation)",
    "bon_gain": "bon_gold minus best-of-1's (the first candidate's grade): what picking adds",
    "bon_top": "share of questions where the pick is a gold-best candidate",
    "ungraded": "share of questions left out: a candidate has no readable gold grade",
    "gold": "mean rubric grade of the candidates (0-2; unreadable grades left out)",
    "grade_unparsed": "share of grader replies without a readable 0/1/2 for every aspect (left out, never 0)",
    "candidate_words": "words per candidate answer",
    "failed_candidate": "share of candidates whose generation failed (their question is left out later)",
    # RewardBench 2 rated by a judge (scoring/rewardbench2_ratings.py), RM-Bench judged in pairs
    # (scoring/rmbench_judge.py).
    "score": ("RewardBench 2 from 1-10 ratings: a best-of-N row's 1/k when the correct response shares the top "
              "rating with k - 1 others (0.25 when no response was rated); Ties: allenai's Ties score of the "
              "ratings; group row: the plain mean of the six subsets. RM-Bench from pairwise verdicts: a domain's "
              "mean of hard, normal and easy; group row: the plain mean of the four domains"),
    # A run of one benchmark explains its own score only (see _score_meaning).
    "score:rewardbench2": ("RewardBench 2 from 1-10 ratings: a best-of-N row's 1/k when the correct response "
                           "shares the top rating with k - 1 others (0.25 when no response was rated); Ties: "
                           "allenai's Ties score of the ratings; group row: the plain mean of the six subsets"),
    "score:rmbench": ("RM-Bench from pairwise verdicts: a domain's mean of hard, normal and easy; group row: the "
                      "plain mean of the four domains"),
    "top1": ("share of best-of-N rows where the correct response alone has the top rating; group row: the plain mean "
             "of the five best-of-N subsets (Ties has no top1)"),
    "easy_acc": ("RM-Bench: share of (chosen, rejected) style pairs won where the chosen answer is the more "
                 "elaborate style (below the diagonal of the 3x3 matrix); a pair is won when its two orders' "
                 "votes (+1 chosen, -1 rejected, 0 tie or no verdict) sum above 0"),
    "normal_acc": "RM-Bench: the same with both answers in the same style (the matrix's diagonal)",
    "hard_acc": "RM-Bench: the same with the chosen answer in the plainer style (above the diagonal)",
    "tie_rate": "share of judgments with a tie verdict (A=B)",
}
_SCALAR = {
    "acc": "share of pairs where the chosen answer scored strictly higher (ties count wrong)",
    "acc_macro": "in a group row, the plain mean of the subsets (acc there is size-weighted)",
    "tie_rate": "share of pairs where both answers got the same score",
    "acc_user": _JUDGE["acc_user"],
    "acc_tag": _JUDGE["acc_tag"],
    "aukc": _JUDGE["aukc"],
    **{name: meaning for name, meaning in _JUDGE.items() if name.startswith("bon_")},
    "ungraded": _JUDGE["ungraded"],
    "score": "the benchmark's official score, by its authors' rules. RewardBench 2: a best-of-N subset's mean of "
             "1/k when the correct answer has the top reward shared by k answers (else 0); Ties: 0.3 tied + 0.3 ref "
             "accuracy + 0.2 + 0.2 margin shares + 0.01 margin term; group row: the plain mean of the six subsets. "
             "RM-Bench: a domain's mean of hard, normal and easy; group row: the plain mean of the four domains",
    "score:rewardbench2": ("RewardBench 2's official score, by allenai's rules: a best-of-N subset's mean of 1/k "
                           "when the correct answer has the top reward shared by k answers (else 0); Ties: 0.3 "
                           "tied + 0.3 ref accuracy + 0.2 + 0.2 margin shares + 0.01 margin term; group row: the "
                           "plain mean of the six subsets"),
    "score:rmbench": ("RM-Bench's official score, by its authors' rules: a domain's mean of hard, normal and "
                      "easy; group row: the plain mean of the four domains"),
    "top1": ("share of best-of-N rows where the correct answer alone has the top reward; group row: the plain mean of "
             "the five best-of-N subsets (Ties has no top1)"),
    "easy_acc": "RM-Bench: share of (chosen, rejected) style pairs won where the chosen answer is the more "
                "elaborate style (below the diagonal of the 3x3 matrix)",
    "normal_acc": "RM-Bench: the same with both answers in the same style (the matrix's diagonal)",
    "hard_acc": "RM-Bench: the same with the chosen answer in the plainer style (above the diagonal)",
}
_STDERR = "+/-: lm-eval's standard error; for intervals over pairs run `prb compare` on --log_samples output"
#: What skip_rate means where no max_cost exists (every backend but prb-judge).
_NO_SKIPS = "share of judgments not sent (always 0 with this backend, which sends every judgment)"
_CI_PAIRS = ("95% CI: bootstrap over pairs within each subset (a judge's two orders of a pair count once); "
             "pairs: pairs scored")
_CI_PAIRS_SCALAR = "95% CI: bootstrap over pairs within each subset; pairs: pairs scored"
_ITEMS = ("items: items scored (a Best-of-N question with its candidates, a RewardBench 2 prompt with its 4 or more "
          "responses, an RM-Bench prompt with its 3 chosen and 3 rejected responses)")
_RATINGS = "ratings: responses the judge rated, one request each (a RewardBench 2 row is 4 or more)"
_REPLIES = ("replies: what the model wrote, one request each (a Best-of-N policy writes N candidates per "
            "question)")
_JUDGMENTS = ("judgments: judge requests, one per (chosen style, rejected style) pair and order of an RM-Bench "
              "prompt (18 per prompt), one per response rated on a RewardBench 2 row")
_CI_STDERR_SCALAR = "95% CI*: acc +/- 1.96 x lm-eval's standard error (normal approximation); n: pairs scored"
_CI_STDERR = ("95% CI*: acc +/- 1.96 x lm-eval's standard error, which counts a judge's two orders of a pair as "
              "independent (too narrow); add --log_samples for intervals over pairs; n: documents scored")


def _meaning(metric: str, kind: str, backend: str | None = None) -> str | None:
    if metric == "skip_rate" and backend not in (None, "prb-judge"):
        return _NO_SKIPS
    table = _SCALAR if kind == "scalar" else _JUDGE
    if re.fullmatch(r"acc_cov\d+", metric):
        return table.get("acc_cov")
    # Best-of-N metrics carry their N: bon_regret_n4 is explained once as bon_regret.
    return table.get(re.sub(r"_n\d+$", "", metric) if metric.startswith("bon_") else metric)


def metric_names(task_results: dict[str, Any]) -> list[str]:
    """Metric names in one task's results (``acc,none`` -> ``acc``), in table order."""
    names: list[str] = []
    for key in task_results:
        if "," not in key or key.split(",", 1)[0].endswith("_stderr"):
            continue
        name = key.split(",", 1)[0]
        if name not in names:
            names.append(name)
    return names


def task_kind(config: dict[str, Any]) -> str:
    """``judge`` for generated verdicts, ``scalar`` for scored choices."""
    return "scalar" if config.get("output_type") in ("multiple_choice", "loglikelihood") else "judge"


def legend_lines(results: dict[str, Any], ours: set[str], only: list[str] | None = None) -> list[str]:
    """The legend for the metrics ``ours`` tasks and groups report in ``results``.

    Args:
        results: what ``lm_eval.simple_evaluate`` returned; its ``config.model`` (the
            backend) decides meanings that differ between backends (``skip_rate``).
        ours: names of prb tasks and groups.
        only: explain just these metrics (the columns of the compact table) and its
            interval instead of lm-eval's ``+/-``; None: every metric in the results.
    """
    backend = str((results.get("config") or {}).get("model") or "") or None
    configs = results.get("configs") or {}
    subtasks = results.get("group_subtasks") or {}
    shown: list[tuple[str, str]] = []
    for task, values in (results.get("results") or {}).items():
        if task not in ours:
            continue
        members = subtasks.get(task) or [task]
        kinds = {task_kind(configs.get(m) or {}) for m in members if m in configs} or {"judge"}
        for kind in sorted(kinds):
            for metric in metric_names(values):
                if only is not None and metric not in only:
                    continue
                if (kind, metric) not in shown:
                    shown.append((kind, metric))
    if not shown:
        return []

    def place(entry: tuple[str, str]) -> tuple[int, int]:
        kind, metric = entry
        known = list(_SCALAR if kind == "scalar" else _JUDGE)
        return (kind == "scalar", known.index(metric) if metric in known else len(known))

    both = len({kind for kind, _ in shown}) > 1
    # `score` belongs to two benchmarks: a run of one of them explains that one only.
    scored = {("rmbench" if t.startswith("rmbench") else "rewardbench2")
              for t, v in (results.get("results") or {}).items()
              if t in ours and "score" in metric_names(v)}
    lines: list[str] = []
    said: dict[str, str] = {}
    for kind, metric in sorted(shown, key=place):
        meaning = _meaning(f"score:{next(iter(scored))}" if metric == "score" and len(scored) == 1 else metric, kind,
                           backend)
        if meaning is None or meaning in said.values():
            continue
        said[metric] = meaning
        shown_name = re.sub(r"_n\d+$", "_nN", metric) if metric.startswith("bon_") else metric
        if re.fullmatch(r"acc_cov\d+", metric):
            lines.append(meaning)  # it names itself (acc_covQ)
            continue
        prefix = f"{shown_name} ({kind} tasks)" if both and metric in ("acc",) else shown_name
        lines.append(f"{prefix}: {meaning}")
    if not lines:
        return []
    if only is None:
        return [*lines, _STDERR]
    if "_items" in only:  # run_table.ITEMS_MARK: no acc column, so no interval to explain
        return [*lines, _ITEMS]
    if "_ratings" in only:  # run_table.RATINGS_MARK
        return [*lines, _RATINGS]
    if "_replies" in only:  # run_table.REPLIES_MARK
        return [*lines, _REPLIES]
    if "_judgments" in only:  # run_table.JUDGMENTS_MARK
        return [*lines, _JUDGMENTS]
    # A Best-of-N row scores questions (N candidates each), not pairs.
    questions = "; on a Best-of-N row it counts questions" if any(m.startswith("bon_") for _, m in shown) else ""
    judges = any(kind == "judge" for kind, _ in shown)
    if "_starred" not in only:
        # A scorer gives a pair one score: the judge's two orders mean nothing on its rows.
        return [*lines, (_CI_PAIRS if judges else _CI_PAIRS_SCALAR) + questions]
    return [*lines, (_CI_STDERR if judges else _CI_STDERR_SCALAR) + questions]
